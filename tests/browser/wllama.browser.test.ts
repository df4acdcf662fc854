/**
 * wllama (llama.cpp → WebAssembly) for real, in headless Chromium, with the tiny stories260K.gguf
 * (llama2.c's tinyllamas, MIT, in ../shared/models/ outside the repo): loading from a URL through
 * the OPFS cache and from a picked File, JSON-schema and GBNF constrained output, seeds, stop strings,
 * max-token cut-offs, abort — and then real inference driving the experience model and DreamEnv through whole episodes.
 *
 * The model is never copied into the repo: it is served by the Vite dev server from
 * ../shared/models/ (the config allows `server.fs.allow: ['..']`, so it is /@fs/<abs path>). When
 * the file is absent the suite is skipped, its first test's skip note saying where the file should be.
 *
 * stories260K has 260K parameters, a 512-token vocabulary and no chat template: its text is
 * nonsense, but under a grammar it is structurally valid, and the same seed gives the same text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server, userEvent } from 'vitest/browser';
import { LlmError, type ChatRequest, type LoadProgress } from '../../src/core/llm/types';
import { DEFAULT_CHAT_TEMPLATE, WllamaChatModel, renderDefaultTemplate } from '../../src/core/llm/wllama';
import { readGgufHeader } from '../../src/core/llm/gguf-header';
import { ReasoningExperienceModel } from '../../src/core/experience/reasoning-model';
import { makeDreamEnv, type DreamEnv } from '../../src/core/experience/dream-env';
import type { TimeLimit } from '../../src/core/envs/env';
import type { Prediction } from '../../src/core/experience/types';

/** /@fs/<repo root>/../shared/models/stories260K.gguf, with the `..` resolved. */
function sharedModelUrl(file: string): string {
  const out: string[] = [];
  for (const part of `${server.config.root}/../shared/models/${file}`.split('/')) {
    if (part === '..') out.pop();
    else if (part !== '' && part !== '.') out.push(part);
  }
  return `/@fs/${out.join('/')}`;
}

const MODEL_URL = sharedModelUrl('stories260K.gguf');
const MODEL_BYTES = 1_185_376;

async function modelAvailable(): Promise<string | null> {
  try {
    const res = await fetch(MODEL_URL, { method: 'HEAD' });
    const type = res.headers.get('content-type') ?? '';
    if (res.ok && !type.includes('html')) return null;
    return `HTTP ${res.status} ${type}`;
  } catch (error) {
    return String(error);
  }
}

const missing = await modelAvailable();
/** Why the suite is skipped, shown once (on its first test) by vitest's skip note. */
const SKIP_NOTE =
  `stories260K.gguf is not at ${MODEL_URL.replace('/@fs', '')} (../shared/models/ from the repo root: ` +
  `${missing}); the wllama tests need it: the 260K-parameter TinyStories model of llama2.c's "tinyllamas" (MIT)`;

/** A small object with every string bounded (a weak model otherwise rambles until maxTokens). */
const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 12 },
    mood: { type: 'string', enum: ['happy', 'sad', 'tired'] },
    count: { type: 'integer', enum: [0, 1, 2, 3] },
    done: { type: 'boolean' },
  },
  required: ['name', 'mood', 'count', 'done'],
  additionalProperties: false,
} as const;

function matchesSchema(value: unknown): string[] {
  const problems: string[] = [];
  if (!value || typeof value !== 'object' || Array.isArray(value)) return ['not an object'];
  const o = value as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !(k in SCHEMA.properties));
  if (extra.length) problems.push(`extra keys ${extra.join(',')}`);
  if (typeof o.name !== 'string' || o.name.length < 1 || o.name.length > 12)
    problems.push(`name ${JSON.stringify(o.name)}`);
  if (!(SCHEMA.properties.mood.enum as readonly unknown[]).includes(o.mood))
    problems.push(`mood ${JSON.stringify(o.mood)}`);
  if (!(SCHEMA.properties.count.enum as readonly unknown[]).includes(o.count))
    problems.push(`count ${JSON.stringify(o.count)}`);
  if (typeof o.done !== 'boolean') problems.push(`done ${JSON.stringify(o.done)}`);
  return problems;
}

const STORY: ChatRequest['messages'] = [
  { role: 'system', content: 'You tell short stories.' },
  { role: 'user', content: 'Once upon a time there was a little cat named Tom.' },
];

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

