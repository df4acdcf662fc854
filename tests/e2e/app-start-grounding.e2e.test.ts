/**
 * End to end: a learned experience model on an empty replay buffer is refused with its message,
 * never run with nothing to retrieve. The built app, a fresh profile, and a build whose shipped
 * offline data for webshop-lite-v0 is missing (the route answers 404, the service worker kept out
 * so the route sees the worker's request): the trainer worker cannot seed the buffer, and the
 * start-here dream and S2R fail at once with the fix, while real RL trains.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import { startApp, type AppHarness } from './harness';

let app: AppHarness;
let page: Page;

beforeAll(async () => {
  app = await startApp('dreamgym-e2e-grounding-', { serviceWorkers: 'block' });
  await app.context.route('**/datasets/webshop-lite-v0.jsonl', (route) =>
    route.fulfill({ status: 404, body: 'not here' }),
  );
  page = await app.context.newPage();
}, 120_000);

afterAll(async () => {
  await app?.close();
});

const card = (mode: string) => page.locator(`[data-testid="start-run"][data-mode="${mode}"]`);

describe('a dream without real data to retrieve', () => {
  it('is refused on its card with the fix; the real run still trains', async () => {
    await page.goto(`${app.baseUrl}/#/start?iterations=1`);
    await page.getByTestId('start-three').click();
    for (const mode of ['dream', 's2r']) {
      await expect.poll(() => card(mode).getAttribute('data-state'), { timeout: 120_000 }).toBe('error');
      const text = await card(mode).locator('.error').textContent();
      expect(text).toMatch(/holds no real transitions of 'webshop-lite-v0': without them it writes gibberish/);
      expect(text).toMatch(/Load the shipped datasets/);
    }
    await expect.poll(() => card('real').getAttribute('data-state'), { timeout: 120_000 }).toBe('finished');
    // No verdict from a failed dream: the page says so instead of comparing.
    expect(await page.getByTestId('start-verdict').textContent()).toBe(
      'No verdict: the dream and s2r runs failed (see the card).',
    );
  }, 300_000);
});
