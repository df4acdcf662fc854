/**
 * Which run Inspect and Curriculum open when their URL names none (plain logic, unit-tested in
 * Node): the run training now if the page can show it, else the newest run the page has
 * something to show for. The start-here page trains a real, a dream and a sim-to-real run at
 * once (the real one listed first); the dream runs are the ones with dreamed steps to compare
 * and a curriculum's task bank, so a plain "newest run" would open the least telling one.
 */
import type { RunEntry } from '../../storage/run-list';

/** A run that dreams (dream, or sim-to-real's dream phase): Inspect sets its dreamed steps against the real env. */
export const isDreamRun = (run: RunEntry): boolean => run.config.mode === 'dream' || run.config.mode === 's2r';

/** A run that keeps a task bank (Curriculum shows it). */
export const hasCurriculum = (run: RunEntry): boolean => run.config.curriculum === true;

/** The newest run that passes `keep`; a tie in createdAt (one start-here group) keeps the list's order. */
export function newestRun(runs: readonly RunEntry[], keep: (run: RunEntry) => boolean = () => true): RunEntry | null {
  let best: RunEntry | null = null;
  for (const run of runs) if (keep(run) && (!best || run.createdAt > best.createdAt)) best = run;
  return best;
}

/**
 * Inspect's run without ?run=: the run training now (its episodes grow while it trains), else the
 * newest dream run, else the newest run; null when there is none.
 */
export function inspectDefaultRun(runs: readonly RunEntry[], trainingRunId: string | null): string | null {
  if (trainingRunId) return trainingRunId;
  return (newestRun(runs, isDreamRun) ?? newestRun(runs))?.runId ?? null;
}

/** What Curriculum knows when it picks a run. */
export interface CurriculumChoice {
  /** The URL's ?run=. */
  url: string | null;
  /** The run training now (null when none is). */
  training: string | null;
  /** The run the page shows already. */
  shown: string | null;
}

/**
 * Curriculum's run: the URL's ?run=, then the run training now if it has a curriculum, then the
 * run already on screen, then the newest run with a curriculum; failing all of those the run
 * training now or the newest run (the page then says it has no curriculum). Only listed runs count.
 */
export function curriculumRun(runs: readonly RunEntry[], choice: CurriculumChoice): string | null {
  const find = (runId: string | null) => (runId === null ? null : (runs.find((r) => r.runId === runId) ?? null));
  const training = find(choice.training);
  const pick =
    find(choice.url) ??
    (training && hasCurriculum(training) ? training : null) ??
    find(choice.shown) ??
    newestRun(runs, hasCurriculum) ??
    training ??
    newestRun(runs);
  return pick?.runId ?? null;
}
