/**
 * End to end: the start-here page, the newcomer's first screen, in a fresh profile with nothing
 * loaded by hand. One click trains the three DreamGym runs side by side (real RL, dream with 0 real
 * steps, S2R) on the start-here preset, shortened here by the page's own link
 * (#/start?iterations=2), with their live curves in view at 1280×720. Before its first step the
 * dream's replay buffer gets the shipped offline data (the worker says so; a dream on an empty
 * buffer writes gibberish and runs every episode to the step limit); a reload mid-run resumes the
 * three from their checkpoints with their charts. S2R does not dream again: its card waits for the
 * dream, showing the dream's curve, then its worker continues from the dream run's final checkpoint
 * straight into its real phase (a second reload there resumes it from its own); its dream phase is
 * the dream's own history and dream steps, and its log names no dreaming. At the end the held-out success is plotted
 * against real steps spent from the untrained policy's point (iteration 0), the dream's is above
 * it, the DreamGym table is filled, the verdict sentence states the numbers the table shows, and
 * Compare shows the same group with the final evaluation at the last iteration.
 * Main-thread long tasks are logged, not asserted: a busy machine makes them (`npm run bench -- app-train`
 * measures them while a run trains).
 * Screenshots: test-output/screenshots/start-before.png, start-running.png and start-finished.png (1280×720).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import { openPage, SHOTS, useApp } from './harness';

const app = useApp('dreamgym-e2e-start-');
let page: Page;
let errors: string[];
const ITERATIONS = 2;

beforeAll(async () => {
  await app.context.addInitScript(() => {
    const w = window as unknown as { __longtasks: number[]; __longtaskStarts: number[] };
    w.__longtasks = [];
    w.__longtaskStarts = [];
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          w.__longtasks.push(e.duration);
          w.__longtaskStarts.push(e.startTime);
        }
      }).observe({ type: 'longtask', buffered: true });
    } catch {
      /* no longtask support */
    }
    // What ran in each long frame (the log names the script behind a long task).
    const l = window as unknown as { __frames: string[] };
    l.__frames = [];
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries() as (PerformanceEntry & {
          scripts?: { invoker: string; sourceURL: string; sourceCharPosition: number; duration: number }[];
        })[]) {
          if (e.duration < 50) continue;
          const scripts = (e.scripts ?? []).map(
            (x) => `${x.invoker} @${x.sourceURL.split('/').pop()}:${x.sourceCharPosition} ${Math.round(x.duration)} ms`,
          );
          l.__frames.push(`${Math.round(e.startTime)}: ${Math.round(e.duration)} ms [${scripts.join('; ')}]`);
        }
      }).observe({ type: 'long-animation-frame', buffered: true });
    } catch {
      /* no long-animation-frame support */
    }
  });
  ({ page, errors } = await openPage(app.context));
}, 120_000);

const cards = () => page.getByTestId('start-run');
const card = (mode: string) => page.locator(`[data-testid="start-run"][data-mode="${mode}"]`);
const states = () => cards().evaluateAll((els) => els.map((el) => el.getAttribute('data-state')));
const cardPoints = (mode: string) => card(mode).locator('figure').getAttribute('data-points').then(Number);
const cardIteration = async (mode: string) =>
  Number(/^(\d+)/.exec((await card(mode).getByTestId('start-iteration').textContent()) ?? '')?.[1] ?? -1);
const longTasks = () => page.evaluate(() => (window as unknown as { __longtasks: number[] }).__longtasks);
const resetLongTasks = () =>
  page.evaluate(() => {
    const w = window as unknown as { __longtasks: number[]; __longtaskStarts: number[]; __reset: number };
    w.__longtasks = [];
    w.__longtaskStarts = [];
    w.__reset = performance.now();
    (window as unknown as { __frames: string[] }).__frames = [];
  });
/** When each long task began, in ms after the last reset (for the log). */
const longTaskStarts = () =>
  page.evaluate(() => {
    const w = window as unknown as { __longtasks: number[]; __longtaskStarts: number[]; __reset: number };
    return w.__longtaskStarts.map((t, i) => `${Math.round(w.__longtasks[i])} ms at +${Math.round(t - w.__reset)} ms`);
  });
