import { describe, expect, it } from 'vitest';
import { chartAxes, chartX } from '../../../src/app/state/train/train-charts';

const series = {
  iterations: [1, 2, 3],
  values: {
    'budget/real_steps': [40, null, 130],
    'budget/dream_steps': [0, 0, 0],
    'perf/iteration_seconds': [1.25, 2, null],
    'charts/success_rate': [0, 0.5, 1],
  },
};

describe('the Train charts x axes', () => {
  it('offers the axes a mode spends: no real steps for a dream, no dream steps for a real run', () => {
    expect(chartAxes('real').map((a) => a.axis)).toEqual(['iteration', 'real_steps', 'wall_time']);
    expect(chartAxes('dream').map((a) => a.axis)).toEqual(['iteration', 'dream_steps', 'wall_time']);
    expect(chartAxes('s2r').map((a) => a.axis)).toEqual(['iteration', 'real_steps', 'dream_steps', 'wall_time']);
  });

  it('reads the x values as Compare does: counters carried over a gap, wall time summed', () => {
    expect(chartX(series, 'iteration')).toEqual([1, 2, 3]);
    expect(chartX(series, 'real_steps')).toEqual([40, 40, 130]);
    expect(chartX(series, 'dream_steps')).toEqual([0, 0, 0]);
    expect(chartX(series, 'wall_time')).toEqual([1.3, 3.3, 3.3]);
  });
});
