/**
 * What every buffer store shares: record checks (a batch is checked whole before anything is
 * written), the insertion order (createdAt, then id), filters, eviction order, test hooks.
 * Browser-safe: no Node and no DOM imports.
 */
import {
  TRANSITION_SOURCES,
  type BufferEpisode,
  type BufferTransition,
  type EvictionPolicy,
  type RunRecord,
  type TaskBankEntry,
  type TransitionFilter,
  type TransitionSource,
} from '../types';

/** The writes of a store, each one commit. */
export type BufferWriteOperation = 'putTransitions' | 'putImport' | 'putTasks' | 'putRun' | 'evict' | 'clear';

/**
 * Test hooks, the same for all three stores, so one behaviour suite can break a batch half-way.
 * A throw from a hook fails the whole batch, exactly as a failed write would.
 */
export interface BufferStoreTestHooks {
  /** Called inside a `putTransitions` batch after record `index` was written (or staged). */
  afterPut?(index: number, transition: BufferTransition): void;
  /** Called once per write (putTransitions, putImport, putTasks, putRun, evict, clear) just before it commits. */
  beforeCommit?(operation: BufferWriteOperation): void;
}

// ---------------------------------------------------------------------------------------------
// Order and filters
// ---------------------------------------------------------------------------------------------

/** Insertion order: createdAt, then id (strings compare by UTF-16 code units, as IndexedDB keys do). */
export function compareInsertion(a: { createdAt: number; id: string }, b: { createdAt: number; id: string }): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function matchesFilter(t: BufferTransition, filter?: TransitionFilter): boolean {
  if (!filter) return true;
  if (filter.env !== undefined && t.env !== filter.env) return false;
  if (filter.source !== undefined) {
    if (Array.isArray(filter.source) ? !filter.source.includes(t.source) : t.source !== filter.source) return false;
  }
  return !(filter.validOnly && !t.valid);
}

/** The policy's sources without repeats or unknown names, in the policy's own (priority) order. */
export function evictionSources(policy: EvictionPolicy): TransitionSource[] {
  if (!Number.isInteger(policy.maxTransitions) || policy.maxTransitions < 0) {
    throw new TypeError(
      `EvictionPolicy.maxTransitions must be a whole number ≥ 0 (got ${String(policy.maxTransitions)}).`,
    );
  }
  const sources: TransitionSource[] = [];
  for (const source of policy.sources) {
    if (!TRANSITION_SOURCES.includes(source)) {
      throw new TypeError(
        `EvictionPolicy.sources may only name ${TRANSITION_SOURCES.join(', ')} (got '${String(source)}').`,
      );
    }
    if (!sources.includes(source)) sources.push(source);
  }
  return sources;
}

// ---------------------------------------------------------------------------------------------
// Record checks: a malformed record would otherwise vanish silently from an IndexedDB index
// (NaN is not a valid key), so every store refuses it before writing anything.
// ---------------------------------------------------------------------------------------------

