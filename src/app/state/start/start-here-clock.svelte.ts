/**
 * The start-here page's time estimates (state; the arithmetic is start-here-estimate.ts): a
 * one-second speed check of this machine before the click (repeated at the click if it is older
 * than CHECK_FRESH_MS), the group's time left while the three train, re-measured on every
 * iteration record that arrives, and, when a group finishes, its measured time kept in
 * localStorage so the next first estimate starts from it. A group resumed after a reload gets no
 * estimate: its start is not known.
 */
import type { Mode } from '../../../core/train/config';
import { measureSpeed } from '../shared/machine-speed';
import {
  beforeStartSentence,
  dreamBeginsWork,
  groupSecondsLeft,
  groupSeconds,
  LAST_GROUP_KEY,
  lastGroupTime,
  longerChain,
  milestoneWork,
  readLastGroupTime,
  START_HERE_WORK,
  timeLeftSentence,
  type GroupWork,
  type LastGroupTime,
  type Milestone,
} from './start-here-estimate';

const CHECK_FRESH_MS = 20_000;
const SETTLE_MS = 15_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const storage = (): Storage | null => (typeof localStorage === 'undefined' ? null : localStorage);

/** A macrotask: the page paints and handles input between the speed check's chunks. */
function yieldNow(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

export class StartHereClock {
  /** The speed check's score (rounds/s), null until measured. */
  score = $state<number | null>(null);
  checking = $state(false);
  last = $state.raw<LastGroupTime | null>(readLastGroupTime(storage()));
  /** The chosen environment's group work, and where its last timed group is kept (use). */
  private work = $state.raw<GroupWork>(START_HERE_WORK);
  private lastKey = LAST_GROUP_KEY;
  /** When the timed group started (performance.now()), null when none is timed. */
  startedAt = $state<number | null>(null);
  iterations = $state(0);
  /** Ticks every second while a group is timed, so the time left counts down. */
  now = $state(0);
  private milestones = $state.raw<Milestone[]>([]);
  private next = $state.raw<Partial<Record<Mode, number>>>({});
  private checkedAt = -Infinity;
  private checkRun: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private scoreAtStart = 1;
  private dreamBegun = false;

  /** Times another environment's group from now on: its work and its own last timed group. */
  use(work: GroupWork, lastKey: string): void {
    if (this.startedAt !== null) return; // a timed group keeps its work to the end
    this.work = work;
    this.lastKey = lastKey;
    this.last = readLastGroupTime(storage(), lastKey);
  }

  /** Measures this machine's speed for about a second, unless a check is fresh. */
  check(): Promise<void> {
    if (performance.now() - this.checkedAt < CHECK_FRESH_MS && this.score !== null) return Promise.resolve();
    this.checkRun ??= (async () => {
      this.checking = true;
      try {
        this.score = await measureSpeed({ clock: () => performance.now(), yieldNow });
        this.checkedAt = performance.now();
      } finally {
        this.checking = false;
        this.checkRun = null;
      }
    })();
    return this.checkRun;
  }

  /**
   * The first check, once the app has settled (`settled`, at most SETTLE_MS): checked while a fresh
   * profile still installs the app (the service worker fetching the offline shell), it read the machine
   * 4–5× slower than the runs then found it.
   */
  async checkWhenSettled(settled: Promise<unknown>): Promise<void> {
    await Promise.race([settled.catch(() => undefined), delay(SETTLE_MS)]);
    await delay(500);
    return this.check();
  }

  /** The group's seconds from the click, before it starts (null before the speed check). */
  expectedSeconds(iterations: number): number | null {
    return this.score === null ? null : groupSeconds(this.work, iterations, this.score, this.last?.factor ?? 1);
  }

  beforeStart(iterations: number): string | null {
    const seconds = this.expectedSeconds(iterations);
    return seconds === null ? null : beforeStartSentence(seconds, this.last);
  }

  /** A new group starts now; `timed`: its engine is the one the work was measured with. */
  begin(iterations: number, timed: boolean): void {
    this.cancel();
    if (!timed || this.score === null) return;
    this.iterations = iterations;
    this.scoreAtStart = this.score;
    this.milestones = [];
    this.dreamBegun = false;
    const chain = longerChain(this.work, iterations);
    this.next = { [chain]: milestoneWork(this.work, chain, 1, iterations)! };
    this.startedAt = this.now = performance.now();
    this.timer = setInterval(() => (this.now = performance.now()), 1000);
  }

  /** A run's live progress: the dream's first rollout beginning is a milestone. */
  live(mode: Mode, iteration: number, stage: string): void {
    if (this.startedAt === null || this.dreamBegun || mode !== 'dream' || iteration !== 1 || stage !== 'rollout')
      return;
    this.dreamBegun = true;
    const work = dreamBeginsWork(this.work, this.iterations);
    if (work !== null) this.reached(work, true);
  }

  /** A run's iteration record arrived. */
  record(mode: Mode, iteration: number): void {
    if (this.startedAt === null) return;
    const work = milestoneWork(this.work, mode, iteration, this.iterations);
    if (work === null) return; // not the chain the group waits for
    this.reached(work);
    const next = { ...this.next };
    if (iteration < this.iterations) next[mode] = milestoneWork(this.work, mode, iteration + 1, this.iterations)!;
    else delete next[mode];
    this.next = next;
  }

  private reached(work: number, start = false): void {
    this.now = performance.now();
    this.milestones = [...this.milestones, { work, seconds: this.elapsed(), ...(start ? { start } : {}) }];
  }

  /** The group's seconds left, or null when none is timed. */
  get secondsLeft(): number | null {
    if (this.startedAt === null) return null;
    return groupSecondsLeft({
      work: this.work,
      iterations: this.iterations,
      score: this.scoreAtStart,
      factor: this.last?.factor ?? 1,
      elapsed: this.elapsed(),
      milestones: this.milestones,
      next: Object.values(this.next),
    });
  }

  get line(): string | null {
    const left = this.secondsLeft;
    return left === null ? null : timeLeftSentence(left);
  }

  /** All three finished: the group's measured time is kept for the next first estimate. */
  finish(): void {
    if (this.startedAt === null) return;
    const seconds = (performance.now() - this.startedAt) / 1000;
    this.last = lastGroupTime(this.work, this.iterations, this.scoreAtStart, seconds, Date.now());
    try {
      storage()?.setItem(this.lastKey, JSON.stringify(this.last));
    } catch {
      /* storage full or blocked: the next estimate starts from the speed check alone */
    }
    this.checkedAt = -Infinity; // the next estimate checks the speed again: the load may have changed meanwhile
    this.cancel();
  }

  /** Stops timing (Stop pressed, an error, or a new group). */
  cancel(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.startedAt = null;
  }

  private elapsed(): number {
    return (this.now - (this.startedAt ?? this.now)) / 1000;
  }
}
