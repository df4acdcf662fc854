import { describe, expect, it } from 'vitest';
import {
  Curriculum,
  rewardVariance,
  selectSeedTasks,
  syntheticSlots,
  type GroupOutcome,
} from '../../../src/core/curriculum/curriculum';
import { getEnvDefinition } from '../../../src/core/envs/registry';
import type { Task } from '../../../src/core/types';

const task = (id: string): Task => ({
  id,
  env: 'webshop-lite-v0',
  instruction: id,
  difficulty: 0,
  origin: 'generated',
});
const group = (id: string, successes: number, rollouts = 8): GroupOutcome => ({ task: task(id), successes, rollouts });

describe('reward variance and seed selection', () => {
  it('V = p(1 − p) on hand-made outcome tables', () => {
    expect(rewardVariance(0, 8)).toBe(0);
    expect(rewardVariance(8, 8)).toBe(0);
    expect(rewardVariance(4, 8)).toBe(0.25);
    expect(rewardVariance(2, 8)).toBeCloseTo(0.1875, 12);
    expect(rewardVariance(6, 8)).toBeCloseTo(0.1875, 12);
    expect(rewardVariance(1, 4)).toBeCloseTo(0.1875, 12);
    expect(rewardVariance(0, 0)).toBe(0);
  });

  it('picks the top-m tasks with V > 0, never all-success or all-failure groups', () => {
    const table = [
      group('all-fail', 0),
      group('half', 4),
      group('one', 1),
      group('all-win', 8),
      group('three', 3),
      group('six', 6),
    ];
    expect(selectSeedTasks(table, 3).map((g) => g.task.id)).toEqual(['half', 'three', 'six']);
    expect(selectSeedTasks(table, 10).map((g) => g.task.id)).toEqual(['half', 'three', 'six', 'one']);
    expect(selectSeedTasks([group('a', 0), group('b', 8)], 5)).toEqual([]);
  });

  it('λ caps the synthetic share exactly', () => {
    for (const batch of [1, 3, 8, 10, 64]) {
      for (const lambda of [0, 0.1, 0.25, 0.3, 0.5, 1]) {
        const slots = syntheticSlots(batch, lambda);
        expect(slots / batch).toBeLessThanOrEqual(lambda + 1e-12);
        expect(slots).toBe(Math.floor(batch * lambda + 1e-9));
      }
    }
  });
});

describe('Curriculum over mini-WebShop', () => {
  const definition = getEnvDefinition('webshop-lite-v0');
  const options = { lambda: 0.25, seedsPerIteration: 4, difficulty: 0, taskPool: 500, seed: 3, enabled: true };

  it('queues valid variations of mixed-outcome tasks and serves at most λ·B of them per batch', () => {
    const curriculum = new Curriculum(definition, options);
    const first = curriculum.nextBatch(1, 8);
    expect(first.synthetic).toBe(0);
    const outcomes = first.tasks.map((t, i) => ({ task: t, successes: [0, 4, 8, 2, 6, 1, 8, 0][i], rollouts: 8 }));
    const { seeds, variations } = curriculum.record(1, outcomes);
    expect(seeds).toHaveLength(4);
    expect(variations.length).toBeGreaterThan(0);
    for (const v of variations) {
      expect(v.origin).toBe('variation');
      expect(seeds.map((s) => s.id)).toContain(v.parent);
      expect(definition.solve(v).success).toBe(true); // proved solvable by the expert
    }
    const second = curriculum.nextBatch(2, 8);
    expect(second.synthetic).toBe(2); // floor(0.25 · 8)
    expect(second.tasks.filter((t) => t.origin === 'variation')).toHaveLength(2);
    expect(curriculum.lastSyntheticShare).toBe(0.25);
    expect(curriculum.lastMeanVariance).toBeCloseTo(
      outcomes.reduce((s, g) => s + rewardVariance(g.successes, 8), 0) / 8,
      12,
    );
  });

  it('is deterministic, resumes from its state, and the no-curriculum ablation serves the pool only', () => {
    const run = (c: Curriculum) => {
      const ids: string[] = [];
      for (let it = 1; it <= 4; it++) {
        const batch = c.nextBatch(it, 6);
        ids.push(...batch.tasks.map((t) => t.id));
        c.record(
          it,
          batch.tasks.map((t, i) => ({ task: t, successes: (i + it) % 5, rollouts: 4 })),
        );
      }
      return ids;
    };
    const a = run(new Curriculum(definition, options));
    expect(run(new Curriculum(definition, options))).toEqual(a);
    const resumed = new Curriculum(definition, options);
    const first = resumed.nextBatch(1, 6);
    resumed.record(
      1,
      first.tasks.map((t, i) => ({ task: t, successes: (i + 1) % 5, rollouts: 4 })),
    );
    const copy = new Curriculum(definition, options);
    copy.restore(JSON.parse(JSON.stringify(resumed.state())));
    const rest: string[] = first.tasks.map((t) => t.id);
    for (let it = 2; it <= 4; it++) {
      const batch = copy.nextBatch(it, 6);
      rest.push(...batch.tasks.map((t) => t.id));
      copy.record(
        it,
        batch.tasks.map((t, i) => ({ task: t, successes: (i + it) % 5, rollouts: 4 })),
      );
    }
    expect(rest).toEqual(a);
    const fixed = new Curriculum(definition, { ...options, enabled: false });
    run(fixed);
    expect(fixed.state().pending).toEqual([]);
    const batch = fixed.nextBatch(5, 6);
    expect(batch.synthetic).toBe(0);
    expect(batch.tasks.every((t) => t.origin === 'generated')).toBe(true);
    expect(fixed.lastSyntheticShare).toBe(0);
  });
});
