import { describe, expect, it } from 'vitest';
import {
  CHOICE_KEY,
  DEFAULT_CHOICE,
  choiceSpec,
  dreamEngine,
  dreamEngineOfSpec,
  engineLabel,
  etaSeconds,
  formEngine,
  formatDuration,
  loadChoice,
  progressLine,
  saveChoice,
  shownOnSetup,
  storageErrorText,
  webGpuNotice,
  type EngineChoice,
  type EngineFacts,
} from '../../../src/app/state/setup/engine';
import { parseLlmSpec } from '../../../src/core/llm/spec';
import { testOpenAiConnection } from '../../../src/app/state/setup/engine-connection';
import { safeFileName } from '../../../src/app/storage/llm-files';
import { memoryStorage } from '../support/memory-storage';

describe('engine labels', () => {
  it('words every kind for people; the oracle as not a language model', () => {
    expect(engineLabel(parseLlmSpec('oracle:0.1,0.2'))).toBe(
      'oracle (ε_R=0.1, ε_P=0.2) — teaching option, not a language model',
    );
    expect(engineLabel(parseLlmSpec('wllama:file:a.gguf'))).toBe('wllama (CPU): a.gguf, picked from disk');
    expect(engineLabel(parseLlmSpec('openai:http://h:1/v1#m'))).toBe('OpenAI-compatible server: m at http://h:1/v1');
    expect(engineLabel(parseLlmSpec('webllm:X-q4f32_1-MLC'))).toBe('WebLLM (WebGPU): X-q4f32_1-MLC');
    expect(engineLabel(parseLlmSpec('learned:runs/m'))).toBe('learned experience model: runs/m');
  });
});

describe('the Setup choice', () => {
  it('persists and reloads, never the API key', () => {
    const storage = memoryStorage();
    const choice: EngineChoice = {
      ...structuredClone(DEFAULT_CHOICE),
      kind: 'openai',
      openai: { baseUrl: 'http://127.0.0.1:8080/v1', model: 'default' },
    };
    saveChoice(choice, storage);
    expect(loadChoice(storage)).toEqual(choice);
    expect(storage.data.get(CHOICE_KEY)).not.toMatch(/key/i);
  });

  it('falls back to defaults for missing, corrupt or malformed entries', () => {
    expect(loadChoice(memoryStorage())).toEqual(DEFAULT_CHOICE);
    expect(loadChoice(memoryStorage({ [CHOICE_KEY]: '{not json' }))).toEqual(DEFAULT_CHOICE);
    const odd = loadChoice(
      memoryStorage({
        [CHOICE_KEY]: JSON.stringify({
          kind: 'gpt',
          wllama: { source: 'x', fileBytes: -3, nCtx: 10 },
          openai: { model: 7 },
        }),
      }),
    );
    expect(odd.kind).toBeNull(); // nothing picked: the default applies (dreamEngine)
    expect(DEFAULT_CHOICE.kind).toBeNull();
    expect(odd.wllama).toMatchObject({ source: 'file', fileBytes: 0, nCtx: 256 });
    expect(odd.openai.model).toBe(DEFAULT_CHOICE.openai.model);
  });

  it('turns a complete choice into a spec and an incomplete one into an error in words', () => {
    const base = structuredClone(DEFAULT_CHOICE);
    expect(choiceSpec({ ...base, kind: 'oracle' }, 0.1, 0.2)).toEqual({ spec: 'oracle:0.1,0.2' });
    expect(choiceSpec(base)).toEqual({ error: expect.stringMatching(/No engine is picked on the Setup page yet/) });
    expect(choiceSpec({ ...base, kind: 'webllm' })).toEqual({
      error: expect.stringMatching(/No WebLLM model is picked/),
    });
    expect(choiceSpec({ ...base, kind: 'webllm', webllm: { modelId: 'SmolLM2-360M-Instruct-q4f32_1-MLC' } })).toEqual({
      spec: 'webllm:SmolLM2-360M-Instruct-q4f32_1-MLC',
    });
    expect(choiceSpec({ ...base, kind: 'wllama' })).toEqual({ error: expect.stringMatching(/No GGUF file is picked/) });
    expect(choiceSpec({ ...base, kind: 'wllama', wllama: { ...base.wllama, fileName: 'stories260K.gguf' } })).toEqual({
      spec: 'wllama:file:stories260K.gguf',
    });
    expect(
      choiceSpec({ ...base, kind: 'wllama', wllama: { ...base.wllama, source: 'url', url: 'https://x.org/a.txt' } }),
    ).toEqual({ error: expect.stringMatching(/does not end in \.gguf/) });
    expect(
      choiceSpec({ ...base, kind: 'openai', openai: { baseUrl: 'http://127.0.0.1:11434/v1/', model: 'qwen' } }),
    ).toEqual({ spec: 'openai:http://127.0.0.1:11434/v1#qwen' });
    expect(choiceSpec({ ...base, kind: 'openai', openai: { baseUrl: '', model: 'qwen' } })).toEqual({
      error: expect.stringMatching(/base URL and a model/),
    });
  });
});

