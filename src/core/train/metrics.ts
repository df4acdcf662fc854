/**
 * Every metric of a training iteration, built here and only here (docs/architecture.md §3.11): the rollouts'
 * outcomes, the update's losses, the budgets, the dream's cost and validity (dream phases), the
 * curriculum, the held-out evaluation when one ran, and wall-clock speed when the trainer was
 * given a clock. Key order is part of the output (metrics.jsonl is compared byte for byte), so
 * new metrics go after the ones of their group.
 */
import type { Curriculum } from '../curriculum/curriculum';
import type { UpdateMetrics } from '../rl/batch';
import type { Phase } from './config';
import type { EvalResult } from './evaluate';
import type { RolloutTally } from './rollout';

export type Metrics = Record<string, number>;

export interface IterationFacts {
  phase: Phase;
  /** `cut`: ended by the real-step budget before the task or the step limit ended it (not an outcome). */
  episodes: readonly {
    success: boolean;
    return: number;
    steps: readonly unknown[];
    cut?: boolean;
    record?: readonly { truncated: boolean }[];
    realStart?: unknown;
  }[];
  losses: UpdateMetrics;
  realSteps: number;
  dreamSteps: number;
  rollout: RolloutTally;
  /** An S2R correction round of this iteration (dream-correction.ts): replays, misses among them, real steps spent. */
  correction?: { replayed: number; misses: number; steps: number };
  curriculum: Curriculum | null;
  /** LLM-written tasks whose dreamed first state failed (a pool task played instead). */
  startFailed: number;
  evaluation?: EvalResult;
  /** Wall-clock seconds of the iteration (only with an injected clock). */
  seconds?: number;
}

export function iterationMetrics(f: IterationFacts): Metrics {
  return {
    ...episodeMetrics(f.phase, f.episodes),
    ...f.losses,
    'budget/real_steps': f.realSteps,
    'budget/dream_steps': f.dreamSteps,
    ...(f.phase === 'dream' ? dreamMetrics(f.rollout) : {}),
    ...(f.correction ? correctionMetrics(f.correction) : {}),
    ...(f.curriculum ? curriculumMetrics(f.curriculum, f.startFailed) : {}),
    ...(f.evaluation ? { 'eval/success_rate': f.evaluation.success, 'eval/score': f.evaluation.score } : {}),
    ...(f.seconds !== undefined && f.seconds > 0
      ? { 'perf/steps_per_second': f.rollout.steps / f.seconds, 'perf/iteration_seconds': f.seconds }
      : {}),
  };
}

/**
 * The rollouts' outcomes. In a real phase they are `charts/…`; in a dream phase the experience
 * model judged them, so they are `dream/…` (docs/architecture.md §3.11: dream-judged success never shares a name
 * or a title with real success; held-out real success is `eval/…`). Episodes the real-step budget
 * cut short have no outcome and are left out; when every episode was cut there is no figure.
 */
function episodeMetrics(phase: Phase, all: IterationFacts['episodes']): Metrics {
  const episodes = all.filter((e) => !e.cut);
  const n = episodes.length;
  if (n === 0) return {};
  const group = phase === 'dream' ? 'dream' : 'charts';
  return {
    [`${group}/success_rate`]: episodes.filter((e) => e.success).length / n,
    [`${group}/episodic_return`]: episodes.reduce((s, e) => s + e.return, 0) / n,
    [`${group}/episode_length`]: episodes.reduce((s, e) => s + e.steps.length, 0) / n,
    // A dream whose episodes all run to the step limit never ends one: see dream-health.ts.
    ...(phase === 'dream' ? { 'dream/truncated_rate': episodes.filter(hitStepLimit).length / n } : {}),
    // Dreams begun at a real state (real-starts.ts); they end at their horizon, which counts as truncated.
    ...(phase === 'dream' && episodes.some((e) => e.realStart)
      ? { 'dream/real_start_share': episodes.filter((e) => e.realStart).length / n }
      : {}),
  };
}

function hitStepLimit(e: IterationFacts['episodes'][number]): boolean {
  return e.record !== undefined && e.record.length > 0 && e.record[e.record.length - 1].truncated;
}

/** Names of the rollout-success metric: real rollouts, and rollouts the dream judged. */
export const TRAIN_SUCCESS = 'charts/success_rate';
export const DREAM_SUCCESS = 'dream/success_rate';

/**
 * The rollouts' success rate of an iteration and who judged it (the real env or the dream), for
 * summaries and progress lines; null when the iteration has none (every episode cut by the budget).
 */
export function rolloutSuccess(metrics: Metrics): { value: number; judge: 'real' | 'dream' } | null {
  if (typeof metrics[TRAIN_SUCCESS] === 'number') return { value: metrics[TRAIN_SUCCESS], judge: 'real' };
  if (typeof metrics[DREAM_SUCCESS] === 'number') return { value: metrics[DREAM_SUCCESS], judge: 'dream' };
  return null;
}

/** Per answer the experience model was asked for. */
function dreamMetrics(r: RolloutTally): Metrics {
  const per = (x: number) => (r.predictions ? x / r.predictions : 0);
  return {
    'dream/invalid_rate': per(r.invalid),
    'dream/tokens_per_transition': per(r.tokens),
    'dream/cache_hit_rate': per(r.cacheHits),
    'dream/halt_rate': per(r.halts),
    // The generated state's uncertainty: other draws asked for, per answer (halting-model.ts).
    'dream/redraw_rate': per(r.redraws),
    ...(r.judged ? { 'dream/disagreement': r.disagreement / r.judged } : {}),
  };
}

/** A correction round: replays of claimed successes, the share the real env did not confirm, the real steps spent. */
function correctionMetrics(c: NonNullable<IterationFacts['correction']>): Metrics {
  return {
    's2r/corrected_episodes': c.replayed,
    ...(c.replayed > 0 ? { 's2r/false_success_rate': c.misses / c.replayed } : {}),
    's2r/correction_steps': c.steps,
  };
}

function curriculumMetrics(c: Curriculum, startFailed: number): Metrics {
  return {
    'curriculum/mean_variance': c.lastMeanVariance,
    'curriculum/synthetic_share': c.lastSyntheticShare,
    ...(c.usesLlm
      ? {
          'curriculum/llm_variations': c.lastLlmQueued,
          'curriculum/llm_invalid': c.lastLlmInvalid,
          'curriculum/llm_start_failed': startFailed,
        }
      : {}),
  };
}
