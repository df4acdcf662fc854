import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../src/core/tfjs/backend';
import { CandidatePolicy } from '../../../src/core/policy/policy';
import type { PolicyState } from '../../../src/core/policy/features';
import { makeOptimizer, type PolicyStep } from '../../../src/core/rl/batch';
import { grpoUpdate } from '../../../src/core/rl/grpo';
import { ConfigError } from '../../../src/core/train/config';
import { experienceLabel } from '../../../src/core/llm/spec';
import {
  DEFAULT_TEACH_SETTINGS,
  TeachSession,
  describeUpdate,
  stepProbabilities,
  teachAdvantages,
  teachConfig,
  validateTeachSettings,
  type TeachSettings,
  type TeachUpdate,
} from '../../../src/core/train/teach';
import { batchStep } from '../policy/fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

const settings = (overrides: Partial<TeachSettings> = {}): TeachSettings => ({
  ...DEFAULT_TEACH_SETTINGS,
  ...overrides,
});

const STATE: PolicyState = {
  instruction: 'i need a red cotton shirt under 30 dollars',
  observation: 'WebShop [SEP] Search',
  admissible: ['search[red cotton shirt]', 'search[blue mug]', 'search[garden hose]'],
  step: 0,
  maxSteps: 15,
  previousActions: [],
};

function step(episodeId: string, groupId: string, reward: number, extra: Partial<PolicyStep> = {}): PolicyStep {
  return batchStep(STATE, episodeId, groupId, reward, { logProb: Math.log(1 / 3), ...extra });
}

const close = (a: number, b: number, digits = 5) => expect(a).toBeCloseTo(b, digits);

describe('teach: advantages as the update computes them', () => {
  it('GRPO: every step of a rollout gets (R − mean(R)) / std(R) of its group (hand-computed)', () => {
    // Group g1: returns 1, 0, 0.5, 0.5 (mean 0.5, population std √0.125); group g2: all equal → zeros.
    const steps = [
      step('e0', 'g1', 0),
      step('e0', 'g1', 1, { terminated: true }),
      step('e1', 'g1', 0, { truncated: true }),
      step('e2', 'g1', 0.5, { terminated: true }),
      step('e3', 'g1', 0.25),
      step('e3', 'g1', 0.25, { terminated: true }),
      step('f0', 'g2', 1, { terminated: true }),
      step('f1', 'g2', 1, { terminated: true }),
    ];
    const { advantages, targets } = teachAdvantages({ steps }, 'grpo', { gamma: 0.99, gaeLambda: 0.95 });
    const std = Math.sqrt(0.125);
    const hand = [0.5 / std, 0.5 / std, -0.5 / std, 0, 0, 0, 0, 0];
    advantages.forEach((a, i) => close(a, hand[i]));
    expect(targets).toBeUndefined();
  });

  it('PPO: GAE over the value head, and the return targets Â + V (hand-computed)', () => {
    // One episode: r = [0, 1], V = [0.2, 0.5], terminated at the end; γ = 0.9, λ = 0.8.
    // δ₁ = 1 − 0.5 = 0.5 → Â₁ = 0.5;  δ₀ = 0 + 0.9·0.5 − 0.2 = 0.25 → Â₀ = 0.25 + 0.9·0.8·0.5 = 0.61.
    const steps = [step('e0', 'g', 0, { value: 0.2 }), step('e0', 'g', 1, { value: 0.5, terminated: true })];
    const { advantages, targets } = teachAdvantages({ steps }, 'ppo', { gamma: 0.9, gaeLambda: 0.8 });
    close(advantages[0], 0.61);
    close(advantages[1], 0.5);
    close(targets![0], 0.81);
    close(targets![1], 1.0);
  });
});

describe('teach: before and after one update', () => {
  it('a planted GRPO group: the rewarded action gains probability, the unrewarded one loses it', async () => {
    const policy = new CandidatePolicy({ seed: 3 });
    const optimizer = makeOptimizer(0.01);
    const probe = await stepProbabilities(policy, [step('x', 'g', 0)]);
    const [p0, p1] = probe.probs[0];
    // Two one-step rollouts of the same task: the first took action 0 and succeeded, the second took action 1 and failed.
    const steps = [
      step('e0', 'g', 1, { action: 0, logProb: Math.log(p0), terminated: true }),
      step('e1', 'g', 0, { action: 1, logProb: Math.log(p1), terminated: true }),
    ];
    const before = await stepProbabilities(policy, steps);
    await grpoUpdate(policy, optimizer, { steps }, { updateEpochs: 2, entropyCoef: 0 });
    const after = await stepProbabilities(policy, steps);
    const { advantages } = teachAdvantages({ steps }, 'grpo', { gamma: 0.99, gaeLambda: 0.95 });
    const view = describeUpdate({ steps, algo: 'grpo', advantages, before, after });
    const [r0, r1] = view.groups[0].rollouts;
    expect(r0.steps[0].advantage).toBeGreaterThan(0);
    expect(r1.steps[0].advantage).toBeLessThan(0);
    expect(r0.steps[0].probabilities[0].after).toBeGreaterThan(r0.steps[0].probabilities[0].before);
    expect(r1.steps[0].probabilities[1].after).toBeLessThan(r1.steps[0].probabilities[1].before);
    expect(view.signedSteps).toBe(2);
    expect(view.alignedSteps).toBe(2);
    expect(r0.success).toBe(true);
    expect(r1.success).toBe(false);
    close(view.groups[0].meanReturn, 0.5);
    close(view.groups[0].stdReturn, 0.5);
    policy.dispose();
    optimizer.dispose();
  });
});

