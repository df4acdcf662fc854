/**
 * The Train page's chart x axes: Compare's axes (compare.ts X_AXES, the same xValues rule), on the
 * live metric series of the run on screen.
 */
import type { TrainParams } from './train-params';
import type { MetricSeries } from './train.svelte';
import { X_AXES, xValues, type XAxis } from '../compare/compare';
import type { IterationRecord } from '../../../core/train/loop';

/** The metrics an x axis other than the iteration reads (compare.ts xValues). */
const AXIS_METRICS = ['budget/real_steps', 'budget/dream_steps', 'perf/iteration_seconds'] as const;

/**
 * The x axes that say something in a mode: a dream spends no real steps and a real run dreams
 * none, so each mode offers the iteration, the steps it spends and the wall time (S2R both).
 */
export function chartAxes(mode: TrainParams['mode']): (typeof X_AXES)[number][] {
  return X_AXES.filter((a) =>
    a.axis === 'real_steps' ? mode !== 'dream' : a.axis === 'dream_steps' ? mode !== 'real' : true,
  );
}

/** The Train charts' x values on an axis: the series read as iteration records (the same rule as Compare's). */
export function chartX(series: MetricSeries, axis: XAxis): number[] {
  if (axis === 'iteration') return series.iterations;
  return xValues(seriesRecords(series, AXIS_METRICS), axis);
}

/** A series back as iteration records (of `metrics`, default all): what core's readers of a history take. */
export function seriesRecords(
  series: MetricSeries,
  metrics: readonly string[] = Object.keys(series.values),
): IterationRecord[] {
  return series.iterations.map((iteration, i) => ({
    iteration,
    metrics: Object.fromEntries(
      metrics.flatMap((m) => {
        const v = series.values[m]?.[i];
        return typeof v === 'number' ? [[m, v]] : [];
      }),
    ),
  }));
}
