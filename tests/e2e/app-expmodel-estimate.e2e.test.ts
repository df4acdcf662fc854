/**
 * End to end: the Experience model tab's time estimates hold on this machine, whatever its load.
 * In a fresh profile the tab checks the machine's speed for about a second once the shipped
 * datasets are in the buffer, and says how long the training will take before the click (from that
 * check, not an assumed typical speed); while it trains, the progress line says the time left
 * (core's time-left.ts). Each figure shown is compared with the time that then actually remained
 * until the last epoch's checkpoint, measured in the same test (so a busy machine slows both):
 * within a factor of 2 (the goal is 1.5) when the machine's speed held through the training (the page's speed check
 * before and after within 1.3× of each other, as in app-start-estimate.e2e.test.ts, and this
 * process's check through the training, load-monitor.ts, within 1.3× between its halves; the figures
 * are logged either way). A second training then starts from the first one's measured speed, kept in
 * localStorage, and is held to the same factor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright';
import { expectWithinFactor, MIN_LEFT_S, steadyPair } from './estimate-tolerance';
import { startApp, type AppHarness } from './harness';
import { LoadMonitor } from './load-monitor';

let app: AppHarness;
let context: BrowserContext;
let baseUrl: string;
let page: Page;
const errors: string[] = [];
/** The size: the tiny network on 120 shipped webshop episodes, 2 epochs (EST_* set another, to measure PAGE_WORK). */
const SIZE = process.env.EST_SIZE ?? 'tiny';
const EPOCHS = Number(process.env.EST_EPOCHS ?? 2);
const EPISODES = Number(process.env.EST_EPISODES ?? 120);
const LINK =
  `#/model?env=webshop-lite-v0&size=${SIZE}&name=estimate-e2e&epochs=${EPOCHS}&episodes=${EPISODES}` +
  '&audit=4&samples=0&backend=wasm';

beforeAll(async () => {
  app = await startApp('dreamgym-e2e-expmodel-estimate-');
  ({ context, baseUrl } = app);
  page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
}, 120_000);

afterAll(async () => {
  await app?.close();
});

const estimateEl = () => page.getByTestId('train-estimate');
const shownScore = () => estimateEl().getAttribute('data-score').then(Number);
const checkpoints = async () => Number((await page.getByTestId('checkpoint-epochs').textContent()) ?? 0);

interface Shown {
  at: number;
  seconds: number;
}

interface TimedTraining {
  before: { seconds: number; text: string; basis: string };
  shown: Shown[];
  total: number;
  scores: [number, number];
  /** This process's speed check through the run: the mean of its first and its second half. */
  halves: [number, number];
}

/** Loads the tab (a fresh page state), waits for its speed check, reads the estimate, trains, and times it. */
async function timeTraining(loadData: boolean): Promise<TimedTraining> {
  await page.goto(`${baseUrl}/${LINK}`);
  await page.reload();
  await expect.poll(() => page.getByTestId('real-transitions-webshop-lite-v0').count(), { timeout: 60_000 }).toBe(1);
  if (loadData) {
    await page.getByRole('button', { name: 'Load the shipped datasets' }).click();
    await expect
      .poll(
        async () =>
          Number((await page.getByTestId('real-transitions-webshop-lite-v0').textContent())!.replace(/\D/g, '')),
        {
          timeout: 90_000,
        },
      )
      .toBeGreaterThan(1000);
  }
  await expect.poll(shownScore, { timeout: 60_000 }).toBeGreaterThan(0);
  await expect.poll(() => estimateEl().getAttribute('data-seconds')).not.toBeNull();
  const scoreBefore = await shownScore();
  const before = {
    seconds: Number(await estimateEl().getAttribute('data-seconds')),
    text: (await estimateEl().textContent())!.trim(),
    basis: (await estimateEl().getAttribute('data-basis'))!,
  };
  await page.getByRole('button', { name: 'Train', exact: true }).click();
  const clicked = Date.now();
  const monitor = new LoadMonitor();
  const shown: Shown[] = [];
  for (;;) {
    const at = (Date.now() - clicked) / 1000;
    // The line goes when the training ends: a missing one is no reading.
    const seconds = await page
      .getByTestId('train-progress-line')
      .getAttribute('data-seconds', { timeout: 500 })
      .catch(() => null);
    if (seconds !== null && shown.at(-1)?.seconds !== Number(seconds)) shown.push({ at, seconds: Number(seconds) });
    if ((await checkpoints()) >= EPOCHS) break;
    expect(await page.getByTestId('expmodel-status').getAttribute('data-state')).not.toBe('stopped');
    expect(at).toBeLessThan(600);
    await page.waitForTimeout(250);
  }
  const total = (Date.now() - clicked) / 1000;
  const halves = await monitor.stop();
  // The audit after the training; then a reload checks the speed again (on the tab's mount).
  await expect.poll(() => page.getByTestId('evaluation').count(), { timeout: 120_000 }).toBe(1);
  await page.reload();
  await expect.poll(async () => [0, scoreBefore].includes(await shownScore()), { timeout: 60_000 }).toBe(false);
  return { before, shown, total, scores: [scoreBefore, await shownScore()], halves };
}

/** Whether the machine's speed held: the page's check before and after, and this process's through the run. */
function steady(t: TimedTraining): boolean {
  const held = steadyPair(t.scores) && steadyPair(t.halves);
  console.log(
    `[expmodel-estimate] speed check ${t.scores[0]} before, ${t.scores[1]} after; through the run ${t.halves[0]} then ` +
      `${t.halves[1]}: ${held ? 'steady' : 'the load changed, not asserted'}`,
  );
  return held;
}

function ratios(t: TimedTraining): number[] {
  const held = t.shown.filter((s) => t.total - s.at >= MIN_LEFT_S);
  const out = [t.before.seconds / t.total, ...held.map((s) => s.seconds / (t.total - s.at))];
  console.log(
    `[expmodel-estimate] ${SIZE}, ${EPISODES || 'all'} episodes, ${EPOCHS} epochs, ${t.before.basis}: took ${t.total.toFixed(1)} s; before the click ${t.before.seconds} s ` +
      `(work at the mean score ${Math.round((t.total * (t.scores[0] + t.scores[1])) / 2)}); shown ` +
      t.shown.map((s) => `${s.seconds} s at ${s.at.toFixed(1)} s`).join(', ') +
      `; ratios ${out.map((r) => r.toFixed(2)).join(', ')}`,
  );
  return out;
}

let firstSteady: boolean | null = null;

describe("the Experience model tab's time estimates", () => {
  it('says the time before the click from a speed check, and the time left while it trains, within 2×', async () => {
    const t = await timeTraining(true);
    expect(t.before.basis).toBe('speed-check');
    expect(t.before.text).toMatch(/from this machine's speed, checked just now for a second/);
    expect(t.shown.length).toBeGreaterThanOrEqual(2);
    const all = ratios(t);
    firstSteady = steady(t);
    if (firstSteady) expectWithinFactor(all);
    expect(errors).toEqual([]);
  }, 600_000);

  it("starts the next training's estimate from the last training's measured speed, within 2×", async () => {
    const t = await timeTraining(false);
    expect(t.before.basis).toBe('last-training');
    expect(t.before.text).toMatch(new RegExp(`from the speed this browser measured training the ${SIZE} size`));
    const all = ratios(t);
    const held = steady(t) && firstSteady !== false;
    if (held) expectWithinFactor(all);
    expect(errors).toEqual([]);
  }, 600_000);
});