function checkUpdate(u: TeachUpdate, s: TeachSettings): void {
  expect(u.groups).toHaveLength(s.tasks);
  let steps = 0;
  for (const g of u.groups) {
    expect(g.instruction.length).toBeGreaterThan(0);
    expect(g.rollouts).toHaveLength(s.group);
    for (const r of g.rollouts) {
      expect(r.actions).toHaveLength(r.steps.length);
      close(
        r.return,
        r.steps.reduce((a, st) => a + st.reward, 0),
      );
      for (const st of r.steps) {
        steps++;
        const before = st.probabilities.reduce((a, p) => a + p.before, 0);
        const after = st.probabilities.reduce((a, p) => a + p.after, 0);
        close(before, 1, 4);
        close(after, 1, 4);
        expect(st.taken).toBeGreaterThanOrEqual(0);
        expect(st.taken).toBeLessThan(st.probabilities.length);
        expect(r.actions[st.t]).toBe(st.probabilities[st.taken].action);
      }
    }
  }
  expect(u.stepCount).toBe(steps);
}

describe('TeachSession', () => {
  it('GRPO on webshop (real): groups, group-normalised advantages, π before/after, tensors flat across updates', async () => {
    const s = settings({ seed: 2 });
    const session = await TeachSession.create(s);
    expect(session.experience).toBe('the real environment');
    const first = await session.step();
    const tensors = tf.memory().numTensors;
    const second = await session.step();
    const third = await session.step();
    expect(tf.memory().numTensors).toBe(tensors);
    expect(first.signedSteps).toBeGreaterThan(0);
    for (const [i, u] of [first, second, third].entries()) {
      checkUpdate(u, s);
      expect(u.iteration).toBe(i + 1);
      expect(u.metrics).toHaveProperty(['losses/policy_loss']);
      expect(u.metrics).toHaveProperty(['charts/success_rate']);
      // Each rollout's steps carry its group-normalised return.
      for (const g of u.groups) {
        for (const r of g.rollouts) {
          const expected = g.stdReturn === 0 ? 0 : (r.return - g.meanReturn) / (g.stdReturn + 1e-6);
          for (const st of r.steps) close(st.advantage, expected, 4);
        }
      }
      // The update raises the clipped surrogate: Σ Â·(log π_after(a) − log π_before(a)) > 0 over the taken actions,
      // and moves at least half of them the way their advantage points.
      if (u.signedSteps > 0) {
        expect(u.alignedSteps / u.signedSteps).toBeGreaterThanOrEqual(0.5);
        const gain = u.groups
          .flatMap((g) => g.rollouts.flatMap((r) => r.steps))
          .reduce(
            (sum, st) =>
              sum +
              st.advantage * (Math.log(st.probabilities[st.taken].after) - Math.log(st.probabilities[st.taken].before)),
            0,
          );
        expect(gain).toBeGreaterThan(0);
      }
    }
    // With signed advantages the update changes π somewhere (before was read on the old weights).
    const moved = [first, second, third].some(
      (u) =>
        u.signedSteps > 0 &&
        u.groups.some((g) =>
          g.rollouts.some((r) =>
            r.steps.some((st) => st.probabilities.some((p) => Math.abs(p.after - p.before) > 1e-4)),
          ),
        ),
    );
    expect(moved).toBe(true);
    session.dispose();
  });

  it('GRPO on webarena (real): the easy preset, group-normalised advantages over its listed actions', async () => {
    const s = settings({ env: 'webarena-lite-v0', seed: 3 });
    expect(teachConfig(s).preset).toBe('webarena-easy');
    const session = await TeachSession.create(s);
    const update = await session.step();
    checkUpdate(update, s);
    const actions = update.groups.flatMap((g) => g.rollouts.flatMap((r) => r.actions));
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.every((a) => /^(click|type|scroll|goto|go_back|stop)\b/.test(a))).toBe(true);
    session.dispose();
  });

  it('the same seed gives the same TeachUpdate; another seed a different one', async () => {
    const a = await TeachSession.create(settings({ seed: 5 }));
    const b = await TeachSession.create(settings({ seed: 5 }));
    const c = await TeachSession.create(settings({ seed: 6 }));
    const [ua, ub, uc] = [await a.step(), await b.step(), await c.step()];
    expect(JSON.stringify(ua)).toBe(JSON.stringify(ub));
    expect(JSON.stringify(ua)).not.toBe(JSON.stringify(uc));
    a.dispose();
    b.dispose();
    c.dispose();
  });

  it('PPO: values before/after, GAE advantages and targets consistent with the rewards and values', async () => {
    const s = settings({ algo: 'ppo', seed: 3, tasks: 1, group: 3 });
    const session = await TeachSession.create(s);
    const u = await session.step();
    checkUpdate(u, s);
    const { gamma, gaeLambda } = u.hyper;
    expect(u.metrics).toHaveProperty(['losses/value_loss']);
    for (const r of u.groups[0].rollouts) {
      const n = r.steps.length;
      let next = 0;
      for (let t = n - 1; t >= 0; t--) {
        const st = r.steps[t];
        expect(st.value).toBeTypeOf('number');
        expect(st.valueAfter).toBeTypeOf('number');
        // GAE (the trainer does not bootstrap a truncated episode: V after the last step counts as 0).
        const nextValue = t === n - 1 ? 0 : r.steps[t + 1].value!;
        const delta = st.reward + gamma * nextValue - st.value!;
        const advantage = delta + gamma * gaeLambda * next;
        close(st.advantage, advantage, 3);
        close(st.target!, st.advantage + st.value!, 3);
        next = st.advantage;
      }
    }
    // The value head was trained: V moved on some state.
    expect(u.groups[0].rollouts.some((r) => r.steps.some((st) => Math.abs(st.valueAfter! - st.value!) > 1e-5))).toBe(
      true,
    );
    session.dispose();
  });

  it('dream mode with the noisy oracle: labelled, and every step carries the oracle note (ε_R = 1 flips every outcome)', async () => {
    const session = await TeachSession.create(
      settings({ mode: 'dream', epsR: 1, epsP: 0, tasks: 1, group: 2, seed: 4 }),
    );
    expect(session.experience).toBe('dream: oracle (ε_R=1, ε_P=0)');
    const u = await session.step();
    expect(u.experience).toBe(session.experience);
    expect(u.metrics['budget/real_steps']).toBe(0);
    expect(u.metrics['budget/dream_steps']).toBeGreaterThan(0);
    const steps = u.groups.flatMap((g) => g.rollouts.flatMap((r) => r.steps));
    expect(steps.every((st) => typeof st.dreamNote === 'string' && st.dreamNote.startsWith('Oracle:'))).toBe(true);
    // Every rollout's outcome-bearing step was flipped, and the note says so.
    for (const r of u.groups[0].rollouts) {
      expect(r.steps[r.steps.length - 1].dreamNote).toMatch(/outcome flipped/);
    }
    session.dispose();
  });
});

