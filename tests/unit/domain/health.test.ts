/**
 * A domain's experience model is reported as failed, never as a success, when its dream mostly
 * ends episodes at the first step, its verdict head is at chance, or its audit's terminated
 * accuracy is below MIN_TERMINATED_ACCURACY (issue 29: dream success 1 at mean length 1,
 * terminated accuracy 0.156; issue 45: 75 % first-step ends, a verdict head at 0.48).
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvaluation } from '../../../src/core/domain/evaluate';
import {
  domainHealth,
  dreamStopReason,
  FIRST_STEP_FAILURE_SHARE,
  MAX_DREAM_DISAGREEMENT,
  MIN_TERMINATED_ACCURACY,
} from '../../../src/core/domain/health';
import type { IterationRecord } from '../../../src/core/train/loop';
import type { Trajectory } from '../../../src/core/types';

function evaluation(o: { firstStep?: number | null; terminated?: number | null; n?: number }): DomainEvaluation {
  return {
    dream: {
      episodes: 10,
      success_rate: 1,
      mean_return: 1,
      mean_length: 1,
      invalid_rate: 0,
      first_step_share: o.firstStep === undefined ? 0 : o.firstStep,
    },
    agreement: { agreement: null, usable_steps: 0, held_out_steps: 0, chance: null },
    audit: {
      env: 'byo:app',
      llm: 'learned:x',
      n: o.n ?? 40,
      valid_agreement: 1,
      reward_accuracy: 1,
      outcome_steps: 8,
      terminated_accuracy: o.terminated === undefined ? 1 : o.terminated,
      terminated_known: 40,
      observation_f1: 0.5,
      with_next_observation: 40,
      admissible_jaccard: null,
      with_next_admissible: 0,
      invalid_rate: 0,
      tokens_per_transition: 100,
      ms_per_transition: 1,
    },
  };
}

/** Demonstrated episodes of `length` steps each. */
function demonstrated(length: number, n = 10): Trajectory[] {
  return Array.from({ length: n }, () => ({ steps: new Array(length).fill({}) }) as Trajectory);
}

function history(lengths: number[]): IterationRecord[] {
  return lengths.map((length, i) => ({
    iteration: i + 1,
    metrics: { 'dream/success_rate': 1, 'dream/episode_length': length, 'dream/truncated_rate': 0 },
  }));
}

