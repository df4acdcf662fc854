/**
 * WebLLM in real Chromium, without weights (none are obtainable here, docs/architecture.md §11.3):
 * - the page-side WebLlmChatModel over web-llm's real WebWorkerMLCEngine, talking to web-llm's
 *   real WebWorkerMLCEngineHandler in a module worker whose engine is a scripted fake
 *   (fixtures/fake-webllm.worker.ts): load progress, the request exactly as the engine sees it,
 *   result mapping, abort → interruptGenerate, load failures → cache cleared + a clear LlmError;
 * - the production worker (src/core/llm/llm.worker.ts, the real MLCEngine) failing on a missing
 *   self-hosted model, with the cache left clean;
 * - the capability check on this browser's SwiftShader adapter (no shader-f16 → q4f32).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { prebuiltAppConfig, WebWorkerMLCEngine, type AppConfig, type ModelRecord } from '@mlc-ai/web-llm';
import {
  WebLlmChatModel,
  createLlmWorker,
  deleteModelFromCache,
  hasModelInCache,
  toWebLlmRequest,
  LoadProgressTracker,
  JSON_WHITESPACE_GUARD,
  type WebLlmLoadProgress,
} from '../../src/core/llm/webllm';
import { checkWebGpu, pickQuantization } from '../../src/core/llm/capabilities';
import { listWebLlmModels } from '../../src/core/llm/webllm-models';
import { LlmError } from '../../src/core/llm/types';
import type { FakeEngineLog } from './fixtures/fake-mlc-engine';

const BASE = 'https://models.example.test/mlc-ai';
const record = (id: string): ModelRecord => ({
  model: `${BASE}/${id}`,
  model_id: id,
  model_lib: `${BASE}/libs/${id}-webgpu.wasm`,
  vram_required_MB: 500,
  low_resource_required: true,
  overrides: { context_window_size: 2048 },
});
const OK_ID = 'Fake-0.5B-Instruct-q4f32_1-MLC';
const POISONED_ID = 'Fake-poisoned-0.5B-q4f32_1-MLC';
const OOM_ID = 'Fake-oom-7B-q4f32_1-MLC';
const OFFLINE_ID = 'Fake-offline-0.5B-q4f32_1-MLC';
const SLOW_ID = 'Fake-slow-0.5B-q4f32_1-MLC';
const F16_ID = 'Fake-0.5B-Instruct-q4f16_1-MLC';
const APP_CONFIG: AppConfig = { model_list: [OK_ID, POISONED_ID, OOM_ID, OFFLINE_ID, SLOW_ID, F16_ID].map(record) };

const workers: Worker[] = [];
function fakeWorker(): Worker {
  const worker = new Worker(new URL('./fixtures/fake-webllm.worker.ts', import.meta.url), { type: 'module' });
  workers.push(worker);
  return worker;
}
afterAll(() => {
  for (const w of workers) w.terminate();
});

/** The fake engine's call log, read through the real protocol (runtimeStatsText). */
async function engineLog(model: WebLlmChatModel): Promise<FakeEngineLog> {
  return JSON.parse(await model.runtimeStatsText()) as FakeEngineLog;
}

async function expectLlmError(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected the promise to reject with an LlmError').toBeInstanceOf(LlmError);
  return error as LlmError;
}

/** Puts fake entries in web-llm's three Cache API scopes for a record (as web-llm would store them). */
async function seedCache(
  rec: ModelRecord,
  body = '<!doctype html><html><body>index.html</body></html>',
): Promise<string[]> {
  const base = `${rec.model}/resolve/main/`;
  const entries: [string, string][] = [
    ['webllm/config', `${base}mlc-chat-config.json`],
    ['webllm/model', `${base}tensor-cache.json`],
    ['webllm/model', `${base}params_shard_0.bin`],
    ['webllm/model', `${base}tokenizer.json`],
    ['webllm/wasm', rec.model_lib],
  ];
  for (const [scope, url] of entries) {
    await (
      await caches.open(scope)
    ).put(new Request(url), new Response(body, { headers: { 'content-type': 'text/html' } }));
  }
  return entries.map(([, url]) => url);
}

