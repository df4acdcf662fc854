/**
 * What the uPlot charts share: colours read from the app's CSS variables, the base options
 * (axes, grid, legend, cursor) and a counter that changes with the colour theme (the header's
 * toggle sets data-theme on <html>, or the system preference flips), so a chart's mount effect
 * that reads it rebuilds with the new palette.
 */
import type uPlot from 'uplot';

/**
 * A colour variable as the page draws it now. The palette's values are light-dark() pairs that only
 * a colour property resolves (by the theme's color-scheme), so a hidden probe's computed colour is read.
 */
export function cssVar(name: string, fallback: string): string {
  const probe = document.createElement('span');
  probe.hidden = true;
  probe.style.color = `var(${name}, ${fallback})`;
  document.body.append(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour || fallback;
}

/** Starts watching the theme (call from a component's $effect; returns the cleanup). */
export function watchTheme(onChange: () => void): () => void {
  const observer = new MutationObserver(onChange);
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  const media = matchMedia('(prefers-color-scheme: dark)');
  media.addEventListener('change', onChange);
  return () => {
    observer.disconnect();
    media.removeEventListener('change', onChange);
  };
}

const WHOLE_INCREMENTS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000,
  10_000_000,
];

export const formatValue = (_u: uPlot, v: number | null): string =>
  v === null || v === undefined ? '—' : Number(v).toFixed(3);

/**
 * Options every chart starts from: iteration on x (or another axis: real steps, dream steps, wall
 * time), the theme's axis and grid colours, a live legend, no drag-zoom.
 */
export function baseChartOptions(
  width: number,
  height: number,
  range?: [number, number],
  xLabel = 'iteration',
): Omit<uPlot.Options, 'series'> {
  const fg = cssVar('--fg', '#1d1f21'),
    line = cssVar('--line', '#d9dcdf');
  const axis = { stroke: fg, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
  return {
    width: Math.max(240, width),
    height,
    scales: { x: { time: false }, ...(range ? { y: { range } } : {}) },
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    // Whole iterations (and steps) on the x axis; wall time may fall between.
    axes: [
      { ...axis, label: xLabel, ...(/time/i.test(xLabel) ? {} : { incrs: WHOLE_INCREMENTS }) },
      { ...axis, size: 56 },
    ],
  };
}
