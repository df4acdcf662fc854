/**
 * What a line chart shows, as plain data (no Svelte, no DOM; unit-tested in Node): the plot — x,
 * the lines and their style, the axes — and the figure around it — title, caption, the data-*
 * attributes the tests read. LineChart.svelte renders a LineChartSpec; line-chart.svelte.ts
 * draws its plot with uPlot. The builders below make the app's two kinds: a live metric
 * (metricChart) and the experience model's loss (lossChart). CompareChart draws a PlotSpec too.
 */
import { epochPoints, type LossSeries } from '../model/expmodel-view';
import { smooth, smoothable } from './smoothing';

/** A colour of the theme (read from its CSS variable when the chart is drawn), or a fixed one. */
export type ChartColour = { cssVar: string; fallback: string } | string;

export interface ChartLine {
  label: string;
  values: (number | null)[];
  colour: ChartColour;
  width: number;
  /** Faint lines (the raw values under a smoothed curve). */
  alpha?: number;
  /** A dash pattern, so that colour is not the only cue. */
  dash?: number[];
  /** The size of the drawn points; none drawn when absent. */
  points?: number;
}

export interface PlotSpec {
  x: number[];
  /** The x axis title, and the legend's name of x. */
  xLabel: string;
  /** Where x ticks may fall (the theme's default: whole numbers, or free for wall time). */
  xIncrements?: number[];
  /** Decimals of x in the legend (as given when absent). */
  xDecimals?: number;
  yLabel?: string;
  /** A fixed y range (rates: [0, 1]); auto when absent. */
  range?: [number, number];
  height: number;
  /** A small card's plot: no legend and no x axis title, a narrower y axis. */
  compact?: boolean;
  lines: ChartLine[];
}

export interface LineChartSpec {
  plot: PlotSpec;
  title: string;
  /** Beside the title: a metric's name (`code`) or a short note. */
  subtitle: { text: string; code: boolean };
  /** The caption's end: the latest figures and the point counts (the chart's text alternative). */
  summary: string;
  /** A dream-judged metric: titled in the dream's colour. */
  dream: boolean;
  label: string;
  /** The figure's data-* attributes (what tests and screenshots read). */
  attributes: Record<`data-${string}`, string | number>;
}

/** What a change of rebuilds the plot (anything but the data, which is only set): the spec less x and the values. */
export function plotLayoutKey(plot: PlotSpec): string {
  const { x: _x, lines, ...layout } = plot;
  return JSON.stringify({ ...layout, lines: lines.map(({ values: _values, ...style }) => style) });
}

/** uPlot's aligned data: x, then each line's values. */
export function plotData(plot: PlotSpec): (number | null)[][] {
  return [plot.x, ...plot.lines.map((line) => line.values)];
}

const ACCENT: ChartColour = { cssVar: '--accent', fallback: '#2f6fde' };
const DREAM: ChartColour = { cssVar: '--dream', fallback: '#7b3db3' };

/**
 * One live metric: the raw values faint, the smoothed curve bold. A sparse series (held-out eval,
 * every K iterations) is never smoothed: its measured points are drawn bold. A dream-judged metric
 * (dream/…) is drawn in the dream's colour. x is the iteration unless `xLabel` names another axis
 * (real steps, dream steps, wall time).
 */
export function metricChart({
  title,
  metric,
  x,
  values,
  smoothing = 0.6,
  height = 170,
  range,
  xLabel = 'iteration',
  compact = false,
}: {
  title: string;
  metric: string;
  x: number[];
  values: (number | null)[];
  smoothing?: number;
  height?: number;
  range?: [number, number];
  xLabel?: string;
  /** A small card's chart: no legend and no axis title (the caption says the latest value), so the plot keeps its
   * height. */
  compact?: boolean;
}): LineChartSpec {
  const dream = metric.startsWith('dream/');
  const sparse = !smoothable(metric);
  const colour = dream ? DREAM : ACCENT;
  const lines: ChartLine[] = sparse
    ? [{ label: 'measured', values, colour, width: 2, points: 5 }]
    : [
        { label: 'raw', values, colour, alpha: 0.3, width: 1, points: 3 },
        { label: 'smoothed', values: smooth(values, smoothing), colour, width: 2 },
      ];
  const points = values.reduce((n: number, v) => (v === null ? n : n + 1), 0);
  let latest = 'no data yet';
  for (let i = values.length - 1; i >= 0; i--) {
    if (values[i] !== null) {
      latest = `${(values[i] as number).toFixed(3)} at ${xLabel} ${x[i]}`;
      break;
    }
  }
  return {
    plot: { x, xLabel, range, height, compact, lines },
    title,
    subtitle: { text: metric, code: true },
    dream,
    label: `${title} chart`,
    summary: `${latest} · ${points} points${sparse ? ' · not smoothed' : ''}`,
    attributes: {
      'data-metric': metric,
      'data-axis': xLabel,
      'data-points': points,
      'data-smoothed': sparse ? 'never' : String(smoothing),
    },
  };
}

/**
 * The learned experience model's loss while it trains: the running training loss of each batch
 * (faint), and each epoch's training and validation loss (bold; validation dashed, so colour is
 * not the only cue). x is in epochs.
 */
export function lossChart(series: LossSeries, height = 220): LineChartSpec {
  const accent: ChartColour = { cssVar: '--accent', fallback: '#2a62c8' };
  const epochs = epochPoints(series);
  const batches = series.running.filter((v) => v !== null).length;
  let latest = 'no epoch yet';
  for (let i = series.x.length - 1; i >= 0; i--) {
    if (series.validation[i] !== null) {
      latest =
        `epoch ${series.x[i]}: train ${(series.train[i] as number).toFixed(3)}, ` +
        `validation ${(series.validation[i] as number).toFixed(3)}`;
      break;
    }
  }
  return {
    plot: {
      x: series.x,
      xLabel: 'epoch',
      xIncrements: [0.25, 0.5, 1, 2, 5, 10, 20, 50],
      xDecimals: 2,
      yLabel: 'loss (nats/token)',
      height,
      lines: [
        { label: 'train (running, per batch)', values: series.running, colour: accent, alpha: 0.35, width: 1 },
        { label: 'train (epoch)', values: series.train, colour: accent, width: 2, points: 6 },
        {
          label: 'validation (epoch)',
          values: series.validation,
          colour: '#d95f02',
          width: 2,
          dash: [8, 4],
          points: 6,
        },
      ],
    },
    title: 'Loss',
    subtitle: { text: 'train and validation, on the answer tokens', code: false },
    dream: false,
    label: 'Training and validation loss chart',
    summary: `${latest} · ${epochs} epochs, ${batches} batch points`,
    attributes: { 'data-testid': 'loss-chart', 'data-epochs': epochs, 'data-batches': batches },
  };
}