describe('teach settings', () => {
  it('builds a small config from the env preset without evaluation or curriculum', () => {
    const c = teachConfig(settings({ env: 'household-v0', algo: 'ppo', mode: 'dream', epsR: 0.2, epsP: 0 }));
    expect(c.preset).toBe('household-easy');
    expect(c.tasksPerIteration).toBe(2);
    expect(c.groupSize).toBe(4);
    expect(c.evalInterval).toBe(0);
    expect(c.curriculum).toBe(false);
    expect(c.llm).toBe('oracle:0.2,0');
    expect(experienceLabel(c)).toBe('dream: oracle (ε_R=0.2, ε_P=0)');
  });

  it('refuses bad settings, naming each field and what is valid', () => {
    const bad = { ...settings(), env: 'chess-v0', algo: 'reinforce', group: 1, epsR: 2 } as unknown as TeachSettings;
    expect(() => validateTeachSettings(bad)).toThrow(ConfigError);
    try {
      validateTeachSettings(bad);
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/'env' must be one of webshop-lite-v0, household-v0, webarena-lite-v0; got "chess-v0"/);
      expect(message).toMatch(/'algo' must be one of grpo, ppo/);
      expect(message).toMatch(/'group' must be an integer in 2\.\.8; got 1/);
      expect(message).toMatch(/'epsR' must be a probability in 0\.\.1; got 2/);
    }
  });
});