async function cachedUrls(): Promise<string[]> {
  const urls: string[] = [];
  for (const scope of ['webllm/config', 'webllm/model', 'webllm/wasm']) {
    if (!(await caches.has(scope))) continue;
    for (const key of await (await caches.open(scope)).keys()) urls.push(key.url);
  }
  return urls;
}

describe('WebLlmChatModel ↔ real WebWorkerMLCEngineHandler (fake engine) in a module worker', () => {
  let model: WebLlmChatModel;
  const progress: WebLlmLoadProgress[] = [];

  it('loads with progress reports (phase, bytes, elapsed, time left) and sends appConfig + chatOpts', async () => {
    model = await WebLlmChatModel.load(OK_ID, {
      worker: fakeWorker(),
      appConfig: APP_CONFIG,
      chatOpts: { context_window_size: 1024 },
      logLevel: 'WARN',
      onProgress: (p) => progress.push(p),
    });
    expect(model.engine).toBe('webllm');
    expect(model.id).toBe(OK_ID);
    expect(progress.length).toBeGreaterThanOrEqual(6);
    expect(progress[0]).toMatchObject({ phase: 'start', progress: 0 });
    const fetches = progress.filter((p) => p.phase === 'fetch');
    expect(fetches.map((p) => p.progress)).toEqual([0.25, 0.5, 0.75, 1]);
    expect(fetches[1].loadedBytes).toBe(200 * 2 ** 20);
    expect(fetches[1].totalBytes).toBe(400 * 2 ** 20);
    expect(fetches[1].etaSeconds).toBeGreaterThanOrEqual(0);
    expect(fetches[3].etaSeconds).toBe(0);
    expect(progress.some((p) => p.phase === 'shaders')).toBe(true);
    expect(progress.at(-1)).toMatchObject({ phase: 'done', progress: 1 });
    for (const p of progress) expect(p.elapsed).toBeGreaterThanOrEqual(0);

    const log = await engineLog(model);
    expect(log.appConfigIds).toEqual(APP_CONFIG.model_list.map((r) => r.model_id));
    expect(log.logLevel).toBe('WARN');
    expect(log.calls.find((c) => c.method === 'reload')?.args).toEqual({
      modelId: [OK_ID],
      chatOpts: [{ context_window_size: 1024 }],
    });
    expect(log.loaded).toEqual([OK_ID]);
  });

  it('sends the schema as a string in response_format (never the OpenAI json_schema shape), seed, max_tokens, logprobs', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string', maxLength: 20 } }, required: ['answer'] };
    const result = await model.complete({
      messages: [
        { role: 'system', content: 'Answer in JSON.' },
        { role: 'user', content: 'Say ok.' },
      ],
      maxTokens: 64,
      temperature: 0.7,
      seed: 42,
      jsonSchema: schema,
      topLogprobs: 2,
    });
    const log = await engineLog(model);
    const request = log.requests.at(-1)!;
    expect(request.response_format).toEqual({ type: 'json_object', schema: JSON.stringify(schema) });
    expect(typeof request.response_format?.schema).toBe('string');
    expect(JSON.stringify(request)).not.toContain('json_schema');
    expect(request).toMatchObject({
      max_tokens: 64,
      temperature: 0.7,
      seed: 42,
      logprobs: true,
      top_logprobs: 2,
      stream: false,
    });
    expect(request.stop).toEqual([...JSON_WHITESPACE_GUARD]);
    expect(request.messages).toEqual([
      { role: 'system', content: 'Answer in JSON.' },
      { role: 'user', content: 'Say ok.' },
    ]);
    // A seeded request starts from a fresh conversation.
    const methods = log.calls.map((c) => c.method);
    expect(methods.slice(-2)).toEqual(['resetChat', 'chatCompletion']);

    expect(JSON.parse(result.text)).toEqual({ answer: 'ok', seed: 42 });
    expect(result.finishReason).toBe('stop');
    expect(result.usage.promptTokens).toBe(5);
    expect(result.usage.completionTokens).toBe(Math.ceil(result.text.length / 4));
    expect(result.usage.ms).toBeGreaterThan(0);
    expect(result.logprobs?.length).toBe(result.usage.completionTokens);
    expect(result.logprobs?.[0]).toMatchObject({ logprob: -0.1, top: [{ logprob: -0.1 }, { token: 'alt1' }] });
    expect(model.lastUsageExtra?.decode_tokens_per_s).toBe(50);
  });

  it('asks top_logprobs ≥ 1 whenever logprobs are wanted, sends grammars as grammar, maps finish_reason length', async () => {
    await model.complete({
      messages: [{ role: 'user', content: 'yes or no?' }],
      maxTokens: 4,
      grammar: 'root ::= "yes" | "no"',
      topLogprobs: 0,
    });
    let request = (await engineLog(model)).requests.at(-1)!;
    expect(request.response_format).toEqual({ type: 'grammar', grammar: 'root ::= "yes" | "no"' });
    expect(request).toMatchObject({ logprobs: true, top_logprobs: 1 });
    expect(request.seed).toBeUndefined();

    const long = await model.complete({ messages: [{ role: 'user', content: 'ramble [length]' }], maxTokens: 8 });
    request = (await engineLog(model)).requests.at(-1)!;
    expect(request.logprobs).toBeUndefined();
    expect(request.response_format).toBeUndefined();
    expect(long.finishReason).toBe('length');
    expect(long.logprobs).toBeUndefined();
  });

  it('concurrent calls reach the engine one at a time, never overlapping, each answered as if alone', async () => {
    const asks = Array.from({ length: 6 }, (_, i) =>
      model.complete({
        messages: [{ role: 'user', content: `call ${i} [wait]` }],
        maxTokens: 16,
        ...(i % 2 ? { seed: i } : {}),
      }),
    );
    const answers = await Promise.all(asks);
    expect(answers.map((a) => a.text)).toEqual(Array.from({ length: 6 }, (_, i) => `echo: call ${i} [wait]`));
    const log = await engineLog(model);
    expect(log.peakInFlight).toBe(1);
    // In the order they were asked: each seeded call's resetChat right before its own generation.
    const order = log.calls
      .filter((c) => c.method === 'chatCompletion' || c.method === 'resetChat')
      .slice(-9)
      .map((c) => c.method);
    expect(order).toEqual([
      'chatCompletion',
      'resetChat',
      'chatCompletion',
      'chatCompletion',
      'resetChat',
      'chatCompletion',
      'chatCompletion',
      'resetChat',
      'chatCompletion',
    ]);
  });

  it('reports JSON cut by the whitespace guard as finishReason length', async () => {
    const result = await model.complete({
      messages: [{ role: 'user', content: 'json please [runaway]' }],
      maxTokens: 256,
      jsonSchema: { type: 'object' },
    });
    expect(result.text).toBe('{"answer": ');
    expect(result.finishReason).toBe('length');
  });

  it('abort calls interruptGenerate, rejects with LlmError aborted, and the next request still works', async () => {
    const controller = new AbortController();
    const pending = model.complete(
      { messages: [{ role: 'user', content: 'long story [slow]' }], maxTokens: 500 },
      controller.signal,
    );
    const queued = model.complete({ messages: [{ role: 'user', content: 'after' }], maxTokens: 16 });
    setTimeout(() => controller.abort(), 100);
    const error = await expectLlmError(pending);
    expect(error.code).toBe('aborted');
    const next = await queued;
    expect(next.text).toBe('echo: after');
    const log = await engineLog(model);
    const methods = log.calls.map((c) => c.method);
    expect(methods).toContain('interruptGenerate');
    expect(methods.lastIndexOf('interruptGenerate')).toBeLessThan(methods.lastIndexOf('chatCompletion'));
    // The ~4 s generation was cut short, not run out (behaviour, not a stopwatch: a busy machine is slow).
    expect(log.finishes.slice(-2)).toEqual(['abort', 'stop']);

    // Aborted while still queued: dropped without interrupting anyone.
    const before = (await engineLog(model)).calls.filter((c) => c.method === 'interruptGenerate').length;
    const early = new AbortController();
    early.abort();
    expect(
      (await expectLlmError(model.complete({ messages: [{ role: 'user', content: 'x' }], maxTokens: 4 }, early.signal)))
        .code,
    ).toBe('aborted');
    expect((await engineLog(model)).calls.filter((c) => c.method === 'interruptGenerate').length).toBe(before);
  });

  it('maps generation errors and bad requests to LlmError with the fix', async () => {
    const ctx = await expectLlmError(
      model.complete({ messages: [{ role: 'user', content: 'huge [ctx]' }], maxTokens: 8 }),
    );
    expect(ctx.code).toBe('unsupported');
    expect(ctx.message).toMatch(/context window/);
    const both = await expectLlmError(
      model.complete({
        messages: [{ role: 'user', content: 'x' }],
        maxTokens: 8,
        jsonSchema: {},
        grammar: 'root ::= "a"',
      }),
    );
    expect(both.code).toBe('unsupported');
    const lastAssistant = await expectLlmError(
      model.complete({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'y' },
        ],
        maxTokens: 8,
      }),
    );
    expect(lastAssistant.message).toMatch(/last message/);
  });

  it('unload() unloads the engine and later requests say how to recover', async () => {
    await model.unload();
    const log = await engineLog(model);
    expect(log.calls.at(-1)?.method).toBe('unload');
    expect(log.loaded).toEqual([]);
    const error = await expectLlmError(model.complete({ messages: [{ role: 'user', content: 'x' }], maxTokens: 4 }));
    expect(error.message).toMatch(/load it again/);
  });
});

