import { describe, expect, it } from 'vitest';
import { HELD_OUT_SEED_BASE } from '../../../src/core/envs/env';
import { makeEnv } from '../../../src/core/envs/registry';
import { heldOutContexts } from '../../../src/core/experience/held-out';
import { HOUSEHOLD, WEBSHOP } from './fixtures';

describe('heldOutContexts', () => {
  it.each([WEBSHOP, HOUSEHOLD])('gives %s states no run trains on, each reached by its replay', async (envId) => {
    const contexts = await heldOutContexts(envId, 12);
    expect(contexts).toHaveLength(12);
    for (const { ctx, replay } of contexts) {
      expect(replay.task.seed).toBeGreaterThanOrEqual(HELD_OUT_SEED_BASE);
      expect(replay.actions.at(-1)).toBe(ctx.action);
      expect(ctx.history.map((s) => s.action)).toEqual(replay.actions.slice(0, -1));
      // The replay's actions but the last lead a fresh env to the context's state.
      const env = makeEnv(envId);
      let observation = await env.reset({ seed: replay.task.seed ?? 0, task: replay.task });
      for (const action of replay.actions.slice(0, -1)) observation = await env.step(action);
      expect(observation.text).toBe(ctx.state.text);
      expect(observation.admissible).toEqual(ctx.state.admissible);
    }
  });

  it('is the same list for the same seed, and another for another seed', async () => {
    const texts = async (seed: number) => (await heldOutContexts(WEBSHOP, 6, seed)).map((c) => c.ctx.state.text);
    expect(await texts(0)).toEqual(await texts(0));
    expect(await texts(1)).not.toEqual(await texts(0));
  });
});
