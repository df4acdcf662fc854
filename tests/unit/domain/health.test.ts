/**
 * A domain's experience model is reported as failed, never as a success, when its dream ends
 * (nearly) every episode at the first step or its audit's terminated accuracy is below
 * MIN_TERMINATED_ACCURACY (issue 29: dream success 1 at mean length 1, terminated accuracy 0.156).
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvaluation } from '../../../src/core/domain/evaluate';
import { domainHealth, FIRST_STEP_FAILURE_SHARE, MIN_TERMINATED_ACCURACY } from '../../../src/core/domain/health';
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

  it('fails when nearly every held-out dreamed episode ends at its first step (and the data lasts longer)', () => {
    const health = domainHealth(history([3, 2]), evaluation({ firstStep: FIRST_STEP_FAILURE_SHARE }), demonstrated(4));
    expect(health.status).toBe('failed');
    expect(health.problems[0]).toMatchObject({ kind: 'first-step', severity: 'failed' });
    expect(health.problems[0].message).toMatch(
      /90% of the 10 held-out dreamed episodes ended at their first step.*Fix:/,
    );
    // Just under the threshold, or a domain whose episodes really last one step: no failure.
    expect(domainHealth([], evaluation({ firstStep: 0.85 }), demonstrated(4)).status).toBe('ok');
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

  it('no measurable ending (no outcomes recorded): a warning, not a success claim of its own', () => {
    const health = domainHealth(history([5]), evaluation({ terminated: null }), demonstrated(5));
    expect(health.status).toBe('ok');
    expect(health.problems).toMatchObject([{ kind: 'unaudited-endings', severity: 'warning' }]);
  });
});
