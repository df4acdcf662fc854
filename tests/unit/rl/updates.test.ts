import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng';
import { initBackend } from '../../../src/core/tfjs/backend';
import { CandidatePolicy } from '../../../src/core/policy/policy';
import { makeOptimizer, type PolicyStep, type RolloutBatch } from '../../../src/core/rl/batch';
import { reinforceAdvantages, reinforceUpdate } from '../../../src/core/rl/reinforce';
import { grpoAdvantages, grpoUpdate } from '../../../src/core/rl/grpo';
import { explainedVariance, ppoAdvantages, ppoUpdate } from '../../../src/core/rl/ppo';
import {
  SMALL_POLICY,
  TINY_POLICY,
  banditStates,
  batchStep,
  banditSteps,
  correctProbability,
  householdState,
  itemState,
  resultsState,
} from '../policy/fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

type Algo = 'reinforce' | 'grpo' | 'ppo';
const ALGOS: Algo[] = ['reinforce', 'grpo', 'ppo'];

function runUpdate(
  algo: Algo,
  policy: CandidatePolicy,
  optimizer: tf.Optimizer,
  batch: RolloutBatch,
  reference?: CandidatePolicy,
): Promise<Record<string, number>> {
  if (algo === 'reinforce') return reinforceUpdate(policy, optimizer, batch);
  if (algo === 'grpo')
    return grpoUpdate(policy, optimizer, batch, reference ? { klCoef: 0.05, minibatches: 2, updateEpochs: 2 } : {}, {
      reference,
    });
  return ppoUpdate(policy, optimizer, batch, { minibatches: 2, updateEpochs: 2 });
}

/** Two-step episodes over mixed WebShop / household states, groups of 2 (for shape variety). */
async function mixedBatch(policy: CandidatePolicy, seed: number): Promise<RolloutBatch> {
  const rng = Rng.fromSeed(seed, 'mixed');
  const states = [
    resultsState(),
    itemState(),
    householdState(),
    resultsState(),
    itemState(),
    householdState(),
    resultsState(),
    householdState(),
  ];
  const acted = await policy.act(states, rng);
  const steps: PolicyStep[] = states.map((state, i) => ({
    state,
    action: acted.actionIndices[i],
    logProb: acted.logProbs[i],
    value: acted.values[i],
    prior: acted.priors[i],
    reward: (acted.actionIndices[i] % 3) * 0.5,
    terminated: i % 2 === 1 && i !== 7,
    truncated: i === 7,
    bootstrapValue: i === 7 ? 0.3 : undefined,
    episodeId: `e${Math.floor(i / 2)}`,
    groupId: `g${Math.floor(i / 4)}`,
  }));
  return { steps };
}

describe('advantages from batches', () => {
  const step = (episodeId: string, groupId: string, reward: number, extra: Partial<PolicyStep> = {}) =>
    batchStep(resultsState(), episodeId, groupId, reward, extra);

  it('GRPO: episode reward normalised within its group, copied to every step', () => {
    const batch = {
      steps: [step('a', 'g', 0), step('b', 'g', 1), step('a', 'g', 0), step('c', 'h', 1), step('d', 'h', 1)],
    };
    const adv = grpoAdvantages(batch);
    // group g: episode rewards a = 0, b = 1 → ∓1 ; group h all equal → 0
    expect(adv[0]).toBeCloseTo(-1, 5);
    expect(adv[2]).toBeCloseTo(-1, 5);
    expect(adv[1]).toBeCloseTo(1, 5);
    expect(adv[3]).toBe(0);
    expect(adv[4]).toBe(0);
  });

  it('REINFORCE: discounted return minus the batch mean', () => {
    const batch = { steps: [step('a', 'g', 0), step('a', 'g', 1), step('b', 'g', 0)] };
    const { returns, advantages } = reinforceAdvantages(batch, { gamma: 0.5, normalizeAdvantages: false });
    expect(returns).toEqual([0.5, 1, 0]);
    expect(advantages).toEqual([0, 0.5, -0.5]);
  });

  it('PPO: GAE per episode, bootstrapping truncated episodes only', () => {
    const batch = {
      steps: [
        step('a', 'g', 1, { value: 0.5, terminated: true }),
        step('b', 'g', 0, { value: 0.2 }),
        step('b', 'g', 1, { value: 0.4, truncated: true, bootstrapValue: 1 }),
      ],
    };
    const { advantages, returns } = ppoAdvantages(batch, { gamma: 0.9, gaeLambda: 1 });
    expect(advantages[0]).toBeCloseTo(0.5, 6); // 1 − 0.5
    expect(advantages[2]).toBeCloseTo(1 + 0.9 - 0.4, 6); // bootstrapped with V = 1
    expect(advantages[1]).toBeCloseTo(0 + 0.9 * 0.4 - 0.2 + 0.9 * 1.5, 6);
    expect(returns[1]).toBeCloseTo(advantages[1] + 0.2, 6);
    expect(() => ppoAdvantages({ steps: [step('x', 'g', 1)] }, { gamma: 0.9, gaeLambda: 0.9 })).toThrow(/no value/);
  });

  it('explained variance', () => {
    expect(explainedVariance([1, 2, 3], [1, 2, 3])).toBe(1);
    expect(explainedVariance([0, 0, 0], [1, 2, 3])).toBe(0);
    expect(explainedVariance([1, 2], [1, 1])).toBeNaN();
  });
});