describe('the one engine rule (Setup, Train and Start here)', () => {
  const WEBSHOP = 'webshop-lite-v0';
  const SHIPPED = 'learned:models/webshop-lite-v0';
  const BOTH: EngineFacts = { shipped: [WEBSHOP, 'household-v0'], local: [{ name: 'mine', env: WEBSHOP }] };
  const picked = (change: Partial<EngineChoice>): EngineChoice => ({ ...structuredClone(DEFAULT_CHOICE), ...change });
  const LEARNED_LABEL = 'learned experience model (tfjs, not a chat model): shipped for webshop-lite-v0';

  it("nothing picked: the learned model shipped for the run's env, named as the default", () => {
    for (const choice of [null, loadChoice(memoryStorage())]) {
      const engine = dreamEngine(choice, WEBSHOP, BOTH);
      expect(engine).toMatchObject({ llm: SHIPPED, kind: 'learned', source: 'default', why: '', settled: true });
      expect(engine.label).toBe(`${LEARNED_LABEL} (the default: no engine is picked on Setup)`);
    }
    // Setup shows that default as the pick: the learned radio and the shipped model's.
    const engine = dreamEngine(null, WEBSHOP, BOTH);
    expect(shownOnSetup(DEFAULT_CHOICE, engine)).toEqual({ kind: 'learned', learnedPath: 'models/webshop-lite-v0' });
    expect(formEngine(engine)).toBe(SHIPPED);
  });

  it("nothing picked and no shipped model for the env: the noisy oracle, labelled as such, with the form's ε", () => {
    const engine = dreamEngine(null, WEBSHOP, { shipped: ['household-v0'], epsR: 0.2, epsP: 0 });
    expect(engine).toMatchObject({ llm: 'oracle:0.2,0', kind: 'oracle', source: 'default', settled: true });
    expect(engine.label).toBe(
      'noisy oracle (ε_R=0.2, ε_P=0) — teaching option, not a language model ' +
        '(the default: this build ships no learned experience model for webshop-lite-v0)',
    );
    expect(dreamEngine(null, WEBSHOP, { shipped: [] }).llm).toBe('oracle:0.1,0.1');
    expect(shownOnSetup(DEFAULT_CHOICE, engine)).toEqual({ kind: 'oracle', learnedPath: '' });
    expect(formEngine(engine)).toBe('');
    // While the shipped models are still being checked, no radio is shown as the pick (one shown
    // checked then could not be clicked: the default would take it back a moment later).
    expect(shownOnSetup(DEFAULT_CHOICE, dreamEngine(null, WEBSHOP, { shipped: null }))).toEqual({
      kind: null,
      learnedPath: '',
    });
  });

  it('is unsettled while the shipped models are not checked (the Train form waits instead of following)', () => {
    const engine = dreamEngine(null, WEBSHOP, { shipped: null });
    expect(engine).toMatchObject({ kind: 'oracle', settled: false });
    expect(engine.label).toMatch(/checking which learned models this build ships/);
    expect(formEngine(engine)).toBeNull();
  });

  it('a complete pick is used as picked, a language model too, with the label Setup shows', () => {
    const oracle = dreamEngine(picked({ kind: 'oracle' }), WEBSHOP, { ...BOTH, epsR: 0.3, epsP: 0.1 });
    expect(oracle).toMatchObject({ llm: 'oracle:0.3,0.1', kind: 'oracle', source: 'chosen' });
    expect(oracle.label).toBe('noisy oracle (ε_R=0.3, ε_P=0.1) — teaching option, not a language model');
    const wllamaChoice = picked({ kind: 'wllama', wllama: { ...DEFAULT_CHOICE.wllama, fileName: 'a.gguf' } });
    expect(dreamEngine(wllamaChoice, WEBSHOP, BOTH)).toMatchObject({
      llm: 'wllama:file:a.gguf',
      kind: 'wllama',
      source: 'chosen',
      label: 'wllama (CPU): a.gguf, picked from disk',
    });
    const openaiChoice = picked({ kind: 'openai', openai: { baseUrl: 'http://h:1/v1', model: 'm' } });
    expect(dreamEngine(openaiChoice, WEBSHOP, BOTH)).toMatchObject({
      llm: 'openai:http://h:1/v1#m',
      kind: 'openai',
      label: 'OpenAI-compatible server: m at http://h:1/v1',
    });
    const webllmChoice = picked({ kind: 'webllm', webllm: { modelId: 'X-q4f32_1-MLC' } });
    const webllm = dreamEngine(webllmChoice, WEBSHOP, { ...BOTH, webllmCached: true });
    expect(webllm).toMatchObject({
      llm: 'webllm:X-q4f32_1-MLC',
      kind: 'webllm',
      source: 'chosen',
      label: 'WebLLM (WebGPU): X-q4f32_1-MLC',
    });
    expect(shownOnSetup(webllmChoice, webllm).kind).toBe('webllm');
  });

  it("a learned pick: the shipped one follows the run's env; one trained here dreams its own env only", () => {
    const shipped = picked({ kind: 'learned', learned: { path: 'models/household-v0' } });
    expect(dreamEngine(shipped, WEBSHOP, BOTH)).toMatchObject({ llm: SHIPPED, source: 'chosen' });
    expect(dreamEngine(shipped, 'household-v0', BOTH)).toMatchObject({ llm: 'learned:models/household-v0' });
    const mine = picked({ kind: 'learned', learned: { path: 'local/mine' } });
    const MINE = 'learned:local/mine';
    expect(dreamEngine(mine, WEBSHOP, BOTH)).toMatchObject({ llm: MINE, source: 'chosen', settled: true });
    expect(dreamEngine(mine, WEBSHOP, { ...BOTH, local: null })).toMatchObject({ llm: MINE, settled: false });
    const elsewhere = dreamEngine(mine, 'household-v0', BOTH);
    expect(elsewhere).toMatchObject({ llm: 'learned:models/household-v0', source: 'fallback' });
    expect(elsewhere.why).toMatch(/'mine' was trained on webshop-lite-v0, and this run is on household-v0/);
    expect(dreamEngine(mine, WEBSHOP, { ...BOTH, local: [] }).why).toMatch(/'mine' is not in this browser any more/);
    const unshipped = dreamEngine(shipped, WEBSHOP, { shipped: ['household-v0'] });
    expect(unshipped).toMatchObject({ llm: 'oracle:0.1,0.1', kind: 'oracle', source: 'fallback' });
    expect(unshipped.label).toMatch(/^noisy oracle .* — instead of Setup's pick \(a learned experience model\): this/);
  });

  it('an incomplete pick: says which engine is used instead and why', () => {
    const none = dreamEngine(picked({ kind: 'webllm' }), WEBSHOP, BOTH);
    expect(none).toMatchObject({ llm: SHIPPED, kind: 'learned', source: 'fallback', settled: true });
    expect(none.label).toBe(
      `${LEARNED_LABEL} — instead of Setup's pick (WebLLM (WebGPU)): ` +
        'No WebLLM model is picked yet: pick one in the model list on the Setup page.',
    );
    const model = picked({ kind: 'webllm', webllm: { modelId: 'X-q4f32_1-MLC' } });
    const notDownloaded = dreamEngine(model, WEBSHOP, { ...BOTH, webllmCached: false });
    expect(notDownloaded).toMatchObject({ kind: 'learned', source: 'fallback', settled: true });
    expect(notDownloaded.label).toMatch(/instead of Setup's pick \(WebLLM \(WebGPU\): X-q4f32_1-MLC\): it is not/);
    expect(formEngine(dreamEngine(model, WEBSHOP, BOTH))).toBeNull(); // the cache is not checked yet
    const noFile = dreamEngine(picked({ kind: 'wllama' }), WEBSHOP, { shipped: [] });
    expect(noFile).toMatchObject({ llm: 'oracle:0.1,0.1', kind: 'oracle', source: 'fallback' });
    expect(noFile.why).toMatch(/No GGUF file is picked yet/);
    expect(shownOnSetup(picked({ kind: 'wllama' }), noFile)).toEqual({ kind: 'wllama', learnedPath: '' });
  });

  it("labels a run's own spec the same way", () => {
    const oracle = dreamEngine(picked({ kind: 'oracle' }), WEBSHOP, BOTH);
    expect(dreamEngineOfSpec('oracle:0.1,0.1').label).toBe(oracle.label);
    expect(dreamEngineOfSpec(SHIPPED)).toMatchObject({ kind: 'learned', source: 'chosen', label: LEARNED_LABEL });
  });
});

describe('progress and time left', () => {
  it('extrapolates the time left from the progress so far', () => {
    expect(etaSeconds(0.25, 10)).toBeCloseTo(30);
    expect(etaSeconds(0.005, 10)).toBeUndefined();
    expect(etaSeconds(0.5, undefined)).toBeUndefined();
    expect(etaSeconds(1, 12)).toBe(0);
  });

  it('formats durations and progress lines', () => {
    expect(formatDuration(42.4)).toBe('42 s');
    expect(formatDuration(185)).toBe('3 min 05 s');
    expect(formatDuration(3720)).toBe('1 h 02 min');
    expect(formatDuration(undefined)).toBe('');
    expect(progressLine({ progress: 0.372, text: 'Fetching param cache[3/20]', eta: 65 })).toBe(
      '37% — Fetching param cache[3/20] — 1 min 05 s left',
    );
    expect(progressLine({ progress: 0.01, text: 'Start', eta: undefined })).toBe('1% — Start — estimating time left…');
    expect(progressLine({ progress: 1, text: 'Ready', eta: 0 })).toBe('100% — Ready — done');
  });
});

describe('errors in words', () => {
  it('names the fix for an exceeded quota and blocked storage', () => {
    const quota = Object.assign(new Error('The quota has been exceeded.'), { name: 'QuotaExceededError' });
    expect(storageErrorText(quota, 'Storing x.gguf')).toMatch(
      /^Storing x\.gguf failed: the browser's storage quota .* exceeded\. Free space by deleting cached models/,
    );
    const blocked = Object.assign(new Error('denied'), { name: 'SecurityError' });
    expect(storageErrorText(blocked, 'Storing')).toMatch(/does not allow site storage/);
    expect(storageErrorText(new Error('boom'), 'Storing')).toBe('Storing failed: boom');
  });

  it('says when WebGPU or shader-f16 is missing, and nothing when all is well', () => {
    expect(
      webGpuNotice({ available: false, reason: 'No adapter.', features: { shaderF16: false }, adapter: null }),
    ).toMatch(/^No WebGPU here: No adapter\. WebLLM cannot run; use wllama/);
    expect(
      webGpuNotice({ available: true, features: { shaderF16: false }, adapter: { isFallbackAdapter: true } }),
    ).toMatch(/no shader-f16, so only q4f32 models.*software adapter/);
    expect(
      webGpuNotice({ available: true, features: { shaderF16: true }, adapter: { isFallbackAdapter: false } }),
    ).toBe('');
    expect(webGpuNotice(null)).toBe('');
  });

  it('keeps OPFS file names safe', () => {
    expect(safeFileName('a/b\\c.gguf')).toBe('a_b_c.gguf');
    expect(safeFileName('..')).toBe('model.gguf');
    expect(safeFileName(' tiny.gguf ')).toBe('tiny.gguf');
  });
});

describe('the connection test', () => {
  const PAGE = 'http://127.0.0.1:5173';
  /** The connection test of model 'm' at `baseUrl` from the page at PAGE, through `fetch`. */
  const connect = (baseUrl: string, fetch: typeof globalThis.fetch) =>
    testOpenAiConnection({ baseUrl, model: 'm', fetch, pageOrigin: PAGE });
  const ok = (body: unknown, status = 200) =>
    new Response(typeof body === 'string' ? body : JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  const completion = {
    choices: [{ message: { role: 'assistant', content: 'OK' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 1 },
  };

  it('reports latency and tokens of a tiny chat request', async () => {
    const seen: { url: string; body: Record<string, unknown>; auth: string | null }[] = [];
    const fetch = (async (url: string, init: RequestInit) => {
      seen.push({ url, body: JSON.parse(String(init.body)), auth: new Headers(init.headers).get('authorization') });
      return ok(completion);
    }) as unknown as typeof globalThis.fetch;
    let t = 0;
    const report = await testOpenAiConnection({
      baseUrl: 'http://127.0.0.1:9/v1/',
      model: 'tiny',
      apiKey: 'sk-1',
      fetch,
      pageOrigin: PAGE,
      now: () => (t += 40),
    });
    expect(report).toMatchObject({ ok: true, ms: 40, reply: 'OK' });
    expect(report.text).toBe(
      'Connected: tiny at http://127.0.0.1:9/v1 answered in 40 ms (12 prompt + 1 answer tokens).',
    );
    expect(seen).toHaveLength(1);
    expect(seen[0].url).toBe('http://127.0.0.1:9/v1/chat/completions');
    expect(seen[0].body).toMatchObject({ model: 'tiny', max_tokens: 8 });
    expect(seen[0].auth).toBe('Bearer sk-1');
  });

  it('names a wrong key (401) and a body that is not JSON', async () => {
    const unauthorized = (async () => ok({ error: { message: 'Invalid API key' } }, 401)) as unknown as typeof fetch;
    const a = await connect('http://127.0.0.1:9/v1', unauthorized);
    expect(a.ok).toBe(false);
    expect(a.text).toMatch(/refused the request \(401.*Invalid API key.*API key is missing or wrong/);
    const html = (async () => new Response('<!doctype html><p>hello', { status: 200 })) as unknown as typeof fetch;
    const b = await connect('http://127.0.0.1:9/v1', html);
    expect(b).toMatchObject({ ok: false, code: 'bad-response' });
    expect(b.text).toMatch(/not JSON/);
  });

  it('tells a CORS refusal from a refused connection with a no-cors probe', async () => {
    const modes: (string | undefined)[] = [];
    const corsRefused = (async (_url: string, init: RequestInit) => {
      modes.push(init.mode);
      if (init.mode === 'no-cors') return new Response(null, { status: 200 });
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    const a = await connect('http://127.0.0.1:11434/v1', corsRefused);
    expect(a).toMatchObject({ ok: false, code: 'cors-refused' });
    expect(a.text).toMatch(
      /^CORS refused: a server is running at http:\/\/127\.0\.0\.1:11434, but it does not allow requests from this page \(http:\/\/127\.0\.0\.1:5173\)/,
    );
    expect(a.text).toMatch(/OLLAMA_ORIGINS=http:\/\/127\.0\.0\.1:5173/);
    expect(modes).toEqual([undefined, 'no-cors']);

    const refused = (async () => {
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    const b = await connect('http://127.0.0.1:1/v1', refused);
    expect(b).toMatchObject({ ok: false, code: 'connection-refused' });
    expect(b.text).toMatch(
      /^Connection refused: nothing is listening at http:\/\/127\.0\.0\.1:1\. Start an OpenAI-compatible server/,
    );
  });

  it('refuses a base URL that is not http(s) before sending anything', async () => {
    const report = await connect('localhost:11434', (() => {
      throw new Error('no');
    }) as unknown as typeof fetch);
    expect(report.ok).toBe(false);
    expect(report.text).toMatch(/is not an http\(s\) base URL/);
  });
});
