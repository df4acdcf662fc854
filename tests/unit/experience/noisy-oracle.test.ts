import { describe, expect, it } from 'vitest';
import { auditDetailed, auditExperienceModel, jaccard, tokenF1, tokens } from '../../../src/core/experience/audit';
import { corruptState, isOutcomeStep, NoisyOracleModel, oracleLabel } from '../../../src/core/experience/noisy-oracle';
import { getEnvDefinition } from '../../../src/core/envs/registry';
import { Rng } from '../../../src/core/rng';
import type { Step } from '../../../src/core/types';
import { AUDIT_REPORT_KEYS, contextAt, HOUSEHOLD, PERFECT_ORACLE_AUDIT, rollouts, WEBSHOP } from './fixtures';

describe('NoisyOracleModel', () => {
  it('is always labelled as the oracle with its two error rates', () => {
    expect(new NoisyOracleModel(WEBSHOP, { epsilonReward: 0.2, epsilonTransition: 0 }).label).toBe(
      'oracle (ε_R=0.2, ε_P=0)',
    );
    expect(oracleLabel(0, 0.15)).toBe('oracle (ε_R=0, ε_P=0.15)');
    expect(() => new NoisyOracleModel(WEBSHOP, { epsilonReward: 1.5, epsilonTransition: 0 })).toThrow(/probability/);
    expect(() => new NoisyOracleModel('nope-v0', { epsilonReward: 0, epsilonTransition: 0 })).toThrow(
      /Unknown environment/,
    );
  });

  it('flips the outcome at the end with ε_R: success → failure, terminal failure → success, last step → success', async () => {
    const always = new NoisyOracleModel(WEBSHOP, { epsilonReward: 1, epsilonTransition: 0 });
    const exact = new NoisyOracleModel(WEBSHOP, { epsilonReward: 0, epsilonTransition: 0 });
    const episodes = await rollouts(WEBSHOP, 12, 61_000);
    const success = episodes.find((t) => t.result.success)!;
    const lastSuccess = contextAt(success, success.steps.length - 1);
    expect(await exact.next(lastSuccess)).toMatchObject({ reward: 1, terminated: true });
    expect(await always.next(lastSuccess)).toMatchObject({
      reward: 0,
      terminated: true,
      score: 0,
      next: { admissible: [] },
    });
    // A mid-episode step is not outcome-bearing: never flipped.
    expect(await always.next(contextAt(success, 0))).toMatchObject({ reward: 0, terminated: false });

    const failedBuy = episodes.find((t) => t.result.terminate_reason === 'terminated');
    if (failedBuy)
      expect(await always.next(contextAt(failedBuy, failedBuy.steps.length - 1))).toMatchObject({
        reward: 1,
        terminated: true,
        score: 1,
      });

    const truncated = episodes.find((t) => t.result.terminate_reason === 'truncated')!;
    const lastStep = contextAt(truncated, truncated.steps.length - 1);
    expect(lastStep.history.length + 1).toBe(getEnvDefinition(WEBSHOP).defaultStepLimit);
    expect(await exact.next(lastStep)).toMatchObject({ reward: 0, terminated: false });
    const flipped = await always.next(lastStep);
    expect(flipped).toMatchObject({ reward: 1, terminated: true, next: { admissible: [] } });
    expect(flipped.reasoning).toMatch(/outcome flipped/);
  });

  it('is deterministic from its seed, whatever was asked before', async () => {
    const [episode] = await rollouts(HOUSEHOLD, 1, 62_000);
    const contexts = episode.steps.map((_, t) => contextAt(episode, t));
    const a = new NoisyOracleModel(HOUSEHOLD, { epsilonReward: 0.5, epsilonTransition: 0.5, seed: 3 });
    const b = new NoisyOracleModel(HOUSEHOLD, { epsilonReward: 0.5, epsilonTransition: 0.5, seed: 3 });
    const forward = [];
    for (const c of contexts) forward.push(await a.next(c));
    const backward = [];
    for (const c of contexts.slice().reverse()) backward.push(await b.next(c));
    const strip = (p: Awaited<ReturnType<typeof a.next>>) => ({ ...p, usage: null });
    expect(forward.map(strip)).toEqual(backward.reverse().map(strip));
    const other = new NoisyOracleModel(HOUSEHOLD, { epsilonReward: 0.5, epsilonTransition: 0.5, seed: 4 });
    const others = [];
    for (const c of contexts) others.push(await other.next(c));
    expect(others.map(strip)).not.toEqual(forward.map(strip));
  });

  it('corrupts next states with ε_P: drop, swap or splice — valid steps only', async () => {
    const noisy = new NoisyOracleModel(HOUSEHOLD, { epsilonReward: 0, epsilonTransition: 1 });
    const exact = new NoisyOracleModel(HOUSEHOLD, { epsilonReward: 0, epsilonTransition: 0 });
    const episodes = await rollouts(HOUSEHOLD, 4, 63_000);
    const kinds = new Set<string>();
    for (const episode of episodes) {
      for (let t = 0; t < Math.min(episode.steps.length, 12); t++) {
        const c = contextAt(episode, t);
        const [p, q] = [await noisy.next(c), await exact.next(c)];
        expect(p.reward).toBe(q.reward);
        expect(p.next.text !== q.next.text || p.next.admissible.join('\n') !== q.next.admissible.join('\n')).toBe(true);
        kinds.add(/dropped|swapped|spliced/.exec(p.reasoning)![0]);
      }
    }
    expect([...kinds].sort()).toEqual(['dropped', 'spliced', 'swapped']);
    // An inadmissible action stays the real env's no-op.
    const c = contextAt(episodes[0], 1);
    expect(await noisy.next({ ...c, action: 'fly to the moon' })).toMatchObject({
      actionValid: false,
      reward: 0,
      next: { text: c.state.text },
    });
  });

  it('corruptState keeps a running state playable and never touches a terminal one but its text', () => {
    const task = getEnvDefinition(HOUSEHOLD).generateTask(1, 0);
    const step: Step = {
      observation: 'You arrive at desk 1. On the desk 1, you see a pen 1.',
      admissible: ['examine desk 1', 'take pen 1 from desk 1'],
      action: 'x',
      reward: 0,
      terminated: false,
      truncated: false,
      valid: true,
    };
    const ctx = {
      state: { text: 'You are carrying: a pen 1.', admissible: ['examine pen 1', 'go to desk 1'], task },
      history: [step],
    };
    for (let i = 0; i < 30; i++) {
      const out = corruptState(
        {
          text: 'You open the drawer 1. In it, you see nothing.',
          admissible: ['close drawer 1', 'examine drawer 1'],
          task,
        },
        false,
        ctx,
        Rng.fromSeed(i),
      )!;
      expect(out.observation.admissible.length).toBeGreaterThan(0);
      const terminal = corruptState(
        { text: 'You put the pen 1 in/on the drawer 1.', admissible: [], task },
        true,
        ctx,
        Rng.fromSeed(i),
      )!;
      expect(terminal.what).toMatch(/spliced/);
      expect(terminal.observation.admissible).toEqual([]);
    }
  });
});

