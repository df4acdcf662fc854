import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng';
import { initBackend } from '../../../src/core/tfjs/backend';
import { CandidatePolicy, type ActionPrior } from '../../../src/core/policy/policy';
import { reinforceLoss } from '../../../src/core/rl/reinforce';
import { grpoLoss } from '../../../src/core/rl/grpo';
import { ppoPolicyLoss, ppoValueLoss } from '../../../src/core/rl/ppo';
import { TINY_POLICY, householdState, itemState, resultsState } from '../policy/fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

/** A tiny policy with weights big enough that every parameter matters, and a non-zero prior (so β has a gradient). */
async function tinyPolicy(): Promise<CandidatePolicy> {
  const prior: ActionPrior = {
    id: 'fixed',
    prior: (_s, actions) => Promise.resolve(actions.map((_, j) => Math.sin(j + 1))),
  };
  const policy = new CandidatePolicy(TINY_POLICY, prior);
  // Seed 11 put a hidden unit's pre-activation within h of 0 once the features changed (the left difference equalled
  // tf's gradient, the central one straddled the relu's kink): finite differences check smooth points only.
  const rng = Rng.fromSeed(12, 'gradcheck');
  const w = await policy.getWeights();
  for (const t of w.tensors) for (let i = 0; i < t.data.length; i++) t.data[i] = rng.uniform(-0.6, 0.6);
  policy.setWeights(w);
  return policy;
}

/**
 * Compare tf's gradient of `loss` with central finite differences on the entries of each policy
 * variable where the analytic gradient is largest, plus a few random ones (float32: h = 1e-2).
 */
function gradientCheck(policy: CandidatePolicy, loss: () => tf.Scalar): { checked: number; worst: number } {
  const vars = policy.policyVariables;
  const { value, grads } = tf.variableGrads(loss, vars);
  value.dispose();
  const h = 1e-2;
  const rng = Rng.fromSeed(5, 'entries');
  let checked = 0,
    worst = 0;
  for (const v of vars) {
    const g = grads[v.name].dataSync();
    const order = [...g.keys()].sort((a, b) => Math.abs(g[b]) - Math.abs(g[a]));
    const entries = new Set([...order.slice(0, 3), ...Array.from({ length: 2 }, () => rng.int(0, g.length - 1))]);
    const base = Float32Array.from(v.dataSync());
    for (const i of entries) {
      const at = (delta: number): number => {
        const data = base.slice();
        data[i] += delta;
        tf.tidy(() => v.assign(tf.tensor(data, v.shape)));
        return tf.tidy(() => loss().dataSync()[0]);
      };
      const fd = (at(h) - at(-h)) / (2 * h);
      tf.tidy(() => v.assign(tf.tensor(base, v.shape)));
      const err = Math.abs(fd - g[i]) / Math.max(Math.abs(fd), Math.abs(g[i]), 1e-3);
      worst = Math.max(worst, err);
      checked++;
    }
  }
  tf.dispose(grads);
  return { checked, worst };
}

describe('gradient checks (finite differences, float32)', () => {
  it('REINFORCE loss', async () => {
    const policy = await tinyPolicy();
    const states = [resultsState(), householdState(), itemState(), resultsState()];
    const enc = policy.encode(states, await policy.priors(states));
    const actions = [3, 2, 7, 0];
    const adv = tf.tensor1d([1.2, -0.7, 0.5, -1.0]);
    const { checked, worst } = gradientCheck(policy, () => reinforceLoss(policy.evaluate(enc, actions).logProbs, adv));
    expect(checked).toBeGreaterThan(20);
    expect(worst).toBeLessThan(1e-2);
    adv.dispose();
    policy.dispose();
  });

  it('GRPO loss (ratios inside and outside the clip range)', async () => {
    const policy = await tinyPolicy();
    const states = [resultsState(), householdState(), itemState(), resultsState()];
    const enc = policy.encode(states, await policy.priors(states));
    const actions = [3, 2, 7, 1];
    const current = policy.logProbs(enc, actions);
    // old log-probs: ratios e^{0.05}, e^{−0.1} (inside), e^{0.6} with A > 0 (clipped: no gradient), e^{−0.6} with A > 0 (not clipped)
    const old = tf.tidy(() => tf.sub(current, tf.tensor1d([0.05, -0.1, 0.6, -0.6]))) as tf.Tensor1D;
    const adv = tf.tensor1d([1.0, -0.8, 0.9, 0.7]);
    const { checked, worst } = gradientCheck(policy, () =>
      grpoLoss(policy.evaluate(enc, actions).logProbs, old, adv, 0.2),
    );
    expect(checked).toBeGreaterThan(20);
    expect(worst).toBeLessThan(1e-2);
    tf.dispose([current, old, adv]);
    policy.dispose();
  });
});

