/**
 * Live progress inside an iteration, for any engine: a dream with a language model can take
 * minutes per iteration, so the page and the CLI show what the model is doing while it works —
 * dream steps done out of planned, usable and unusable answers, tokens/s and transitions/s over
 * the last minute, the cache hit rate, and the time left for the iteration and the run.
 *
 * ProgressMeter is handed to the Trainer (TrainerDeps.progress); the trainer tells it where the
 * iteration is (its rollout steps as they complete, rollout.ts; then the update and the
 * evaluation) and whoever shows progress reads `snapshot()` whenever it likes (the trainer worker
 * every second, the CLI's progress line). It only watches: nothing it does changes the run, and
 * it reads time from the clock it is given (core never reads the clock itself).
 *
 * "Planned" is an upper bound that tightens as the iteration goes: the steps taken so far plus
 * the most the running episodes can still take (each up to the step limit), so the iteration's
 * time left is an upper estimate too. The run's time left adds the remaining iterations at the
 * mean duration of the iterations this meter saw finish (before the first one finishes: at the
 * current iteration's planned steps and speed).
 */
import type { StepResult } from '../types';
import type { Phase } from './config';
import type { RolloutProgressHook } from './rollout';

/** Where an iteration is. */
export type IterationStage = 'rollout' | 'update' | 'evaluation';

/** The trainer's side of a progress meter (see Trainer.runIteration). */
export interface IterationProgressHook extends RolloutProgressHook {
  startIteration(iteration: number, phase: Phase): void;
  stage(stage: IterationStage): void;
  endIteration(): void;
}

/** Counts of dreamed steps: asked of the model, unusable answers, cache hits, tokens. */
export interface DreamCounts {
  /** Env steps taken (dreamed and real). */
  steps: number;
  /** Steps the experience model was asked about (cache hits included). */
  predictions: number;
  invalid: number;
  cacheHits: number;
  tokens: number;
}

export interface LiveProgress {
  /** The iteration in progress (1-based) and the run's iterations. */
  iteration: number;
  iterations: number;
  phase: Phase;
  stage: IterationStage;
  /** This iteration's steps: done, and the most there can be (tightens as episodes end). */
  done: number;
  planned: number;
  /** This iteration's dream counts (valid answers = predictions − invalid). */
  current: DreamCounts;
  /** Since this meter started (this session of the run). */
  total: DreamCounts;
  /** Over the last minute (or since the meter started, if sooner). */
  tokensPerSecond: number;
  transitionsPerSecond: number;
  /** Answers the engine really gave per second (cache hits and refused no-ops left out): its speed. */
  callsPerSecond: number;
  windowSeconds: number;
  /** Cache hits per prediction, this iteration (null before the first prediction). */
  cacheHitRate: number | null;
  /** Seconds since the iteration started. */
  iterationSeconds: number;
  /** Estimated seconds left (null until there is a speed to go by). */
  iterationSecondsLeft: number | null;
  runSecondsLeft: number | null;
}

const WINDOW_MS = 60_000;

function noCounts(): DreamCounts {
  return { steps: 0, predictions: 0, invalid: 0, cacheHits: 0, tokens: 0 };
}

export class ProgressMeter implements IterationProgressHook {
  private iteration = 0;
  private phase: Phase = 'dream';
  private currentStage: IterationStage = 'rollout';
  private iterationStarted = 0;
  private readonly started: number;
  private current = noCounts();
  private readonly total = noCounts();
  private planned = 0;
  /** Each step of the last minute: when, its tokens, whether the engine was really called. */
  private events: { at: number; tokens: number; call: boolean }[] = [];
  private finishedSeconds: number[] = [];

  /** `iterations`: how many the run has (the run's time left counts the rest); `clock`: ms, monotonic. */
  constructor(
    private readonly clock: () => number,
    private readonly iterations: number,
    private readonly windowMs = WINDOW_MS,
  ) {
    this.started = clock();
    this.iterationStarted = this.started;
  }

  startIteration(iteration: number, phase: Phase): void {
    this.iteration = iteration;
    this.phase = phase;
    this.currentStage = 'rollout';
    this.iterationStarted = this.clock();
    this.current = noCounts();
    this.planned = 0;
  }

  stepPlanned(stepsLeftAtMost: number): void {
    this.planned = this.current.steps + stepsLeftAtMost;
  }

  stepDone(result: StepResult): void {
    const tokens = countStep(this.current, result);
    countStep(this.total, result);
    const dream = result.info.dream;
    this.events.push({ at: this.clock(), tokens, call: dream?.predicted === true && !dream.cached });
    this.planned = Math.max(this.planned, this.current.steps);
  }

