import { describe, expect, it } from 'vitest';
import { makeBaselinePolicy, PolicyConfigError, rolloutEpisode } from '../../../src/core/data/rollout';
import { getEnvDefinition, makeEnv } from '../../../src/core/envs/registry';
import type { Task } from '../../../src/core/types';

/** A WebShop task whose product has options to choose (so buying at once is a premature finish). */
function webshopTaskWithOptions(): { seed: number; task: Task } {
  const definition = getEnvDefinition('webshop-lite-v0');
  for (let seed = 500; seed < 600; seed++) {
    const task = definition.generateTask(seed, 0);
    const plan = definition.solve(task).actions;
    if (plan.length >= 4) return { seed, task }; // search, click the product, an option, buy now
  }
  throw new Error('no WebShop task with options among seeds 500..599');
}

describe('noisy-expert finishEarly (the hasty expert)', () => {
  it('buys as soon as buying is possible, before the options the expert would choose, and fails', async () => {
    const { seed, task } = webshopTaskWithOptions();
    const hasty = makeBaselinePolicy('noisy-expert', { epsilon: 0, finishEarly: 1 });
    const t = await rolloutEpisode(makeEnv('webshop-lite-v0'), hasty, { seed, task });
    const expert = await rolloutEpisode(makeEnv('webshop-lite-v0'), makeBaselinePolicy('expert'), { seed, task });
    expect(t.steps.map((s) => s.action)).toEqual([...expert.steps.slice(0, 2).map((s) => s.action), 'click[buy now]']);
    expect(t.result.success).toBe(false);
    expect(t.result.score).toBeLessThan(1);
    expect(t.policy).toEqual({ epsilon: 0, finishEarly: 1 });
    expect(expert.result.success).toBe(true);
  });

  it('never fires where only the goal ends an episode: the household episode is the plain noisy expert, draw for draw', async () => {
    const definition = getEnvDefinition('household-v0');
    for (const seed of [11, 12, 13]) {
      const task = definition.generateTask(seed, 0.5);
      const plain = await rolloutEpisode(
        makeEnv('household-v0'),
        makeBaselinePolicy('noisy-expert', { epsilon: 0.3 }),
        { seed, task },
      );
      const hasty = await rolloutEpisode(
        makeEnv('household-v0'),
        makeBaselinePolicy('noisy-expert', { epsilon: 0.3, finishEarly: 1 }),
        { seed, task },
      );
      expect(hasty.steps).toEqual(plain.steps);
    }
  });

  it('rejects a chance outside (0, 1]', () => {
    expect(() => makeBaselinePolicy('noisy-expert', { finishEarly: 0 })).toThrow(PolicyConfigError);
    expect(() => makeBaselinePolicy('noisy-expert', { finishEarly: 1.5 })).toThrow(
      /finish-early must be within 0\.\.1/,
    );
  });
});
