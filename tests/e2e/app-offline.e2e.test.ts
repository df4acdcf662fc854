/**
 * End to end, offline: the production build (vite build + vite preview) in Debian's Chromium.
 * The first visit installs the service worker, which precaches the app shell; then the server
 * is stopped and the browser put offline, and the reloaded app still renders, plays a step and
 * trains a tiny real run (the trainer worker and the tfjs wasm files come from the cache).
 */
import { describe, expect, it } from 'vitest';
import type { Page, Response } from 'playwright';
import { openPage, SHOTS, useApp } from './harness';
import { iteration, stopRun } from './pages/train-page';

const app = useApp('dreamgym-e2e-offline-');

const offlineState = (page: Page) => page.getByTestId('offline-status').getAttribute('data-state');

describe('the offline app shell', () => {
  it('installs the service worker, then reloads, plays and trains with the network off', async () => {
    console.log(`[offline] build: ${/sw\.js: .*/.exec(app.buildLog)?.[0]}`);
    expect(app.buildLog).toMatch(/sw\.js: app shell [0-9a-f]{16}, \d+ files precached/);
    const { context, baseUrl } = app;
    const { page, errors } = await openPage(context);

    // First visit, online: the header says when the offline copy is saved.
    await page.goto(`${baseUrl}/?env=webshop-lite-v0&seed=5&difficulty=0.25`);
    await expect.poll(() => page.getByTestId('instruction').count(), { timeout: 60_000 }).toBe(1);
    await expect.poll(() => offlineState(page), { timeout: 60_000 }).toBe('ready');
    await expect.poll(() => page.getByTestId('offline-status').textContent()).toBe('Ready offline');
    await expect
      .poll(() => page.evaluate(() => navigator.serviceWorker.controller !== null), { timeout: 30_000 })
      .toBe(true);
    const cached = await page.evaluate(async () => {
      const names = (await caches.keys()).filter((n) => n.startsWith('dreamgym-shell-'));
      const urls =
        names.length === 1 ? (await (await caches.open(names[0])).keys()).map((r) => new URL(r.url).pathname) : [];
      return { names, urls };
    });
    console.log(`[offline] cache ${cached.names.join(', ')}: ${cached.urls.length} files`);
    expect(cached.names).toHaveLength(1);
    for (const expected of [
      /^\/index\.html$/,
      /^\/assets\/index-.*\.js$/,
      /^\/assets\/index-.*\.css$/,
      /^\/assets\/trainer\.worker-.*\.js$/,
      /^\/assets\/tfjs-backend-wasm-simd-.*\.wasm$/,
      /^\/datasets\/manifest\.json$/,
      /^\/datasets\/webshop-lite-v0\.jsonl$/,
    ]) {
      expect(
        cached.urls.some((u) => expected.test(u)),
        String(expected),
      ).toBe(true);
    }
    // Neither model weights nor the service worker itself are precached (a chunk whose hash ends in "sw" is).
    expect(cached.urls.some((u) => /\.gguf$|^\/sw\.js$/.test(u))).toBe(false);

    // The network goes away for real: no server, and the browser offline.
    await app.stopServer();
    await expect(fetch(baseUrl)).rejects.toThrow();
    await context.setOffline(true);
    const fromWorker: string[] = [];
    const fromNetwork: string[] = [];
    const failed: string[] = [];
    const workerTries: string[] = []; // the service worker's own network-first tries for page loads
    const record = (response: Response) =>
      (response.fromServiceWorker() ? fromWorker : fromNetwork).push(new URL(response.url()).pathname);
    context.on('response', record);
    const aborted: string[] = []; // cancelled by the page (a worker terminated when its page is left), not a network failure
    context.on('requestfailed', (request) => {
      const line = `${request.url()} (${request.failure()?.errorText})`;
      if (request.serviceWorker()) workerTries.push(line);
      else if (request.failure()?.errorText === 'net::ERR_ABORTED') aborted.push(line);
      else failed.push(line);
    });

    await page.reload();
    await expect.poll(() => page.getByTestId('instruction').count(), { timeout: 60_000 }).toBe(1);
    await expect.poll(() => page.getByTestId('offline-status').textContent()).toBe('Ready offline · network off');

    // Every file of the shell is served offline (the LLM worker and engine wasm included).
    const offlineFetches = await page.evaluate(
      async (paths) =>
        Promise.all(
          paths.map(async (path) => {
            try {
              return `${path} ${(await fetch(path)).status}`;
            } catch (error) {
              return `${path} ${String(error)}`;
            }
          }),
        ),
      cached.urls,
    );
    expect(offlineFetches.filter((line) => !line.endsWith(' 200'))).toEqual([]);
    expect(
      cached.urls.some((u) => /^\/assets\/llm\.worker-.*\.js$/.test(u)),
      'the LLM worker is in the shell',
    ).toBe(true);

    // Play one step: ask the expert and take its move.
    const status = page.getByTestId('status');
    const before = await status.textContent();
    await page.getByRole('button', { name: 'Show expert move' }).click();
    const move = (await page.getByTestId('expert-hint').textContent())!;
    await page.locator(`button.action[data-action="${move.replace(/"/g, '\\"')}"]`).click();
    await expect.poll(() => status.textContent()).not.toBe(before);
    await page.screenshot({ path: `${SHOTS}/offline-play.png` });

    // Other pages render offline (hash routes: no request).
    await page.getByRole('link', { name: 'Setup', exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { level: 2 }).count()).toBeGreaterThanOrEqual(1);
    await page.getByRole('link', { name: 'Buffer', exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { level: 2 }).first().textContent()).toMatch(/buffer/i);

    // A tiny real run: the worker script and the wasm binary come from the shell cache.
    await page.goto(`${baseUrl}/#/train?preset=webshop-easy&mode=real&size=tiny&iterations=400&seed=3`);
    await expect.poll(() => page.getByRole('button', { name: 'Start' }).isEnabled(), { timeout: 30_000 }).toBe(true);
    await page.getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => iteration(page), { timeout: 90_000 }).toBeGreaterThanOrEqual(1);
    await expect.poll(() => page.getByTestId('backend').textContent()).toBe('wasm');
    await stopRun(page);
    await page.screenshot({ path: `${SHOTS}/offline-train.png` });
    // The charts of the run, after switching the theme to dark (they are rebuilt in its colours).
    await page.getByLabel('Theme').selectOption('dark');
    await page.locator('figure[data-metric="charts/success_rate"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/offline-train-charts-dark.png` });

    const unique = (list: string[]) => [...new Set(list)].sort();
    console.log(
      `[offline] served by the service worker (${fromWorker.length} responses):\n  ${unique(fromWorker).join('\n  ')}`,
    );
    console.log(
      `[offline] not from the service worker: ${unique(fromNetwork).join(', ') || 'none'}; failed: ${failed.join(', ') || 'none'}`,
    );
    console.log(`[offline] cancelled by the page: ${aborted.join(', ') || 'none'}`);
    console.log(
      `[offline] the service worker's network tries for page loads (then the cached index.html): ${workerTries.join(', ') || 'none'}`,
    );
    expect(unique(fromWorker)).toEqual(
      expect.arrayContaining([
        '/',
        expect.stringMatching(/^\/assets\/trainer\.worker-.*\.js$/),
        expect.stringMatching(/^\/assets\/tfjs-backend-wasm-simd-.*\.wasm$/),
      ]),
    );
    expect(fromNetwork).toEqual([]);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);
});
