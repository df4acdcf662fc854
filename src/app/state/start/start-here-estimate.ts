/**
 * How long the start-here group takes, from this machine's measured speed (plain logic,
 * unit-tested; the page's StartHereClock feeds it). The group's work is measured once, in units of
 * the speed check's work (machine-speed.ts), so that dividing it by the score this machine gets now
 * gives seconds on this machine:
 *
 *   seconds ≈ work(iterations) / score × factor
 *
 * where `factor` is 1 until this browser has timed a group of its own (the last run's measured
 * seconds over what this model said, kept in localStorage). While the runs train, each iteration
 * record that arrives is a measurement: the seconds it took against the work the model puts before
 * it, weighed against the first estimate by how much of the work it covers; and a run that has not
 * reached its next record by the time the model gave it bounds the pace from below.
 *
 * The work model: the real run's records at realStart + i × realPerIteration, the dream's at
 * dreamStart + min(N, fullIterations) × dreamStartPerIteration + i × dreamPerIteration (N iterations), S2R's real phase
 * after the dream by s2rTail. An iteration's work is that of the untrained policy's long episodes for the first
 * `fullIterations`; after them the policy has learned to finish sooner, and each costs `learnedShare` of one (the
 * counts i and N above are such effective iterations). The three share the machine, so each chain's work is what it takes
 * while the others run too (measured in the page:
 * docs/results/start-here.md, "Estimates from measured speed"). Only the shipped learned model's dream
 * was measured: with another engine (the oracle, a chat model) the page gives no group estimate.
 */
import type { Mode } from '../../../core/train/config';

export interface GroupWork {
  realStart: number;
  realPerIteration: number;
  /** The dream's start (loading the model, grounding the buffer, iteration 0), longer the longer real RL shares the machine. */
  dreamStart: number;
  dreamStartPerIteration: number;
  dreamPerIteration: number;
  /** Before the dream's first rollout begins (its live progress says so): a milestone a quarter of the way in. */
  dreamBegins: number;
  dreamBeginsPerIteration: number;
  /** S2R's real phase after the dream: more real iterations after a longer dream (the 600 steps go in shorter episodes). */
  s2rTail: number;
  s2rTailPerIteration: number;
  /** Iterations at the untrained policy's cost; each later one costs learnedShare of one. */
  fullIterations: number;
  learnedShare: number;
}

/**
 * Measured in the page with the shipped webshop learned model at the start-here size (4 tasks × 8
 * rollouts), two groups each of 2 and 12 iterations at loads of 12 to 22 on 2 cores; the dream's records fitted by
 * least squares (each within 18 % but one), S2R's tail through the means at each size (0.7 and 1.3 M at 2, 2.0 and
 * 5.8 M at 12):
 * `scripts/measure/start-here-timing.ts`, docs/results/start-here.md ("Estimates from measured speed").
 */
export const START_HERE_WORK: GroupWork = {
  realStart: 1.21e6,
  realPerIteration: 0.7e6,
  dreamStart: 0.74e6,
  dreamStartPerIteration: 0.456e6,
  dreamPerIteration: 1.428e6,
  dreamBegins: 0.83e6,
  dreamBeginsPerIteration: 0.114e6,
  s2rTail: 0.46e6,
  s2rTailPerIteration: 0.287e6,
  // The size of 30 iterations at learning rate 0.01, timed in the page (scripts/measure/start-here-timing.ts): 27.5 M
  // of work where the costs above, at full cost every iteration, give 66 M (the page said 108–128 s for 44 s). The
  // dream's records after its fourth came 0.6 M apart, about 0.4 of the first ones. Two iterations are at full cost.
  fullIterations: 4,
  learnedShare: 0.4,
};

const REAL_KEYS = ['realStart', 'realPerIteration'] as const;

/**
 * Another environment's group work in webshop's shape: its real RL costs `real` times webshop's, its dream and S2R's
 * tail `dream` times, iteration for iteration.
 */
export function scaledWork(work: GroupWork, factor: { real: number; dream: number }): GroupWork {
  const scaled = { ...work };
  for (const key of Object.keys(work) as (keyof GroupWork)[]) {
    if (key === 'fullIterations' || key === 'learnedShare') continue;
    scaled[key] = work[key] * ((REAL_KEYS as readonly string[]).includes(key) ? factor.real : factor.dream);
  }
  return scaled;
}

