/**
 * The page's small list of training runs, in localStorage: enough to find an unfinished run after
 * a reload and resume it from its IndexedDB checkpoint (the checkpoint itself lives in
 * IndexedDbCheckpointStore under the run id).
 */
import type { TrainConfig } from '../../core/train/config';
import type { BackendName } from '../../core/tfjs/backend';
import type { RunState } from '../workers/trainer/trainer-protocol';

export interface RunEntry {
  runId: string;
  /** The hash query the run was started from (to restore the form). */
  query: string;
  config: TrainConfig;
  backend?: BackendName;
  createdAt: number;
  state: RunState;
  iteration: number;
  iterations: number;
  /** A readable name (legends and tables use it instead of mode · algo · preset · seed). */
  name?: string;
  /** Tags to filter by on Compare (the start-here runs carry 'start-here'). */
  tags?: string[];
  /** The run's last status message (a failed run keeps its reason here). */
  message?: string;
}

const KEY = 'dreamgym.train.runs';
const MAX_RUNS = 20;

export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export function loadRuns(storage: StorageLike | null = globalThis.localStorage ?? null): RunEntry[] {
  try {
    const parsed = JSON.parse(storage?.getItem(KEY) ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((r) => typeof r?.runId === 'string' && r.config) : [];
  } catch {
    return [];
  }
}

export function saveRuns(runs: RunEntry[], storage: StorageLike | null = globalThis.localStorage ?? null): void {
  try {
    storage?.setItem(KEY, JSON.stringify(runs.slice(0, MAX_RUNS)));
  } catch {
    /* storage full or blocked: the list is a convenience */
  }
}

/** Inserts or updates a run (newest first). */
export function upsertRun(entry: Partial<RunEntry> & { runId: string }, storage?: StorageLike | null): RunEntry[] {
  const runs = loadRuns(storage);
  const index = runs.findIndex((r) => r.runId === entry.runId);
  if (index >= 0) runs[index] = { ...runs[index], ...entry };
  else runs.unshift(entry as RunEntry);
  saveRuns(runs, storage);
  return runs;
}

export function removeRun(runId: string, storage?: StorageLike | null): RunEntry[] {
  const runs = loadRuns(storage).filter((r) => r.runId !== runId);
  saveRuns(runs, storage);
  return runs;
}

/** Whether a run was training when the page went away (reload, crash): running, paused or starting. */
export function isUnfinished(run: RunEntry): boolean {
  return run.state === 'running' || run.state === 'paused' || run.state === 'starting';
}

/** A run the Train page was training when it went away; runs of a group with its own page (tag `exclude`) are left to it. */
export function unfinishedRun(runs: RunEntry[], exclude = START_HERE_TAG): RunEntry | null {
  return runs.find((r) => isUnfinished(r) && !(r.tags ?? []).includes(exclude)) ?? null;
}

/** The tag of the start-here page's three runs (that page resumes them itself). */
export const START_HERE_TAG = 'start-here';

export function newRunId(config: TrainConfig, now = Date.now()): string {
  return `${config.preset}-${config.mode}-${config.algo}-s${config.seed}-${now.toString(36)}`;
}