describe('domainHealth', () => {
  it('a healthy model: status ok, no problem', () => {
    expect(domainHealth(history([4, 5]), evaluation({ firstStep: 0.1 }), demonstrated(5))).toEqual({
      status: 'ok',
      problems: [],
    });
  });

  it('fails when most held-out dreamed episodes end at its first step (and the data lasts longer)', () => {
    const health = domainHealth(history([3, 2]), evaluation({ firstStep: FIRST_STEP_FAILURE_SHARE }), demonstrated(4));
    expect(health.status).toBe('failed');
    expect(health.problems[0]).toMatchObject({ kind: 'first-step', severity: 'failed' });
    expect(health.problems[0].message).toMatch(
      /50% of the 10 held-out dreamed episodes ended at their first step \(under 50% allowed\).*Fix:/,
    );
    // Just under the threshold, or a domain whose episodes really last one step: no failure.
    expect(domainHealth([], evaluation({ firstStep: 0.45 }), demonstrated(4)).status).toBe('ok');
    expect(domainHealth([], evaluation({ firstStep: 1 }), demonstrated(1)).status).toBe('ok');
  });

  it("reuses the trainer's dream-health check: every training episode ended at step 1 fails, said once", () => {
    const health = domainHealth(history([1, 1, 1]), evaluation({ firstStep: 1 }), demonstrated(4));
    expect(health.status).toBe('failed');
    expect(health.problems.filter((p) => p.kind === 'first-step')).toHaveLength(1);
  });

  it('fails below the terminated accuracy threshold, names the figure and the fix', () => {
    const health = domainHealth(history([5]), evaluation({ terminated: 0.156 }), demonstrated(5));
    expect(health.status).toBe('failed');
    expect(health.problems).toHaveLength(1);
    expect(health.problems[0].message).toMatch(
      new RegExp(`terminated accuracy is 0.156 on 40 held-out transitions \\(at least ${MIN_TERMINATED_ACCURACY}`),
    );
    expect(health.problems[0].message).toMatch(/expmodel train --domain/);
    expect(
      domainHealth(history([5]), evaluation({ terminated: MIN_TERMINATED_ACCURACY }), demonstrated(5)).status,
    ).toBe('ok');
  });

  it('says when action agreement is not clearly above chance, and when the dream does not transfer', () => {
    const near = evaluation({});
    near.agreement = { agreement: 0.15, usable_steps: 127, held_out_steps: 127, chance: 0.125 };
    const health = domainHealth(history([5]), near, demonstrated(5));
    expect(health.status).toBe('ok');
    expect(health.problems).toMatchObject([{ kind: 'near-chance-agreement', severity: 'warning' }]);
    expect(health.problems[0].message).toMatch(/0\.150 on 127 held-out steps is not clearly above chance 0\.125/);
    // 0.317 on 429 steps against 0.125 is about 12 standard errors: learned.
    near.agreement = { agreement: 0.317, usable_steps: 429, held_out_steps: 429, chance: 0.125 };
    expect(domainHealth(history([5]), near, demonstrated(5)).problems).toEqual([]);
    near.real = {
      env: 'household-v0',
      split: 'dev',
      difficulty: 0.5,
      episodes: 100,
      success_rate: 0,
      score: 0,
      mean_steps: 50,
    };
    expect(domainHealth(history([5]), near, demonstrated(5)).problems).toMatchObject([
      { kind: 'no-transfer', severity: 'warning' },
    ]);
    near.real.success_rate = 0.6;
    expect(domainHealth(history([5]), near, demonstrated(5)).problems).toEqual([]);
  });

  it('warns when the held-out dream judges no task a success, or runs near the step limit (issue 45: 40 episodes)', () => {
    // The 40-episode ETO run: dream success 0 on 8 held-out tasks, mean length 42.6 of 50; reported ok with no warning.
    const wandering = evaluation({});
    wandering.dream = { ...wandering.dream, episodes: 8, success_rate: 0, mean_length: 45.5 };
    const health = domainHealth([], wandering, demonstrated(5), null, 50);
    expect(health.status).toBe('ok'); // warnings: no real env says the agent failed, but nothing says it works
    expect(health.problems.map((p) => [p.kind, p.severity])).toEqual([
      ['no-success', 'warning'],
      ['step-limit', 'warning'],
    ]);
    expect(health.problems[0].message).toMatch(/^The dream judged none of the 8 held-out tasks a success/);
    expect(health.problems[1].message).toMatch(/lasted 45\.5 steps on average, near the step limit of 50/);
    // 44 of 50 is under 90 %; without a step limit nothing is said of the length.
    wandering.dream = { ...wandering.dream, success_rate: 0.25, mean_length: 44 };
    expect(domainHealth([], wandering, demonstrated(5), null, 50).problems).toEqual([]);
    wandering.dream = { ...wandering.dream, mean_length: 50 };
    expect(domainHealth([], wandering, demonstrated(5)).problems).toEqual([]);
  });

  it('no measurable ending (no outcomes recorded): a warning, not a success claim of its own', () => {
    const health = domainHealth(history([5]), evaluation({ terminated: null }), demonstrated(5));
    expect(health.status).toBe('ok');
    expect(health.problems).toMatchObject([{ kind: 'unaudited-endings', severity: 'warning' }]);
  });

  it('a dream that mostly ends at its first step is a failed model (issue 45: 75 %, mean length 1.25)', () => {
    const health = domainHealth(history([1.25, 1.25]), evaluation({ firstStep: 0.75 }), demonstrated(5));
    expect(FIRST_STEP_FAILURE_SHARE).toBeLessThanOrEqual(0.5);
    expect(health.status).toBe('failed');
    expect(health.problems).toEqual([expect.objectContaining({ kind: 'first-step', severity: 'failed' })]);
    expect(health.problems[0].message).toMatch(/75% of the 10 held-out dreamed episodes ended at their first step/);
    // Under half is not "mostly": the model may stand (the data's own episodes decide the rest).
    expect(domainHealth(history([3, 3]), evaluation({ firstStep: 0.4 }), demonstrated(5)).status).toBe('ok');
  });

  it('a verdict head at chance is a failed model, never ok (issue 45: balanced accuracy 0.48)', () => {
    const ok = evaluation({});
    const atChance = domainHealth(history([4]), ok, demonstrated(5), {
      successes: 122,
      failures: 8,
      balancedAccuracy: 0.48,
    });
    expect(atChance.status).toBe('failed');
    expect(atChance.problems).toEqual([expect.objectContaining({ kind: 'verdict-at-chance', severity: 'failed' })]);
    expect(atChance.problems[0].message).toMatch(/balanced accuracy is 0\.480 .* 122 successful and 8 failed/);
    // Learned (the 200-episode household export's head: 0.94 on 122 / 8), or none fitted: no verdict problem.
    const learned = { successes: 122, failures: 8, balancedAccuracy: 0.9375 };
    expect(domainHealth(history([4]), ok, demonstrated(5), learned).status).toBe('ok');
    expect(domainHealth(history([4]), ok, demonstrated(5), null).status).toBe('ok');
    // Few failed endings widen the bar: 0.7 on 3 failures is still within chance's noise.
    const few = { successes: 50, failures: 3, balancedAccuracy: 0.7 };
    expect(domainHealth(history([4]), ok, demonstrated(5), few).status).toBe('failed');
  });
});

describe('dreamStopReason: when the dream turned unhealthy, from its own metrics', () => {
  const iteration = (i: number, metrics: Record<string, number>): IterationRecord => ({
    iteration: i,
    metrics: { 'dream/success_rate': 0.5, 'dream/episode_length': 3, 'dream/truncated_rate': 0, ...metrics },
  });

  it('two iterations in a row that end every episode at once, or never, or whose verdict members disagree', () => {
    const healthy = [iteration(1, {}), iteration(2, { 'dream/disagreement': 0.1 })];
    expect(dreamStopReason(healthy)).toBeNull();
    expect(dreamStopReason([iteration(1, { 'dream/episode_length': 1 })])).toBeNull(); // one alone: bad luck
    const atOnce = [
      ...healthy,
      iteration(3, { 'dream/episode_length': 1 }),
      iteration(4, { 'dream/episode_length': 1 }),
    ];
    expect(dreamStopReason(atOnce)).toMatchObject({ kind: 'first-step', severity: 'failed' });
    const never = [iteration(1, { 'dream/truncated_rate': 1 }), iteration(2, { 'dream/truncated_rate': 1 })];
    expect(dreamStopReason(never)).toMatchObject({ kind: 'step-limit' });
    const apart = MAX_DREAM_DISAGREEMENT + 0.1;
    const split = [iteration(1, { 'dream/disagreement': apart }), iteration(2, { 'dream/disagreement': apart })];
    expect(dreamStopReason(split)).toMatchObject({ kind: 'ensemble-disagreement' });
    expect(dreamStopReason([split[0], healthy[1]])).toBeNull();
  });
});