describe('wllama with stories260K.gguf (real llama.cpp in Chromium)', () => {
  let model: WllamaChatModel;
  const progress: LoadProgress[] = [];

  beforeAll(async () => {
    if (missing) return;
    // Start from an empty cache so the first load is a miss and the second a hit.
    await WllamaChatModel.removeFromCache(MODEL_URL);
    expect(await WllamaChatModel.isCached(MODEL_URL)).toBe(false);
    model = await WllamaChatModel.load({ url: MODEL_URL }, { onProgress: (p) => progress.push(p), nCtx: 2048 });
  });

  afterAll(async () => {
    await model?.unload();
  });

  it('loads from a URL through the OPFS cache: miss first, hit after, with progress', async ({ skip }) => {
    skip(missing !== null, SKIP_NOTE);
    expect(model.engine).toBe('wllama');
    expect(model.id).toBe('stories260K.gguf');
    expect(model.loadInfo).toMatchObject({
      source: 'url',
      cache: 'miss',
      bytes: MODEL_BYTES,
      chatTemplate: 'default',
      architecture: 'llama',
      nCtx: 2048,
    });
    expect(model.modelChatTemplate()).toBeNull();
    // Progress: starts at 0, never goes back, ends at 1 with the byte counts; the texts say what happens.
    expect(progress[0].progress).toBe(0);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i].progress).toBeGreaterThanOrEqual(progress[i - 1].progress);
    const last = progress.at(-1)!;
    expect(last).toMatchObject({ progress: 1, loadedBytes: MODEL_BYTES, totalBytes: MODEL_BYTES });
    expect(last.text).toMatch(/downloaded, now cached/);
    expect(progress.some((p) => /Downloading stories260K\.gguf/.test(p.text) && p.loadedBytes! > 0)).toBe(true);
    expect(progress.some((p) => /into WebAssembly/.test(p.text))).toBe(true);
    expect(await WllamaChatModel.isCached(MODEL_URL)).toBe(true);

    const again: LoadProgress[] = [];
    const cached = await WllamaChatModel.load({ url: MODEL_URL }, { onProgress: (p) => again.push(p) });
    try {
      expect(cached.loadInfo.cache).toBe('hit');
      expect(again.some((p) => /Found stories260K\.gguf in the OPFS cache/.test(p.text))).toBe(true);
      expect(again.some((p) => /Downloading/.test(p.text))).toBe(false);
      expect(again.at(-1)!.text).toMatch(/from the OPFS cache/);
      const r = await cached.complete({ messages: STORY, maxTokens: 8, seed: 1, temperature: 0.8 });
      expect(r.usage.completionTokens).toBeGreaterThan(0);
    } finally {
      await cached.unload();
    }
  });

  it.skipIf(missing)(
    'loads a File the user picked, formats with the default template, and refuses work once unloaded',
    async () => {
      const bytes = await (await fetch(MODEL_URL)).blob();
      const input = document.createElement('input');
      input.type = 'file';
      input.accept = '.gguf';
      document.body.append(input);
      try {
        await userEvent.upload(input, new File([bytes], 'stories260K.gguf', { type: 'application/octet-stream' }));
        const file = input.files?.[0];
        expect(file?.name).toBe('stories260K.gguf');
        expect(file?.size).toBe(MODEL_BYTES);
        const header = await readGgufHeader(file!);
        expect(header).toMatchObject({ architecture: 'llama', hasChatTemplate: false });

        const steps: LoadProgress[] = [];
        const picked = await WllamaChatModel.load({ file: file! }, { onProgress: (p) => steps.push(p), nCtx: 512 });
        expect(picked.id).toBe('stories260K.gguf');
        expect(picked.loadInfo).toMatchObject({
          source: 'file',
          cache: 'none',
          bytes: MODEL_BYTES,
          chatTemplate: 'default',
          nCtx: 512,
        });
        expect(steps.at(-1)!.progress).toBe(1);
        // The default template is a plain transcript: the prompt is its tokens (plus BOS).
        const r = await picked.complete({ messages: STORY, maxTokens: 4, seed: 2, temperature: 0.5 });
        expect(r.usage.promptTokens).toBeGreaterThan(10);
        expect(renderDefaultTemplate(STORY)).toBe(
          'System: You tell short stories.\nUser: Once upon a time there was a little cat named Tom.\nAssistant: ',
        );
        await picked.unload();
        expect(picked.loaded).toBe(false);
        const error = await rejection(picked.complete({ messages: STORY, maxTokens: 4 }));
        expect(error).toBeInstanceOf(LlmError);
        expect((error as LlmError).code).toBe('unsupported');
        expect((error as LlmError).message).toMatch(/unloaded; load it again/);
      } finally {
        input.remove();
      }
    },
  );

  it.skipIf(missing)('a given chat template is used instead of the default', async () => {
    const template =
      "{% for message in messages %}[{{ message['role'] }}] {{ message['content'] }}\n{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}";
    const bytes = await (await fetch(MODEL_URL)).blob();
    const custom = await WllamaChatModel.load(
      { file: bytes, name: 'tiny.gguf' },
      { chatTemplate: template, nCtx: 512 },
    );
    try {
      expect(custom.id).toBe('tiny.gguf');
      expect(custom.loadInfo.chatTemplate).toBe('given');
      const viaDefault = await model.complete({ messages: STORY, maxTokens: 1, seed: 1 });
      const viaGiven = await custom.complete({ messages: STORY, maxTokens: 1, seed: 1 });
      // Different transcripts → different prompt lengths.
      expect(viaGiven.usage.promptTokens).not.toBe(viaDefault.usage.promptTokens);
    } finally {
      await custom.unload();
    }
    expect(DEFAULT_CHAT_TEMPLATE).toContain('Assistant: ');
  });

  it.skipIf(missing)('fails with clear errors for a non-GGUF file, a missing URL and a non-.gguf URL', async () => {
    const html = new File(['<!doctype html><html><body>Not found</body></html>'.padEnd(200, ' ')], 'model.gguf');
    const notGguf = await rejection(WllamaChatModel.load({ file: html }));
    expect(notGguf).toBeInstanceOf(LlmError);
    expect((notGguf as LlmError).code).toBe('load-failed');
    expect((notGguf as LlmError).message).toMatch(/model\.gguf is not a GGUF model \(it starts like an HTML page/);
    expect((notGguf as LlmError).message).toMatch(/convert_hf_to_gguf/);

    const empty = await rejection(WllamaChatModel.load({ file: new File([], 'empty.gguf') }));
    expect((empty as LlmError).code).toBe('load-failed');
    expect((empty as LlmError).message).toMatch(/empty/);

    const absentUrl = sharedModelUrl('no-such-model.gguf');
    const absent = await rejection(WllamaChatModel.load({ url: absentUrl }));
    expect(absent).toBeInstanceOf(LlmError);
    // Vite answers 404 for a missing /@fs file; a server answering an HTML page instead is caught by the header check.
    expect(['model-not-found', 'load-failed']).toContain((absent as LlmError).code);
    expect((absent as LlmError).message).toMatch(/not found|HTML/);
    expect(await WllamaChatModel.isCached(absentUrl)).toBe(false);

    const offline = await rejection(WllamaChatModel.load({ url: 'http://127.0.0.1:9/models/tiny.gguf' }));
    expect((offline as LlmError).code).toBe('connection-refused');
    expect((offline as LlmError).message).toMatch(/unreachable.*pick the \.gguf file from disk/);

    const wrongType = await rejection(WllamaChatModel.load({ url: '/models/model.safetensors' }));
    expect((wrongType as LlmError).code).toBe('load-failed');
    expect((wrongType as LlmError).message).toMatch(/does not end in \.gguf/);

    const aborted = new AbortController();
    aborted.abort();
    const early = await rejection(WllamaChatModel.load({ url: MODEL_URL }, { signal: aborted.signal }));
    expect((early as LlmError).code).toBe('aborted');
    // Aborted while llama.cpp loads the weights: rejects, and nothing stays loaded.
    const midway = new AbortController();
    const late = await rejection(
      WllamaChatModel.load(
        { url: MODEL_URL },
        {
          signal: midway.signal,
          onProgress: (p) => {
            if (/into WebAssembly/.test(p.text)) midway.abort();
          },
        },
      ),
    );
    expect((late as LlmError).code).toBe('aborted');

    const safetensors = new Uint8Array(64);
    safetensors.set(new TextEncoder().encode('{"__metadata__":{}}'), 8);
    const st = await rejection(WllamaChatModel.load({ file: new File([safetensors], 'model.safetensors') }));
    expect((st as LlmError).message).toMatch(/safetensors/);
  });

  it.skipIf(missing)(
    'JSON schema output parses and matches the schema; the same seed gives the same text',
    async () => {
      const request: ChatRequest = { messages: STORY, maxTokens: 300, temperature: 0.9, jsonSchema: SCHEMA };
      const a = await model.complete({ ...request, seed: 42 });
      const b = await model.complete({ ...request, seed: 42 });
      const c = await model.complete({ ...request, seed: 43 });
      for (const r of [a, b, c]) {
        expect(r.finishReason).toBe('stop');
        const parsed = JSON.parse(r.text);
        expect(matchesSchema(parsed)).toEqual([]);
        expect(r.usage.promptTokens).toBeGreaterThan(10);
        expect(r.usage.completionTokens).toBeGreaterThan(5);
        expect(r.usage.completionTokens).toBeLessThan(300);
        expect(r.usage.ms).toBeGreaterThan(0);
      }
      expect(b.text).toBe(a.text);
      expect(b.usage.completionTokens).toBe(a.usage.completionTokens);
      // A different seed samples differently (the 4 fields leave plenty of room for it to differ).
      expect(c.text).not.toBe(a.text);
    },
  );

  it.skipIf(missing)('GBNF grammars, stop strings and logprobs', async () => {
    const yesNo = await model.complete({
      messages: STORY,
      maxTokens: 10,
      seed: 5,
      temperature: 1,
      grammar: 'root ::= "yes" | "no"',
    });
    expect(['yes', 'no']).toContain(yesNo.text);
    expect(yesNo.finishReason).toBe('stop');

    const free = await model.complete({ messages: STORY, maxTokens: 120, seed: 7, temperature: 0.7 });
    const cut = free.text.indexOf('.');
    expect(cut).toBeGreaterThan(0);
    const stopped = await model.complete({ messages: STORY, maxTokens: 120, seed: 7, temperature: 0.7, stop: ['.'] });
    expect(stopped.text).toBe(free.text.slice(0, cut));
    expect(stopped.finishReason).toBe('stop');

    const withLogprobs = await model.complete({
      messages: STORY,
      maxTokens: 5,
      seed: 7,
      temperature: 0.7,
      topLogprobs: 3,
    });
    expect(withLogprobs.logprobs?.length).toBe(withLogprobs.usage.completionTokens);
    expect(withLogprobs.logprobs?.[0].top.length).toBe(3);
    expect(withLogprobs.logprobs?.[0].logprob).toBeLessThanOrEqual(0);

    const both = await rejection(
      model.complete({ messages: STORY, maxTokens: 5, jsonSchema: SCHEMA, grammar: 'root ::= "x"' }),
    );
    expect((both as LlmError).code).toBe('unsupported');
  });

  it.skipIf(missing)("finishReason is 'length' when maxTokens is hit", async () => {
    const r = await model.complete({ messages: STORY, maxTokens: 6, seed: 3, temperature: 0.8 });
    expect(r.finishReason).toBe('length');
    expect(r.usage.completionTokens).toBe(6);
    // A JSON answer cut off by the limit is 'length' too (and does not parse).
    const j = await model.complete({ messages: STORY, maxTokens: 5, seed: 3, temperature: 0.8, jsonSchema: SCHEMA });
    expect(j.finishReason).toBe('length');
    expect(() => JSON.parse(j.text)).toThrow();
  });

  it.skipIf(missing)(
    'abort stops generation mid-way: rejects with LlmError(aborted), and the engine is free after',
    async () => {
      const long: ChatRequest = { messages: STORY, maxTokens: 1000, seed: 3, temperature: 0.8 };
      const full = await model.complete(long);
      expect(full.finishReason).toBe('length');

      // Behaviour, not a stopwatch: the abort comes after the first piece of the answer, and llama.cpp's
      // slot is cancelled (wllama cancels a request only when it has not finished).
      const { Wllama } = await import('@wllama/wllama');
      type Proxy = { wllamaAction: (name: string, ...rest: unknown[]) => Promise<unknown> };
      type Method = (...args: unknown[]) => Promise<unknown>;
      const proto = Wllama.prototype as unknown as { createChatCompletion: Method; cancelRequest: Method };
      const { createChatCompletion, cancelRequest } = proto;
      const controller = new AbortController();
      let cancelled = 0;
      proto.cancelRequest = function (this: unknown, ...args: unknown[]) {
        cancelled++;
        return cancelRequest.apply(this, args);
      };
      proto.createChatCompletion = async function (this: { proxy: Proxy }, ...args: unknown[]) {
        const proxy = this.proxy;
        const action = proxy.wllamaAction;
        proxy.wllamaAction = async (name, ...rest) => {
          const reply = await action.call(proxy, name, ...rest);
          if (name === 'get_result') controller.abort();
          return reply;
        };
        try {
          return await createChatCompletion.apply(this, args);
        } finally {
          delete (proxy as Partial<Proxy>).wllamaAction; // the prototype's method again
        }
      };
      let error: unknown;
      try {
        error = await rejection(model.complete(long, controller.signal));
      } finally {
        proto.createChatCompletion = createChatCompletion;
        proto.cancelRequest = cancelRequest;
      }
      expect(error).toBeInstanceOf(LlmError);
      expect((error as LlmError).code).toBe('aborted');
      expect(cancelled).toBe(1);

      // The engine is free: a short request right after runs to its own end.
      const short = await model.complete({ messages: STORY, maxTokens: 4, seed: 1 });
      expect(short.usage.completionTokens).toBe(4);

      // Already aborted: rejects without running.
      const pre = new AbortController();
      pre.abort();
      expect(((await rejection(model.complete(long, pre.signal))) as LlmError).code).toBe('aborted');
    },
  );

  it.skipIf(missing)(
    'runs requests one at a time; a queued request aborts alone; unload stops a running request',
    async () => {
      const req: ChatRequest = { messages: STORY, maxTokens: 20, seed: 9, temperature: 0.8 };
      const alone = await model.complete(req);
      const [x, y] = await Promise.all([model.complete(req), model.complete(req)]);
      expect(x.text).toBe(alone.text);
      expect(y.text).toBe(alone.text);

      const long = model.complete({ messages: STORY, maxTokens: 300, seed: 3, temperature: 0.8 });
      const controller = new AbortController();
      const waiting = model.complete(req, controller.signal);
      const after = model.complete(req);
      controller.abort();
      expect(((await rejection(waiting)) as LlmError).code).toBe('aborted');
      expect((await long).usage.completionTokens).toBeGreaterThan(0);
      expect((await after).text).toBe(alone.text);

      const other = await WllamaChatModel.load({ file: await (await fetch(MODEL_URL)).blob() }, { nCtx: 1024 });
      const running = other.complete({ messages: STORY, maxTokens: 800, seed: 3, temperature: 0.8 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await other.unload();
      const error = await rejection(running);
      expect(error).toBeInstanceOf(LlmError);
      expect((error as LlmError).message).toMatch(/unloaded/);
    },
  );

  describe.skipIf(missing)('real inference drives the experience model and DreamEnv', () => {
    const ENV = 'household-v0';
    const STEP_LIMIT = 4;

    function experienceModel(seed: number): ReasoningExperienceModel {
      // Small budget and small bounds for a 260K-parameter model; temperature > 0 so the seed matters.
      return new ReasoningExperienceModel(model, {
        maxTokens: 300,
        temperature: 0.8,
        seed,
        retries: 1,
        k: 1,
        historyLength: 2,
        reasoningChars: 40,
        observationChars: 100,
        actionChars: 24,
        maxAdmissible: 4,
        stateChars: 160,
        admissibleListChars: 100,
      });
    }

    interface StepRecord {
      action: string;
      text: string;
      admissible: string[];
      reward: number;
      terminated: boolean;
      truncated: boolean;
      valid: boolean;
      dreamInvalid: boolean;
      invalidReason?: string;
      predictionValid?: boolean;
      raw?: string;
      attempts?: number;
    }

    async function episode(seed: number): Promise<{ steps: StepRecord[]; env: TimeLimit<DreamEnv> }> {
      const env = makeDreamEnv(experienceModel(seed), { envId: ENV, stepLimit: STEP_LIMIT });
      const dream = env.unwrapped as DreamEnv;
      let obs = await env.reset({ seed: 5 });
      const steps: StepRecord[] = [];
      for (let i = 0; i < STEP_LIMIT + 2; i++) {
        const action = obs.admissible[i % Math.max(1, obs.admissible.length)] ?? 'look';
        dream.lastPrediction = null;
        const r = await env.step(action);
        const p = dream.lastPrediction as Prediction | null; // set by step()
        const report = r.info.dream;
        steps.push({
          action,
          text: r.text,
          admissible: r.admissible,
          reward: r.reward,
          terminated: r.terminated,
          truncated: r.truncated,
          valid: r.info.valid,
          dreamInvalid: report?.invalid === true,
          invalidReason: report?.invalidReason,
          predictionValid: p?.valid,
          raw: p?.raw,
          attempts: p?.attempts,
        });
        obs = r;
        if (r.terminated || r.truncated) break;
      }
      return { steps, env };
    }

    // The first episode of seed 11, shared by the two tests below (each episode costs seconds).
    let first: Promise<{ steps: StepRecord[]; env: TimeLimit<DreamEnv>; ms: number }> | undefined;
    const firstEpisode = () =>
      (first ??= (async () => {
        const started = performance.now();
        return { ...(await episode(11)), ms: performance.now() - started };
      })());

    it('plays a whole household-v0 episode: every prediction parses or is recorded invalid, and the episode ends', async () => {
      const { steps, env, ms } = await firstEpisode();
      const dream = env.unwrapped as DreamEnv;
      expect(steps.length).toBeGreaterThan(0);
      expect(steps.length).toBeLessThanOrEqual(STEP_LIMIT);
      const last = steps.at(-1)!;
      expect(last.terminated || last.truncated).toBe(true);
      for (const s of steps) {
        if (s.predictionValid === undefined) {
          // A no-op the model was not asked about (an action outside the admissible list).
          expect(s.valid).toBe(false);
          continue;
        }
        if (s.predictionValid) {
          // The answer parsed, matched the schema and was consistent.
          expect(s.dreamInvalid).toBe(false);
          expect(s.text.length).toBeGreaterThan(0);
        } else {
          // Unusable after the retries: recorded, with the reason and the raw answer, as a no-op.
          expect(s.dreamInvalid).toBe(true);
          expect(s.valid).toBe(false);
          expect(s.invalidReason).toBeTruthy();
          expect(s.reward).toBe(0);
        }
      }
      expect(dream.usage.predictions).toBeGreaterThan(0);
      expect(dream.usage.completionTokens).toBeGreaterThan(0);
      console.info(
        `dream episode: ${steps.length} steps, ${dream.usage.predictions} predictions (${dream.usage.invalid} invalid), ` +
          `${dream.usage.promptTokens}+${dream.usage.completionTokens} tokens, model ${dream.usage.ms.toFixed(0)} ms, wall ${ms.toFixed(0)} ms`,
      );
      console.info(
        JSON.stringify(
          steps.map((s) => ({ a: s.action, v: s.predictionValid, inv: s.invalidReason, raw: s.raw?.slice(0, 160) })),
        ),
      );
    });

    it('the same seed gives the same episode', async () => {
      const a = await firstEpisode();
      const b = await episode(11);
      expect(b.steps).toEqual(a.steps);
    });

    it('the dream steps of several episodes, asked at once (as a rollout step asks them), reach wllama one at a time', async () => {
      // Count llama.cpp completions in flight: the Wllama class the model runs on is this module's.
      const { Wllama } = await import('@wllama/wllama');
      const proto = Wllama.prototype as unknown as { createChatCompletion: (...args: unknown[]) => Promise<unknown> };
      const original = proto.createChatCompletion;
      let inFlight = 0;
      let peak = 0;
      let calls = 0;
      proto.createChatCompletion = async function (this: unknown, ...args: unknown[]) {
        calls++;
        peak = Math.max(peak, ++inFlight);
        try {
          return await original.apply(this, args);
        } finally {
          inFlight--;
        }
      };
      try {
        const shared = experienceModel(21);
        const envs = [0, 1, 2, 3].map(() => makeDreamEnv(shared, { envId: ENV, stepLimit: STEP_LIMIT }));
        const starts = await Promise.all(envs.map((env, i) => env.reset({ seed: 30 + i })));
        const results = await Promise.all(envs.map((env, i) => env.step(starts[i].admissible[0])));
        expect(results.every((r) => r.info.dream?.predicted)).toBe(true);
        expect(calls).toBeGreaterThanOrEqual(4);
        expect(peak).toBe(1);
      } finally {
        proto.createChatCompletion = original;
      }
    });

    it('an abort during a dream step stops it', async () => {
      const controller = new AbortController();
      const env = makeDreamEnv(experienceModel(99), { envId: ENV, stepLimit: STEP_LIMIT, signal: controller.signal });
      const obs = await env.reset({ seed: 5 });
      setTimeout(() => controller.abort(), 30);
      const error = await rejection(env.step(obs.admissible[0]));
      expect(error).toBeInstanceOf(LlmError);
      expect((error as LlmError).code).toBe('aborted');
      // The engine is free again (a stopwatch would measure the machine, not the abort).
      const r = await model.complete({ messages: STORY, maxTokens: 3, seed: 1 });
      expect(r.usage.completionTokens).toBe(3);
    });
  });
});