const MODES = ['real', 'dream', 's2r'];
type Slot = {
  entry: { config: { mode: string } };
  status: { message: string };
  history: { iteration: number; metrics: Record<string, number> }[];
  log: string[];
};
const slots = () =>
  page.evaluate(
    () => (window as unknown as { __dreamgym: { startHere: { slots: unknown[] } } }).__dreamgym.startHere.slots,
  ) as Promise<Slot[]>;
const slotOf = async (mode: string) => (await slots()).find((s) => s.entry.config.mode === mode)!;
const slotMessage = async (mode: string) => (await slotOf(mode)).status.message;
const firstDreamTruncated = async () =>
  (await slotOf('dream')).history.find((r) => r.iteration === 1)?.metrics['dream/truncated_rate'];
const pctText = (v: number) => `${Math.round(v * 100)}%`;
/** The S2R card's log (its worker's status messages), gathered across the reloads. */
const s2rLog: string[] = [];
const keepS2rLog = async () => s2rLog.push(...(await slotOf('s2r')).log);
/** Whether the second reload came while S2R trained in its real phase (else it had finished). */
let realPhaseReload = false;
/** What a worker says when it dreams, or gets ready to: none of it in S2R's log. */
const DREAMING = /Loading the experience model|Evaluating the untrained|offline data|Checking the replay buffer/;

