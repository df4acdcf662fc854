import { describe, expect, it } from 'vitest';
import { discountedReturns, gae, groupNormalizedAdvantages } from '../../../src/core/rl/advantages';

const close = (actual: number[], expected: number[], digits = 9): void => {
  expect(actual.length).toBe(expected.length);
  actual.forEach((a, i) => expect(a).toBeCloseTo(expected[i], digits));
};

describe('discountedReturns', () => {
  it('sums discounted future rewards', () => {
    // G2 = 2; G1 = 0 + 0.5·2 = 1; G0 = 1 + 0.5·1 = 1.5
    close(discountedReturns([1, 0, 2], 0.5), [1.5, 1, 2]);
  });
  it('γ = 1 gives suffix sums, γ = 0 the rewards', () => {
    close(discountedReturns([1, 2, 3], 1), [6, 5, 3]);
    close(discountedReturns([1, 2, 3], 0), [1, 2, 3]);
    expect(discountedReturns([], 0.9)).toEqual([]);
  });
});

describe('gae', () => {
  it('matches a hand computation with a done in the middle', () => {
    // γ = 0.9, λ = 0.8 (γλ = 0.72); episode 1 = steps 0–1 (done after 1), episode 2 = steps 2–3, bootstrap 0.6
    // t=3: δ = 1 + 0.9·0.6 − 0.3 = 1.24;             A = 1.24
    // t=2: δ = 1 + 0.9·0.3 − 0.4 = 0.87;             A = 0.87 + 0.72·1.24 = 1.7628
    // t=1: done → δ = 0 − 0.2 = −0.2 (no bootstrap);  A = −0.2 (no carry from t=2)
    // t=0: δ = 1 + 0.9·0.2 − 0.5 = 0.68;             A = 0.68 + 0.72·(−0.2) = 0.536
    const r = gae([1, 0, 1, 1], [0.5, 0.2, 0.4, 0.3], [false, true, false, false], 0.6, 0.9, 0.8);
    close(r.advantages, [0.536, -0.2, 1.7628, 1.24]);
    close(r.returns, [1.036, 0, 2.1628, 1.54]);
  });
  it('ignores lastValue when the last step is done', () => {
    const a = gae([1, 1], [0, 0], [false, true], 100, 0.99, 0.95);
    close(a.advantages, [1 + 0.99 * 0.95 * 1, 1]);
  });
  it('λ = 1 with zero values gives discounted returns; λ = 0 gives one-step TD errors', () => {
    close(gae([1, 0, 2], [0, 0, 0], [false, false, true], 0, 0.5, 1).advantages, discountedReturns([1, 0, 2], 0.5));
    close(gae([1, 2], [0.5, 0.25], [false, false], 1, 0.5, 0).advantages, [1 + 0.5 * 0.25 - 0.5, 2 + 0.5 - 0.25]);
  });
  it('rejects mismatched lengths', () => {
    expect(() => gae([1], [0, 0], [false], 0, 0.9, 0.9)).toThrow(/same length/);
  });
});

describe('groupNormalizedAdvantages', () => {
  it('standardises with the population std', () => {
    // mean 0.5, population std 0.5 → ±0.5 / (0.5 + 1e-6)
    close(
      groupNormalizedAdvantages([1, 0, 0, 1]),
      [1, -1, -1, 1].map((s) => (s * 0.5) / (0.5 + 1e-6)),
    );
    // [3, 1, 2]: mean 2, std √(2/3)
    const std = Math.sqrt(2 / 3);
    close(groupNormalizedAdvantages([3, 1, 2], 0), [1 / std, -1 / std, 0]);
  });
  it('is all zeros when the group agrees (std = 0)', () => {
    expect(groupNormalizedAdvantages([1, 1, 1])).toEqual([0, 0, 0]);
    expect(groupNormalizedAdvantages([0.3])).toEqual([0]);
    expect(groupNormalizedAdvantages([])).toEqual([]);
  });
  it('uses eps', () => {
    close(groupNormalizedAdvantages([1, 0], 0.5), [0.5, -0.5]);
  });
});
