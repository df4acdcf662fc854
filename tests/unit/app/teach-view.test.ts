import { describe, expect, it } from 'vitest';
import { DEFAULT_TEACH_SETTINGS, type TeachStep, type TeachUpdate } from '../../../src/core/train/teach';
import {
  alignmentWhy,
  groupBaseline,
  mostChangedStep,
  percent,
  probabilityRows,
  sameSettings,
  signClass,
  signed,
  stepAt,
  teachSettingsFromQuery,
  teachSettingsToQuery,
  updateSummary,
} from '../../../src/app/state/teach/teach-view';

function tstep(t: number, taken: number, before: number[], after: number[], advantage: number): TeachStep {
  return {
    t,
    observation: `obs ${t}`,
    taken,
    reward: 0,
    advantage,
    probabilities: before.map((b, j) => ({ action: `a${j}`, before: b, after: after[j] })),
  };
}

function update(overrides: Partial<TeachUpdate> = {}): TeachUpdate {
  return {
    iteration: 3,
    algo: 'grpo',
    mode: 'real',
    env: 'webshop-lite-v0',
    preset: 'webshop-easy',
    experience: 'the real environment',
    groups: [
      {
        groupId: 'g',
        instruction: 'buy a mug',
        meanReturn: 0.5,
        stdReturn: 0.5,
        rollouts: [
          {
            episodeId: 'e0',
            index: 0,
            actions: ['a0', 'a1'],
            return: 1,
            success: true,
            steps: [tstep(0, 0, [0.5, 0.5], [0.52, 0.48], 1), tstep(1, 1, [0.5, 0.5], [0.4, 0.6], 1)],
          },
          {
            episodeId: 'e1',
            index: 1,
            actions: ['a0'],
            return: 0,
            success: false,
            steps: [tstep(0, 0, [0.5, 0.5], [0.45, 0.55], -1)],
          },
        ],
      },
    ],
    stepCount: 3,
    signedSteps: 3,
    alignedSteps: 3,
    metrics: {},
    hyper: {
      learningRate: 3e-3,
      clipEpsilon: 0.2,
      updateEpochs: 4,
      minibatches: 1,
      entropyCoef: 0.001,
      gamma: 0.99,
      gaeLambda: 0.95,
      valueCoef: 0.5,
    },
    ...overrides,
  };
}

describe('teach settings in the URL', () => {
  it('round-trips through the query string', () => {
    const s = {
      ...DEFAULT_TEACH_SETTINGS,
      env: 'household-v0',
      algo: 'ppo' as const,
      mode: 'dream' as const,
      seed: 42,
      epsR: 0.3,
      epsP: 0,
      tasks: 3,
      group: 6,
    };
    const back = teachSettingsFromQuery(teachSettingsToQuery(s));
    expect(back).toEqual(s);
    expect(sameSettings(back, s)).toBe(true);
    expect(sameSettings(back, { ...s, seed: 43 })).toBe(false);
  });

  it('falls back to the defaults for missing or bad values', () => {
    expect(teachSettingsFromQuery('')).toEqual(DEFAULT_TEACH_SETTINGS);
    const s = teachSettingsFromQuery('env=chess&algo=reinforce&mode=s2r&seed=-1&epsR=2&epsP=x&tasks=9&group=1');
    expect(s).toEqual(DEFAULT_TEACH_SETTINGS);
  });
});

describe('teach view helpers', () => {
  it('picks the step whose taken action moved most, and finds it again', () => {
    const u = update();
    expect(mostChangedStep(u)).toEqual({ group: 0, rollout: 0, t: 1 });
    expect(stepAt(u, { group: 0, rollout: 0, t: 1 })?.observation).toBe('obs 1');
    expect(stepAt(u, { group: 0, rollout: 5, t: 0 })).toBeNull();
    expect(mostChangedStep(update({ groups: [] }))).toBeNull();
  });

  it('rows mark the taken action and carry the change', () => {
    const rows = probabilityRows(tstep(0, 1, [0.25, 0.75], [0.2, 0.8], 0.5));
    expect(rows.map((r) => r.taken)).toEqual([false, true]);
    expect(rows[1].change).toBeCloseTo(0.05, 10);
    expect(rows[0].change).toBeCloseTo(-0.05, 10);
  });

  it('formats signs with a real minus, and classes for colouring', () => {
    expect(signed(0.714)).toBe('+0.71');
    expect(signed(-0.5)).toBe('−0.50');
    expect(signed(-0.0001)).toBe('0.00');
    expect(signClass(0.3)).toBe('pos');
    expect(signClass(-0.3)).toBe('neg');
    expect(signClass(0.001)).toBe('zero');
    expect(percent(0.1234)).toBe('12.3%');
  });

  it('sums an update up, and says when there is no learning signal', () => {
    expect(updateSummary(update())).toBe(
      'Update 3 (GRPO, the real environment): 1 task × 2 rollouts, 3 steps, 1 of 2 rollouts succeeded. ' +
        "Of the 3 steps with a non-zero advantage, 3 had the taken action's probability move the way its advantage points.",
    );
    expect(updateSummary(update({ signedSteps: 0, alignedSteps: 0 }))).toMatch(
      /every advantage is 0: this update has no learning signal/,
    );
    expect(groupBaseline(0, 0)).toMatch(/All returns are 0.00/);
    expect(groupBaseline(0.5, 0.5)).toBe(
      "Mean return 0.50, std 0.50: GRPO's advantage of a rollout is (return − 0.50) / 0.50.",
    );
  });

  it('says in one sentence why not every step moved the way its advantage points', () => {
    expect(alignmentWhy(update())).toBe(''); // all 3 did: nothing to explain
    const grpo = updateSummary(update({ signedSteps: 101, alignedSteps: 49 }));
    const why = alignmentWhy(update({ signedSteps: 101, alignedSteps: 49 }));
    expect(grpo).toBe(
      'Update 3 (GRPO, the real environment): 1 task × 2 rollouts, 3 steps, 1 of 2 rollouts ' +
        'succeeded. ' +
        "Of the 101 steps with a non-zero advantage, 49 had the taken action's probability move the way its advantage " +
        `points. ${why}`,
    );
    expect(why).toBe(
      "The other 52 did not because the update moves weights that all steps share, so each step's " +
        "probability is also pulled by the other steps' gradients (the same state and action can get opposite " +
        "advantages in two rollouts), the softmax over the state's actions (raising another action's score lowers " +
        "this one) and the entropy bonus, while the clip stops a step's own push once its ratio leaves 1 ± 0.2.",
    );
    expect(why).not.toMatch(/minibatch/); // GRPO uses its group-normalised advantages as they are
    const ppo = alignmentWhy(update({ algo: 'ppo', signedSteps: 10, alignedSteps: 7 }));
    expect(ppo).toMatch(/^The other 3 did not because .*; PPO also normalises the advantages per minibatch, /);
    expect(ppo).toMatch(/, which can flip a small one's sign\.$/);
    const noEntropy = update({ signedSteps: 4, alignedSteps: 3 });
    expect(alignmentWhy({ ...noEntropy, hyper: { ...noEntropy.hyper, entropyCoef: 0 } })).not.toMatch(/entropy/);
  });
});
