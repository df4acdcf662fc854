/**
 * The Train page's run time estimates (state; the arithmetic is train-estimate.ts): a one-second
 * speed check of this machine before the click (repeated at the click when older than
 * CHECK_FRESH_MS), the run's time left while it trains, re-measured on every iteration record that
 * arrives, and, when a timed run finishes, its measured time kept in localStorage so the next first
 * estimate starts from it. A resumed run gets no run estimate: its start is not known.
 */
import type { TrainConfig } from '../../../core/train/config';
import { checkMachineSpeed } from '../shared/machine-check';
import {
  LAST_RUN_KEY,
  lastRunTime,
  readLastRunTime,
  runBeforeSentence,
  runSeconds,
  runSecondsLeft,
  runWorkFor,
  workBy,
  type LastRunTime,
  type RunWork,
} from './train-estimate';

const CHECK_FRESH_MS = 20_000;

const storage = (): Storage | null => (typeof localStorage === 'undefined' ? null : localStorage);

export class TrainClock {
  /** The speed check's score (rounds/s), null until measured. */
  score = $state<number | null>(null);
  last = $state.raw<LastRunTime | null>(readLastRunTime(storage()));
  /** When the timed run started (performance.now()), null when none is timed. */
  startedAt = $state<number | null>(null);
  /** Ticks every second while a run is timed, so the time left counts down. */
  now = $state(0);
  private records = $state.raw<{ work: number; seconds: number }[]>([]);
  private nextIteration = $state(1);
  private timed: { config: TrainConfig; work: RunWork; score: number; factor: number } | null = null;
  private checkedAt = -Infinity;
  private checkRun: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  /** Measures this machine's speed for about a second, unless a check is fresh. */
  check(): Promise<void> {
    if (performance.now() - this.checkedAt < CHECK_FRESH_MS && this.score !== null) return Promise.resolve();
    this.checkRun ??= checkMachineSpeed()
      .then((score) => {
        this.score = score;
        this.checkedAt = performance.now();
      })
      .finally(() => (this.checkRun = null));
    return this.checkRun;
  }

  /** The run's seconds from the click, before it starts (null: not a run whose work was measured, or no check yet). */
  expectedSeconds(config: TrainConfig | null): number | null {
    const work = config && runWorkFor(config);
    return work && this.score !== null ? runSeconds(work, config, this.score, this.last?.factor ?? 1) : null;
  }

  beforeStart(config: TrainConfig | null): string | null {
    const seconds = this.expectedSeconds(config);
    return seconds === null ? null : runBeforeSentence(seconds, this.last);
  }

  /** A new run starts now (its speed check taken at `score`). */
  begin(config: TrainConfig): void {
    this.cancel();
    const work = runWorkFor(config);
    if (!work || this.score === null) return;
    this.timed = { config, work, score: this.score, factor: this.last?.factor ?? 1 };
    this.records = [];
    this.nextIteration = 1;
    this.startedAt = this.now = performance.now();
    this.timer = setInterval(() => (this.now = performance.now()), 1000);
  }

  /** Iteration `iteration`'s record arrived. */
  record(iteration: number): void {
    if (this.startedAt === null || !this.timed || iteration < this.nextIteration) return;
    this.now = performance.now();
    const work = workBy(this.timed.work, this.timed.config, iteration);
    this.records = [...this.records, { work, seconds: this.elapsed() }];
    this.nextIteration = iteration + 1;
  }

  /** The run's seconds left, or null when none is timed. */
  get secondsLeft(): number | null {
    if (this.startedAt === null || !this.timed) return null;
    const { config, work, score, factor } = this.timed;
    const last = this.nextIteration > config.iterations;
    return runSecondsLeft({
      total: workBy(work, config, config.iterations),
      next: last ? null : workBy(work, config, this.nextIteration),
      prior: factor / score,
      elapsed: this.elapsed(),
      records: this.records,
    });
  }

  /** The timed run finished: its measured time is kept for the next first estimate. */
  finish(): void {
    if (this.startedAt === null || !this.timed) return;
    const seconds = (performance.now() - this.startedAt) / 1000;
    const { config, work, score } = this.timed;
    this.last = lastRunTime(runSeconds(work, config, score, 1), seconds, Date.now());
    try {
      storage()?.setItem(LAST_RUN_KEY, JSON.stringify(this.last));
    } catch {
      /* storage full or blocked: the next estimate starts from the speed check alone */
    }
    this.checkedAt = -Infinity; // the next estimate checks the speed again: the load may have changed meanwhile
    this.cancel();
  }

  /** Stops timing (Stop pressed, an error, or a new run). */
  cancel(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.startedAt = null;
    this.timed = null;
  }

  private elapsed(): number {
    return (this.now - (this.startedAt ?? this.now)) / 1000;
  }
}