describe('PPO clipped surrogate', () => {
  /** d loss / d logπ for one sample with ratio = e^{logRatio} and advantage a. */
  const gradAt = (logRatio: number, a: number, clip = 0.2): number =>
    tf.tidy(() => {
      const lp = tf.tensor1d([logRatio]);
      const g = tf.grad((x: tf.Tensor) => ppoPolicyLoss(x as tf.Tensor1D, tf.tensor1d([0]), tf.tensor1d([a]), clip))(
        lp,
      );
      return g.dataSync()[0];
    });

  it('has zero gradient where the clip is active', () => {
    expect(gradAt(Math.log(1.5), +1)).toBe(0); // ratio > 1 + ε, A > 0: clipped
    expect(gradAt(Math.log(0.5), -1)).toBe(0); // ratio < 1 − ε, A < 0: clipped
  });

  it('has the surrogate gradient −A·ρ where it is not', () => {
    expect(gradAt(Math.log(1.5), -1)).toBeCloseTo(1.5, 5); // ratio > 1 + ε but A < 0: pessimistic bound unclipped
    expect(gradAt(Math.log(0.5), +1)).toBeCloseTo(-0.5, 5); // ratio < 1 − ε but A > 0
    expect(gradAt(Math.log(1.1), +2)).toBeCloseTo(-2.2, 5); // inside 1 ± ε
    expect(gradAt(Math.log(0.9), -2)).toBeCloseTo(1.8, 5);
  });

  it('loss values and the batch mean', () => {
    // Ratios 1.5 and 0.5, both advantages 1, ε 0.2.
    const lossOf = (loss: typeof ppoPolicyLoss) =>
      tf.tidy(
        () =>
          loss(
            tf.tensor1d([Math.log(1.5), Math.log(0.5)]),
            tf.tensor1d([0, 0]),
            tf.tensor1d([1, 1]),
            0.2,
          ).dataSync()[0],
      );
    // max(−1.5, −1.2) = −1.2 ; max(−0.5, −0.8) = −0.5 → mean −0.85
    expect(lossOf(ppoPolicyLoss)).toBeCloseTo(-0.85, 5);
    expect(lossOf(grpoLoss)).toBeCloseTo(-0.85, 5);
  });

  it('clips the value loss around the old values', () => {
    const loss = (v: number, clip: number | null): number =>
      tf.tidy(() => ppoValueLoss(tf.tensor1d([v]), tf.tensor1d([0]), tf.tensor1d([1]), clip).dataSync()[0]);
    expect(loss(0.5, null)).toBeCloseTo(0.125, 6);
    // V moved 0 → 0.5 towards R = 1 beyond ε = 0.2: max((0.5−1)², (0.2−1)²)/2 = 0.32
    expect(loss(0.5, 0.2)).toBeCloseTo(0.32, 6);
    const g = tf.tidy(
      () =>
        tf
          .grad((x: tf.Tensor) => ppoValueLoss(x as tf.Tensor1D, tf.tensor1d([0]), tf.tensor1d([1]), 0.2))(
            tf.tensor1d([0.5]),
          )
          .dataSync()[0],
    );
    expect(g).toBe(0);
  });
});
