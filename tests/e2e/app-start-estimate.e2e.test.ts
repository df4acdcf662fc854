/**
 * End to end: the start-here page's time estimates hold on this machine, whatever its load. In a
 * fresh profile the page checks the machine's speed for about a second and says how long the three
 * runs will take before the click; while they train it says the time left. Each figure shown is
 * compared with the time that then actually remained, measured in the same test (so a busy machine
 * slows both): within a factor of 2 (the goal is 1.5), when the machine's speed held through the group (the page's
 * speed check before the click and after the group within 1.3× of each other; the figures are logged
 * either way). A second group then starts from the first group's measured
 * time, kept in localStorage, and its estimates are held to the same factor. The group is the
 * start-here preset shortened by the page's link (#/start?iterations=2). Then Compare shows the two
 * groups without two slips of issue 46 ('finish ed', '45%at iteration 4'), and the Train page says
 * what the shipped household model's dream reaches (docs/results) before a household dream.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import { EstimateCheck, timeFromClick, type Shown, type Timed } from './estimate-timing';
import { openPage, useApp } from './harness';

const app = useApp('dreamgym-e2e-start-estimate-');
let page: Page;
let errors: string[];
const ITERATIONS = 2;

beforeAll(async () => ({ page, errors } = await openPage(app.context)));

interface ShownWithText extends Shown {
  text: string;
}

const cardStates = () =>
  page.getByTestId('start-run').evaluateAll((els) => els.map((el) => el.getAttribute('data-state')));

/** The page's speed check (rounds/s), read from the estimate before the click. */
const shownScore = () => page.getByTestId('start-expected').getAttribute('data-score').then(Number);

/** Seconds shown by the element with `testId` (its data-seconds), or null when it is not on the page. */
async function shownSeconds(testId: string): Promise<{ seconds: number; text: string } | null> {
  // One read, which does not wait: the time left goes when the group ends, maybe between two separate reads.
  const [shown] = await page
    .getByTestId(testId)
    .evaluateAll((els) => els.map((el) => ({ seconds: el.getAttribute('data-seconds'), text: el.textContent ?? '' })));
  return !shown || shown.seconds === null ? null : { seconds: Number(shown.seconds), text: shown.text };
}

/** Whether all three runs finished; none may have failed before. */
async function groupFinished(): Promise<boolean> {
  const states = await cardStates();
  if (states.length === 3 && states.every((s) => s === 'finished')) return true;
  expect(states).not.toContain('error');
  return false;
}

/** Loads the page, reads the estimate before the click, clicks, and polls the time left until all three finish. */
async function timeGroup(): Promise<Timed<ShownWithText>> {
  await page.goto(`${app.baseUrl}/#/start?iterations=${ITERATIONS}`);
  await page.reload(); // a fresh page state for each group (the session lives for the app)
  await expect.poll(() => shownSeconds('start-expected'), { timeout: 60_000 }).not.toBeNull();
  const before = (await shownSeconds('start-expected'))!;
  const scoreBefore = await shownScore();
  await page.getByTestId('start-three').click();
  const { shown, total } = await timeFromClick(page, {
    read: () => shownSeconds('start-time-left'),
    finished: groupFinished,
    monitorLoad: false,
  });
  // The page checks the speed again once the group is over (its check before the click is then stale).
  await expect.poll(shownScore, { timeout: 60_000 }).not.toBe(scoreBefore);
  return { before, shown, total, scores: [scoreBefore, await shownScore()] };
}

/** The factor check of the two groups (the second group's estimate is built on the first one's measured time). */
const check = new EstimateCheck<Timed<ShownWithText>>('estimate');

describe("the start-here page's time estimates", () => {
  it('says the time before the click from a speed check, and the time left while they train, within 2×', async () => {
    const group = await timeGroup();
    expect(group.before.text).toMatch(/^≈ .+ for all three on this machine \(from this machine's speed, checked/);
    // The first time left is shown at once, and it counts down as the runs train.
    expect(group.shown.length).toBeGreaterThanOrEqual(3);
    expect(group.shown[0].at).toBeLessThan(group.total / 4);
    check.first(group);
    expect(errors).toEqual([]);
  }, 660_000);

  it("starts the next group's estimate from the last group's measured time, within 2×", async () => {
    const group = await timeGroup();
    expect(group.before.text).toMatch(/and its last start-here run \(\d+ s\)\)\.$/);
    // The last group's time is this one's correction (EstimateCheck.next).
    check.next(group);
    expect(errors).toEqual([]);
  }, 660_000);
});

describe('Compare with the two groups (slips of issue 46)', () => {
  it("keeps 'finished' on one line and the held-out note spaced: '45% at iteration 2'", async () => {
    await page.goto(`${app.baseUrl}/#/compare?tag=start-here`);
    const states = page.getByTestId('run-state');
    await expect.poll(() => states.count(), { timeout: 60_000 }).toBeGreaterThanOrEqual(6);
    // One line box per state cell's text: 'finish ed' (overflow-wrap: anywhere) made two.
    const lines = await states.evaluateAll((cells) =>
      cells.map((cell) => {
        const range = document.createRange();
        range.selectNodeContents(cell);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      }),
    );
    expect(lines.every((n) => n === 1)).toBe(true);
    const success = await page.getByTestId('dreamgym-success').allTextContents();
    expect(success.length).toBeGreaterThanOrEqual(3);
    for (const text of success) expect(text).toMatch(/^\d+%\sat iteration \d+$/);
    expect(errors).toEqual([]);
  }, 90_000);
});

describe('the Train page before a dream with a shipped model', () => {
  it("says what the shipped household model's dream reaches, from docs/results, and nothing for real RL", async () => {
    await page.goto(`${app.baseUrl}/#/train?preset=household-easy&mode=dream`);
    const expectation = page.getByTestId('dream-expectation');
    await expect.poll(() => expectation.textContent(), { timeout: 60_000 }).toMatch(/19\.5 ± 9\.3 % held-out real/);
    expect(await expectation.textContent()).toMatch(/against 86\.3 % .*5 seeds; docs\/results\/table1-/);
    await page.goto(`${app.baseUrl}/#/train?preset=household-easy&mode=real`);
    await expect.poll(() => page.getByTestId('dream-expectation').count(), { timeout: 30_000 }).toBe(0);
    expect(errors).toEqual([]);
  }, 120_000);
});
