/**
 * A PlotSpec (state/shared/line-chart.ts) drawn by uPlot (Canvas2D) in the shared chart theme, with
 * values under the cursor in the legend. The chart is built once and fed with setData; it is
 * rebuilt only when the layout (lines, axes, range, height) or the colour theme changes, so a run
 * that streams points never re-creates it per batch. It follows its container's width.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ChartColour, PlotSpec } from '../state/shared/line-chart';
import { plotData, plotLayoutKey } from '../state/shared/line-chart';
import { baseChartOptions, cssVar, formatValue, watchTheme } from './chart-theme';

const MIN_WIDTH = 240;

export class PlotView {
  // Bumped when the colour theme changes: the chart is rebuilt with the new palette's colours.
  #themeChanges = $state(0);

  readonly #plot: () => PlotSpec;

  constructor(plot: () => PlotSpec) {
    this.#plot = plot;
  }

  /** The plot's element's attachment (`{@attach view.attach}`): the chart lives as long as the element. */
  readonly attach = (container: HTMLDivElement): (() => void) => {
    const stopWatching = watchTheme(() => {
      this.#themeChanges++;
    });
    let chart: uPlot | null = null;
    let layout = '';
    let height = 0;
    const resize = new ResizeObserver(() =>
      chart?.setSize({ width: Math.max(MIN_WIDTH, container.clientWidth), height }),
    );
    resize.observe(container);
    $effect(() => {
      const plot = this.#plot();
      const data = plotData(plot) as unknown as uPlot.AlignedData;
      const key = `${this.#themeChanges} ${plotLayoutKey(plot)}`;
      if (chart && key === layout) {
        chart.setData(data);
        return;
      }
      chart?.destroy();
      chart = new uPlot(plotOptions(plot, container.clientWidth), data, container);
      layout = key;
      height = plot.height;
    });
    return () => {
      resize.disconnect();
      stopWatching();
      chart?.destroy();
      chart = null;
    };
  };
}

/** A chart colour as CSS: the theme's variable read now, or the fixed colour. */
export function chartColour(colour: ChartColour): string {
  return typeof colour === 'string' ? colour : cssVar(colour.cssVar, colour.fallback);
}

function plotOptions(plot: PlotSpec, width: number): uPlot.Options {
  const base = baseChartOptions(width, plot.height, plot.range, plot.xLabel);
  const [xAxis, yAxis] = base.axes!;
  const decimals = plot.xDecimals;
  const xValue = (_u: uPlot, v: number | null) =>
    v === null ? '—' : decimals === undefined ? String(v) : v.toFixed(decimals);
  return {
    ...base,
    ...(plot.compact ? { legend: { show: false } } : {}),
    axes: [
      {
        ...xAxis,
        ...(plot.compact ? { label: undefined } : {}),
        ...(plot.xIncrements ? { incrs: plot.xIncrements } : {}),
      },
      { ...yAxis, ...(plot.compact ? { size: 40 } : {}), ...(plot.yLabel ? { label: plot.yLabel } : {}) },
    ],
    series: [
      { label: plot.xLabel, value: xValue },
      ...plot.lines.map((line) => ({
        label: line.label,
        stroke: chartColour(line.colour),
        width: line.width,
        spanGaps: true,
        value: formatValue,
        points: line.points === undefined ? { show: false } : { show: true, size: line.points },
        ...(line.alpha === undefined ? {} : { alpha: line.alpha }),
        ...(line.dash ? { dash: line.dash } : {}),
      })),
    ],
  };
}
