/**
 * The answer in view (issue 14): a dreamed step carries what the model was asked and answered —
 * the prompt, every call's raw text and why it was rejected, tokens and ms — from the reasoning
 * model through DreamEnv and the rollout into the episode trace; a cache hit carries no call of its
 * own. "Try one step" asks one transition from a real state and returns the real env's answer beside it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ReasoningExperienceModel } from '../../../src/core/experience/reasoning-model';
import { makeDreamEnv } from '../../../src/core/experience/dream-env';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import { TRY_STEP_SEED_BASE, tryOneStep } from '../../../src/core/experience/try-step';
import { HELD_OUT_SEED_BASE } from '../../../src/core/envs/env';
import { Trainer } from '../../../src/core/train/loop';
import { getPreset, validateConfig } from '../../../src/core/train/config';
import { initBackend } from '../../../src/core/tfjs/backend';
import type { EpisodeTrace } from '../../../src/core/train/trace';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';
import { answer, scriptedShop, WEBSHOP } from './fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

describe("a dreamed step's question and answer", () => {
  it('reach info.dream.answer: the prompt, each try with its rejection, tokens and ms; a cache hit has no call of its own', async () => {
    const chat = new ScriptedChatModel([
      '{"valid": tru',
      { text: '{"reasoning": "x"', finishReason: 'length' },
      answer({ observation: 'Search', admissible: ['search[shirt]'] }),
    ]);
    const model = new ReasoningExperienceModel(chat, { retries: 2 });
    const env = makeDreamEnv(model, { envId: WEBSHOP });
    const obs = await env.reset({ seed: 4 });
    const r = await env.step(obs.admissible[0]);
    const a = r.info.dream!.answer!;
    expect(a.prompt!.map((m) => m.role)).toEqual(['system', 'user']);
    expect(a.prompt![1].content.split('\n').at(-1)).toBe(`Action: ${obs.admissible[0]}`);
    expect(a.tries!.map((t) => t.rejected ?? 'accepted')).toEqual([
      'parse error: no JSON object in the answer',
      'length cut-off at 400 tokens',
      'accepted',
    ]);
    expect(a.tries!.map((t) => t.finishReason)).toEqual(['stop', 'length', 'stop']);
    expect(a.raw).toBe(a.tries![2].raw);
    expect(a.usage.promptTokens).toBe(a.tries!.reduce((s, t) => s + t.usage.promptTokens, 0));
    expect(r.info.dream!.tokens).toBe(a.usage.promptTokens + a.usage.completionTokens);

    // The same step again (temperature 0): from the transition cache, no call, no prompt of its own.
    const again = makeDreamEnv(model, { envId: WEBSHOP });
    await again.reset({ seed: 4 });
    const hit = await again.step(obs.admissible[0]);
    expect(hit.info.dream!.cached).toBe(true);
    expect(hit.info.dream!.answer).toMatchObject({
      raw: a.raw,
      usage: { promptTokens: 0, completionTokens: 0, ms: 0 },
    });
    expect(hit.info.dream!.answer!.prompt).toBeUndefined();
    expect(hit.info.dream!.answer!.tries).toBeUndefined();
    expect(chat.requests).toHaveLength(3);
  });

  it('an answer unusable after its retries says why, with every raw text; the oracle has no answer text', async () => {
    const chat = new ScriptedChatModel(['no json at all', 'still no json']);
    const env = makeDreamEnv(new ReasoningExperienceModel(chat, { retries: 1 }), { envId: WEBSHOP });
    const obs = await env.reset({ seed: 4 });
    const r = await env.step(obs.admissible[0]);
    expect(r.info.dream).toMatchObject({ invalid: true, invalidReason: 'parse error: no JSON object in the answer' });
    expect(r.info.dream!.answer!.tries!.map((t) => [t.raw, t.rejected])).toEqual([
      ['no json at all', 'parse error: no JSON object in the answer'],
      ['still no json', 'parse error: no JSON object in the answer'],
    ]);
    const oracle = makeDreamEnv(new NoisyOracleModel(WEBSHOP, { epsilonReward: 0, epsilonTransition: 0 }), {
      envId: WEBSHOP,
    });
    const start = await oracle.reset({ seed: 4 });
    expect((await oracle.step(start.admissible[0])).info.dream!.answer).toBeUndefined();
  });

  it('go into the episode traces (Inspect), with `asked` on every step the model was asked about', async () => {
    const config = validateConfig({
      ...getPreset('webshop-easy'),
      mode: 'dream',
      iterations: 1,
      tasksPerIteration: 1,
      groupSize: 2,
      evalInterval: 0,
      retrievalK: 0,
    });
    const chat = new ScriptedChatModel((request) => scriptedShop(request));
    let traces: EpisodeTrace[] = [];
    const trainer = new Trainer(config, {
      experienceModel: new ReasoningExperienceModel(chat, { k: 0 }),
      onEpisodes: (t) => {
        traces = t;
      },
    });
    try {
      await trainer.runIteration();
    } finally {
      trainer.dispose();
    }
    const steps = traces.flatMap((t) => t.steps);
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.every((s) => s.asked === true)).toBe(true);
    const called = steps.filter((s) => !s.cached);
    expect(
      called.every(
        (s) =>
          s.answer?.prompt?.length === 2 && s.answer.tries?.length === 1 && s.answer.tries[0].rejected === undefined,
      ),
    ).toBe(true);
    expect(steps.filter((s) => s.cached).every((s) => s.answer?.tries === undefined)).toBe(true);
  });
});

describe('tryOneStep', () => {
  it("predicts one transition from a real held-out state and returns the real env's answer beside it", async () => {
    const chat = new ScriptedChatModel((request) => scriptedShop(request));
    const model = new ReasoningExperienceModel(chat, { k: 0 });
    let clock = 0;
    const first = await tryOneStep(model, { envId: WEBSHOP, attempt: 0, clock: () => (clock += 250) });
    expect(first.task.seed).toBe(TRY_STEP_SEED_BASE);
    expect(TRY_STEP_SEED_BASE).toBeGreaterThanOrEqual(HELD_OUT_SEED_BASE);
    expect(first.history).toEqual([]);
    expect(first.action).toMatch(/^search\[/);
    expect(first.prediction.valid).toBe(true);
    expect(first.prediction.prompt![1].content).toContain(`Action: ${first.action}`);
    expect(first.real.valid).toBe(true);
    expect(first.real.text).toMatch(/Page 1 \(Total results: \d+\)/);
    expect(first.ms).toBe(250);
    expect(first.tokens.prompt).toBeGreaterThan(0);
    // Another try: another task, a state a step in (the history is shown to the model).
    const second = await tryOneStep(model, { envId: WEBSHOP, attempt: 1 });
    expect(second.task.seed).toBe(TRY_STEP_SEED_BASE + 1);
    expect(second.history).toHaveLength(1);
    expect(second.ms).toBe(second.prediction.usage.ms);
    // The oracle: the same real step without noise.
    const oracle = await tryOneStep(new NoisyOracleModel(WEBSHOP, { epsilonReward: 0, epsilonTransition: 0 }), {
      envId: WEBSHOP,
      attempt: 2,
    });
    expect(oracle.prediction.next.text).toBe(oracle.real.text);
    expect(oracle.history).toHaveLength(2);
  });
});
