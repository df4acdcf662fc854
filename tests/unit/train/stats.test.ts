/** The statistics of reported tables: sample std, t-intervals and the ratio of two rows' means, by hand. */
import { describe, expect, it } from 'vitest';
import { ratioOfMeans, stat, tQuantile975 } from '../../../src/core/train/stats';

describe('table statistics', () => {
  it('t(0.975, df) from the table, and the expansion beyond 30 meets the normal quantile', () => {
    expect(tQuantile975(1)).toBe(12.706);
    expect(tQuantile975(4)).toBe(2.776);
    expect(tQuantile975(30)).toBe(2.042);
    expect(tQuantile975(40)).toBeCloseTo(2.021, 3);
    expect(tQuantile975(120)).toBeCloseTo(1.98, 3);
    expect(tQuantile975(1e6)).toBeCloseTo(1.96, 3);
    expect(() => tQuantile975(0)).toThrow(/degrees of freedom/);
  });

  it('stat: the sample std (n − 1) and the t-interval of the mean', () => {
    // 0.7, 0.8, 0.9: mean 0.8, sample variance 0.01, std 0.1; half-width 4.303 · 0.1 / √3.
    const s = stat([0.7, 0.8, 0.9]);
    expect(s.mean).toBeCloseTo(0.8, 12);
    expect(s.std).toBeCloseTo(0.1, 12);
    const half = (4.303 * 0.1) / Math.sqrt(3);
    expect(s.ci95![0]).toBeCloseTo(0.8 - half, 12);
    expect(s.ci95![1]).toBeCloseTo(0.8 + half, 12);
    expect(s.values).toEqual([0.7, 0.8, 0.9]);
  });

  it('stat: one value has no spread and no interval; none has no mean', () => {
    expect(stat([0.5])).toEqual({ mean: 0.5, std: 0, ci95: null, values: [0.5] });
    expect(stat([]).ci95).toBeNull();
    expect(Number.isNaN(stat([]).mean)).toBe(true);
  });

  it('ratioOfMeans: the delta-method interval, by hand', () => {
    const a = [0.6, 0.7, 0.8]; // mean 0.7, variance 0.01
    const b = [0.8, 0.9, 1.0]; // mean 0.9, variance 0.01
    const r = ratioOfMeans(a, b);
    expect(r.ratio).toBeCloseTo(0.7 / 0.9, 12);
    const se = (0.7 / 0.9) * Math.sqrt(0.01 / (3 * 0.49) + 0.01 / (3 * 0.81));
    expect(r.ci95![0]).toBeCloseTo(0.7 / 0.9 - 4.303 * se, 12);
    expect(r.ci95![1]).toBeCloseTo(0.7 / 0.9 + 4.303 * se, 12);
  });

  it('ratioOfMeans: no interval for one seed or a zero denominator; a zero numerator keeps one', () => {
    expect(ratioOfMeans([0.5], [0.6]).ci95).toBeNull();
    expect(ratioOfMeans([0.5, 0.6], [0, 0]).ci95).toBeNull();
    const zero = ratioOfMeans([0, 0, 0], [0.5, 0.6, 0.7]);
    expect(zero.ratio).toBe(0);
    expect(zero.ci95).toEqual([0, 0]);
  });
});
