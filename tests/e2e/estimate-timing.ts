/**
 * How the page-estimate e2e tests (app-start-estimate, app-train-estimate, app-expmodel-estimate)
 * time the work a click starts and hold the estimates they read to estimate-tolerance.ts: each time
 * left shown is compared with the time that then actually remained, the estimate before the click
 * with the whole time, and the factor is asserted only where the machine's speed held.
 */
import { expect } from 'vitest';
import type { Page } from 'playwright';
import { expectWithinFactor, MIN_LEFT_S, steadyPair } from './estimate-tolerance';
import { LoadMonitor } from './load-monitor';

/** A time left the page showed, `at` seconds after the click. */
export interface Shown {
  at: number;
  seconds: number;
}

/** What the checks need of one timed run. */
export interface Timed<S extends Shown = Shown> {
  /** The estimate shown before the click. */
  before: { seconds: number; text: string };
  shown: S[];
  /** Seconds from the click to the end of the work. */
  total: number;
  /** The page's speed check before the click and after the run. */
  scores: [number, number];
  /** This process's speed check through the run (load-monitor.ts): the mean of its first and its second half. */
  halves?: [number, number];
}

export interface TimeLeftReadout<F extends { seconds: number }> {
  /** The time left shown now; null when none is shown (the readout goes when the work ends). */
  read(): Promise<F | null>;
  /** Whether the work is over; asserts, while it is not, that it has not failed. */
  finished(): Promise<boolean>;
  /** Whether this process checks the machine's speed through the run (load-monitor.ts). */
  monitorLoad: boolean;
}

/**
 * Times the work a click started (call it right after the click): every 250 ms, each new time left
 * the readout shows, with the seconds since the click, until the work is over (at most 600 s).
 */
export async function timeFromClick<F extends { seconds: number }>(
  page: Page,
  readout: TimeLeftReadout<F>,
): Promise<{ shown: (F & Shown)[]; total: number; halves?: [number, number] }> {
  const clicked = Date.now();
  const monitor = readout.monitorLoad ? new LoadMonitor() : null;
  const shown: (F & Shown)[] = [];
  for (;;) {
    const at = (Date.now() - clicked) / 1000;
    const figure = await readout.read();
    if (figure !== null && shown.at(-1)?.seconds !== figure.seconds) shown.push({ ...figure, at });
    if (await readout.finished()) break;
    expect(at).toBeLessThan(600);
    await page.waitForTimeout(250);
  }
  const total = (Date.now() - clicked) / 1000;
  return { shown, total, halves: await monitor?.stop() };
}

/**
 * The factor check of a test's timed runs, in order: the first run's estimates are held to it when
 * the machine's speed held through the run; a later run's estimate starts from the first run's
 * measured time, so it is held to it when both runs' speed held. The figures are logged either way,
 * each line led by `[label]`.
 */
export class EstimateCheck<T extends Timed = Timed> {
  private firstSteady: boolean | null = null;

  /**
   * @param describeRun what was timed, for the log (the settings, the estimate's basis)
   * @param describeShown one time left shown, for the log
   */
  constructor(
    private readonly label: string,
    private readonly describeRun: (t: T) => string = () => '',
    private readonly describeShown = (s: T['shown'][number]) => `${s.seconds} s at ${s.at.toFixed(1)} s`,
  ) {}

  /** The first run: held to the factor when the machine's speed held through it. */
  first(t: T): void {
    const all = this.ratios(t);
    this.firstSteady = this.steady(t);
    if (this.firstSteady) expectWithinFactor(all);
  }

  /** A later run, its estimate from the first run's time: held to the factor when both runs' speed held. */
  next(t: T): void {
    const all = this.ratios(t);
    // A time measured while the load changed corrects nothing.
    const held = this.steady(t) && this.firstSteady !== false;
    if (this.firstSteady === false)
      console.log(`[${this.label}] the last run's time came from a changing load: not asserted`);
    if (held) expectWithinFactor(all);
  }

  /** Whether the machine's speed held: the page's check before and after, and this process's through the run. */
  private steady(t: T): boolean {
    const held = steadyPair(t.scores) && (t.halves === undefined || steadyPair(t.halves));
    const through = t.halves ? `; through the run ${t.halves[0]} then ${t.halves[1]}` : '';
    console.log(
      `[${this.label}] speed check ${t.scores[0]} before, ${t.scores[1]} after${through}: ` +
        (held ? 'steady' : 'the load changed, not asserted'),
    );
    return held;
  }

  /** Each estimate over the time that then remained (those shown with MIN_LEFT_S or more left). */
  private ratios(t: T): number[] {
    const held = t.shown.filter((s) => t.total - s.at >= MIN_LEFT_S);
    const out = [t.before.seconds / t.total, ...held.map((s) => s.seconds / (t.total - s.at))];
    const work = Math.round((t.total * (t.scores[0] + t.scores[1])) / 2);
    console.log(
      `[${this.label}] ${this.describeRun(t) ? `${this.describeRun(t)}: ` : ''}took ${t.total.toFixed(1)} s; ` +
        `before the click ${t.before.seconds} s (work at the mean score ${work}); ` +
        `shown ${t.shown.map(this.describeShown).join(', ')}; ratios ${out.map((r) => r.toFixed(2)).join(', ')}`,
    );
    return out;
  }
}