describe('load failures', () => {
  it("a poisoned download clears exactly that model's cache entries and explains what happened", async () => {
    const poisoned = APP_CONFIG.model_list.find((r) => r.model_id === POISONED_ID)!;
    const other = APP_CONFIG.model_list.find((r) => r.model_id === OK_ID)!;
    const poisonedUrls = await seedCache(poisoned);
    const otherUrls = await seedCache(other);
    expect(await hasModelInCache(POISONED_ID, APP_CONFIG)).toBe(false); // an HTML manifest is not a cached model

    const progress: WebLlmLoadProgress[] = [];
    const error = await expectLlmError(
      WebLlmChatModel.load(POISONED_ID, {
        worker: fakeWorker(),
        appConfig: APP_CONFIG,
        onProgress: (p) => progress.push(p),
      }),
    );
    expect(error.code).toBe('bad-response');
    expect(error.message).toMatch(/HTML page/);
    expect(error.message).toMatch(/5 cached file\(s\) were deleted/);
    expect(progress.length).toBeGreaterThan(0);
    const left = await cachedUrls();
    for (const url of poisonedUrls) expect(left).not.toContain(url);
    for (const url of otherUrls) expect(left).toContain(url);
    await deleteModelFromCache(OK_ID, APP_CONFIG);
  });

  it('hasModelInCache sees a fully cached model (manifest + shards) and deleteModelFromCache removes it', async () => {
    const ok = APP_CONFIG.model_list.find((r) => r.model_id === OK_ID)!;
    const base = `${ok.model}/resolve/main/`;
    const model = await caches.open('webllm/model');
    await model.put(
      new Request(`${base}tensor-cache.json`),
      Response.json({ records: [{ dataPath: 'params_shard_0.bin' }, { dataPath: 'params_shard_1.bin' }] }),
    );
    await model.put(new Request(`${base}params_shard_0.bin`), new Response(new Uint8Array(8)));
    expect(await hasModelInCache(OK_ID, APP_CONFIG)).toBe(false); // a shard is missing
    await model.put(new Request(`${base}params_shard_1.bin`), new Response(new Uint8Array(8)));
    expect(await hasModelInCache(OK_ID, APP_CONFIG)).toBe(true);
    expect((await deleteModelFromCache(OK_ID, APP_CONFIG)).removed).toBe(3);
    expect(await hasModelInCache(OK_ID, APP_CONFIG)).toBe(false);
  });

  it('out of memory keeps the cache and says to pick a smaller model; offline says so', async () => {
    const oom = APP_CONFIG.model_list.find((r) => r.model_id === OOM_ID)!;
    const urls = await seedCache(oom);
    const error = await expectLlmError(WebLlmChatModel.load(OOM_ID, { worker: fakeWorker(), appConfig: APP_CONFIG }));
    expect(error.code).toBe('out-of-memory');
    expect(error.message).toMatch(/smaller model/);
    expect(await cachedUrls()).toEqual(expect.arrayContaining(urls));
    expect((await deleteModelFromCache(OOM_ID, APP_CONFIG)).removed).toBe(5);

    const offline = await expectLlmError(
      WebLlmChatModel.load(OFFLINE_ID, { worker: fakeWorker(), appConfig: APP_CONFIG }),
    );
    expect(offline.code).toBe('connection-refused');
    expect(offline.message).toMatch(/offline/);
  });

  it('an aborted load unloads (aborting the reload in the worker) and rejects with aborted', async () => {
    const worker = fakeWorker();
    const replies: { kind: string; content: unknown }[] = [];
    worker.addEventListener('message', (event: MessageEvent) => replies.push(event.data));
    const controller = new AbortController();
    const pending = WebLlmChatModel.load(SLOW_ID, {
      worker,
      appConfig: APP_CONFIG,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === 'fetch') controller.abort();
      },
    });
    const error = await expectLlmError(pending);
    expect(error.code).toBe('aborted');
    // The reload was aborted, not run to its end (~5 s; checked by behaviour, not a stopwatch): the
    // handler answers the unload, and the reload ends with the fake's AbortError.
    await vi.waitUntil(
      () =>
        replies.some((m) => m.kind === 'return') &&
        replies.some((m) => m.kind === 'throw' && String(m.content).includes('AbortError')),
      { timeout: 10_000 },
    );
    // Ask the same worker what happened, with a fresh page-side engine (the real protocol).
    const probe = new WebWorkerMLCEngine(worker);
    const log = JSON.parse(await probe.runtimeStatsText()) as FakeEngineLog;
    expect(log.calls.map((c) => c.method)).toEqual(expect.arrayContaining(['reload', 'unload']));
    expect(log.loaded).toEqual([]);
  });

  it('preflight: no WebGPU → no-webgpu naming wllama; a q4f16 model on this adapter → no-shader-f16 naming the q4f32 twin', async () => {
    const noGpu = await expectLlmError(
      WebLlmChatModel.load(OK_ID, {
        appConfig: APP_CONFIG,
        preflight: {
          available: false,
          reason:
            'This browser has no WebGPU (navigator.gpu is missing); use the wllama engine (CPU) or an OpenAI-compatible server instead.',
          features: { shaderF16: false, subgroups: false },
        },
      }),
    );
    expect(noGpu.code).toBe('no-webgpu');
    expect(noGpu.message).toMatch(/wllama/);
    const f16 = await expectLlmError(WebLlmChatModel.load(F16_ID, { worker: fakeWorker(), appConfig: APP_CONFIG }));
    expect(f16.code).toBe('no-shader-f16');
    expect(f16.message).toContain(OK_ID);
    const unknown = await expectLlmError(
      WebLlmChatModel.load('No-such-model-q4f32_1-MLC', {
        worker: fakeWorker(),
        appConfig: APP_CONFIG,
        preflight: false,
      }),
    );
    expect(unknown.code).toBe('model-not-found');
  });

  it('a worker that fails to start gives load-failed instead of hanging', async () => {
    const broken = new Worker(
      URL.createObjectURL(new Blob(['throw new Error("boom at start")'], { type: 'text/javascript' })),
      { type: 'module' },
    );
    workers.push(broken);
    const error = await expectLlmError(
      WebLlmChatModel.load(OK_ID, { worker: broken, appConfig: APP_CONFIG, preflight: false }),
    );
    expect(error.code).toBe('load-failed');
    expect(error.message).toMatch(/worker/);
  });

  it('the production worker (real MLCEngine) fails cleanly on a missing self-hosted model and leaves no cache entries', async () => {
    const id = 'Missing-0.5B-Instruct-q4f32_1-MLC';
    const missing: ModelRecord = {
      model: new URL(`/__webllm_missing__/${id}`, location.origin).href,
      model_id: id,
      model_lib: new URL('/__webllm_missing__/lib-webgpu.wasm', location.origin).href,
    };
    const appConfig: AppConfig = { model_list: [missing] };
    const error = await expectLlmError(WebLlmChatModel.load(id, { appConfig, worker: createLlmWorker() }));
    console.log(`production worker, missing model: [${error.code}] ${error.message}`);
    expect(['bad-response', 'http', 'connection-refused', 'load-failed']).toContain(error.code);
    expect((await cachedUrls()).filter((u) => u.includes('__webllm_missing__'))).toEqual([]);
  });
});

