/**
 * Benchmarks in headless Chromium: a server on a free loopback port (the Vite dev server, or
 * `vite preview` of a built folder), a fresh on-disk profile (real IndexedDB), then
 *   - `bench buffer --browser`: the page src/bench/page/buffer.html, whose function runs the IndexedDB
 *     and retrieval figures;
 *   - `bench app-train`: the app's Train page running a real training run, with the main thread's long
 *     tasks counted (the figure the e2e tests used to assert: a busy machine makes long tasks, so it is
 *     measured here and the tests check behaviour);
 *   - `bench dream --browser`: the built app's Experience model page auditing each shipped model.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright';
import type { StoreBenchResult } from '../buffer-stores';
import type { RetrievalBenchResult } from '../buffer-retrieval';
import { openChromium } from './chromium-launch';

interface BrowserSession {
  page: Page;
  baseUrl: string;
}

/**
 * Serves the app (the dev server, or `vite preview` of `dist` when given), opens one page in
 * Chromium with a fresh profile and hands it to `use`; shuts everything down after.
 */
async function withBrowserPage<T>(
  options: { dist?: string; init?: () => void },
  use: (s: BrowserSession) => Promise<T>,
): Promise<T> {
  const vite = await import('vite');
  const listen = { port: 0, host: '127.0.0.1' };
  const server = options.dist
    ? await vite.preview({
        configFile: 'vite.config.ts',
        build: { outDir: options.dist },
        preview: listen,
        logLevel: 'error',
      })
    : // No file watching and no HMR: an edit elsewhere in the tree must not reload the page mid-measurement.
      await (
        await vite.createServer({
          configFile: 'vite.config.ts',
          server: { ...listen, hmr: false, watch: null },
          logLevel: 'error',
        })
      ).listen();
  const address = server.httpServer!.address();
  const port = typeof address === 'object' && address ? address.port : 5173;
  try {
    const browser = await openChromium('dreamgym-bench-profile-');
    try {
      if (options.init) await browser.context.addInitScript(options.init);
      return await use({ page: await browser.context.newPage(), baseUrl: `http://127.0.0.1:${port}` });
    } finally {
      await browser.close();
    }
  } finally {
    await server.close();
  }
}

export async function benchBufferInBrowser(
  n: number,
): Promise<{ store: StoreBenchResult; retrieval: RetrievalBenchResult; storageUsageBytes: number | null }> {
  return withBrowserPage({}, async ({ page, baseUrl }) => {
    process.stderr.write('bench buffer: Chromium (IndexedDB, retrieval) …\n');
    await page.goto(`${baseUrl}/src/bench/page/buffer.html`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 120_000 });
    return page.evaluate(
      (count) => (window as unknown as { runBufferBench(n: number): Promise<never> }).runBufferBench(count),
      n,
    );
  });
}

// =============================================================================================
// The Train page: main-thread long tasks while a run trains in its worker
// =============================================================================================

/** The run the app-train suite starts: the Train page's own link (webshop-easy, real RL, tiny batches). */
export const APP_TRAIN_QUERY = 'preset=webshop-easy&mode=real&size=tiny&iterations=400&seed=3';

/** Long tasks (≥ 50 ms, the browser's threshold) of one stretch of the run. */
export interface LongTaskWindow {
  window: string;
  seconds: number;
  /** Training iterations completed in the window. */
  iterations: number;
  long_tasks: number;
  longest_ms: number;
  /** Σ (duration − 50 ms) over the long tasks: the time input would have waited. */
  blocking_ms: number;
  /** Each long task's duration, in order. */
  tasks_ms: number[];
}

export interface AppTrainBench {
  url: string;
  server: 'dev' | 'preview';
  /** A deliberate 150 ms task on the main thread, as the instrument read it (null: no longtask support). */
  calibration_ms: number | null;
  backend: string | null;
  windows: LongTaskWindow[];
}

type LongTaskEntry = { start: number; duration: number };
type LongTaskWindowObject = { __longtasks: LongTaskEntry[] };

/** Page-side: every long task of the document from its first script on (added as an init script). */
function recordLongTasks(): void {
  const w = window as unknown as LongTaskWindowObject;
  w.__longtasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__longtasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    /* no longtask support: the calibration reads null */
  }
}

