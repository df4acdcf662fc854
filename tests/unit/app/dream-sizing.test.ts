/**
 * The page's side of issue 14 (plain logic, no Svelte): "Tiny demo size" picks the LLM demo
 * preset for a language model; the live progress as the Train page shows it; what Inspect and
 * "Try one step" say of a dreamed answer (never contradicting the step's validity); the engine
 * speeds kept for the cost estimate.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PARAMS,
  configFromParams,
  llmDemoPreset,
  paramsForPreset,
  tinyParams,
  TINY,
} from '../../../src/app/state/train/train-params';
import { liveFields } from '../../../src/app/state/train/train-live';
import { answerView, engineClassOf } from '../../../src/app/state/shared/answer-view';
import {
  estimateInputs,
  measuredSpeed,
  recordSpeed,
  speedFromLive,
  SPEED_KEY,
} from '../../../src/app/state/setup/engine-speed';
import { tryConfig, verdictRows } from '../../../src/app/state/setup/try-step.svelte';
import type { LiveProgress } from '../../../src/core/train/progress';
import type { TryStepResult } from '../../../src/core/experience/try-step';
import { memoryStorage } from '../support/memory-storage';

describe('"Tiny demo size"', () => {
  it("with a language model: the env's LLM demo preset and a small answer budget, keeping the engine, mode and seed", () => {
    const p = {
      ...paramsForPreset('household-easy'),
      mode: 'dream' as const,
      seed: 9,
      llm: 'wllama:file:stories260K.gguf',
      k: 1,
    };
    const tiny = tinyParams(p);
    expect(llmDemoPreset('household-v0')).toBe('household-llm-demo');
    expect(tiny).toMatchObject({
      preset: 'household-llm-demo',
      env: 'household-v0',
      mode: 'dream',
      seed: 9,
      llm: 'wllama:file:stories260K.gguf',
      k: 1,
      answerTokens: 256,
      retries: 1,
      algo: 'ppo',
    });
    const config = configFromParams(tiny);
    expect(config).toMatchObject({
      preset: 'household-llm-demo',
      algo: 'ppo',
      learningRateSchedule: 'cosine',
      updateEpochs: 8,
    });
    expect(config.iterations * config.tasksPerIteration * config.groupSize).toBeLessThanOrEqual(600);
  });

  it('with the oracle or a learned model: the same preset, a small batch', () => {
    expect(tinyParams(DEFAULT_PARAMS)).toEqual({ ...DEFAULT_PARAMS, ...TINY });
    const learned = { ...DEFAULT_PARAMS, llm: 'learned:models/webshop-lite-v0' };
    expect(tinyParams(learned)).toEqual({ ...learned, ...TINY });
  });
});

const LIVE: LiveProgress = {
  iteration: 2,
  iterations: 30,
  phase: 'dream',
  stage: 'rollout',
  done: 14,
  planned: 120,
  current: { steps: 14, predictions: 12, invalid: 3, cacheHits: 3, tokens: 8000 },
  total: { steps: 100, predictions: 90, invalid: 10, cacheHits: 20, tokens: 50_000 },
  tokensPerSecond: 245.6,
  transitionsPerSecond: 0.36,
  callsPerSecond: 0.3,
  windowSeconds: 60,
  cacheHitRate: 0.25,
  iterationSeconds: 40,
  iterationSecondsLeft: 294,
  runSecondsLeft: 28 * 330 + 294,
};

describe('live progress on the Train page', () => {
  it('shows steps of planned, valid and invalid answers, speeds over the last minute, the cache and the time left', () => {
    expect(liveFields(LIVE)).toEqual({
      heading: 'Iteration 2 of 30 — dreaming',
      steps: '14 of ≤ 120',
      answers: '9 valid / 3 invalid',
      tokensPerSecond: '246',
      transitionsPerSecond: '0.36',
      cacheHitRate: '25%',
      iterationLeft: '≈ 5 min',
      runLeft: '≈ 2 h 39 min',
      window: 'over the last 60 s',
    });
    expect(
      liveFields({
        ...LIVE,
        stage: 'update',
        done: 40,
        planned: 40,
        iterationSecondsLeft: null,
        runSecondsLeft: null,
        cacheHitRate: null,
      }),
    ).toMatchObject({
      heading: 'Iteration 2 of 30 — updating the policy',
      steps: '40 of 40',
      iterationLeft: 'measuring…',
      cacheHitRate: '—',
    });
  });
});

describe('a dreamed answer in view', () => {
  const usage = (p: number, c: number, ms: number) => ({ promptTokens: p, completionTokens: c, ms });
  it('a chat model: the prompt, each call with why it was rejected, and the cost', () => {
    const view = answerView(
      {
        prompt: [
          { role: 'system', content: 'You simulate…' },
          { role: 'user', content: 'Task: buy a shirt' },
        ],
        raw: '{"valid": true',
        tries: [
          {
            raw: '{"valid": tru',
            finishReason: 'length',
            usage: usage(500, 64, 900),
            rejected: 'length cut-off at 64 tokens',
          },
          {
            raw: '{"valid": true',
            finishReason: 'stop',
            usage: usage(560, 20, 300),
            rejected: 'parse error: JSON does not parse',
          },
        ],
        usage: usage(1060, 84, 1200),
      },
      { engine: 'chat' },
    );
    expect(view.prompt).toBe('[system]\nYou simulate…\n\n[user]\nTask: buy a shirt');
    expect(view.promptNote).toBeNull();
    expect(view.tries.map((t) => [t.n, t.rejected, t.tokens, t.ms])).toEqual([
      [1, 'length cut-off at 64 tokens', '500 prompt + 64 answer tokens', '900 ms'],
      [2, 'parse error: JSON does not parse', '560 prompt + 20 answer tokens', '300 ms'],
    ]);
    expect(view.cost).toBe('1,060 prompt + 84 answer tokens, 1,200 ms over 2 calls');
  });

  it('a learned model has no prompt text (not a chat model); the oracle has no answer text; a cache hit made no call', () => {
    const learned = answerView(
      { raw: '<valid> yes <reward> 0 …', usage: usage(300, 40, 12) },
      { engine: engineClassOf('learned webshop (k=4, H=4)') },
    );
    expect(learned.prompt).toBeNull();
    expect(learned.promptNote).toMatch(/not a chat model/);
    expect(learned.raw).toBe('<valid> yes <reward> 0 …');
    expect(answerView(undefined, { engine: engineClassOf('oracle (ε_R=0.1, ε_P=0.1)') }).promptNote).toMatch(
      /noisy oracle is the real environment/,
    );
    const hit = answerView({ raw: '{}', usage: usage(0, 0, 0) }, { engine: 'chat', cached: true });
    expect(hit.promptNote).toMatch(/transition cache: no call was made/);
    expect(hit.note).toMatch(/no tokens, no time/);
    expect(engineClassOf('openai test-model (k=4, H=4)')).toBe('chat');
  });
});

describe('engine speeds kept for the cost estimate', () => {
  it("keeps a Try-one-step latency and a run's throughput by engine spec, and turns them into estimate inputs", () => {
    const storage = memoryStorage();
    const spec = 'openai:http://127.0.0.1:8000/v1#qwen';
    expect(measuredSpeed(spec, storage)).toBeNull();
    recordSpeed(
      spec,
      { secondsPerCall: 1.5, kind: 'latency', tokensPerTransition: 700, how: 'Try one step', at: 1 },
      storage,
    );
    const latency = estimateInputs(measuredSpeed(spec, storage), 8);
    expect(latency).toMatchObject({
      tokensPerTransition: 700,
      speed: { secondsPerTransition: 1.5, parallel: 8, measured: true },
    });
    expect(latency.speed!.source).toMatch(
      /Try one step, 1\.5 s per answer alone; 8 at once if the server batches them/,
    );

    const run = speedFromLive(LIVE, 'the run r1', 2)!;
    expect(run).toMatchObject({
      kind: 'throughput',
      tokensPerTransition: Math.round(50_000 / 70),
      cacheHitRate: 20 / 90,
    });
    expect(run.secondsPerCall).toBeCloseTo(1 / 0.3);
    recordSpeed(spec, run, storage);
    expect(estimateInputs(measuredSpeed(spec, storage), 8).speed).toMatchObject({ parallel: 1, measured: true });
    expect(JSON.parse(storage.data.get(SPEED_KEY)!)[spec].how).toBe('the run r1');
    // Junk is never kept; a corrupt entry reads as nothing measured.
    recordSpeed('x', { secondsPerCall: Number.NaN, kind: 'latency', how: '?', at: 0 }, storage);
    expect(measuredSpeed('x', storage)).toBeNull();
    storage.setItem(SPEED_KEY, '{oops');
    expect(measuredSpeed(spec, storage)).toBeNull();
    expect(speedFromLive({ ...LIVE, callsPerSecond: 0 }, 'r', 0)).toBeNull();
  });
});

describe('"Try one step" on Setup', () => {
  it("uses the env's first preset with the Train form's k, H and reasoning, and compares the verdicts", () => {
    expect(tryConfig('household-v0', 'oracle:0.1,0', { k: 2, history: 1, reasoning: false, seed: 3 })).toMatchObject({
      env: 'household-v0',
      mode: 'dream',
      llm: 'oracle:0.1,0',
      retrievalK: 2,
      historyLength: 1,
      reasoning: false,
      seed: 3,
    });
    const base = {
      real: { text: 'r', admissible: [], reward: 1, terminated: true, valid: true, success: true },
      prediction: {
        valid: true,
        actionValid: true,
        reward: 0,
        terminated: true,
        reasoning: '',
        next: { text: 'd', admissible: [] },
        usage: { promptTokens: 0, completionTokens: 0, ms: 0 },
        attempts: 1,
        notes: [],
      },
    } as unknown as TryStepResult;
    expect(verdictRows(base).map((r) => [r.what, r.agrees])).toEqual([
      ['Action valid', true],
      ['Reward', false],
      ['Terminated', true],
    ]);
    const invalid = {
      ...base,
      prediction: { ...base.prediction, valid: false, invalidReason: 'parse error: no JSON object in the answer' },
    } as TryStepResult;
    expect(verdictRows(invalid)).toEqual([
      {
        what: 'Answer',
        dreamed: 'unusable: parse error: no JSON object in the answer',
        real: 'the action is accepted',
        agrees: false,
      },
    ]);
  });
});