describe('the start-here path', () => {
  it('is the first screen: what it is and the one button, above the fold at 1280×720', async () => {
    await page.goto(`${app.baseUrl}/`);
    await expect.poll(() => page.getByRole('heading', { name: /Start here/ }).count(), { timeout: 60_000 }).toBe(1);
    const button = page.getByTestId('start-three');
    const box = (await button.boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(720);
    // No build-machine notes in the header: the header is the product.
    expect(await page.locator('header').textContent()).not.toMatch(/Where this build was made|dev server/);
    expect(await page.getByText(/Its live curve appears here/).count()).toBe(3);
    await page.screenshot({ path: `${SHOTS}/start-before.png` });
    expect(errors).toEqual([]);
  }, 90_000);

  it('trains the three runs live, side by side', async () => {
    await page.goto(`${app.baseUrl}/#/start?iterations=${ITERATIONS}`);
    await page.getByTestId('start-three').click();
    await expect.poll(() => cards().count(), { timeout: 30_000 }).toBe(3);
    expect(await cards().evaluateAll((els) => els.map((el) => el.getAttribute('data-mode')))).toEqual(MODES);
    const clicked = Date.now();
    await resetLongTasks();
    // Each run's curve gets its first point while the three train together.
    await expect
      .poll(async () => (await Promise.all(MODES.map(cardPoints))).every((n) => n >= 1), { timeout: 120_000 })
      .toBe(true);
    const together = await states();
    const tasks = await longTasks();
    console.log(
      `[start] long tasks: ${(await longTaskStarts()).join(', ') || 'none'}; long frames: ${
        (await page.evaluate(() => (window as unknown as { __frames: string[] }).__frames)).join(' | ') || 'none'
      }`,
    );
    console.log(
      `[start] first point of all three after ${((Date.now() - clicked) / 1000).toFixed(1)} s; states ${together.join(', ')}; ` +
        `${tasks.length} long main-thread tasks, longest ${Math.max(0, ...tasks).toFixed(0)} ms`,
    );
    // The baseline is quick (real steps are cheap): it may be done before the dream's first point, never failed.
    // S2R waits for the dream, with the dream's curve: it continues from the dream's checkpoint, never dreams again.
    expect(together.slice(1)).toEqual(['running', 'waiting']);
    expect(together).not.toContain('error');
    expect(await card('s2r').locator('.live').textContent()).toMatch(/^\s*Waits for the dream: S2R continues/);
    expect(await cardPoints('s2r')).toBe(await cardPoints('dream'));
    expect(await page.getByTestId('start-engine').textContent()).toMatch(/learned experience model/);
    // The fresh profile's buffer was empty: the dream's worker loaded the shipped offline data before its first step,
    // and its first dreamed iteration ended episodes (an ungrounded one runs every episode to the step limit).
    expect(await slotMessage('dream')).toMatch(/loaded its shipped offline data \(240 episodes, [\d,]+ transitions\)/);
    expect(await firstDreamTruncated()).toBeLessThan(1);
    console.log(`[start] ${await page.getByTestId('start-engine').textContent()}`);

    // The live curves and the held-out chart are in view without scrolling.
    for (const mode of MODES) {
      const figure = (await card(mode).locator('figure').boundingBox())!;
      expect(figure.y + figure.height).toBeLessThanOrEqual(720);
    }
    expect((await page.locator('figure[data-metric="eval/success_rate"]').boundingBox())?.y ?? 9999).toBeLessThan(720);
    await page.screenshot({ path: `${SHOTS}/start-running.png` });
    expect(errors).toEqual([]);
  }, 180_000);

  it('resumes the three after a reload mid-run, with their charts', async () => {
    const seen = await Promise.all(MODES.map(cardPoints));
    const before = await states();
    console.log(`[start] before the reload: states ${before.join(', ')}, points ${seen.join(', ')}`);
    await keepS2rLog();
    await page.reload();
    await expect.poll(() => cards().count(), { timeout: 30_000 }).toBe(3);
    // The saved history comes back at once (no click), and the unfinished runs carry on from their checkpoints.
    for (const [i, mode] of MODES.entries())
      await expect.poll(() => cardPoints(mode), { timeout: 30_000 }).toBeGreaterThanOrEqual(seen[i]);
    // Once S2R is in its real phase, a second reload: it resumes from its own checkpoint.
    await expect
      .poll(async () => (await cardIteration('s2r')) > ITERATIONS || (await states())[2] === 'finished', {
        timeout: 300_000,
      })
      .toBe(true);
    const s2rBefore = (await states())[2];
    console.log(`[start] S2R in its real phase: ${s2rBefore} at iteration ${await cardIteration('s2r')}`);
    realPhaseReload = s2rBefore === 'running';
    if (realPhaseReload) {
      await keepS2rLog();
      await page.reload();
      await expect.poll(() => cards().count(), { timeout: 30_000 }).toBe(3);
    }
    await expect.poll(states, { timeout: 300_000 }).toEqual(['finished', 'finished', 'finished']);
    await keepS2rLog();
    for (const [i, mode] of MODES.entries())
      expect(await cardPoints(mode)).toBeGreaterThan(before[i] === 'running' ? seen[i] : seen[i] - 1);
    // Real and dream stop at the last iteration; S2R dreams all of them, then trains for real until its budget is spent.
    expect([await cardIteration('real'), await cardIteration('dream')]).toEqual([ITERATIONS, ITERATIONS]);
    expect(await cardIteration('s2r')).toBeGreaterThan(ITERATIONS);
    expect(await card('s2r').getByTestId('start-iteration').textContent()).toMatch(
      new RegExp(`^\\d+ \\(${ITERATIONS} dream \\+ \\d+ real\\)$`),
    );
    expect(errors).toEqual([]);
  }, 330_000);

  it("S2R reused the dream's checkpoint: the same dream steps and dream-phase history, no second dream", async () => {
    console.log(`[start] S2R log: ${s2rLog.join(' | ')}`);
    const dream = await slotOf('dream');
    const dreamSteps = dream.history[dream.history.length - 1].metrics['budget/dream_steps'];
    expect(dreamSteps).toBeGreaterThan(0);
    expect(s2rLog.filter((m) => DREAMING.test(m))).toEqual([]);
    expect(s2rLog).toContain(
      `Continued from the dream run's final checkpoint (iteration ${ITERATIONS}, ` +
        `${dreamSteps.toLocaleString('en-US')} dream steps): no second dream, straight to the real phase.`,
    );
    if (realPhaseReload) expect(s2rLog.join('\n')).toMatch(/^Resumed from the checkpoint at iteration [3-9]/m);
    // The dream phase is the dream run's records, wall times included: copied, not dreamed again.
    const s2r = await slotOf('s2r');
    expect(s2r.history.filter((r) => r.iteration <= ITERATIONS)).toEqual(dream.history);
    expect(s2r.history[s2r.history.length - 1].metrics['budget/dream_steps']).toBe(dreamSteps);
    expect(await card('s2r').getByTestId('start-dream-steps').textContent()).toBe(
      await card('dream').getByTestId('start-dream-steps').textContent(),
    );
    expect(errors).toEqual([]);
  });

  it('plots held-out success against real steps and fills the DreamGym table', async () => {
    const heldOut = page.locator('figure[data-metric="eval/success_rate"]');
    expect(await heldOut.getAttribute('data-axis')).toBe('Real steps spent');
    expect(await heldOut.getAttribute('data-runs')).toBe('3');
    const table = page.getByTestId('dreamgym-table');
    expect(await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-mode')))).toEqual(
      MODES,
    );
    const realSteps = async (mode: string) =>
      Number(
        (await table.locator(`tr[data-mode="${mode}"]`).getByTestId('dreamgym-real-steps').textContent())!.replace(
          /\D/g,
          '',
        ),
      );
    expect(await realSteps('dream')).toBe(0);
    expect(await realSteps('real')).toBeGreaterThan(0);
    expect(await realSteps('s2r')).toBeGreaterThan(0);
    expect(await realSteps('s2r')).toBeLessThanOrEqual(600); // a tenth of the baseline's 6,000-step budget
    // S2R's card gives its budget as a share of what the baseline really spent.
    const spent = await realSteps('real');
    expect(await card('s2r').getByTestId('start-sentence').textContent()).toBe(
      `Dream first, then 600 real steps: ${Math.round(60_000 / spent)}% of the ${spent.toLocaleString('en-US')} real RL spent.`,
    );
    for (const mode of MODES)
      expect(await table.locator(`tr[data-mode="${mode}"]`).getByTestId('dreamgym-success').textContent()).toMatch(
        /^\d+%$/,
      );
    // Every curve starts at the untrained policy (iteration 0); the dream ends above it.
    const dream = await slotOf('dream');
    const untrained = dream.history.find((r) => r.iteration === 0)!.metrics['eval/success_rate'];
    const dreamFinal = dream.history[dream.history.length - 1].metrics['eval/success_rate'];
    console.log(`[start] untrained ${untrained}, dream ${dreamFinal} held-out`);
    expect(dreamFinal).toBeGreaterThan(untrained);
    for (const mode of MODES)
      expect((await slotOf(mode)).history[0]).toMatchObject({
        iteration: 0,
        metrics: { 'eval/success_rate': untrained },
      });
    // The verdict states the numbers the table shows.
    const shown = async (mode: string) =>
      (await table.locator(`tr[data-mode="${mode}"]`).getByTestId('dreamgym-success').textContent())!;
    const verdict = (await page.getByTestId('start-verdict').textContent())!;
    console.log(`[start] verdict: ${verdict}`);
    expect(verdict).toContain(
      `With 0 real steps the dream reached ${await shown('dream')} held-out success, from the untrained policy's ${pctText(untrained)}`,
    );
    expect(verdict).toContain(
      `real RL's ${await shown('real')} (after ${(await realSteps('real')).toLocaleString('en-US')} real steps)`,
    );
    expect(verdict).toContain(
      `S2R reached ${await shown('s2r')} with ${(await realSteps('s2r')).toLocaleString('en-US')} real steps`,
    );
    // …and what one seed can show.
    expect(verdict).toMatch(/One seed on \d+ held-out tasks: each rate is within about ±\d+ points \(95 %\)/);
    await page.screenshot({ path: `${SHOTS}/start-finished.png` });
    const s2rLast = await cardIteration('s2r');

    // "Where to look next": Compare, on the same group and axis; the final evaluation is at the last iteration.
    await page.getByRole('link', { name: 'compare the three' }).click();
    const compareTable = page.getByTestId('dreamgym-table');
    await expect.poll(() => compareTable.locator('tbody tr').count(), { timeout: 30_000 }).toBe(3);
    for (const mode of MODES) {
      const last = mode === 's2r' ? s2rLast : ITERATIONS;
      expect(
        await compareTable.locator(`tr[data-mode="${mode}"]`).getByTestId('dreamgym-success').textContent(),
      ).toMatch(new RegExp(`at iteration ${last}$`));
    }
    await expect
      .poll(() => page.locator('figure[data-metric="eval/success_rate"]').getAttribute('data-axis'))
      .toBe('Real steps spent');
    expect(errors).toEqual([]);
  }, 120_000);
});
