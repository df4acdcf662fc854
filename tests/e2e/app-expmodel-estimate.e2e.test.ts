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
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import { EstimateCheck, timeFromClick, type Timed } from './estimate-timing';
import { openPage, useApp } from './harness';

const app = useApp('dreamgym-e2e-expmodel-estimate-');
let page: Page;
let errors: string[];
/** The size: the tiny network on 120 shipped webshop episodes, 2 epochs (EST_* set another, to measure PAGE_WORK). */
const SIZE = process.env.EST_SIZE ?? 'tiny';
const EPOCHS = Number(process.env.EST_EPOCHS ?? 2);
const EPISODES = Number(process.env.EST_EPISODES ?? 120);
const LINK =
  `#/model?env=webshop-lite-v0&size=${SIZE}&name=estimate-e2e&epochs=${EPOCHS}&episodes=${EPISODES}` +
  '&audit=4&samples=0&backend=wasm';

beforeAll(async () => ({ page, errors } = await openPage(app.context)));

const estimateEl = () => page.getByTestId('train-estimate');
const shownScore = () => estimateEl().getAttribute('data-score').then(Number);
const checkpoints = async () => Number((await page.getByTestId('checkpoint-epochs').textContent()) ?? 0);

interface TimedTraining extends Timed {
  before: { seconds: number; text: string; basis: string };
}

/** The time left shown by the progress line; it goes when the training ends (a missing one is no reading). */
async function trainingLeft(): Promise<{ seconds: number } | null> {
  const seconds = await page
    .getByTestId('train-progress-line')
    .getAttribute('data-seconds', { timeout: 500 })
    .catch(() => null);
  return seconds === null ? null : { seconds: Number(seconds) };
}

/** Whether the last epoch's checkpoint is in; the training must not have stopped before. */
async function trainingFinished(): Promise<boolean> {
  if ((await checkpoints()) >= EPOCHS) return true;
  expect(await page.getByTestId('expmodel-status').getAttribute('data-state')).not.toBe('stopped');
  return false;
}

/** Loads the tab (a fresh page state), waits for its speed check, reads the estimate, trains, and times it. */
async function timeTraining(loadData: boolean): Promise<TimedTraining> {
  await page.goto(`${app.baseUrl}/${LINK}`);
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
  const { shown, total, halves } = await timeFromClick(page, {
    read: trainingLeft,
    finished: trainingFinished,
    monitorLoad: true,
  });
  // The audit after the training; then a reload checks the speed again (on the tab's mount).
  await expect.poll(() => page.getByTestId('evaluation').count(), { timeout: 120_000 }).toBe(1);
  await page.reload();
  await expect.poll(async () => [0, scoreBefore].includes(await shownScore()), { timeout: 60_000 }).toBe(false);
  return { before, shown, total, scores: [scoreBefore, await shownScore()], halves };
}

const check = new EstimateCheck<TimedTraining>(
  'expmodel-estimate',
  (t) => `${SIZE}, ${EPISODES || 'all'} episodes, ${EPOCHS} epochs, ${t.before.basis}`,
);

describe("the Experience model tab's time estimates", () => {
  it('says the time before the click from a speed check, and the time left while it trains, within 2×', async () => {
    const t = await timeTraining(true);
    expect(t.before.basis).toBe('speed-check');
    expect(t.before.text).toMatch(/from this machine's speed, checked just now for a second/);
    expect(t.shown.length).toBeGreaterThanOrEqual(2);
    check.first(t);
    expect(errors).toEqual([]);
  }, 600_000);

  it("starts the next training's estimate from the last training's measured speed, within 2×", async () => {
    const t = await timeTraining(false);
    expect(t.before.basis).toBe('last-training');
    expect(t.before.text).toMatch(new RegExp(`from the speed this browser measured training the ${SIZE} size`));
    check.next(t);
    expect(errors).toEqual([]);
  }, 600_000);
});
