/**
 * The Train page's results below the form (docs/architecture.md §9.1): the charts on the chosen x
 * axis, the live panel's fields and the counters of the run on screen. One per mounted page, over
 * the app's TrainSession.
 */
import { metricChart, type LineChartSpec } from '../shared/line-chart';
import { axisLabel } from '../compare/compare';
import { CHART_METRICS, chartMetrics, useTrainSession, type TrainSession } from './train.svelte';
import { chartAxes, chartX } from './train-charts';
import { dreamTokenEstimate, dreamTokensCell, engineAbilities } from './train-params';
import { liveFields } from './train-live';
import { CHART_TITLES, dreamStepsSoFar, isShareMetric, lastValue } from './train-results';

export class TrainResultsView {
  /** The app's session (context: a view is made while its page is set up). */
  readonly session: TrainSession = useTrainSession();

  /** The charts' x axis: Compare's axes that the form's mode has (a dream spends no real steps). */
  readonly axes = $derived(chartAxes(this.session.params.mode));
  readonly axis = $derived(this.axes.some((a) => a.axis === this.session.axis) ? this.session.axis : 'iteration');
  private readonly x = $derived(chartX(this.session.series, this.axis));
  private readonly xLabel = $derived(this.axis === 'iteration' ? 'iteration' : axisLabel(this.axis));

  /** The mode's charts; a success rate is drawn on [0, 1]. */
  readonly charts = $derived(
    chartMetrics(this.session.params.mode).map((m) => this.chart(m, CHART_TITLES[m], m.endsWith('success_rate'))),
  );
  /** Every other metric the run records (losses, budget, dream and curriculum figures), sorted by name. */
  readonly otherCharts = $derived(
    Object.keys(this.session.series.values)
      .filter((m) => !(CHART_METRICS as readonly string[]).includes(m))
      .sort()
      .map((m) => this.chart(m, m, isShareMetric(m))),
  );

  // Tokens are an LLM's cost; a learned model's decoder tokens are not, and a real run or the oracle has none.
  private readonly runEngine = $derived(
    this.session.runConfig && this.session.runConfig.mode !== 'real'
      ? engineAbilities(this.session.runConfig.llm).kind
      : 'oracle',
  );
  readonly tokensCell = $derived(
    dreamTokensCell(this.runEngine, dreamTokenEstimate(this.session.series.iterations, this.session.series.values)),
  );
  readonly invalidRate = $derived(lastValue(this.session.series.values['dream/invalid_rate']));
  readonly live = $derived(this.session.active && this.session.live ? liveFields(this.session.live) : null);
  /** While a timed run trains: its time left from the measured speed and its records (else the meter's). */
  readonly runLeft = $derived(this.session.active ? this.session.clock.secondsLeft : null);
  readonly dreamSteps = $derived(dreamStepsSoFar(this.session.status, this.session.live, this.session.active));

  /** A metric's chart on the chosen x axis; a rate is drawn on [0, 1]. */
  private chart(metric: string, title: string, rate: boolean): { metric: string; chart: LineChartSpec } {
    const chart = metricChart({
      metric,
      title,
      x: this.x,
      xLabel: this.xLabel,
      values: this.session.series.values[metric] ?? [],
      smoothing: this.session.smoothing,
      range: rate ? [0, 1] : undefined,
    });
    return { metric, chart };
  }
}