/** The long tasks recorded since the last take, and a fresh record. */
const takeLongTasks = (page: Page) =>
  page.evaluate(() => {
    const w = window as unknown as LongTaskWindowObject;
    const tasks = w.__longtasks;
    w.__longtasks = [];
    return tasks;
  });

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`bench app-train: waited ${timeoutMs / 1000} s for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Opens the Train page with `query`, starts the run and records the main thread's long tasks
 * over three windows: loading the page, from Start to the first iteration's point (the worker
 * starting), and the next `iterations` iterations of training. Training runs in a worker, so the
 * last window should hold no long task; a busy machine adds some.
 */
export async function benchAppTrainInBrowser(options: {
  iterations: number;
  query?: string;
  dist?: string;
}): Promise<AppTrainBench> {
  return withBrowserPage({ dist: options.dist, init: recordLongTasks }, async ({ page, baseUrl }) => {
    const url = `${baseUrl}/#/train?${options.query ?? APP_TRAIN_QUERY}`;
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const iteration = async () => Number(await page.getByTestId('iteration').textContent());
    const points = async (metric: string) =>
      Number(await page.locator(`figure[data-metric="${metric}"]`).getAttribute('data-points'));
    const windows: LongTaskWindow[] = [];
    let clock = performance.now();
    let fromIteration = 0;
    const close = async (name: string) => {
      const tasks = await takeLongTasks(page);
      const now = performance.now();
      const at = await iteration().catch(() => 0);
      windows.push({
        window: name,
        seconds: Math.round(now - clock) / 1000,
        iterations: at - fromIteration,
        long_tasks: tasks.length,
        longest_ms: Math.round(Math.max(0, ...tasks.map((t) => t.duration))),
        blocking_ms: Math.round(tasks.reduce((s, t) => s + t.duration - 50, 0)),
        tasks_ms: tasks.map((t) => Math.round(t.duration)),
      });
      clock = now;
      fromIteration = at;
    };

    process.stderr.write(`bench app-train: ${url} …\n`);
    await page.goto(url);
    const start = page.getByRole('button', { name: 'Start' });
    await until('the Start button', 180_000, async () => (await start.count()) === 1 && start.isEnabled());
    await close('page load (to Start enabled)');

    // The instrument works: a deliberate 150 ms busy task, queued as a real task (code that
    // page.evaluate runs itself is not reported as a long task).
    await page.evaluate(
      () =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            const end = performance.now() + 150;
            while (performance.now() < end) {
              /* busy */
            }
            resolve();
          }, 0),
        ),
    );
    let calibration: number | null = null;
    await until('the calibration task', 5_000, async () => {
      const tasks = await page.evaluate(() => (window as unknown as LongTaskWindowObject).__longtasks);
      calibration = tasks.length ? Math.round(Math.max(...tasks.map((t) => t.duration))) : null;
      return calibration !== null;
    }).catch(() => undefined);
    await takeLongTasks(page);
    clock = performance.now();

    process.stderr.write('bench app-train: training …\n');
    await start.click();
    await until('the first iteration', 180_000, async () => (await points('charts/success_rate')) >= 1);
    await close('Start → first iteration');
    const target = fromIteration + options.iterations;
    await until(`iteration ${target}`, 600_000, async () => (await iteration()) >= target);
    await close('training');
    const backend = await page.getByTestId('backend').textContent();
    await page.getByRole('button', { name: 'Stop' }).click();
    await until(
      'the run to stop',
      60_000,
      async () => (await page.getByTestId('train-status').getAttribute('data-state')) === 'stopped',
    );
    if (errors.length) throw new Error(`bench app-train: the page threw: ${errors.join('; ')}`);
    return { url, server: options.dist ? 'preview' : 'dev', calibration_ms: calibration, backend, windows };
  });
}

// =============================================================================================
// The learned model's dream rate in the page: the Experience model page's audit, built app
// =============================================================================================

export interface PageDreamRate {
  env: string;
  /** Predictions the audit asked, and the wall time they were in flight (the page's stopwatch). */
  transitions: number;
  seconds: number;
  transitionsPerSecond: number;
  /** The page's own sentence: where the model decoded, and why. */
  speed: string;
  cores: number;
}

/** Builds the app into a fresh folder (what `npm run build` makes), for `vite preview`. */
export async function buildAppForBench(): Promise<string> {
  const vite = await import('vite');
  const outDir = mkdtempSync(join(tmpdir(), 'dreamgym-bench-dist-'));
  process.stderr.write(`bench: building the app into ${outDir} …\n`);
  await vite.build({ configFile: 'vite.config.ts', build: { outDir, emptyOutDir: true }, logLevel: 'warn' });
  return outDir;
}

/**
 * The shipped learned model of each env audited on the Experience model page (#/model) of the
 * built app, `audit` held-out transitions asked 64 at a time: the rate the page shows, its
 * decode workers included. Each env in a fresh load of the page.
 */
export async function benchDreamInBrowser(options: {
  dist: string;
  envs: readonly string[];
  audit: number;
}): Promise<PageDreamRate[]> {
  return withBrowserPage({ dist: options.dist }, async ({ page, baseUrl }) => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const rows: PageDreamRate[] = [];
    for (const env of options.envs) {
      process.stderr.write(`bench dream: ${env} on the Experience model page (headless Chromium) …\n`);
      await page.goto(`${baseUrl}/#/model?audit=${options.audit}&samples=0&r=${env}`);
      await page.reload();
      const audit = page.getByRole('button', { name: `Audit the shipped ${env} model` });
      await until(`the shipped ${env} model`, 120_000, async () => (await audit.count()) === 1 && audit.isEnabled());
      await audit.click();
      const speed = page.getByTestId('audit-speed');
      await until(`the audit of ${env}`, 900_000, async () => (await speed.count()) === 1);
      const text = (await speed.textContent())!.replace(/\s+/g, ' ').trim();
      const match = /^Speed: (\d+) predictions in ([\d.]+) s/.exec(text);
      if (!match) throw new Error(`bench dream: the page's speed line is not as expected: ${text}`);
      const [transitions, seconds] = [Number(match[1]), Number(match[2])];
      rows.push({
        env,
        transitions,
        seconds,
        transitionsPerSecond: Number(await speed.getAttribute('data-rate')),
        speed: text,
        cores: await page.evaluate(() => navigator.hardwareConcurrency),
      });
    }
    if (errors.length) throw new Error(`bench dream: the page threw: ${errors.join('; ')}`);
    return rows;
  });
}
