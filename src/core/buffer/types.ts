/**
 * Replay-buffer records (DreamGym's experience replay, paper §3): transitions — offline data,
 * real interactions and dreamed ones — with their embeddings for retrieval; episodes; the task
 * bank the curriculum reads; and runs. Plain JSON-serialisable data plus one Float32Array.
 */
import type { Task, TaskOrigin, Transition as BufferTransition, TransitionSource } from '../types';
import { DreamGymError } from '../errors';

export type { TokenUsage, TransitionSource } from '../types';
/** A transition as the buffer stores it: the shared vocabulary's Transition (src/core/types.ts). */
export type { Transition as BufferTransition } from '../types';
export const TRANSITION_SOURCES: readonly TransitionSource[] = ['offline', 'real', 'dream'];

export interface BufferEpisode {
  id: string;
  env: string;
  taskId: string;
  source: TransitionSource;
  steps: number;
  return: number;
  success: boolean;
  createdAt: number;
  runId?: string;
}

/** One task of the curriculum's task bank, with its rollout outcomes. */
export interface TaskBankEntry {
  id: string;
  env: string;
  task: Task;
  origin: TaskOrigin;
  parent?: string;
  /** Rollouts run and how many succeeded (V = p(1 − p) comes from these). */
  rollouts: number;
  successes: number;
  createdAt: number;
}

export type RunStatus = 'running' | 'paused' | 'finished' | 'failed';

export interface RunRecord {
  id: string;
  name: string;
  config: Record<string, unknown>;
  status: RunStatus;
  createdAt: number;
  updatedAt: number;
}

export interface BufferStats {
  transitions: number;
  episodes: number;
  /** Tasks in the task bank (imports write it; a training run keeps its curriculum's bank in its checkpoint). */
  tasks: number;
  /** Distinct tasks the transitions come from (imported, real and dreamed alike). */
  transitionTasks: number;
  runs: number;
  /** Transitions per env and source, e.g. { 'webshop-lite-v0': { offline: 1200, dream: 40 } }. */
  byEnvAndSource: Record<string, Partial<Record<TransitionSource, number>>>;
  invalid: number;
}

/** Which transitions an eviction may remove, oldest first. */
export interface EvictionPolicy {
  /** Sources that may be evicted, in order (default ['dream', 'real']; offline only when listed). */
  sources: TransitionSource[];
  /** Evict until at most this many transitions remain (of `env`, when it names one). */
  maxTransitions: number;
  /** Only this env's transitions (an imported domain's, removed with the domain); absent: every env's. */
  env?: string;
}

/** Filter for listing and retrieval. */
export interface TransitionFilter {
  env?: string;
  source?: TransitionSource | TransitionSource[];
  /** Only valid transitions (the default for retrieval). */
  validOnly?: boolean;
}

/** One import, written whole by `putImport`. */
export interface BufferImport {
  transitions: BufferTransition[];
  episodes: BufferEpisode[];
  tasks: TaskBankEntry[];
  /**
   * The caller made the transitions' embeddings for this import and keeps none of them: a store may
   * keep them as they are, not copy them (a copy of 1 KB a transition, half a million in an import).
   */
  embeddingsHandedOver?: boolean;
}

/**
 * Storage behind the buffer: IndexedDB in the browser, memory, or a folder in Node. Writes are
 * batched: one call = one transaction; a failed batch leaves the store unchanged.
 */
export interface BufferStore {
  readonly kind: 'indexeddb' | 'memory' | 'folder';
  /** Adds or replaces transitions (and their episodes) atomically; returns how many were new. */
  putTransitions(
    transitions: BufferTransition[],
    episodes?: BufferEpisode[],
  ): Promise<{ added: number; replaced: number }>;
  /**
   * Writes an import's transitions, episodes and task-bank entries in ONE commit (one IndexedDB
   * transaction, one folder commit): a crash, a kill or a page reload leaves all of it or none.
   */
  putImport(batch: BufferImport): Promise<{ added: number; replaced: number }>;
  getTransition(id: string): Promise<BufferTransition | undefined>;
  /** Every transition matching the filter, in insertion (createdAt, id) order. */
  listTransitions(filter?: TransitionFilter): Promise<BufferTransition[]>;
  /** Visits every transition in insertion order without holding them all (cold load). */
  forEachTransition(visit: (t: BufferTransition) => void, filter?: TransitionFilter): Promise<void>;
  countTransitions(filter?: TransitionFilter): Promise<number>;
  hasEpisode(id: string): Promise<boolean>;
  listEpisodes(filter?: { env?: string; source?: TransitionSource }): Promise<BufferEpisode[]>;
  putTasks(tasks: TaskBankEntry[]): Promise<void>;
  listTasks(env?: string): Promise<TaskBankEntry[]>;
  putRun(run: RunRecord): Promise<void>;
  listRuns(): Promise<RunRecord[]>;
  /** Removes transitions (and episodes left empty) by policy; returns the ids removed. */
  evict(policy: EvictionPolicy): Promise<string[]>;
  /** Removes everything (the UI asks for confirmation first). */
  clear(): Promise<void>;
  stats(): Promise<BufferStats>;
  close(): Promise<void>;
}

/** Raised when the browser refuses to store more (QuotaExceededError), with what is used. */
export class BufferQuotaError extends DreamGymError {
  constructor(
    readonly usedBytes: number | null,
    readonly quotaBytes: number | null,
    readonly attempted: number,
  ) {
    const used = usedBytes === null ? 'unknown' : `${(usedBytes / 1e6).toFixed(1)} MB`;
    const quota = quotaBytes === null ? 'unknown' : `${(quotaBytes / 1e6).toFixed(1)} MB`;
    super(
      `The browser's storage is full: ${used} used of ${quota}; ${attempted} transitions were not saved (nothing of that batch was written). ` +
        'Free space by evicting old dream transitions (Buffer → Evict), exporting and clearing the buffer, or allowing more storage for this site.',
      {
        code: 'buffer-quota',
        fix: 'Evict old dream transitions (Buffer → Evict), export and clear the buffer, or allow more storage for this site.',
      },
    );
    this.name = 'BufferQuotaError';
  }
}

/** Raised for a store opened with a schema newer than this code understands. */
export class BufferSchemaError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'buffer-schema',
      fix: 'Point the buffer at an empty or new folder, or update DreamGym to read this one.',
    });
    this.name = 'BufferSchemaError';
  }
}