describe('updates', () => {
  it.each(ALGOS)('%s returns the metrics of docs/architecture.md §3.11', async (algo) => {
    const policy = new CandidatePolicy(TINY_POLICY);
    const optimizer = makeOptimizer(1e-3);
    const metrics = await runUpdate(algo, policy, optimizer, await mixedBatch(policy, 1));
    const expected = {
      reinforce: ['losses/policy_loss', 'losses/entropy', 'losses/approx_kl'],
      grpo: ['losses/policy_loss', 'losses/entropy', 'losses/approx_kl', 'losses/clipfrac'],
      ppo: [
        'losses/policy_loss',
        'losses/value_loss',
        'losses/entropy',
        'losses/approx_kl',
        'losses/clipfrac',
        'losses/explained_variance',
      ],
    }[algo];
    expect(Object.keys(metrics).sort()).toEqual([...expected].sort());
    for (const k of expected) expect(Number.isFinite(metrics[k])).toBe(true);
    expect(metrics['losses/entropy']).toBeGreaterThan(0);
    optimizer.dispose();
    policy.dispose();
  });

  it.each(ALGOS)('%s keeps tf.memory().numTensors flat across 20 updates', async (algo) => {
    const policy = new CandidatePolicy(TINY_POLICY);
    const reference = algo === 'grpo' ? await policy.clone() : undefined;
    const optimizer = makeOptimizer(1e-3);
    const batch = await mixedBatch(policy, 2);
    await runUpdate(algo, policy, optimizer, batch, reference); // creates Adam's slots
    const before = tf.memory().numTensors;
    for (let i = 0; i < 20; i++) await runUpdate(algo, policy, optimizer, batch, reference);
    expect(tf.memory().numTensors).toBe(before);
    optimizer.dispose();
    policy.dispose();
    reference?.dispose();
  });

  it.each(ALGOS)('%s: same seed → same actions and same losses', async (algo) => {
    const run = async (): Promise<{ actions: number[][]; metrics: Record<string, number>[] }> => {
      const policy = new CandidatePolicy(TINY_POLICY);
      const optimizer = makeOptimizer(1e-2);
      const rng = Rng.fromSeed(3, 'det');
      const out = { actions: [] as number[][], metrics: [] as Record<string, number>[] };
      for (let i = 0; i < 3; i++) {
        const steps = await banditSteps(policy, rng, 6, 2, `i${i}`);
        out.actions.push(steps.map((s) => s.action));
        out.metrics.push(await runUpdate(algo, policy, optimizer, { steps }));
      }
      optimizer.dispose();
      policy.dispose();
      return out;
    };
    const a = await run();
    const b = await run();
    expect(b).toEqual(a);
  });

  it('GRPO with klCoef needs a reference and reports the KL to it', async () => {
    const policy = new CandidatePolicy(TINY_POLICY);
    const optimizer = makeOptimizer(1e-2);
    const batch = await mixedBatch(policy, 3);
    // Returns that differ inside each group whatever actions were sampled: the updates must move the policy.
    batch.steps.forEach((step, i) => (step.reward = (i % 3) * 0.5));
    await expect(grpoUpdate(policy, optimizer, batch, { klCoef: 0.1 })).rejects.toThrow(/reference/);
    const reference = await policy.clone();
    // One pass: its KL is measured before its step, where the policy is still the reference.
    const first = await grpoUpdate(policy, optimizer, batch, { klCoef: 0.1, updateEpochs: 1 }, { reference });
    expect(first['losses/ref_kl']).toBeCloseTo(0, 6); // identical before the first step
    let last = first;
    for (let i = 0; i < 5; i++) last = await grpoUpdate(policy, optimizer, batch, { klCoef: 0.1 }, { reference });
    expect(last['losses/ref_kl']).toBeGreaterThan(0);
    optimizer.dispose();
    policy.dispose();
    reference.dispose();
  });
});

describe('learning a trivial bandit (the action overlapping the instruction pays 1)', () => {
  it.each([
    ['reinforce', 80],
    ['grpo', 80],
    ['ppo', 20],
  ] as const)('%s moves the probability of the right action', async (algo, iterations) => {
    const policy = new CandidatePolicy(SMALL_POLICY);
    const optimizer = makeOptimizer(3e-3);
    const held = banditStates(Rng.fromSeed(99, 'held-out'), 40);
    const before = await correctProbability(policy, held.states, held.correct);
    const rng = Rng.fromSeed(4, algo);
    for (let i = 0; i < iterations; i++) {
      const steps = await banditSteps(policy, rng, 8, 4, `it${i}`);
      if (algo === 'reinforce') await reinforceUpdate(policy, optimizer, { steps });
      else if (algo === 'grpo') await grpoUpdate(policy, optimizer, { steps });
      else await ppoUpdate(policy, optimizer, { steps }, {}, { rng });
    }
    const after = await correctProbability(policy, held.states, held.correct);
    expect(before).toBeLessThan(0.35); // ≈ uniform over 4 actions
    expect(after).toBeGreaterThan(0.8);
    optimizer.dispose();
    policy.dispose();
  });
});