describe('pure mapping', () => {
  it('merges system messages, disables Qwen3 thinking, floors seeds, clamps top_logprobs to 5', () => {
    const body = toWebLlmRequest('Qwen3-0.6B-q4f32_1-MLC', {
      messages: [
        { role: 'system', content: 'A' },
        { role: 'user', content: 'u1' },
        { role: 'system', content: 'B' },
        { role: 'assistant', content: 'a1' },
        { role: 'user', content: 'u2' },
      ],
      maxTokens: 10,
      seed: 7.9,
      topLogprobs: 9,
      stop: ['END'],
    });
    expect(body.messages).toEqual([
      { role: 'system', content: 'A\n\nB' },
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'u2' },
    ]);
    expect(body).toMatchObject({ seed: 7, top_logprobs: 5, stop: ['END'], extra_body: { enable_thinking: false } });
    expect(() => toWebLlmRequest('x', { messages: [{ role: 'user', content: 'u' }], maxTokens: 0 })).toThrow(LlmError);
  });

  it('estimates time left per phase', () => {
    let t = 0;
    const tracker = new LoadProgressTracker(() => t);
    tracker.update({ progress: 0, text: 'Start to fetch params' });
    t = 1000;
    tracker.update({ progress: 0.1, text: 'Fetching param cache[1/10]: 10MB fetched. 10% completed, 1 secs elapsed.' });
    t = 3000;
    const p = tracker.update({
      progress: 0.3,
      text: 'Fetching param cache[3/10]: 30MB fetched. 30% completed, 3 secs elapsed.',
    });
    expect(p.elapsed).toBe(3);
    expect(p.etaSeconds).toBeCloseTo(7, 5); // 2 s for 0.2 → 7 s for the remaining 0.7
    expect(p.totalBytes).toBe(100 * 2 ** 20);
  });
});

