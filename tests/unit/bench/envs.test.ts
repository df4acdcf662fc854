/** `benchEnvCase` (the envs suite of `npm run bench`): its counts add up; no figure is asserted on time. */
import { describe, expect, it } from 'vitest';
import { ENV_BENCH_CASES, benchEnvCase } from '../../../src/bench/envs';

describe('benchEnvCase', () => {
  it('names a case of every built-in env', () => {
    expect(new Set(ENV_BENCH_CASES.map((c) => c.env))).toEqual(
      new Set(['webshop-lite-v0', 'household-v0', 'webarena-lite-v0']),
    );
  });

  it.each(ENV_BENCH_CASES.filter((c) => !c.create.catalogSize || c.create.catalogSize === 1000))(
    'times random and expert episodes of $label',
    async (c) => {
      const row = await benchEnvCase(c, 2);
      expect(row).toMatchObject({ label: c.label, env: c.env });
      // Four episodes (two a policy), each of at least one step.
      expect(row.steps).toBeGreaterThanOrEqual(4);
      for (const rate of [row.steps_per_second, row.random_steps_per_second, row.expert_steps_per_second]) {
        expect(Number.isFinite(rate) && rate > 0).toBe(true);
      }
      expect(row.reset_ms).toBeGreaterThanOrEqual(0);
      expect(row.task_generation_ms).toBeGreaterThanOrEqual(0);
    },
  );
});
