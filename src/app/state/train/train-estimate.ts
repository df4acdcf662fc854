/**
 * How long a Train page run takes, from this machine's measured speed (plain logic, unit-tested;
 * the page's TrainClock feeds it). The run's work is measured once in the page, in units of the
 * speed check's work (machine-speed.ts), so that dividing it by the score this machine gets now
 * gives seconds on this machine:
 *
 *   seconds ≈ (start + dreamed transitions × perDreamed + evaluated episodes × perEvaluated) / score × factor
 *
 * where the dreamed transitions are core's estimate (estimate.ts: episodes × the shipped model's
 * typical episode length), the evaluated episodes every held-out evaluation's (iteration 0's, every
 * evalInterval's and the final one), and `factor` 1 until this browser has timed a run of its own
 * (the last run's measured seconds over what this model said, kept in localStorage). While the run
 * trains, each iteration record that arrives is a measurement of the pace, weighed against the
 * first estimate by how much of the work it covers (as start-here-estimate.ts does for the group).
 *
 * Measured only for a dream with the shipped webshop learned model (the work below): with another
 * engine or env the page gives the dream's model time alone (core's estimate) and no run estimate.
 */
import { estimateDreamCost } from '../../../core/train/estimate';
import type { TrainConfig } from '../../../core/train/config';
import { learnedPathOfSpec } from '../setup/learned-path';
import { shortDuration } from '../start/start-here-estimate';

export interface RunWork {
  /** Loading the engine and the worker's start, up to the first rollout. */
  start: number;
  /** One dreamed transition: the model's decode, the policy's step and its share of the update. */
  perDreamed: number;
  /** One held-out real episode of the evaluations. */
  perEvaluated: number;
}

/**
 * Measured in the page (built app, fresh Chromium profiles, 4 tasks × 8 rollouts) by
 * tests/e2e/app-train-estimate.e2e.test.ts, which logs each run's seconds × score (the mean of the checks
 * before and after): docs/results/start-here.md, "Estimates on the Train page and the
 * Experience model tab".
 */
export const RUN_WORK: Record<string, RunWork> = {
  // Three sizes (4 iterations, evaluation at the end on 10 episodes; 12 so; 4 with 50 at every iteration): the
  // dreamed transitions' slope between the first two, the evaluations' from the third (a greedy webshop episode is short).
  'webshop-lite-v0': { start: 1.2e6, perDreamed: 5.5e3, perEvaluated: 1.2e3 },
};

type RunConfig = Pick<
  TrainConfig,
  | 'mode'
  | 'env'
  | 'llm'
  | 'iterations'
  | 'tasksPerIteration'
  | 'groupSize'
  | 'llmConcurrency'
  | 'evalInterval'
  | 'evalEpisodes'
  | 'finalEvalEpisodes'
> &
  Partial<Pick<TrainConfig, 'realStartShare' | 'realStartHorizon'>>;

/** The measured work of this run's kind, or null (only a dream with the env's shipped learned model was measured). */
export function runWorkFor(config: RunConfig): RunWork | null {
  const path = learnedPathOfSpec(config.llm);
  if (config.mode !== 'dream' || path?.where !== 'shipped' || path.env !== config.env) return null;
  return RUN_WORK[config.env] ?? null;
}

/** Held-out episodes evaluated before iteration `iteration`'s record arrives (its own evaluation included). */
export function evaluatedBy(config: RunConfig, iteration: number): number {
  const { evalInterval: every, evalEpisodes, finalEvalEpisodes, iterations } = config;
  // Iteration 0's evaluation comes with the first record; the last iteration's is the final one.
  const scheduled = every > 0 ? 1 + Math.floor(Math.min(iteration, iterations - 1) / every) : 0;
  return scheduled * evalEpisodes + (iteration >= iterations ? finalEvalEpisodes : 0);
}

/**
 * Each iteration's share of the dream's work falls by this factor from one to the next: the policy learns to
 * finish sooner, so its dreamed episodes shorten (the records of a 12-iteration run came 2.9 s apart over the
 * first three iterations and 1.1–1.5 s over the last four). The run's whole dream stays as fitted.
 */
export const ITERATION_DECAY = 0.9;

