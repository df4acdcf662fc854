import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng';
import {
  initBackend,
  matMulFast,
  gatherRows,
  embeddingBag,
  setGatherPath,
  sortedBagIndex,
} from '../../../src/core/tfjs/backend';
import { CandidatePolicy, type ActionPrior } from '../../../src/core/policy/policy';
import type { PolicyState } from '../../../src/core/policy/features';
import { emptyFeatureSchema } from '../../../src/core/policy/feature-schema';
import { SMALL_POLICY, TINY_POLICY, householdState, itemState, resultsState } from './fixtures';

beforeAll(async () => {
  const info = await initBackend();
  expect(info.backend).toBe('wasm');
});

describe('backend', () => {
  it('reports the backend and a reason', async () => {
    const info = await initBackend('webgpu');
    expect(info.backend).toBe('wasm');
    expect(info.reason).toMatch(/webgpu is not available in Node/);
    expect(tf.getBackend()).toBe('wasm');
  });

  it('matMulFast, gatherRows and embeddingBag match tf.matMul / tf.gather and their gradients', () => {
    tf.tidy(() => {
      const rng = Rng.fromSeed(1, 'ops');
      const x = tf.tensor2d(
        Array.from({ length: 12 }, () => rng.normal()),
        [3, 4],
      );
      const w = tf.tensor2d(
        Array.from({ length: 8 }, () => rng.normal()),
        [4, 2],
      );
      expectClose(matMulFast(x, w), tf.matMul(x, w));
      const [gx, gw] = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.square(matMulFast(a, b))))([x, w]);
      // d/dX Σ(XW)² = 2 XW Wᵀ ; d/dW = 2 Xᵀ XW
      expectClose(gx, tf.mul(2, tf.matMul(tf.matMul(x, w), w, false, true)));
      expectClose(gw, tf.mul(2, tf.matMul(x, tf.matMul(x, w), true, false)));

      const idx = tf.tensor1d([2, 0, 2, 1], 'int32');
      expectClose(gatherRows(x, idx), tf.gather(x, idx));
      const g = tf.grad((a: tf.Tensor) => tf.sum(tf.mul(gatherRows(a, idx), tf.range(0, 16).reshape([4, 4]))))(x);
      // row 2 gathered twice (slots 0 and 2), row 0 once (slot 1), row 1 once (slot 3)
      expectClose(
        g,
        tf.tensor2d([
          [4, 5, 6, 7],
          [12, 13, 14, 15],
          [8, 10, 12, 14],
        ]),
      );

      const table = tf.tensor2d(
        Array.from({ length: 10 }, (_, i) => i),
        [5, 2],
      );
      const ids = Int32Array.of(4, 1, 1, 0, 3),
        seg = Int32Array.of(0, 0, 1, 1, 2);
      expectClose(
        embeddingBag(table, ids, seg),
        tf.tensor2d([
          [10, 12],
          [2, 4],
          [6, 7],
        ]),
      );
      const ge = tf.grad((t: tf.Tensor) =>
        tf.sum(
          tf.mul(
            embeddingBag(t as tf.Tensor2D, ids, seg),
            tf.tensor2d([
              [1, 2],
              [3, 4],
              [5, 6],
            ]),
          ),
        ),
      )(table);
      expectClose(
        ge,
        tf.tensor2d([
          [3, 4],
          [4, 6],
          [0, 0],
          [5, 6],
          [1, 2],
        ]),
      );
    });
  });

  it('sortedBagIndex groups positions by id', () => {
    const r = sortedBagIndex(Int32Array.of(3, 1, 3, 0), Int32Array.of(0, 0, 1, 2), 4);
    expect([...r.unique]).toEqual([0, 1, 3]);
    expect([...r.rank]).toEqual([0, 1, 2, 2]);
    expect([...r.segmentsById]).toEqual([2, 0, 0, 1]);
  });
});