/**
 * mini-WebArena's group work: not timed in the page; webshop's, scaled by CPU seconds measured in the CLI on the same
 * machine the same hour (docs/results/start-here.md, "Other environments"). Its real RL at 20 iterations took 12.8 s
 * (seeds 1-3) where webshop's at 30 took 10.2 s; its dream and S2R's tail (the CLI's S2R run, which dreams again)
 * 18.1 s where webshop's took 52.0 s. Per iteration of the model (20 against 30): real × 1.67, dream × 0.46. Its real
 * RL is then the longer chain: its episodes lengthen as it learns, where webshop's shorten. Then timed in the page on a
 * quiet machine (scripts/measure/start-here-page.ts --env webarena-lite-v0, seeds 1-3): these factors overshot the
 * group's time 1.68× on average where webshop's own estimate overshot 1.37× the same hour, so both are scaled by
 * 1.37 / 1.68, to overshoot as webshop's does.
 */
const PAGE_CORRECTION = 1.37 / 1.68;
export const WEBARENA_WORK: GroupWork = scaledWork(START_HERE_WORK, {
  real: 1.67 * PAGE_CORRECTION,
  dream: 0.46 * PAGE_CORRECTION,
});

/** Iterations at full cost that `iterations` amount to (the policy's episodes shorten once it has learned). */
export function effectiveIterations(work: GroupWork, iterations: number): number {
  const full = Math.min(iterations, work.fullIterations);
  return full + (iterations - full) * work.learnedShare;
}

/** The prior's weight, as a share of the group's work (a first record outweighs it once it covers this much). */
const PRIOR_SHARE = 0.2;
/** A run's next record bounds the pace only when the model puts at least this share of the work before it. */
const BOUND_SHARE = 0.1;

/**
 * The reference work before a run's record of `iteration` arrives, in a group of `iterations` (null: not
 * a milestone the model times; iteration 0's record comes with iteration 1's).
 */
export function milestoneWork(work: GroupWork, mode: Mode, iteration: number, iterations: number): number | null {
  if (iteration < 1 || mode !== longerChain(work, iterations)) return null;
  const done = effectiveIterations(work, iteration);
  if (mode === 'real') return work.realStart + done * work.realPerIteration;
  return dreamStart(work, iterations) + done * work.dreamPerIteration;
}

/** The reference work before the dream's first rollout begins (null when the dream is not the chain that times the group). */
export function dreamBeginsWork(work: GroupWork, iterations: number): number | null {
  if (longerChain(work, iterations) !== 'dream') return null;
  return work.dreamBegins + effectiveIterations(work, iterations) * work.dreamBeginsPerIteration;
}

/**
 * The run whose records time the group: the chain the group waits for. The other's pace says little
 * of it (measured: real RL's first records came 1.5× sooner in one group than in another at the
 * same speed check, the dream's did not).
 */
export function longerChain(work: GroupWork, iterations: number): 'real' | 'dream' {
  const real = work.realStart + effectiveIterations(work, iterations) * work.realPerIteration;
  return real > dreamChain(work, iterations) ? 'real' : 'dream';
}

function dreamChain(work: GroupWork, iterations: number): number {
  const n = effectiveIterations(work, iterations);
  return dreamStart(work, iterations) + n * work.dreamPerIteration + work.s2rTail + n * work.s2rTailPerIteration;
}

function dreamStart(work: GroupWork, iterations: number): number {
  // Real RL slows the dream's start only while its own untrained episodes are long: its first iterations.
  return work.dreamStart + Math.min(iterations, work.fullIterations) * work.dreamStartPerIteration;
}

/** The whole group's work at `iterations` (S2R's real phase follows the dream). */
export function groupWork(work: GroupWork, iterations: number): number {
  const real = work.realStart + effectiveIterations(work, iterations) * work.realPerIteration;
  return Math.max(real, dreamChain(work, iterations));
}

/** A record's arrival: the work the model puts before it and the seconds it took since the click. */
export interface Milestone {
  work: number;
  seconds: number;
  /**
   * A start (the dream's first rollout): its lateness is waiting (loading the model, the worker's start),
   * not a slower pace, so it moves where the remaining work begins, never the pace.
   */
  start?: boolean;
}

export interface GroupTimeInput {
  work: GroupWork;
  iterations: number;
  /** The speed check's score now (rounds/s) and the last run's correction (1 when there is none). */
  score: number;
  factor: number;
  /** Seconds since the click. */
  elapsed: number;
  /** Records so far. */
  milestones: readonly Milestone[];
  /** The reference work of each run's next record, for runs still training toward one. */
  next: readonly number[];
}