describe('fidelity audit', () => {
  it('similarity measures', () => {
    expect(tokens('Page 1 (Total results: 50) | B0ABC')).toEqual(['page', '1', 'total', 'results', '50', 'b0abc']);
    expect(tokenF1('a b c', 'a b c')).toBe(1);
    expect(tokenF1('', '')).toBe(1);
    expect(tokenF1('a', '')).toBe(0);
    expect(tokenF1('a a b', 'a b b')).toBeCloseTo(2 / 3);
    expect(jaccard([], [])).toBe(1);
    expect(jaccard(['a', 'b'], ['b', 'c'])).toBeCloseTo(1 / 3);
    expect(isOutcomeStep({ terminated: false, info: { valid: true, success: false, steps: 15 } }, 15, 15)).toBe(true);
    expect(isOutcomeStep({ terminated: false, info: { valid: false, success: false, steps: 15 } }, 15, 15)).toBe(false);
    expect(isOutcomeStep({ terminated: false, info: { valid: true, success: false, steps: 3 } }, 3, 15)).toBe(false);
  });

  it.each([WEBSHOP, HOUSEHOLD])('the oracle at (0, 0) is perfect on %s', async (envId) => {
    const report = await auditExperienceModel(new NoisyOracleModel(envId, { epsilonReward: 0, epsilonTransition: 0 }), {
      envId,
      n: 200,
      llm: 'oracle:0,0',
    });
    expect(report).toMatchObject({ env: envId, llm: 'oracle:0,0', n: 200, ...PERFECT_ORACLE_AUDIT });
    expect(Object.keys(report)).toEqual(AUDIT_REPORT_KEYS);
  });

  it('a dialled ε_R = 0.2 shows as reward accuracy 0.8 (within 4 standard errors, n = 400)', async () => {
    const details = await auditDetailed(new NoisyOracleModel(WEBSHOP, { epsilonReward: 0.2, epsilonTransition: 0 }), {
      envId: WEBSHOP,
      n: 400,
    });
    const m = details.outcomeSteps;
    expect(m).toBeGreaterThan(150); // half the transitions are episode ends, by design
    const se = Math.sqrt((0.8 * 0.2) / m);
    expect(Math.abs(details.report.reward_accuracy! - 0.8)).toBeLessThan(4 * se);
    // Over all transitions the same error is diluted by the mid-episode steps (why the audit measures outcome steps).
    expect(details.rewardAccuracyAllSteps).toBeGreaterThan(details.report.reward_accuracy!);
    expect(details.report.valid_agreement).toBe(1);
    expect(details.report.observation_f1).toBe(1);
    expect(details.probes).toBeGreaterThan(0);
  });

  it('ε_P shows in Jaccard and F1, not in the reward accuracy', async () => {
    const report = await auditExperienceModel(
      new NoisyOracleModel(HOUSEHOLD, { epsilonReward: 0, epsilonTransition: 0.5 }),
      { envId: HOUSEHOLD, n: 120 },
    );
    expect(report.reward_accuracy).toBe(1);
    expect(report.admissible_jaccard * report.observation_f1).toBeLessThan(0.97);
  });
});
