/**
 * The line charts as plain data (state/shared/line-chart.ts): a live metric's lines, caption and data-*
 * attributes; the experience model's loss chart; and what rebuilds a plot (its layout) versus
 * what only feeds it new data (the values).
 */
import { describe, expect, it } from 'vitest';
import { lossChart, metricChart, plotData, plotLayoutKey } from '../../../src/app/state/shared/line-chart';
import { addBatch, addEpoch, EMPTY_LOSS } from '../../../src/app/state/model/expmodel-view';
import { smooth } from '../../../src/app/state/shared/smoothing';

describe('a metric chart', () => {
  it('draws the raw values faint and the smoothed curve bold; the caption has the latest value and the count', () => {
    const values = [0.1, null, 0.3, 0.5];
    const chart = metricChart({
      title: 'Training success',
      metric: 'charts/success_rate',
      x: [1, 2, 3, 4],
      values,
      range: [0, 1],
    });
    expect(chart.plot.lines.map((l) => [l.label, l.width, l.alpha, l.points])).toEqual([
      ['raw', 1, 0.3, 3],
      ['smoothed', 2, undefined, undefined],
    ]);
    expect(chart.plot.lines[1].values).toEqual(smooth(values, 0.6));
    expect(chart.plot.lines[0].colour).toEqual({ cssVar: '--accent', fallback: '#2f6fde' });
    expect(chart.plot).toMatchObject({ xLabel: 'iteration', range: [0, 1], height: 170, compact: false });
    expect(chart.summary).toBe('0.500 at iteration 4 · 3 points');
    expect(chart.attributes).toEqual({
      'data-metric': 'charts/success_rate',
      'data-axis': 'iteration',
      'data-points': 3,
      'data-smoothed': '0.6',
    });
    expect(chart).toMatchObject({
      title: 'Training success',
      subtitle: { text: 'charts/success_rate', code: true },
      dream: false,
      label: 'Training success chart',
    });
  });

  it('never smooths a sparse eval series, and draws a dream-judged metric in the dream colour', () => {
    const evalChart = metricChart({
      title: 'Held-out',
      metric: 'eval/success_rate',
      x: [0, 10],
      values: [null, 0.25],
      xLabel: 'Real steps spent',
    });
    expect(evalChart.plot.lines.map((l) => [l.label, l.width, l.points])).toEqual([['measured', 2, 5]]);
    expect(evalChart.attributes['data-smoothed']).toBe('never');
    expect(evalChart.summary).toBe('0.250 at Real steps spent 10 · 1 points · not smoothed');
    const dream = metricChart({ title: 'Dream', metric: 'dream/success_rate', x: [], values: [] });
    expect(dream.dream).toBe(true);
    expect(dream.plot.lines.every((l) => JSON.stringify(l.colour).includes('--dream'))).toBe(true);
    expect(dream.summary).toBe('no data yet · 0 points');
  });
});

describe('the loss chart', () => {
  it('has the running loss, the epoch train and validation losses (dashed), x in epochs', () => {
    expect(lossChart(EMPTY_LOSS).summary).toBe('no epoch yet · 0 epochs, 0 batch points');
    const batch = {
      kind: 'batch',
      epoch: 1,
      epochs: 2,
      batch: 1,
      batches: 2,
      loss: 2.5,
      tokensPerSecond: 1,
      speedBatches: 1,
      epochTokens: 1,
      secondsLeft: 1,
      epochSecondsLeft: 1,
    } as const;
    let series = addBatch(EMPTY_LOSS, batch);
    series = addBatch(series, { ...batch, batch: 2, loss: 2 });
    series = addEpoch(series, { epoch: 1, trainLoss: 2.1, validationLoss: 2.25, tokensPerSecond: 1, seconds: 1 });
    const chart = lossChart(series);
    expect(chart.plot.lines.map((l) => [l.label, l.dash])).toEqual([
      ['train (running, per batch)', undefined],
      ['train (epoch)', undefined],
      ['validation (epoch)', [8, 4]],
    ]);
    expect(chart.plot).toMatchObject({ xLabel: 'epoch', xDecimals: 2, yLabel: 'loss (nats/token)', height: 220 });
    expect(plotData(chart.plot)).toEqual([
      [0.5, 1],
      [2.5, 2],
      [null, 2.1],
      [null, 2.25],
    ]);
    expect(chart.summary).toBe('epoch 1: train 2.100, validation 2.250 · 1 epochs, 2 batch points');
    expect(chart.attributes).toEqual({ 'data-testid': 'loss-chart', 'data-epochs': 1, 'data-batches': 2 });
  });
});

describe('a plot is rebuilt on a change of layout only', () => {
  const base = { title: 't', metric: 'charts/success_rate', x: [1, 2], values: [0.5, 0.75] };
  const key = (over: Partial<Parameters<typeof metricChart>[0]>) =>
    plotLayoutKey(metricChart({ ...base, ...over }).plot);

  it('new values or smoothing feed the same chart; a new range, height, axis or line set rebuilds it', () => {
    expect(key({ x: [1, 2, 3], values: [0.5, 0.75, 1] })).toBe(key({}));
    expect(key({ smoothing: 0.9 })).toBe(key({}));
    expect(key({ range: [0, 1] })).toBe(key({ range: [0, 1] }));
    for (const over of [
      { range: [0, 1] as [number, number] },
      { height: 105 },
      { xLabel: 'Real steps spent' },
      { compact: true },
      { metric: 'eval/success_rate' },
      { metric: 'dream/success_rate' },
    ]) {
      expect(key(over), JSON.stringify(over)).not.toBe(key({}));
    }
  });
});