describe('WebGPU capabilities of this browser (SwiftShader)', () => {
  it('finds the fallback adapter without shader-f16 and picks q4f32 models', async () => {
    const caps = await checkWebGpu();
    console.log(`WebGPU: ${JSON.stringify(caps)}`);
    expect(caps.available, caps.reason).toBe(true);
    expect(caps.deviceOk).toBe(true);
    expect(caps.adapter?.isFallbackAdapter).toBe(true);
    expect(caps.adapter?.architecture).toBe('swiftshader');
    expect(caps.features.shaderF16).toBe(false);
    expect(caps.limits?.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 * 2 ** 20);
    const choice = pickQuantization(caps);
    expect(choice.quantization).toBe('q4f32');
    expect(choice.reason).toMatch(/shader-f16/);
    const list = listWebLlmModels(prebuiltAppConfig, caps);
    expect(list.chat.length).toBeGreaterThan(0);
    for (const m of list.chat) expect(m.id).toContain('q4f32_1');
    expect(list.budget.mb).toBeLessThanOrEqual(2048);
    expect(list.embedding.map((m) => m.id).every((id) => id.startsWith('snowflake-arctic-embed'))).toBe(true);
  });

  it('reports a missing navigator.gpu and a null adapter with reasons', async () => {
    expect((await checkWebGpu({})).reason).toMatch(/navigator\.gpu/);
    expect((await checkWebGpu({ gpu: { requestAdapter: async () => null } })).reason).toMatch(/returned null/);
  });
});
