/**
 * End to end: the Setup page's language-model section and a dream run on a real LLM engine, in
 * Debian's Chromium against the Vite dev server.
 *
 * (a) Setup lists the WebLLM models that fit the SwiftShader adapter (q4f32, sizes and GPU memory),
 *     labels the noisy oracle as a teaching option, and tests an OpenAI-compatible endpoint against
 *     loopback servers started here: one answering /v1/chat/completions with CORS headers, one
 *     without them (CORS refused), and a closed port (connection refused).
 * (b) wllama with ../shared/models/stories260K.gguf picked as a file: it is kept in OPFS, loaded
 *     and checked on Setup, and then a dream run on household-easy (1 task × 1 rollout, 1
 *     iteration) with the LLM prior on and LLM-written curriculum variations plays its episode to
 *     the end in the trainer worker. The 260K-parameter model mostly answers junk: those
 *     predictions must be recorded invalid, never crash the run; the prior's scores are in the
 *     policy's steps (Inspect). Skipped, with a note saying why, when the model file is absent.
 * (c) The same run with WebLLM through its real worker API: web-llm's WebWorkerMLCEngine in the
 *     trainer worker talks to web-llm's real WebWorkerMLCEngineHandler, whose engine is the
 *     scripted fake (tests/browser/fixtures/fake-webllm.worker.ts, bundled here into the built
 *     app's folder and named in localStorage as the WebLLM worker, WEBLLM_WORKER_KEY: Playwright
 *     cannot route a nested worker's script). No weights exist here, so the fake answers junk JSON.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import { SHOTS, trackErrors, useApp } from './harness';
import { WEBLLM_WORKER_KEY } from '../../src/app/state/setup/engine';

const MODEL_PATH = resolve(process.cwd(), '../shared/models/stories260K.gguf');
const MODEL_PRESENT = existsSync(MODEL_PATH);
const SKIP_NOTE =
  `${MODEL_PATH} is absent (../shared/models/stories260K.gguf from the repo root); ` + 'the wllama dream run needs it';

const servers: Server[] = [];
const requests: { url: string; method: string; auth?: string }[] = [];

/** A tiny OpenAI-compatible server on a free loopback port; `cors` decides whether it allows other origins. */
async function startChatServer(cors: boolean): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({ url: req.url ?? '', method: req.method ?? '', auth: req.headers.authorization });
    if (cors) {
      res.setHeader('access-control-allow-origin', '*');
      res.setHeader('access-control-allow-headers', 'content-type, authorization, accept');
      res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    if (req.url === '/v1/chat/completions' && req.method === 'POST') {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-test',
            object: 'chat.completion',
            model: 'tiny-test',
            choices: [{ index: 0, message: { role: 'assistant', content: 'OK' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 11, completion_tokens: 1, total_tokens: 12 },
          }),
        );
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** A loopback port with nothing listening (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** The page's uncaught errors; its loads and dev-server messages logged. */
function trackErrorsAndReloads(page: Page): string[] {
  const errors = trackErrors(page);
  // Diagnostics: a dev-server reload (dependency re-optimisation) would reset the page mid-test.
  page.on('console', (m) => {
    if (/\[vite\] (?!connect)/.test(m.text())) console.log(`[console] ${m.text()}`);
  });
  page.on('load', () => console.log(`[load] ${page.url().slice(0, 80)}`));
  return errors;
}

/** Where the fake WebLLM worker is served from (a file added to the built app's folder before it is served). */
const FAKE_WEBLLM_WORKER = '/e2e-fake-webllm/worker.js';

/** web-llm's real handler with the FakeMlcEngine, bundled as one ES module into the built app. */
async function bundleFakeWebLlmWorker(): Promise<string> {
  const outDir = join(inject('builtApp').outDir, 'e2e-fake-webllm');
  await build({
    configFile: false,
    logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"' },
    build: {
      outDir,
      emptyOutDir: true,
      minify: false,
      copyPublicDir: false,
      lib: {
        entry: resolve('tests/browser/fixtures/fake-webllm.worker.ts'),
        formats: ['es'],
        fileName: () => 'worker.js',
      },
      rollupOptions: { output: { inlineDynamicImports: true } },
    },
  });
  return outDir;
}

let fakeWorkerDir = '';
beforeAll(async () => {
  fakeWorkerDir = await bundleFakeWebLlmWorker();
}, 180_000);
const app = useApp('dreamgym-e2e-llm-', { startTimeoutMs: 180_000 });

/** Options of a tiny dream run with the LLM prior and LLM variations on (1 task × 1 rollout, 1 iteration). */
const PRIOR_AND_LLM_VARIATIONS =
  'tasks=1&group=1&iterations=1&evalEvery=0&evalEpisodes=1&curriculum=1&variations=llm&prior=1';

/** Runs the Train page's configured run to its end and checks what every LLM dream run must show. */
async function runToTheEnd(page: Page, label: string): Promise<{ dreamSteps: number; metrics: string[] }> {
  await page.getByRole('button', { name: 'Start' }).click();
  await expect
    .poll(() => page.getByTestId('train-status').getAttribute('data-state'), { timeout: 150_000, interval: 1000 })
    .toMatch(/finished|error/);
  const status = `${await page.getByTestId('train-status').textContent()} ${(await page.getByRole('alert').allTextContents()).join(' ')}`;
  console.log(`[${label}] ${status}`);
  expect(await page.getByTestId('train-status').getAttribute('data-state'), status ?? '').toBe('finished');
  await expect.poll(() => page.getByTestId('iteration').textContent()).toBe('1');
  expect(await page.getByTestId('real-steps').textContent()).toBe('0');
  const dreamSteps = Number((await page.getByTestId('dream-steps').textContent())!.replace(/\D/g, ''));
  const invalid = await page.getByTestId('dream-invalid').textContent();
  console.log(`[${label}] dream steps ${dreamSteps}, unusable answers ${invalid}`);
  expect(invalid).toMatch(/^\d+%$/);
  expect(dreamSteps).toBeGreaterThan(0);
  const series = await page.evaluate(
    () =>
      (globalThis as unknown as { __dreamgym: { train: { series: { values: Record<string, (number | null)[]> } } } })
        .__dreamgym.train.series.values,
  );
  // The junk answers are recorded as invalid, and the LLM variations were asked for (the curriculum reports them).
  // (The first point of each series is iteration 0, the untrained policy's evaluation: no dream metrics.)
  const firstInvalid = series['dream/invalid_rate']?.find((v) => v !== null) ?? 0;
  expect(firstInvalid, 'junk answers recorded invalid').toBeGreaterThan(0);
  expect(series).toHaveProperty(['curriculum/llm_variations']);
  return { dreamSteps, metrics: Object.keys(series) };
}

/**
 * Inspect: the run's first episode's first step lists the LLM prior's score of every admissible
 * action — the scores the policy acted with. `preference`: the engine's answers name a label (then
 * some score differs from 0; a junk answer is "no preference", all 0).
 */
async function expectPriorScores(page: Page, label: string, preference: boolean): Promise<void> {
  await page.getByRole('link', { name: 'Inspect', exact: true }).click();
  await expect.poll(() => page.getByTestId('episode').count(), { timeout: 30_000 }).toBeGreaterThan(0);
  await page.getByTestId('episode').first().click();
  await expect
    .poll(() => page.getByTestId('step-position').textContent(), { timeout: 30_000 })
    .toMatch(/^Step 1 of \d+$/);
  const actions = await page.getByTestId('action-prob').count();
  const priors = await page.getByTestId('action-prior').allTextContents();
  console.log(`[${label}] prior scores of step 1: ${priors.join(', ')}`);
  expect(actions).toBeGreaterThan(0);
  expect(priors).toHaveLength(actions);
  for (const p of priors) expect(p).toMatch(/^prior -?\d+\.\d\d$/);
  if (preference) expect(priors.some((p) => p !== 'prior 0.00')).toBe(true);
}

afterAll(async () => {
  for (const server of servers) server.close();
  if (fakeWorkerDir) rmSync(fakeWorkerDir, { recursive: true, force: true });
});

describe('Setup: the language model section', () => {
  it('lists WebLLM models that fit, labels the oracle, and tests OpenAI-compatible endpoints', async () => {
    const page = await app.context.newPage();
    const errors = trackErrorsAndReloads(page);
    await page.goto(`${app.baseUrl}/#/setup`);
    await expect.poll(() => page.getByTestId('adapter').textContent(), { timeout: 60_000 }).toMatch(/swiftshader/i);

    // The oracle, clearly labelled (picked once the default, the shipped learned model, is known).
    await expect.poll(() => page.getByTestId('engine-chosen').textContent()).toMatch(/^learned experience model/);
    await page.getByLabel('Noisy oracle — teaching option, not a language model').check();
    await expect
      .poll(() => page.getByTestId('oracle-card').textContent())
      .toMatch(/teaching option, not a language model/);
    await expect
      .poll(() => page.getByTestId('engine-chosen').textContent())
      .toMatch(/oracle .* teaching option, not a language model/);

    // WebLLM: models that fit the 2 GiB software-adapter budget, all q4f32 (no shader-f16), with sizes.
    await page.getByLabel('WebLLM (WebGPU, downloads a model)').check();
    await expect
      .poll(() => page.getByTestId('webllm-models').locator('tbody tr').count(), { timeout: 90_000 })
      .toBeGreaterThan(0);
    const rows = await page.getByTestId('webllm-models').locator('tbody tr').allTextContents();
    console.log(`[setup] ${rows.length} WebLLM models fit; first: ${rows[0].replace(/\s+/g, ' ')}`);
    for (const row of rows) expect(row).toMatch(/q4f32/);
    expect(rows.some((row) => /≈ [\d,]+ MB/.test(row))).toBe(true);
    await expect
      .poll(() => page.getByTestId('webgpu-notice').textContent())
      .toMatch(/no shader-f16, so only q4f32 models/);
    // The radio alone picks no model (nothing to download yet); a pick names its size first.
    await expect.poll(() => page.getByTestId('engine-chosen').textContent()).toMatch(/No WebLLM model is picked yet/);
    await page.getByTestId('webllm-models').locator('input[type="radio"]').first().check();
    await expect
      .poll(() => page.getByText(/Downloads ≈ [\d,?]+ MB and needs ≈\s+[\d,?]+ MB of GPU memory\./).count())
      .toBe(1);
    await expect.poll(() => page.getByTestId('webllm-cache-empty').count(), { timeout: 30_000 }).toBe(1);
    // SwiftShader is a software adapter: the download waits for a second yes.
    await expect.poll(() => page.getByRole('button', { name: 'Download and check' }).isDisabled()).toBe(true);
    await page.getByTestId('webllm-slow-ok').locator('input').check();
    // No internet here: a download fails with a message naming the cause and the way out.
    await page.getByRole('button', { name: 'Download and check' }).click();
    await expect.poll(() => page.getByTestId('engine-error').count(), { timeout: 60_000 }).toBe(1);
    const downloadError = (await page.getByTestId('engine-error').textContent())!;
    console.log(`[setup] WebLLM download without internet: ${downloadError}`);
    expect(downloadError).toMatch(/^Loading .*-q4f32_1-MLC with WebLLM failed: .*(could not be downloaded|offline)/);
    expect(await page.getByTestId('load-progress').count()).toBe(1);

    // OpenAI-compatible: a server with CORS headers answers; one without is "CORS refused"; a closed port is "refused".
    await page.getByLabel('OpenAI-compatible server').check();
    const good = await startChatServer(true);
    await page.getByLabel('Base URL').fill(good);
    await page.getByLabel('Model', { exact: true }).fill('tiny-test');
    await page.getByLabel(/API key/).fill('sk-test-key');
    await page.getByRole('button', { name: 'Test connection' }).click();
    const report = page.getByTestId('connection-report');
    await expect
      .poll(() => report.textContent(), { timeout: 30_000 })
      .toMatch(
        new RegExp(
          `Connected: tiny-test at ${good.replace(/[./]/g, '\\$&')} answered in \\d+ ms \\(11 prompt \\+ 1 answer tokens\\)`,
        ),
      );
    await expect.poll(() => report.textContent()).toMatch(/Reply: .?OK/);
    expect(
      requests.some((r) => r.method === 'POST' && r.url === '/v1/chat/completions' && r.auth === 'Bearer sk-test-key'),
    ).toBe(true);
    await page.screenshot({ path: `${SHOTS}/setup-llm.png` });

    const noCors = await startChatServer(false);
    await page.getByLabel('Base URL').fill(noCors);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect
      .poll(() => report.textContent(), { timeout: 30_000 })
      .toMatch(
        /CORS refused: a server is running at http:\/\/127\.0\.0\.1:\d+, but it does not allow requests from this page/,
      );
    console.log(`[setup] no-CORS server: ${(await report.textContent())!.slice(0, 160)}…`);

    const port = await closedPort();
    await page.getByLabel('Base URL').fill(`http://127.0.0.1:${port}/v1`);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect
      .poll(() => report.textContent(), { timeout: 30_000 })
      .toMatch(new RegExp(`Connection refused: nothing is listening at http://127\\.0\\.0\\.1:${port}\\.`));

    // The key never reaches storage; the rest of the choice does.
    const stored = await page.evaluate(() => localStorage.getItem('dreamgym.engine.choice'));
    expect(stored).toMatch(/"kind":"openai"/);
    expect(stored).not.toMatch(/sk-test-key/);

    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/setup.png` });
    expect(errors).toEqual([]);
    await page.close();
  }, 150_000);
});

describe('wllama with stories260K.gguf picked as a file', () => {
  it('keeps the file in OPFS, loads it on Setup, and runs a dream episode to the end in the trainer worker', async ({
    skip,
  }) => {
    skip(!MODEL_PRESENT, SKIP_NOTE);
    const page = await app.context.newPage();
    const errors = trackErrorsAndReloads(page);
    await page.goto(`${app.baseUrl}/#/setup`);
    await page.getByLabel('wllama (CPU, a GGUF file)').check();
    await page.getByTestId('gguf-file').setInputFiles(MODEL_PATH);
    await expect
      .poll(() => page.getByTestId('engine-message').textContent(), { timeout: 30_000 })
      .toMatch(/stories260K\.gguf is stored in this browser \(OPFS\)/);
    await expect.poll(() => page.getByTestId('gguf-files').textContent()).toMatch(/stories260K\.gguf \(1\.1 MiB\)/);
    await expect
      .poll(() => page.getByTestId('engine-chosen').textContent())
      .toBe('wllama (CPU): stories260K.gguf, picked from disk');

    // Load and check: progress up to "ready", then a few tokens from the CPU.
    await page.getByRole('button', { name: 'Load and check' }).click();
    const outcome = () => page.getByTestId('engine-status').or(page.getByTestId('engine-error')).allTextContents();
    await expect
      .poll(async () => (await outcome()).join(' '), { timeout: 60_000 })
      .toMatch(/loads and runs on the CPU|failed/);
    expect(await page.getByTestId('engine-error').count(), (await outcome()).join(' ')).toBe(0);
    await expect
      .poll(() => page.getByTestId('engine-message').textContent())
      .toMatch(/stories260K\.gguf loads and runs on the CPU/);
    await expect
      .poll(() => page.getByTestId('load-line').textContent())
      .toMatch(/^100% — stories260K\.gguf is ready — done$/);
    console.log(`[wllama] ${await page.getByTestId('engine-message').textContent()}`);

    // The Train page offers Setup's engine; a link with llm= selects it (shareable). Opened as a
    // fresh document, as a shared link is.
    await page.goto('about:blank');
    await page.goto(
      `${app.baseUrl}/#/train?preset=household-easy&mode=dream&algo=grpo&seed=2&${PRIOR_AND_LLM_VARIATIONS}` +
        '&llm=wllama:file:stories260K.gguf&k=1&history=2&tokens=96&retries=0',
    );
    await expect.poll(() => page.getByLabel('Dream engine').inputValue()).toBe('wllama:file:stories260K.gguf');
    await expect
      .poll(() => page.getByTestId('experience-source').textContent())
      .toMatch(/dream: reasoning experience model on wllama stories260K\.gguf/);
    await expect.poll(() => page.getByLabel('Retrieval k').inputValue()).toBe('1');
    await expect.poll(() => page.getByLabel('Answer tokens').inputValue()).toBe('96');
    await runToTheEnd(page, 'wllama');
    const tokens = Number((await page.getByTestId('dream-tokens').textContent())!.replace(/\D/g, ''));
    console.log(`[wllama] ≈ ${tokens} tokens`);
    expect(tokens).toBeGreaterThan(0);
    await page.screenshot({ path: `${SHOTS}/train-wllama.png` });
    await expectPriorScores(page, 'wllama', false);
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);
});

describe('the built app holds web-llm once', () => {
  it('emits web-llm as one file that the page, the trainer worker and the WebLLM worker all import', () => {
    const assets = join(inject('builtApp').outDir, 'assets');
    const scripts = readdirSync(assets).filter((f) => f.endsWith('.js'));
    // A string only web-llm's runtime holds (TVM's JS runtime inside it).
    const holders = scripts.filter((f) => readFileSync(join(assets, f), 'utf8').includes('tvmjs'));
    const importers = scripts.filter((f) => /web-llm-[\d.]+\.js/.test(readFileSync(join(assets, f), 'utf8')));
    console.log(`[build] web-llm in ${holders.join(', ')}; imported by ${importers.join(', ')}`);
    expect(holders).toEqual([expect.stringMatching(/^web-llm-[\d.]+\.js$/)]);
    for (const importer of [/^index-/, /^trainer\.worker-/, /^llm\.worker-/])
      expect(
        importers.some((f) => importer.test(f)),
        String(importer),
      ).toBe(true);
  });
});

describe('WebLLM through its real worker API, with the fake engine', () => {
  it("runs a dream iteration to the end with the LLM prior and LLM variations; junk answers recorded invalid, the prior's scores used", async () => {
    const page = await app.context.newPage();
    const errors = trackErrorsAndReloads(page);
    try {
      await page.goto(`${app.baseUrl}/#/setup`);
      await page.evaluate(([key, url]) => localStorage.setItem(key, url), [WEBLLM_WORKER_KEY, FAKE_WEBLLM_WORKER]);
      await page.goto('about:blank');
      await page.goto(
        `${app.baseUrl}/#/train?preset=household-easy&mode=dream&algo=grpo&seed=3&${PRIOR_AND_LLM_VARIATIONS}` +
          '&llm=webllm:Qwen2.5-0.5B-Instruct-q4f32_1-MLC&k=1&history=2&tokens=96&retries=0',
      );
      await expect
        .poll(() => page.getByLabel('Dream engine').inputValue())
        .toBe('webllm:Qwen2.5-0.5B-Instruct-q4f32_1-MLC');
      await runToTheEnd(page, 'webllm');
      await expectPriorScores(page, 'webllm', true); // the fake answers the prior's label request with logprobs
      expect(errors).toEqual([]);
    } finally {
      await page.evaluate((key) => localStorage.removeItem(key), WEBLLM_WORKER_KEY).catch(() => undefined);
      await page.close();
    }
  }, 240_000);
});
