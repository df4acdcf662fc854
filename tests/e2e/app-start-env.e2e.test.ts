/**
 * End to end: the start-here page's choice of environment, in a fresh profile. WebShop is the default; choosing
 * mini-WebArena trains the three runs (real RL, dream, S2R) on its own preset and size, shortened by the page's link
 * (#/start?iterations=2), with its shipped learned model for the dream; the verdict's seed link and the Compare link
 * carry the environment, and the line on the environment not offered says why. The run itself (charts, reloads,
 * S2R from the dream's checkpoint) is app-start.e2e.test.ts's. Screenshot: test-output/screenshots/start-env.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright';
import { SHOTS, startApp, type AppHarness } from './harness';

let app: AppHarness;
let context: BrowserContext;
let page: Page;
const errors: string[] = [];
const ITERATIONS = 2;
const MODES = ['real', 'dream', 's2r'];

beforeAll(async () => {
  app = await startApp('dreamgym-e2e-start-env-');
  ({ context } = app);
  page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
}, 120_000);

afterAll(async () => {
  await app?.close();
});

type Config = { mode: string; env: string; preset: string; iterations: number; realStepBudget: number };
/** The session's runs, as the page's state holds them. */
const configs = () =>
  page.evaluate(() =>
    (
      window as unknown as { __dreamgym: { startHere: { slots: { entry: { config: unknown } }[] } } }
    ).__dreamgym.startHere.slots.map((s) => s.entry.config),
  ) as Promise<Config[]>;
const cards = () => page.getByTestId('start-run');
const states = () => cards().evaluateAll((els) => els.map((el) => el.getAttribute('data-state')));
const choice = () => page.getByTestId('start-env');

describe("the start-here page's choice of environment", () => {
  it('offers WebShop by default and mini-WebArena, and says which is not offered and why', async () => {
    await page.goto(`${app.baseUrl}/#/start?iterations=${ITERATIONS}`);
    await expect.poll(() => page.getByTestId('start-env').count(), { timeout: 60_000 }).toBe(1);
    expect(await choice().inputValue()).toBe('webshop-lite-v0');
    expect(await choice().locator('option').allTextContents()).toEqual(['WebShop', 'mini-WebArena']);
    expect(await page.getByTestId('start-not-offered').textContent()).toMatch(/^Household is not offered here: .*\d/);
    expect(await page.locator('.intro').textContent()).toMatch(/preset \(2\s+iterations of 4 tasks × 8 rollouts\)/);
    // The choice sits in the first lines, the button beside them, both on the first screen.
    for (const id of ['start-env', 'start-three']) {
      const box = (await page.getByTestId(id).boundingBox())!;
      expect(box.y + box.height).toBeLessThanOrEqual(720);
    }
    expect(errors).toEqual([]);
  }, 90_000);

  it('trains the three runs of the chosen environment, with its own size and links', async () => {
    await choice().selectOption({ label: 'mini-WebArena' });
    expect(await choice().inputValue()).toBe('webarena-lite-v0');
    await page.screenshot({ path: `${SHOTS}/start-env.png` });
    await page.getByTestId('start-three').click();
    await expect.poll(() => cards().count(), { timeout: 30_000 }).toBe(3);
    expect(await cards().evaluateAll((els) => els.map((el) => el.getAttribute('data-mode')))).toEqual(MODES);
    expect((await configs()).map((c) => [c.mode, c.env, c.preset, c.iterations, c.realStepBudget])).toEqual(
      MODES.map((mode) => [mode, 'webarena-lite-v0', 'webarena-easy', ITERATIONS, 6000]),
    );
    // No other environment while the three train.
    expect(await choice().isDisabled()).toBe(true);
    expect(await page.getByTestId('start-engine').textContent()).toMatch(/learned .*webarena-lite-v0/);
    await expect.poll(states, { timeout: 400_000, interval: 2000 }).toEqual(['finished', 'finished', 'finished']);
    const verdict = (await page.getByTestId('start-verdict').textContent()) ?? '';
    console.log(`[start-env] ${verdict}`);
    expect(verdict).toContain('(#/start?env=webarena-lite-v0&seed=S)');
    expect(await page.getByRole('link', { name: 'compare the three' }).getAttribute('href')).toContain(
      'env=webarena-lite-v0',
    );
    expect(await choice().isDisabled()).toBe(false);
    expect(await choice().inputValue()).toBe('webarena-lite-v0');
    expect(errors).toEqual([]);
  }, 480_000);

  it('comes back to the group of the environment it trained after a reload', async () => {
    await page.reload();
    await expect.poll(() => cards().count(), { timeout: 30_000 }).toBe(3);
    expect((await configs()).map((c) => c.env)).toEqual(Array(3).fill('webarena-lite-v0'));
    await expect.poll(() => choice().inputValue(), { timeout: 10_000 }).toBe('webarena-lite-v0');
    expect(await cards().first().locator('h3').textContent()).toBe('Real RL (baseline)');
    expect(errors).toEqual([]);
  }, 60_000);
});