function fail(what: string, index: number, id: unknown, problem: string): never {
  const name = typeof id === 'string' ? ` (id '${id}')` : '';
  throw new TypeError(`${what} ${index} of the batch${name}: ${problem}; nothing of this batch was written.`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isStringArray = (v: unknown): boolean => Array.isArray(v) && v.every(isString);

export function checkTransition(t: unknown, index: number): asserts t is BufferTransition {
  if (!isRecord(t)) fail('Transition', index, undefined, 'not an object');
  const bad = (problem: string) => fail('Transition', index, t.id, problem);
  if (!isString(t.id) || t.id === '') bad('id must be a non-empty string');
  for (const key of [
    'env',
    'taskId',
    'instruction',
    'episodeId',
    'observation',
    'action',
    'nextObservation',
  ] as const) {
    if (!isString(t[key])) bad(`${key} must be a string`);
  }
  if (!Number.isInteger(t.stepIndex) || (t.stepIndex as number) < 0) bad('stepIndex must be a whole number ≥ 0');
  if (!isStringArray(t.admissible) || !isStringArray(t.nextAdmissible))
    bad('admissible and nextAdmissible must be string arrays');
  if (!isFiniteNumber(t.reward)) bad('reward must be a finite number');
  for (const key of ['terminated', 'truncated', 'valid'] as const)
    if (typeof t[key] !== 'boolean') bad(`${key} must be true or false`);
  if (!TRANSITION_SOURCES.includes(t.source as TransitionSource))
    bad(`source must be one of ${TRANSITION_SOURCES.join(', ')} (got '${String(t.source)}')`);
  if (!isFiniteNumber(t.createdAt)) bad('createdAt must be a finite number (ms since epoch)');
  if (t.embedding !== undefined && !(t.embedding instanceof Float32Array))
    bad('embedding must be a Float32Array when present');
  if (t.embedder !== undefined && !isString(t.embedder)) bad('embedder must be a string when present');
  if (t.reasoning !== undefined && !isString(t.reasoning)) bad('reasoning must be a string when present');
  if (t.runId !== undefined && !isString(t.runId)) bad('runId must be a string when present');
}

export function checkEpisode(e: unknown, index: number): asserts e is BufferEpisode {
  if (!isRecord(e)) fail('Episode', index, undefined, 'not an object');
  const bad = (problem: string) => fail('Episode', index, e.id, problem);
  if (!isString(e.id) || e.id === '') bad('id must be a non-empty string');
  if (!isString(e.env) || !isString(e.taskId)) bad('env and taskId must be strings');
  if (!TRANSITION_SOURCES.includes(e.source as TransitionSource))
    bad(`source must be one of ${TRANSITION_SOURCES.join(', ')} (got '${String(e.source)}')`);
  if (!Number.isInteger(e.steps) || !isFiniteNumber(e.return) || typeof e.success !== 'boolean')
    bad('steps, return and success must be set');
  if (!isFiniteNumber(e.createdAt)) bad('createdAt must be a finite number (ms since epoch)');
}

export function checkTask(t: unknown, index: number): asserts t is TaskBankEntry {
  if (!isRecord(t)) fail('Task', index, undefined, 'not an object');
  const bad = (problem: string) => fail('Task', index, t.id, problem);
  if (!isString(t.id) || t.id === '') bad('id must be a non-empty string');
  if (!isString(t.env)) bad('env must be a string');
  if (!isRecord(t.task)) bad('task must be a Task object');
  if (!Number.isInteger(t.rollouts) || !Number.isInteger(t.successes))
    bad('rollouts and successes must be whole numbers');
  if (!isFiniteNumber(t.createdAt)) bad('createdAt must be a finite number (ms since epoch)');
}

export function checkRun(r: unknown): asserts r is RunRecord {
  if (!isRecord(r)) fail('Run', 0, undefined, 'not an object');
  const bad = (problem: string) => fail('Run', 0, r.id, problem);
  if (!isString(r.id) || r.id === '') bad('id must be a non-empty string');
  if (!isString(r.name)) bad('name must be a string');
  if (!isRecord(r.config)) bad('config must be an object');
  if (!['running', 'paused', 'finished', 'failed'].includes(r.status as string))
    bad(`status '${String(r.status)}' is not a RunStatus`);
  if (!isFiniteNumber(r.createdAt) || !isFiniteNumber(r.updatedAt))
    bad('createdAt and updatedAt must be finite numbers');
}

/** Checks a whole batch up front (a store writes nothing of a batch with one bad record). */
export function checkBatch(transitions: readonly unknown[], episodes: readonly unknown[]): void {
  if (!Array.isArray(transitions)) throw new TypeError('putTransitions expects an array of transitions.');
  if (!Array.isArray(episodes)) throw new TypeError('putTransitions expects an array of episodes (or none).');
  transitions.forEach(checkTransition);
  episodes.forEach(checkEpisode);
}

export function closedError(kind: string): Error {
  return new Error(`This ${kind} buffer store was closed; open a new one to keep using the buffer.`);
}
