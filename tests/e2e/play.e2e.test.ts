/**
 * End to end: the page that `npm start` serves (Vite dev server, started here on a free port),
 * driven in Debian's Chromium through Playwright. Plays one whole episode of each environment
 * by asking the expert for its move and clicking the highlighted action button.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ViteDevServer } from 'vite';
import { chromium, type Browser, type Page } from 'playwright';
import { CHROMIUM, openPage, startDevServer } from './harness';

let server: ViteDevServer;
let browser: Browser;
let baseUrl: string;

beforeAll(async () => {
  ({ server, baseUrl } = await startDevServer());
  browser = await chromium.launch(CHROMIUM);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

let sawProducts = false;

async function playWithExpert(page: Page, maxSteps: number): Promise<string> {
  const status = page.getByTestId('status');
  sawProducts = false;
  for (let step = 0; step < maxSteps; step++) {
    const text = await status.textContent();
    if (/Success|Episode over|Out of steps/.test(text ?? '')) return text!;
    if (await page.getByTestId('product').count()) sawProducts = true;
    await page.getByRole('button', { name: 'Show expert move' }).click();
    const move = (await page.getByTestId('expert-hint').textContent())!;
    const filter = page.getByLabel('Filter actions');
    if (await filter.count()) await filter.fill(move); // long household lists are filtered first
    // A product is opened from its card; every other action from the action list.
    await page.locator(`button[data-action="${move.replace(/"/g, '\\"')}"]`).click();
    await expect.poll(async () => (await page.locator('table tbody tr').count()) >= 1).toBe(true);
    await expect.poll(() => status.textContent()).not.toBe(text);
  }
  return (await status.textContent())!;
}

describe('the play page', () => {
  it.each([
    ['webshop-lite-v0', 15],
    ['household-v0', 50],
  ])(
    'plays one %s episode to success through the page',
    async (envId, limit) => {
      const { page, errors } = await openPage(browser);
      await page.goto(`${baseUrl}/?env=${envId}&seed=5&difficulty=0.25`);
      await expect.poll(() => page.getByTestId('instruction').count(), { timeout: 60_000 }).toBe(1);
      await expect.poll(() => page.getByLabel('Environment', { exact: true }).inputValue()).toBe(envId);
      await expect
        .poll(() => page.getByLabel('Custom action').getAttribute('placeholder'))
        .toMatch(envId.startsWith('webshop') ? /search\[/ : /go to/);
      const final = await playWithExpert(page, limit);
      expect(final).toMatch(/^Success! Reward 1 in \d+ steps\.$/);
      if (envId.startsWith('webshop')) {
        // The results were product cards; the end page shows the purchase, never WebShop's debug text.
        expect(sawProducts).toBe(true);
        await expect.poll(() => page.getByTestId('purchase-score').textContent()).toMatch(/^1(\.0)? /);
        await expect.poll(() => page.locator('main').textContent()).not.toMatch(/MTurk|instuction/);
      }
      expect(errors).toEqual([]);
      await page.close();
    },
    120_000,
  );

  it('treats an inadmissible typed action as a no-op and says so', async () => {
    const page = await browser.newPage();
    await page.goto(`${baseUrl}/?env=household-v0&seed=2&difficulty=0`);
    await expect.poll(() => page.getByTestId('instruction').count(), { timeout: 60_000 }).toBe(1);
    await page.getByLabel('Custom action').fill('fly to the moon');
    await page.getByRole('button', { name: 'Do it' }).click();
    await expect.poll(() => page.getByTestId('status').textContent()).toMatch(/not admissible here/);
    await expect.poll(() => page.locator('table tbody tr').first().textContent()).toMatch(/fly to the moon.*no-op/);
    // Another environment starts its own episode at once: nothing of household's stays under WebShop's labels.
    const household = await page.getByTestId('instruction').textContent();
    await page.getByLabel('Environment', { exact: true }).selectOption('webshop-lite-v0');
    await expect.poll(() => page.getByTestId('instruction').textContent()).not.toBe(household);
    await expect.poll(() => page.locator('table tbody tr').first().textContent()).toBe('No actions yet.');
    await expect.poll(() => page.getByTestId('status').textContent()).toMatch(/^Episode started/);
    await page.close();
  }, 120_000);
});
