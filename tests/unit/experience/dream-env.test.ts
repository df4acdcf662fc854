import { describe, expect, it } from 'vitest';
import { checkEnv } from '../../../src/core/envs/check-env';
import { expertOf } from '../../../src/core/envs/env';
import { getEnvDefinition, makeEnv } from '../../../src/core/envs/registry';
import { DreamEnv, makeDreamEnv, type DreamStepResult } from '../../../src/core/experience/dream-env';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import { ReasoningExperienceModel } from '../../../src/core/experience/reasoning-model';
import { Rng } from '../../../src/core/rng';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';
import { answer, HOUSEHOLD, scriptedShop, taskWithoutStartPage, WEBSHOP } from './fixtures';

describe('DreamEnv', () => {
  it.each([WEBSHOP, HOUSEHOLD])('passes checkEnv over the noisy oracle at (0, 0) on %s', async (envId) => {
    const dream = makeDreamEnv(new NoisyOracleModel(envId, { epsilonReward: 0, epsilonTransition: 0 }), { envId });
    const report = await checkEnv(dream, { seeds: [0, 1, 2] });
    expect(report.failures).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('passes checkEnv over a scripted model (the ScriptedChatModel double)', async () => {
    const chat = new ScriptedChatModel(scriptedShop);
    const dream = makeDreamEnv(new ReasoningExperienceModel(chat), { envId: WEBSHOP });
    const report = await checkEnv(dream, { seeds: [0, 1] });
    expect(report.failures).toEqual([]);
    expect(chat.requests.length).toBeGreaterThan(0);
    expect(dream.env.usage.cacheHits).toBeGreaterThan(0); // the replays of checkEnv hit the transition cache
  });

  it('plays a scripted episode with reasoning, success at buy, and token accounting', async () => {
    const chat = new ScriptedChatModel(scriptedShop);
    const dream = makeDreamEnv(new ReasoningExperienceModel(chat), { envId: WEBSHOP });
    const first = await dream.reset({ seed: 4 });
    expect(first.text.startsWith('WebShop [SEP] Instruction:')).toBe(true); // the real start page
    const results = (await dream.step(first.admissible[0])) as DreamStepResult;
    expect(results.info).toMatchObject({
      valid: true,
      success: false,
      dream: { predicted: true, reasoning: 'the action works', cached: false, invalid: false },
    });
    expect(results.info.dream.tokens).toBe(dream.env.usage.promptTokens + dream.env.usage.completionTokens);
    expect(results.admissible).toEqual([
      'click[back to search]',
      'click[next >]',
      'click[b0aaa00001]',
      'click[b0aaa00002]',
    ]);
    await dream.step('click[b0aaa00002]');
    await dream.step('click[large]');
    const bought = (await dream.step('click[buy now]')) as DreamStepResult;
    expect(bought).toMatchObject({
      reward: 1,
      terminated: true,
      truncated: false,
      admissible: [],
      info: { valid: true, success: true, score: 1, steps: 4 },
    });
    const usage = dream.env.usage;
    expect(usage).toMatchObject({ steps: 4, predictions: 4, invalid: 0, cacheHits: 0 });
    expect(usage.promptTokens).toBe(
      chat.requests.reduce((s, r) => s + Math.ceil(r.messages.reduce((c, m) => c + m.content.length, 0) / 4), 0),
    );
    expect(usage.completionTokens).toBeGreaterThan(0);
    expect(dream.env.lastPrediction?.raw).toContain('Thank you for shopping');
    // After the end every action is a no-op, as in the real env.
    const after = await dream.step('click[buy now]');
    expect(after).toMatchObject({
      reward: 0,
      terminated: true,
      info: { valid: false, dream: { predicted: false, reasoning: '', tokens: 0 } },
    });
  });

  it('an inadmissible action is a no-op without asking the model', async () => {
    const chat = new ScriptedChatModel(scriptedShop);
    const dream = new DreamEnv(new ReasoningExperienceModel(chat), { envId: WEBSHOP });
    const first = await dream.reset({ seed: 2 });
    const r = await dream.step('click[nothing]');
    expect(r).toMatchObject({
      text: first.text,
      admissible: first.admissible,
      reward: 0,
      terminated: false,
      info: { valid: false, steps: 1, dream: { predicted: false, reasoning: '', tokens: 0, invalid: false } },
    });
    expect(chat.requests).toHaveLength(0);
    expect(dream.history).toHaveLength(1);
    expect(dream.history[0].valid).toBe(false);
  });

  it('marks an unusable dream answer (info.dream.invalid) and keeps the previous state, reward 0', async () => {
    const chat = new ScriptedChatModel(['not json', '{"oops": 1}', answer({ reward: 1 })]);
    const dream = new DreamEnv(new ReasoningExperienceModel(chat), { envId: HOUSEHOLD });
    const first = await dream.reset({ seed: 1 });
    const r = (await dream.step(first.admissible[0])) as DreamStepResult;
    expect(r.text).toBe(first.text);
    expect(r.admissible).toEqual(first.admissible);
    expect(r).toMatchObject({ reward: 0, terminated: false, truncated: false });
    expect(r.info).toMatchObject({
      valid: false,
      success: false,
      dream: {
        predicted: true,
        invalid: true,
        invalidReason: 'inconsistent: reward 1 is only given on the final step (terminated true)',
      },
    });
    expect(r.info.dream.tokens).toBeGreaterThan(0); // all three attempts cost tokens
    expect(dream.usage).toMatchObject({ predictions: 1, invalid: 1 });
    expect(dream.lastPrediction).toMatchObject({ valid: false, attempts: 3, raw: answer({ reward: 1 }) });
    expect(dream.lastPrediction!.notes).toHaveLength(3);
    // The step is in the history as a no-op, so the model never builds on it.
    expect(dream.history.at(-1)).toMatchObject({ action: first.admissible[0], valid: false });
  });

  it('offers what the model wrote: no domain rule filters a dreamed state (the halt judges it)', async () => {
    const arrive = (observation: string, admissible: string[]) => answer({ observation, admissible });
    const offered = [
      'take pen 1 from desk 1',
      'take keychain 1 from desk 1',
      'search[shelf 2 desk 3]',
      'go to shelf 1',
    ];
    const chat = new ScriptedChatModel([arrive('You arrive at desk 1. On the desk 1, you see a pen 1.', offered)]);
    const dream = new DreamEnv(new ReasoningExperienceModel(chat), { envId: HOUSEHOLD });
    const first = await dream.reset({ seed: 1 });
    const at = (await dream.step(first.admissible.find((a) => a.startsWith('go to'))!)) as DreamStepResult;
    expect(at.admissible).toEqual(expect.arrayContaining(offered));
  });

  it('the model\'s "impossible action" verdict is an ordinary no-op (not an invalid answer)', async () => {
    const chat = new ScriptedChatModel([answer({ valid: false, reasoning: 'cannot open that' })]);
    const dream = new DreamEnv(new ReasoningExperienceModel(chat), { envId: HOUSEHOLD });
    const first = await dream.reset({ seed: 1 });
    const r = (await dream.step(first.admissible[1])) as DreamStepResult;
    expect(r).toMatchObject({
      text: first.text,
      reward: 0,
      info: { valid: false, dream: { reasoning: 'cannot open that', invalid: false } },
    });
  });

  it('starts a task without a real start page from model.initial (once per task)', async () => {
    const task = taskWithoutStartPage('imported/7');
    const chat = new ScriptedChatModel([
      JSON.stringify({ observation: 'You are in the middle of a room.', admissible: ['go to cabinet 1', 'look'] }),
    ]);
    const dream = new DreamEnv(new ReasoningExperienceModel(chat, { transitionCache: false }), { envId: HOUSEHOLD });
    const a = await dream.reset({ seed: 0, task });
    const b = await dream.reset({ seed: 0, task });
    expect(a).toEqual({ text: 'You are in the middle of a room.', admissible: ['go to cabinet 1', 'look'], task });
    expect(b).toEqual(a);
    expect(chat.requests).toHaveLength(1);
    // Imported envs need a task (or taskForSeed).
    await expect(
      new DreamEnv(new ReasoningExperienceModel(chat), { envId: 'my-domain-v0' }).reset({ seed: 0 }),
    ).rejects.toThrow(/needs a task/);
  });

  it.each([WEBSHOP, HOUSEHOLD])('over the oracle at (0, 0) equals the real env step for step on %s', async (envId) => {
    const definition = getEnvDefinition(envId);
    const dream = makeDreamEnv(new NoisyOracleModel(envId, { epsilonReward: 0, epsilonTransition: 0 }), { envId });
    const real = makeEnv(envId);
    for (let e = 0; e < 8; e++) {
      const seed = 4000 + e;
      const task = definition.generateTask(seed, e / 8);
      const rng = Rng.fromSeed(seed, 'equal');
      let d = await dream.reset({ seed, task });
      let r = await real.reset({ seed, task });
      expect(d).toEqual(r);
      for (;;) {
        // Mostly the expert, sometimes a random or an inadmissible action.
        const expert = expertOf(real)!.expertAction();
        const action = rng.bool(0.1)
          ? 'click[nowhere]'
          : rng.bool(0.4) || expert === null
            ? rng.pick(r.admissible)
            : expert;
        const ds = await dream.step(action);
        const rs = await real.step(action);
        // Everything equal; `score` (optional in the contract) wherever the real env gives one.
        const { dream: _report, score: dreamScore, ...dreamInfo } = (ds as DreamStepResult).info;
        const { score: realScore, ...realInfo } = rs.info;
        expect({ ...ds, info: dreamInfo }).toEqual({ ...rs, info: realInfo });
        if (realScore !== undefined && (rs.info.valid || rs.terminated)) expect(dreamScore).toBe(realScore);
        d = ds;
        r = rs;
        if (rs.terminated || rs.truncated) break;
      }
      expect(d.text).toBe(r.text);
    }
  });
});