describe('CandidatePolicy', () => {
  it('acts over states with different action counts; probabilities sum to 1', async () => {
    const policy = new CandidatePolicy(SMALL_POLICY);
    const states = [
      resultsState(),
      householdState(),
      itemState(),
      { ...resultsState(), admissible: ['click[next >]'] },
    ];
    const r = await policy.act(states, Rng.fromSeed(1, 'act'));
    expect(r.actions).toHaveLength(4);
    r.probs.forEach((p, i) => {
      expect(p).toHaveLength(states[i].admissible.length);
      expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
      expect(r.logProbs[i]).toBeCloseTo(Math.log(p[r.actionIndices[i]]), 4);
      expect(states[i].admissible[r.actionIndices[i]]).toBe(r.actions[i]);
    });
    expect(r.probs[3]).toEqual([1]);
    expect(r.values.every(Number.isFinite)).toBe(true);
    expect(r.priors).toEqual([null, null, null, null]);
    // greedy = argmax
    const g = await policy.act(states, Rng.fromSeed(1, 'act'), { greedy: true });
    g.probs.forEach((p, i) => expect(p[g.actionIndices[i]]).toBe(Math.max(...p)));
    policy.dispose();
  });

  it('samples identically with the same seed and from the policy distribution', async () => {
    const policy = new CandidatePolicy(SMALL_POLICY);
    const states = Array.from({ length: 6 }, () => itemState());
    const a = await policy.act(states, Rng.fromSeed(9, 'x'));
    const b = await policy.act(states, Rng.fromSeed(9, 'x'));
    expect(a.actionIndices).toEqual(b.actionIndices);
    expect(a.logProbs).toEqual(b.logProbs);
    const twin = new CandidatePolicy(SMALL_POLICY);
    expect((await twin.act(states, Rng.fromSeed(9, 'x'))).actionIndices).toEqual(a.actionIndices);
    // empirical frequencies follow π (a strong prior makes π far from uniform)
    const prior: ActionPrior = {
      id: 'test',
      prior: (_s, actions) => Promise.resolve(actions.map((_, j) => (j === 7 ? 2 : 0))),
    };
    policy.prior = prior;
    const many = Array.from({ length: 400 }, () => itemState());
    const r = await policy.act(many, Rng.fromSeed(2, 'freq'));
    const p7 = r.probs[0][7];
    expect(p7).toBeGreaterThan(0.4);
    const freq = r.actionIndices.filter((j) => j === 7).length / many.length;
    expect(Math.abs(freq - p7)).toBeLessThan(0.08);
    expect(r.priors[0]).toEqual([0, 0, 0, 0, 0, 0, 0, 2]);
    policy.dispose();
    twin.dispose();
  });

  it('applies β·prior: log-odds between two actions shift by β × the prior difference', async () => {
    const policy = new CandidatePolicy(SMALL_POLICY);
    const s = resultsState();
    const base = (await policy.act([s], Rng.fromSeed(1), { priors: [[0, 0, 0, 0, 0]] })).probs[0];
    const shifted = (await policy.act([s], Rng.fromSeed(1), { priors: [[0, 0, 0, 1.5, 0]] })).probs[0];
    const odds = (p: number[]): number => Math.log(p[3] / p[0]);
    expect(odds(shifted) - odds(base)).toBeCloseTo(1.5 * (await policy.readBeta()), 3);
    policy.dispose();
  });

  it('keeps tf.memory().numTensors flat across act and forward calls', async () => {
    const start = tf.memory().numTensors;
    const policy = new CandidatePolicy(TINY_POLICY);
    const states = [resultsState(), householdState(), itemState()];
    await policy.act(states, Rng.fromSeed(1));
    const before = tf.memory().numTensors;
    for (let i = 0; i < 20; i++) {
      await policy.act(states, Rng.fromSeed(i));
      policy.logProbs(states, [0, 1, 2]).dispose();
      policy.entropy(states).dispose();
      policy.values(states).dispose();
    }
    expect(tf.memory().numTensors).toBe(before);
    policy.dispose();
    expect(tf.memory().numTensors).toBe(start);
  });

  it('round-trips weights and refuses weights of another shape with both shapes named', async () => {
    const a = new CandidatePolicy({ ...TINY_POLICY, seed: 1 });
    const b = new CandidatePolicy({ ...TINY_POLICY, seed: 2 });
    const states: PolicyState[] = [resultsState(), householdState()];
    const read = (p: CandidatePolicy): number[] => {
      const t = p.logProbs(states, [1, 2]);
      const v = Array.from(t.dataSync());
      t.dispose();
      return v;
    };
    const lpA = read(a);
    expect(read(b)).not.toEqual(lpA);
    b.setWeights(await a.getWeights());
    expect(read(b)).toEqual(lpA);
    expect(await b.getWeights()).toEqual(await a.getWeights());
    const clone = await a.clone();
    expect(read(clone)).toEqual(lpA);

    const other = new CandidatePolicy({ ...TINY_POLICY, hidden: 5 });
    const aWeights = await a.getWeights();
    expect(() => other.setWeights(aWeights)).toThrow(/H=6.*this policy is .*H=5/s);
    const S = 2 * 4 + a.featuriser.stateDim;
    expect(() => other.setWeights(aWeights)).toThrow(new RegExp(`stateW1\\[${S}×6\\]`));
    // Another schema is another x(s, a): its weights do not load, even where the shapes agree.
    const schema = { ...emptyFeatureSchema(), stopwords: ['blue'] };
    const mined = new CandidatePolicy({ ...TINY_POLICY, seed: 1, schema });
    expect(mined.featuriser.rowDim).toBe(a.featuriser.rowDim);
    expect(mined.signature).not.toBe(a.signature);
    expect(() => mined.setWeights(aWeights)).toThrow(/do not fit this policy/);
    [a, b, clone, other, mined].forEach((p) => p.dispose());
  });
});

function expectClose(actual: tf.Tensor, expected: tf.Tensor, tol = 1e-4): void {
  expect(actual.shape).toEqual(expected.shape);
  const a = actual.dataSync(),
    e = expected.dataSync();
  for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - e[i])).toBeLessThan(tol * Math.max(1, Math.abs(e[i])));
}

describe('gather paths', () => {
  it('the GPU path (tf.gather / unsortedSegmentSum) and the wasm path give the same log-probs and gradients (cpu backend)', async () => {
    await tf.setBackend('cpu');
    try {
      const policy = new CandidatePolicy(TINY_POLICY);
      const states = [resultsState(), householdState(), itemState()];
      const enc = policy.encode(states);
      const adv = tf.tensor1d([1, -0.5, 0.25]);
      const run = (path: 'segment' | 'gather'): Float32Array[] => {
        setGatherPath(path);
        const { value, grads } = tf.variableGrads(() => {
          const e = policy.evaluate(enc, [1, 2, 3], { value: true });
          return tf.add(tf.neg(tf.mean(tf.mul(e.logProbs, adv))), tf.mean(tf.square(e.values!))) as tf.Scalar;
        }, policy.variables);
        const out = [
          Float32Array.of(value.dataSync()[0]),
          ...policy.variables.map((v) => grads[v.name].dataSync() as Float32Array),
        ];
        tf.dispose([value, grads]);
        return out;
      };
      const segment = run('segment');
      const gather = run('gather');
      segment.forEach((arr, i) => arr.forEach((x, j) => expect(Math.abs(x - gather[i][j])).toBeLessThan(1e-5)));
      adv.dispose();
      policy.dispose();
    } finally {
      setGatherPath('auto');
      await tf.setBackend('wasm');
    }
  });
});
