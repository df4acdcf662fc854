import { describe, expect, it } from 'vitest';
import { Rng, hashString } from '../../../src/core/rng';

describe('Rng', () => {
  it('gives the same stream for the same seed and a different one for another seed', () => {
    const a = Rng.fromSeed(7, 'world');
    const b = Rng.fromSeed(7, 'world');
    const c = Rng.fromSeed(8, 'world');
    const xs = Array.from({ length: 5 }, () => a.nextUint32());
    expect(Array.from({ length: 5 }, () => b.nextUint32())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.nextUint32())).not.toEqual(xs);
  });

  it('splits into independent streams without advancing the parent', () => {
    const parent = Rng.fromSeed(1);
    const before = Rng.fromSeed(1).next();
    const child = parent.split('task');
    child.next();
    expect(parent.next()).toBe(before);
    expect(Rng.fromSeed(1).split('task').next()).toBe(Rng.fromSeed(1, 'task').next());
  });

  it('is roughly uniform and stays within its ranges', () => {
    const rng = Rng.fromSeed('uniform');
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 40_000; i++) {
      const x = rng.int(0, 3);
      counts[x]++;
      const u = rng.next();
      expect(u >= 0 && u < 1).toBe(true);
    }
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(400);
    expect(() => rng.int(3, 2)).toThrow(/empty range/);
    expect(() => rng.pick([])).toThrow(/empty/);
  });

  it('shuffles as a permutation, samples distinct items and weights by weight', () => {
    const rng = Rng.fromSeed(3);
    const items = Array.from({ length: 20 }, (_, i) => i);
    expect(
      rng
        .shuffle(items)
        .slice()
        .sort((x, y) => x - y),
    ).toEqual(items);
    const sample = rng.sample(items, 5);
    expect(new Set(sample).size).toBe(5);
    let ones = 0;
    for (let i = 0; i < 10_000; i++) ones += rng.weightedIndex([1, 3]) === 1 ? 1 : 0;
    expect(ones / 10_000).toBeGreaterThan(0.72);
    expect(ones / 10_000).toBeLessThan(0.78);
  });

  it('hashes strings stably', () => {
    expect(hashString('abc')).toBe(hashString('abc'));
    expect(hashString('abc')).not.toBe(hashString('abd'));
  });
});
