/**
 * The page's small list of training runs, in localStorage: enough to find an unfinished run after
 * a reload and resume it from its IndexedDB checkpoint (the checkpoint itself lives in
 * IndexedDbCheckpointStore under the run id).
 */
import type { TrainConfig } from '../../core/train/config';
import type { BackendName } from '../../core/policy/backend';
import type { RunState } from './protocol';

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
}

const KEY = 'dreamgym.train.runs';
const MAX_RUNS = 20;

export interface StorageLike { getItem(key: string): string | null; setItem(key: string, value: string): void }

export function loadRuns(storage: StorageLike | null = globalThis.localStorage ?? null): RunEntry[] {
  try {
    const parsed = JSON.parse(storage?.getItem(KEY) ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((r) => typeof r?.runId === 'string' && r.config) : [];
  } catch {
    return [];
  }
}

export function saveRuns(runs: RunEntry[], storage: StorageLike | null = globalThis.localStorage ?? null): void {
  try { storage?.setItem(KEY, JSON.stringify(runs.slice(0, MAX_RUNS))); } catch { /* storage full or blocked: the list is a convenience */ }
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

/** A run the page was training when it went away (reload, crash): running, paused or starting. */
export function unfinishedRun(runs: RunEntry[]): RunEntry | null {
  return runs.find((r) => r.state === 'running' || r.state === 'paused' || r.state === 'starting') ?? null;
}

export function newRunId(config: TrainConfig, now = Date.now()): string {
  return `${config.preset}-${config.mode}-${config.algo}-s${config.seed}-${now.toString(36)}`;
}
