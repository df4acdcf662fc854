/**
 * End to end: a learned experience model that retrieves is refused on an empty replay buffer with
 * its message, never run with nothing to retrieve; one trained without retrieval needs no buffer.
 * The built app, a fresh profile, and a build whose shipped offline data is missing (the routes
 * answer 404, the service worker kept out so the routes see the worker's requests): the trainer
 * worker cannot seed the buffer. The shipped webshop model (k = 0) still dreams on Start here; the
 * shipped household model (k = 4) is refused on Train with the fix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import { startApp, type AppHarness } from './harness';

let app: AppHarness;
let page: Page;

beforeAll(async () => {
  app = await startApp('dreamgym-e2e-grounding-', { serviceWorkers: 'block' });
  for (const env of ['webshop-lite-v0', 'household-v0'])
    await app.context.route(`**/datasets/${env}.jsonl`, (route) => route.fulfill({ status: 404, body: 'not here' }));
  page = await app.context.newPage();
}, 120_000);

afterAll(async () => {
  await app?.close();
});

const card = (mode: string) => page.locator(`[data-testid="start-run"][data-mode="${mode}"]`);

describe('a dream without real data to retrieve', () => {
  it('runs on Start here with the shipped webshop model, which retrieves nothing', async () => {
    await page.goto(`${app.baseUrl}/#/start?iterations=1`);
    await page.getByTestId('start-three').click();
    for (const mode of ['real', 'dream', 's2r'])
      await expect.poll(() => card(mode).getAttribute('data-state'), { timeout: 180_000 }).toBe('finished');
    await expect.poll(() => page.getByTestId('start-verdict').textContent()).toMatch(/^With 0 real steps the dream/);
  }, 300_000);

  it('is refused on Train with the fix when the model retrieves (the shipped household model)', async () => {
    const query = 'preset=household-easy&mode=dream&size=tiny&iterations=1&seed=4&llm=learned:models/household-v0';
    await page.goto(`${app.baseUrl}/#/train?${query}`);
    await expect.poll(() => page.getByLabel('Seed').inputValue()).toBe('4');
    await page.getByRole('button', { name: 'Start' }).click();
    const status = page.getByTestId('train-status');
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 120_000 }).toBe('error');
    const text = await status.textContent();
    expect(text).toMatch(/holds no real transitions of 'household-v0': without them it writes gibberish/);
    expect(text).toMatch(/Load the shipped datasets/);
  }, 180_000);
});
