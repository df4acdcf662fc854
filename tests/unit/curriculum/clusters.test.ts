/**
 * Task clusters as curriculum groups (the paper's PPO grouping): k-means on hand-made points,
 * clustering of similar instructions, pooled variance and seed selection, and the curriculum
 * option end to end.
 */
import { describe, expect, it } from 'vitest';
import { clusterTasks, kMeans, selectClusterSeeds, type TaskCluster } from '../../../src/core/curriculum/clusters';
import { Curriculum, type GroupOutcome } from '../../../src/core/curriculum/curriculum';
import { getEnvDefinition } from '../../../src/core/envs/registry';
import { Rng } from '../../../src/core/rng';
import type { Task } from '../../../src/core/types';

const task = (id: string, instruction = id): Task => ({
  id,
  env: 'webshop-lite-v0',
  instruction,
  difficulty: 0,
  origin: 'generated',
});
const group = (id: string, successes: number, rollouts: number, instruction?: string): GroupOutcome => ({
  task: task(id, instruction),
  successes,
  rollouts,
});

describe('k-means', () => {
  it('finds well-separated blobs, whatever the seed', () => {
    const blob = (x: number, y: number, n: number, rng: Rng) =>
      Array.from({ length: n }, () => Float32Array.of(x + rng.uniform(-0.1, 0.1), y + rng.uniform(-0.1, 0.1)));
    const rng = Rng.fromSeed(1, 'points');
    const points = [...blob(0, 0, 10, rng), ...blob(5, 5, 10, rng), ...blob(0, 5, 10, rng)];
    for (const seed of [1, 2, 3, 4]) {
      const { assignment } = kMeans(points, 3, Rng.fromSeed(seed, 'k'));
      const labels = [0, 10, 20].map((start) => new Set(Array.from(assignment.slice(start, start + 10))));
      for (const l of labels) expect(l.size).toBe(1);
      expect(new Set(labels.map((l) => [...l][0])).size).toBe(3);
    }
  });

  it('is deterministic in its rng and clamps k to the number of points', () => {
    const points = Array.from({ length: 7 }, (_, i) => Float32Array.of(i, (i * 7) % 3));
    const a = kMeans(points, 3, Rng.fromSeed(9, 'k'));
    const b = kMeans(points, 3, Rng.fromSeed(9, 'k'));
    expect(Array.from(a.assignment)).toEqual(Array.from(b.assignment));
    expect(kMeans(points.slice(0, 2), 5, Rng.fromSeed(1, 'k')).centroids).toHaveLength(2);
    expect(kMeans([], 3, Rng.fromSeed(1, 'k')).assignment).toHaveLength(0);
  });
});

describe('clusters as curriculum groups', () => {
  // One rollout per task (PPO-style): every single task has V = 0; similar tasks pooled do not.
  const groups = [
    group('mug-1', 1, 1, 'i need a red ceramic coffee mug under 20 dollars'),
    group('mug-2', 0, 1, 'i need a blue ceramic coffee mug under 30 dollars'),
    group('mug-3', 1, 1, 'find me a ceramic coffee mug, large, under 25 dollars'),
    group('shoe-1', 1, 1, 'running shoes for men, size 10, black, under 80 dollars'),
    group('shoe-2', 1, 1, 'running shoes for women, size 7, white, under 90 dollars'),
    group('shoe-3', 1, 1, 'lightweight running shoes for men, size 9, under 70 dollars'),
  ];

  it('groups similar instructions and pools their outcomes', () => {
    const clusters = clusterTasks(groups, 2, Rng.fromSeed(1, 'c'));
    const ids = clusters.map((c) => c.members.map((g) => g.task.id).sort()).sort();
    expect(ids).toEqual([
      ['mug-1', 'mug-2', 'mug-3'],
      ['shoe-1', 'shoe-2', 'shoe-3'],
    ]);
    const mugs = clusters.find((c) => c.members.some((g) => g.task.id === 'mug-1'))!;
    expect([mugs.successes, mugs.rollouts]).toEqual([2, 3]);
  });

  it('seeds from clusters with V > 0, the member nearest the cluster rate, carrying the pooled counts', () => {
    const clusters = clusterTasks(groups, 2, Rng.fromSeed(1, 'c'));
    const seeds = selectClusterSeeds(clusters, 4);
    // The shoes all succeed (V = 0): only the mugs (p = 2/3) seed a variation.
    expect(seeds).toHaveLength(1);
    expect(['mug-1', 'mug-3']).toContain(seeds[0].task.id);
    expect([seeds[0].successes, seeds[0].rollouts]).toEqual([2, 3]);
  });

  it('orders clusters by V, then p, then id, and takes the top m', () => {
    const c = (ids: string[], successes: number, rollouts: number): TaskCluster => ({
      members: ids.map((id) => group(id, 0, 1)),
      successes,
      rollouts,
    });
    const seeds = selectClusterSeeds([c(['a'], 1, 4), c(['b'], 2, 4), c(['c'], 3, 4), c(['d'], 0, 4)], 2);
    expect(seeds.map((s) => s.task.id)).toEqual(['b', 'a']);
  });

  it('the curriculum with grouping "cluster" makes variations where per-task groups of one rollout make none', () => {
    const definition = getEnvDefinition('webshop-lite-v0');
    const options = { lambda: 0.5, seedsPerIteration: 2, difficulty: 0, taskPool: 200, seed: 5, enabled: true };
    const byTask = new Curriculum(definition, options);
    const byCluster = new Curriculum(definition, { ...options, grouping: 'cluster', clusters: 2 });
    const { tasks } = byTask.nextBatch(1, 8);
    byCluster.nextBatch(1, 8);
    const outcomes = tasks.map((t, i) => ({ task: t, successes: i % 2, rollouts: 1 }));
    expect(byTask.record(1, outcomes).variations).toEqual([]);
    const made = byCluster.record(1, outcomes);
    expect(made.seeds.length).toBeGreaterThan(0);
    expect(made.variations.every((v) => v.origin === 'variation')).toBe(true);
    // Deterministic.
    const again = new Curriculum(definition, { ...options, grouping: 'cluster', clusters: 2 });
    again.nextBatch(1, 8);
    expect(again.record(1, outcomes).variations.map((v) => v.id)).toEqual(made.variations.map((v) => v.id));
  });
});
