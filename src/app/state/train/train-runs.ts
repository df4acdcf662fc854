/**
 * The Train page's past runs (plain logic, unit-tested in Node): which runs of this browser's run
 * list can be reopened, how they are named in the list, and the status line of a reopened run
 * (built from its saved metric history, so the counters agree with its charts).
 */
import type { Mode } from '../../../core/train/config';
import type { IterationRecord } from '../../../core/train/loop';
import type { TrainerStatus } from '../../workers/trainer/trainer-protocol';
import { isUnfinished, type RunEntry } from '../../storage/run-list';

/** Runs that are over (finished, stopped, failed), newest first: an unfinished one is resumed, not reopened. */
export function pastRuns(runs: readonly RunEntry[]): RunEntry[] {
  return runs.filter((r) => !isUnfinished(r)).sort((a, b) => b.createdAt - a.createdAt);
}

/** The list's words for a run: its name or settings, how far it got, and how it ended. */
export function pastRunLabel(entry: RunEntry): string {
  const c = entry.config;
  const what = entry.name ? `${entry.name} · ${c.preset}` : `${c.preset} · ${c.mode} · ${c.algo} · seed ${c.seed}`;
  return `${what} — ${entry.state}, ${iterationProgress(entry.iteration, entry.iterations, c.mode)} (${entry.runId})`;
}

/**
 * How far a run got: "iteration 3 of 4"; an S2R run past its dream iterations goes on with real
 * ones until its real budget is spent, so "iteration 6: 4 dreamed, then 2 real".
 */
export function iterationProgress(iteration: number, iterations: number, mode: Mode | undefined): string {
  if (mode === 's2r' && iterations > 0 && iteration > iterations)
    return `iteration ${iteration}: ${iterations} dreamed, then ${iteration - iterations} real`;
  return `iteration ${iteration} of ${iterations}`;
}

const lastNumber = (records: readonly IterationRecord[], metric: string): number => {
  for (let i = records.length - 1; i >= 0; i--) {
    const v = records[i].metrics[metric];
    if (typeof v === 'number') return v;
  }
  return 0;
};

/** The status of a reopened run: how it ended, where it stopped, and the budgets it spent (from its history). */
export function reopenedStatus(entry: RunEntry, records: readonly IterationRecord[]): TrainerStatus {
  const iteration = records.length ? records[records.length - 1].iteration : entry.iteration;
  const reason = entry.state === 'error' && entry.message ? ` It failed: ${entry.message}` : '';
  return {
    runId: entry.runId,
    state: isUnfinished(entry) ? 'stopped' : entry.state,
    iteration,
    iterations: entry.iterations,
    realSteps: lastNumber(records, 'budget/real_steps'),
    dreamSteps: lastNumber(records, 'budget/dream_steps'),
    backend: null,
    backendReason: null,
    decoding: null,
    message: `Reopened: its settings and charts, from this browser's saved history (${records.length} iterations).${reason}`,
  };
}
