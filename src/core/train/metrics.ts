/**
 * Every metric of a training iteration, built here and only here (design.md §5): the rollouts'
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
  episodes: readonly { success: boolean; return: number; steps: readonly unknown[] }[];
  losses: UpdateMetrics;
  realSteps: number;
  dreamSteps: number;
  rollout: RolloutTally;
  curriculum: Curriculum | null;
  /** LLM-written tasks whose dreamed first state failed (a pool task played instead). */
  startFailed: number;
  evaluation?: EvalResult;
  /** Wall-clock seconds of the iteration (only with an injected clock). */
  seconds?: number;
}

export function iterationMetrics(f: IterationFacts): Metrics {
  return {
    ...episodeMetrics(f.episodes),
    ...f.losses,
    'budget/real_steps': f.realSteps,
    'budget/dream_steps': f.dreamSteps,
    ...(f.phase === 'dream' ? dreamMetrics(f.rollout) : {}),
    ...(f.curriculum ? curriculumMetrics(f.curriculum, f.startFailed) : {}),
    ...(f.evaluation ? { 'eval/success_rate': f.evaluation.success, 'eval/score': f.evaluation.score } : {}),
    ...(f.seconds !== undefined && f.seconds > 0 ? { 'perf/steps_per_second': f.rollout.steps / f.seconds, 'perf/iteration_seconds': f.seconds } : {}),
  };
}

/** In dream mode these are the dream's own judgement (design.md §5): real success is eval/…. */
function episodeMetrics(episodes: IterationFacts['episodes']): Metrics {
  const n = episodes.length;
  return {
    'charts/success_rate': episodes.filter((e) => e.success).length / n,
    'charts/episodic_return': episodes.reduce((s, e) => s + e.return, 0) / n,
    'charts/episode_length': episodes.reduce((s, e) => s + e.steps.length, 0) / n,
  };
}

/** Per answer the experience model was asked for. */
function dreamMetrics(r: RolloutTally): Metrics {
  const per = (x: number) => (r.predictions ? x / r.predictions : 0);
  return { 'dream/invalid_rate': per(r.invalid), 'dream/tokens_per_transition': per(r.tokens), 'dream/cache_hit_rate': per(r.cacheHits) };
}

function curriculumMetrics(c: Curriculum, startFailed: number): Metrics {
  return {
    'curriculum/mean_variance': c.lastMeanVariance,
    'curriculum/synthetic_share': c.lastSyntheticShare,
    ...(c.usesLlm ? { 'curriculum/llm_variations': c.lastLlmQueued, 'curriculum/llm_invalid': c.lastLlmInvalid, 'curriculum/llm_start_failed': startFailed } : {}),
  };
}