  stage(stage: IterationStage): void {
    this.currentStage = stage;
    if (stage !== 'rollout') this.planned = this.current.steps;
  }

  endIteration(): void {
    this.finishedSeconds.push((this.clock() - this.iterationStarted) / 1000);
  }

  snapshot(): LiveProgress {
    const now = this.clock();
    this.events = this.events.filter((e) => now - e.at <= this.windowMs);
    const windowMs = Math.max(1, Math.min(this.windowMs, now - this.started));
    const perSecond = (x: number) => (x * 1000) / windowMs;
    const transitionsPerSecond = perSecond(this.events.length);
    const c = this.current;
    const stepsLeft = Math.max(0, this.planned - c.steps);
    const iterationSecondsLeft =
      this.currentStage !== 'rollout'
        ? 0
        : stepsLeft === 0
          ? 0
          : transitionsPerSecond > 0
            ? stepsLeft / transitionsPerSecond
            : null;
    const meanSeconds = this.finishedSeconds.length
      ? this.finishedSeconds.reduce((a, b) => a + b, 0) / this.finishedSeconds.length
      : transitionsPerSecond > 0 && this.planned > 0
        ? this.planned / transitionsPerSecond
        : null;
    const iterationsLeft = Math.max(0, this.iterations - this.iteration);
    const runSecondsLeft =
      iterationSecondsLeft === null
        ? null
        : iterationsLeft === 0
          ? iterationSecondsLeft
          : meanSeconds === null
            ? null
            : iterationSecondsLeft + iterationsLeft * meanSeconds;
    return {
      iteration: this.iteration,
      iterations: this.iterations,
      phase: this.phase,
      stage: this.currentStage,
      done: c.steps,
      planned: Math.max(this.planned, c.steps),
      current: { ...c },
      total: { ...this.total },
      tokensPerSecond: perSecond(this.events.reduce((s, e) => s + e.tokens, 0)),
      transitionsPerSecond,
      callsPerSecond: perSecond(this.events.filter((e) => e.call).length),
      windowSeconds: windowMs / 1000,
      cacheHitRate: c.predictions > 0 ? c.cacheHits / c.predictions : null,
      iterationSeconds: (now - this.iterationStarted) / 1000,
      iterationSecondsLeft,
      runSecondsLeft,
    };
  }
}

/** Adds one step to the counts; returns its tokens. */
function countStep(counts: DreamCounts, result: StepResult): number {
  counts.steps++;
  const dream = result.info.dream;
  if (!dream?.predicted) return 0;
  counts.predictions++;
  counts.tokens += dream.tokens;
  if (dream.cached) counts.cacheHits++;
  if (dream.invalid) counts.invalid++;
  return dream.tokens;
}

/** A duration in words for a progress line: '45 s', '12 min', '3 h 20 min', '6.7 days'. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  const minutes = Math.round(s / 60);
  if (minutes < 90) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours >= 48) return `${(minutes / 60 / 24).toFixed(1)} days`;
  const rest = minutes % 60;
  return rest ? `${hours} h ${rest} min` : `${hours} h`;
}

function rate(x: number): string {
  return x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2);
}

/**
 * The progress as one line (the CLI's progress line; the page shows the same figures as fields):
 * `iteration 3/12 dream steps 41/≤96 valid 38 invalid 3 · 52 tok/s 0.7 transitions/s (last 60 s) · cache 12% · left: iteration ≈ 1 min, run ≈ 14 min`.
 */
export function formatProgressLine(p: LiveProgress): string {
  const c = p.current;
  const what = p.phase === 'dream' ? 'dream steps' : 'real steps';
  const stage =
    p.stage === 'rollout' ? '' : p.stage === 'update' ? ' (updating the policy)' : ' (evaluating on held-out tasks)';
  const parts = [
    `iteration ${p.iteration}/${p.iterations} ${what} ${p.done}/${p.done === p.planned ? p.planned : `≤${p.planned}`}${stage}`,
  ];
  if (p.phase === 'dream') parts.push(`valid ${c.predictions - c.invalid} invalid ${c.invalid}`);
  const speed = `${rate(p.transitionsPerSecond)} transitions/s`;
  parts.push(
    p.phase === 'dream'
      ? `${rate(p.tokensPerSecond)} tok/s ${speed} (last ${Math.round(p.windowSeconds)} s)`
      : `${speed} (last ${Math.round(p.windowSeconds)} s)`,
  );
  if (p.cacheHitRate !== null) parts.push(`cache ${Math.round(p.cacheHitRate * 100)}%`);
  parts.push(`left: iteration ≈ ${formatDuration(p.iterationSecondsLeft)}, run ≈ ${formatDuration(p.runSecondsLeft)}`);
  return parts.join(' · ');
}
