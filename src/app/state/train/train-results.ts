/**
 * The Train page's results below the form (plain logic, unit-tested in Node): the charts' titles
 * and the counters' figures of the run on screen.
 */
import type { TrainConfig } from '../../../core/train/config';
import type { LiveProgress } from '../../../core/train/progress';

/** The titles of the charts every mode draws (train.svelte.ts CHART_METRICS); the other metrics go by name. */
export const CHART_TITLES: Record<string, string> = {
  'charts/success_rate': 'Training success rate (real rollouts)',
  'charts/episodic_return': 'Episodic return (real rollouts)',
  'dream/success_rate': 'Success as the dream judges it (not real)',
  'dream/episodic_return': 'Return as the dream judges it',
  'eval/success_rate': 'Held-out eval success (real env)',
  'losses/policy_loss': 'Policy loss',
  'losses/entropy': 'Policy entropy',
};

/** A share of something, drawn on [0, 1]. */
export function isShareMetric(metric: string): boolean {
  return metric.endsWith('_rate') || metric.endsWith('_share');
}

/** The real steps a run may spend: none in a dream, S2R's real fraction of the budget. */
export function realStepBudget(config: TrainConfig): number {
  if (config.mode === 'dream') return 0;
  if (config.mode === 's2r') return Math.round(config.s2rRealFraction * config.realStepBudget);
  return config.realStepBudget;
}

/** Beside the iteration: 'of 12', or past S2R's dreamed iterations, '12 dreamed, then real'. */
export function iterationNote(mode: TrainConfig['mode'] | undefined, iteration: number, iterations: number): string {
  return mode === 's2r' && iterations > 0 && iteration > iterations
    ? `${iterations} dreamed, then real`
    : `of ${iterations || '—'}`;
}

/** The last recorded value of a series (null when none). */
export function lastValue(values: readonly (number | null)[] | undefined): number | null {
  return [...(values ?? [])].reverse().find((v) => v !== null) ?? null;
}

/** A rate as a whole percentage, '—' when there is none. */
export function percentText(rate: number | null): string {
  return rate === null ? '—' : `${Math.round(rate * 100)}%`;
}

/** The run's dream steps so far, the iteration in flight included (its live count). */
export function dreamStepsSoFar(
  status: { iteration: number; dreamSteps: number },
  live: LiveProgress | null,
  active: boolean,
): number {
  return active && live?.phase === 'dream' && live.iteration === status.iteration + 1
    ? status.dreamSteps + live.done
    : status.dreamSteps;
}