/** The share of a run's dreamed work done after `iteration` of `iterations` iterations. */
export function dreamShareBy(iteration: number, iterations: number): number {
  const k = Math.max(0, Math.min(iteration, iterations));
  return iterations > 0 ? (1 - ITERATION_DECAY ** k) / (1 - ITERATION_DECAY ** iterations) : 0;
}

/** The work before iteration `iteration`'s record (0: the start; `iterations`: the whole run). */
export function workBy(work: RunWork, config: RunConfig, iteration: number): number {
  const dreamed = estimateDreamCost(config).transitions * dreamShareBy(iteration, config.iterations);
  return work.start + dreamed * work.perDreamed + evaluatedBy(config, iteration) * work.perEvaluated;
}

/** The run's seconds from the click, before it starts. */
export function runSeconds(work: RunWork, config: RunConfig, score: number, factor: number): number {
  return (workBy(work, config, config.iterations) * factor) / score;
}

/** The prior's weight, as a share of the run's work (a record outweighs it once it covers this much). */
const PRIOR_SHARE = 0.2;

export interface RunTimeInput {
  /** The whole run's work, and the work before the next record (null: none is due). */
  total: number;
  next: number | null;
  /** Seconds per unit of work before the run (factor / score). */
  prior: number;
  /** Seconds since the click. */
  elapsed: number;
  /** The records so far, in order: the work before each and when it came (seconds since the click). */
  records: readonly { work: number; seconds: number }[];
}

/** The records the pace is measured over (the last ones: a policy that learns plays shorter episodes later). */
const PACE_RECORDS = 4;

/**
 * The run's seconds left: the work after the last record at a pace that weighs the prior with the pace the
 * last PACE_RECORDS records show (the start, iteration 0's evaluation and the first iterations' long episodes
 * are behind them: a pace from the click read 1.6–1.8× the time left in the run's last third). A next record not in by
 * the time this pace gives it moves the pace halfway to the one its lateness shows, and the work after it is
 * still to come.
 */
export function runSecondsLeft(input: RunTimeInput): number {
  const { total, next, prior, elapsed, records } = input;
  const last = records.at(-1) ?? { work: 0, seconds: 0 };
  const from = records.length >= 2 ? records[Math.max(0, records.length - 1 - PACE_RECORDS)] : { work: 0, seconds: 0 };
  const weight = PRIOR_SHARE * total,
    covered = last.work - from.work;
  let pace = covered > 0 ? (weight * prior + (last.seconds - from.seconds)) / (weight + covered) : prior;
  const since = elapsed - last.seconds;
  let floor = 0;
  if (next !== null && next > last.work && since > pace * (next - last.work)) {
    pace = (pace + since / (next - last.work)) / 2;
    floor = pace * (total - next);
  }
  return Math.max(pace * (total - last.work) - since, floor, 0);
}

/** What this browser measured: the last timed run's seconds over what the speed check alone predicted. */
export interface LastRunTime {
  factor: number;
  seconds: number;
  at: number;
}

export const LAST_RUN_KEY = 'dreamgym.train.last-time';

/** A factor from a run that finished, kept within [1/3, 3]. */
export function lastRunTime(predictedSeconds: number, seconds: number, at: number): LastRunTime {
  return { factor: Math.min(3, Math.max(1 / 3, seconds / predictedSeconds)), seconds, at };
}

export function readLastRunTime(storage: Pick<Storage, 'getItem'> | null): LastRunTime | null {
  try {
    const v = JSON.parse(storage?.getItem(LAST_RUN_KEY) ?? 'null') as Partial<LastRunTime> | null;
    if (!v || typeof v.factor !== 'number' || !(v.factor > 0) || typeof v.seconds !== 'number') return null;
    return typeof v.at === 'number' ? (v as LastRunTime) : null;
  } catch {
    return null;
  }
}

/** Before the click: the whole run's time here, and what it rests on. */
export function runBeforeSentence(seconds: number, last: LastRunTime | null): string {
  const basis = last
    ? `this machine's speed, checked just now, and its last timed run here (${shortDuration(last.seconds)})`
    : "this machine's speed, checked just now for a second";
  return `The whole run (dream, policy updates, held-out evaluations): ≈ ${shortDuration(seconds)} on this machine (from ${basis}).`;
}