/**
 * The group's seconds left: the prior pace (the speed check) weighed with the furthest milestone. A record
 * not yet in by the time this pace gives it counts as half a slower machine and half a slow stretch: the
 * pace moves halfway to the one it shows, and the rest of the work after that record is still to come. A
 * late start (the dream's first rollout after its model loads) shifts the rest of the work, not its pace:
 * read as pace, it made the estimate 1.5–1.6× the time left until the dream's first record came.
 */
export function groupSecondsLeft(input: GroupTimeInput): number {
  const total = groupWork(input.work, input.iterations);
  const prior = input.factor / input.score;
  const furthestOf = (milestones: readonly Milestone[]) =>
    milestones.reduce<Milestone | null>((a, m) => (a && a.work >= m.work ? a : m), null);
  const furthest = furthestOf(input.milestones.filter((m) => !m.start));
  const priorWeight = PRIOR_SHARE * total;
  let pace =
    furthest && furthest.work > 0 ? (priorWeight * prior + furthest.seconds) / (priorWeight + furthest.work) : prior;
  // A start further than every record: the work after it, at the pace, from when it came.
  const start = furthestOf(input.milestones.filter((m) => m.start && m.work > (furthest?.work ?? 0)));
  // Records are due from the start where one came (its wait is behind them), else from the click.
  const from = start && start.work < Math.min(...input.next) ? start : { work: 0, seconds: 0 };
  let floor = 0;
  for (const work of input.next) {
    // Records early in the run are too noisy to bound anything.
    const since = input.elapsed - from.seconds;
    if (work < BOUND_SHARE * total || since <= pace * (work - from.work)) continue;
    pace = (pace + since / (work - from.work)) / 2;
    floor = Math.max(floor, pace * (total - work));
  }
  const left = start ? pace * (total - start.work) - (input.elapsed - start.seconds) : pace * total - input.elapsed;
  return Math.max(left, floor, 0);
}

/** The seconds the group takes from the start, before it starts. */
export function groupSeconds(work: GroupWork, iterations: number, score: number, factor: number): number {
  return (groupWork(work, iterations) * factor) / score;
}

/** What this browser measured: the last group's seconds over what the speed check alone predicted. */
export interface LastGroupTime {
  factor: number;
  seconds: number;
  iterations: number;
  at: number;
}

export const LAST_GROUP_KEY = 'dreamgym.start-here.last-time';

/** A factor from a group that finished: kept within [1/3, 3] (a run stopped and resumed is not a measurement). */
export function lastGroupTime(
  work: GroupWork,
  iterations: number,
  score: number,
  seconds: number,
  at: number,
): LastGroupTime {
  const predicted = groupSeconds(work, iterations, score, 1);
  return { factor: Math.min(3, Math.max(1 / 3, seconds / predicted)), seconds, iterations, at };
}

export function readLastGroupTime(
  storage: Pick<Storage, 'getItem'> | null,
  key = LAST_GROUP_KEY,
): LastGroupTime | null {
  try {
    const v = JSON.parse(storage?.getItem(key) ?? 'null') as Partial<LastGroupTime> | null;
    if (!v || typeof v.factor !== 'number' || !(v.factor > 0) || typeof v.seconds !== 'number') return null;
    if (typeof v.iterations !== 'number' || typeof v.at !== 'number') return null;
    return v as LastGroupTime;
  } catch {
    return null;
  }
}

/** A duration for the page: '40 s', '2 min 10 s', '6 min'. */
export function shortDuration(seconds: number): string {
  const s = Math.max(1, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60),
    rest = s % 60;
  if (m >= 10) return `${Math.round(s / 60)} min`;
  return rest >= 5 ? `${m} min ${Math.round(rest / 5) * 5} s` : `${m} min`;
}

/** Before the click: how long the three take here, and what that rests on. */
export function beforeStartSentence(seconds: number, last: LastGroupTime | null): string {
  const basis = last
    ? `this machine's speed, checked just now, and its last start-here run (${shortDuration(last.seconds)})`
    : "this machine's speed, checked just now for a second";
  return `≈ ${shortDuration(seconds)} for all three on this machine (from ${basis}).`;
}

/** While they train: the group's time left. */
export function timeLeftSentence(secondsLeft: number): string {
  return secondsLeft < 1 ? 'Finishing…' : `≈ ${shortDuration(secondsLeft)} left for all three.`;
}
