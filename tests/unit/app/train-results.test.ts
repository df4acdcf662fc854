import { describe, expect, it } from 'vitest';
import {
  dreamStepsSoFar,
  isShareMetric,
  iterationNote,
  lastValue,
  percentText,
  realStepBudget,
} from '../../../src/app/state/train/train-results';
import type { TrainConfig } from '../../../src/core/train/config';
import type { LiveProgress } from '../../../src/core/train/progress';

const config = (mode: TrainConfig['mode']) =>
  ({ mode, realStepBudget: 1000, s2rRealFraction: 0.25 }) as unknown as TrainConfig;

describe('the Train counters', () => {
  it("state a mode's real-step budget: none for a dream, S2R's real share", () => {
    expect(realStepBudget(config('real'))).toBe(1000);
    expect(realStepBudget(config('dream'))).toBe(0);
    expect(realStepBudget(config('s2r'))).toBe(250);
  });

  it("say an S2R run's iterations past the dream are real", () => {
    expect(iterationNote('real', 3, 12)).toBe('of 12');
    expect(iterationNote(undefined, 0, 0)).toBe('of —');
    expect(iterationNote('s2r', 13, 12)).toBe('12 dreamed, then real');
    expect(iterationNote('s2r', 12, 12)).toBe('of 12');
  });

  it('read the last recorded rate as a percentage', () => {
    expect(lastValue([0.1, 0.25, null])).toBe(0.25);
    expect(lastValue(undefined)).toBeNull();
    expect(percentText(0.254)).toBe('25%');
    expect(percentText(null)).toBe('—');
    expect(isShareMetric('dream/invalid_rate')).toBe(true);
    expect(isShareMetric('curriculum/synthetic_share')).toBe(true);
    expect(isShareMetric('losses/entropy')).toBe(false);
  });

  it('count the dream steps of the iteration in flight only while it dreams the next iteration', () => {
    const status = { iteration: 2, dreamSteps: 100 };
    const live = { phase: 'dream', iteration: 3, done: 7 } as LiveProgress;
    expect(dreamStepsSoFar(status, live, true)).toBe(107);
    expect(dreamStepsSoFar(status, live, false)).toBe(100);
    expect(dreamStepsSoFar(status, { ...live, phase: 'real' }, true)).toBe(100);
    expect(dreamStepsSoFar(status, { ...live, iteration: 2 }, true)).toBe(100);
    expect(dreamStepsSoFar(status, null, true)).toBe(100);
  });
});
