/**
 * The Compare page's plain logic (no Svelte, unit-tested in Node): the final table of each run,
 * the DreamGym table (held-out success against the REAL steps spent), the curves of several runs
 * aligned on one x axis (iteration, real steps, dream steps or wall time), filters by environment,
 * mode and tag, and the exports (CSV of the table, JSON of the runs' configs and metric histories).
 */
import type { IterationRecord } from '../../../core/train/loop';
import type { RunEntry } from '../../storage/run-list';
import { smooth, smoothable } from '../shared/smoothing';

export { smoothable };

/**
 * Metrics offered for overlaying (docs/architecture.md §3.11 names). `dream`: judged by the experience model,
 * never by the real env (titled and coloured as dream). Held-out evaluation comes first: it is the
 * headline.
 */
export const COMPARE_METRICS = [
  { metric: 'eval/success_rate', label: 'Held-out success (real env)', rate: true, dream: false },
  { metric: 'eval/score', label: 'Held-out score (real env)', rate: true, dream: false },
  { metric: 'charts/success_rate', label: 'Training success (real rollouts)', rate: true, dream: false },
  { metric: 'dream/success_rate', label: 'Success as the dream judges it', rate: true, dream: true },
  { metric: 'charts/episodic_return', label: 'Episodic return (real rollouts)', rate: false, dream: false },
  { metric: 'dream/episodic_return', label: 'Return as the dream judges it', rate: false, dream: true },
  { metric: 'charts/episode_length', label: 'Episode length (real rollouts)', rate: false, dream: false },
  { metric: 'dream/episode_length', label: 'Episode length in the dream', rate: false, dream: true },
  { metric: 'dream/invalid_rate', label: 'Unusable dream answers', rate: true, dream: true },
  { metric: 'dream/halt_rate', label: 'Dream steps halted', rate: true, dream: true },
  { metric: 'dream/redraw_rate', label: 'Dream redraws per step', rate: false, dream: true },
  { metric: 'dream/disagreement', label: 'Verdict ensemble disagreement', rate: false, dream: true },
  { metric: 'losses/policy_loss', label: 'Policy loss', rate: false, dream: false },
  { metric: 'losses/entropy', label: 'Policy entropy', rate: false, dream: false },
  { metric: 'losses/approx_kl', label: 'Approx. KL', rate: false, dream: false },
  { metric: 'budget/real_steps', label: 'Real steps', rate: false, dream: false },
  { metric: 'budget/dream_steps', label: 'Dream steps', rate: false, dream: false },
  { metric: 'curriculum/synthetic_share', label: 'Curriculum synthetic share', rate: true, dream: false },
  { metric: 'curriculum/mean_variance', label: 'Curriculum mean variance', rate: false, dream: false },
] as const;

/** The x axes a curve can be drawn against (TensorBoard's step / relative / wall, plus DreamGym's real-step budget). */
export const X_AXES = [
  { axis: 'iteration', label: 'Iteration' },
  { axis: 'real_steps', label: 'Real steps spent' },
  { axis: 'dream_steps', label: 'Dream steps' },
  { axis: 'wall_time', label: 'Wall time (s)' },
] as const;
export type XAxis = (typeof X_AXES)[number]['axis'];

export function axisLabel(axis: XAxis): string {
  return X_AXES.find((a) => a.axis === axis)?.label ?? axis;
}

/**
 * Each record's x on an axis: the iteration, the real or dream steps spent by the end of it, or the
 * wall time (the sum of perf/iteration_seconds so far; an iteration without a clock adds nothing).
 * A counter missing from a record keeps the previous value (0 at first).
 */
export function xValues(history: readonly IterationRecord[], axis: XAxis): number[] {
  if (axis === 'iteration') return history.map((r) => r.iteration);
  const metric =
    axis === 'real_steps'
      ? 'budget/real_steps'
      : axis === 'dream_steps'
        ? 'budget/dream_steps'
        : 'perf/iteration_seconds';
  let value = 0;
  return history.map((r) => {
    const v = r.metrics[metric];
    if (typeof v === 'number' && Number.isFinite(v)) value = axis === 'wall_time' ? value + v : v;
    return axis === 'wall_time' ? Math.round(value * 10) / 10 : value;
  });
}

export interface CompareRow {
  runId: string;
  /** The run's name (given, else mode · algo · preset · seed) and tags. */
  name: string;
  tags: string[];
  env: string;
  mode: string;
  algo: string;
  preset: string;
  seed: number;
  /** Iterations in the metric history, and the config's target (S2R adds real iterations after these dream ones). */
  iterations: number;
  iterationsPlanned: number;
  realSteps: number | null;
  dreamSteps: number | null;
  lastEvalSuccess: number | null;
  lastEvalScore: number | null;
  /** The last iteration's rollout success, and who judged it (the real env, or the dream). */
  finalTrainSuccess: number | null;
  finalTrainJudge: 'real' | 'dream' | null;
  state: string;
  /** Why a failed run failed (its last status message), else null. */
  failure: string | null;
}

function last(history: readonly IterationRecord[], metric: string): number | null {
  for (let i = history.length - 1; i >= 0; i--) {
    const v = history[i].metrics[metric];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return null;
}

/** The last iteration's rollout success (real or dream-judged; a real iteration the budget cut entirely has none). */
function lastRolloutSuccess(history: readonly IterationRecord[]): { value: number; judge: 'real' | 'dream' } | null {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i].metrics;
    if (typeof m['charts/success_rate'] === 'number') return { value: m['charts/success_rate'], judge: 'real' };
    if (typeof m['dream/success_rate'] === 'number') return { value: m['dream/success_rate'], judge: 'dream' };
  }
  return null;
}

export function compareRow(entry: RunEntry, history: readonly IterationRecord[]): CompareRow {
  const c = entry.config;
  const train = lastRolloutSuccess(history);
  return {
    runId: entry.runId,
    name: runName(entry),
    tags: entry.tags ?? [],
    env: c.env,
    mode: c.mode,
    algo: c.algo,
    preset: c.preset,
    seed: c.seed,
    iterations: history.length ? history[history.length - 1].iteration : 0,
    iterationsPlanned: c.iterations,
    realSteps: last(history, 'budget/real_steps'),
    dreamSteps: last(history, 'budget/dream_steps'),
    lastEvalSuccess: last(history, 'eval/success_rate'),
    lastEvalScore: last(history, 'eval/score'),
    finalTrainSuccess: train?.value ?? null,
    finalTrainJudge: train?.judge ?? null,
    state: entry.state,
    failure: entry.state === 'error' ? (entry.message ?? 'no reason was recorded') : null,
  };
}

/**
 * "iteration 114 (100 dream + 14 real)": iteration counts as the mode has them. An S2R run's
 * `iterations` are its dream iterations; real ones follow until its real budget is spent.
 */
export function describeIterations(config: { mode: string; iterations: number }, done: number): string {
  if (config.mode !== 's2r') return `${done} of ${config.iterations}`;
  const dream = Math.min(done, config.iterations);
  const real = Math.max(0, done - config.iterations);
  return real > 0
    ? `${done} (${dream} dream + ${real} real)`
    : `${dream} of ${config.iterations} dream, then real until the budget is spent`;
}

/** The DreamGym table: what held-out success cost in real interactions (the paper's headline). */
export interface DreamGymRow {
  runId: string;
  name: string;
  mode: string;
  /** The last held-out evaluation (the final policy's, at the last iteration) and where it was taken. */
  heldOutSuccess: number | null;
  heldOutIteration: number | null;
  realSteps: number;
  dreamSteps: number;
  /** Real steps spent when held-out success first reached the target; null: not reached. */
  realStepsToTarget: number | null;
  state: string;
  failure: string | null;
}

export function dreamGymRow(entry: RunEntry, history: readonly IterationRecord[], target: number): DreamGymRow {
  const real = xValues(history, 'real_steps');
  let heldOutSuccess: number | null = null,
    heldOutIteration: number | null = null,
    realStepsToTarget: number | null = null;
  history.forEach((r, i) => {
    const v = r.metrics['eval/success_rate'];
    if (typeof v !== 'number' || !Number.isFinite(v)) return;
    heldOutSuccess = v;
    heldOutIteration = r.iteration;
    if (realStepsToTarget === null && v >= target) realStepsToTarget = real[i];
  });
  return {
    runId: entry.runId,
    name: runName(entry),
    mode: entry.config.mode,
    heldOutSuccess,
    heldOutIteration,
    realSteps: real.length ? real[real.length - 1] : 0,
    dreamSteps: last(history, 'budget/dream_steps') ?? 0,
    realStepsToTarget,
    state: entry.state,
    failure: entry.state === 'error' ? (entry.message ?? 'no reason was recorded') : null,
  };
}

export interface AlignedSeries {
  /** Union of the runs' x values, ascending. */
  x: number[];
  /** One array per run, aligned on `x` (null where a run has no value); smoothed when the metric is smoothable. */
  values: (number | null)[][];
  /** The same points unsmoothed (legends and tables show these: what was measured). */
  raw: (number | null)[][];
  /**
   * Per run: every point at one x while others spread out (a dream run on the real-steps axis: it
   * spent none). Such a run is drawn flat at its latest value across the axis, and the legend says why.
   */
  flat: boolean[];
  /** Per run: the one x of a flat run (0: it spent none of the axis' resource), else null (the legend names it). */
  flatAt?: (number | null)[];
}

/**
 * Aligns one metric of several runs on a shared x axis (each run smoothed on its own points first;
 * sparse series never). Points of one run at the same x keep the latest (an S2R run's dream phase
 * sits at 0 real steps, its last point there is where the real phase starts).
 */
export function alignSeries(
  histories: readonly (readonly IterationRecord[])[],
  metric: string,
  smoothing = 0,
  axis: XAxis = 'iteration',
): AlignedSeries {
  const weight = smoothable(metric) ? smoothing : 0;
  const perRun = histories.map((h) => {
    const xs = xValues(h, axis);
    const keep = h
      .map((r, i) => ({ x: xs[i], v: r.metrics[metric] }))
      .filter((p): p is { x: number; v: number } => typeof p.v === 'number' && Number.isFinite(p.v));
    const smoothed = smooth(
      keep.map((p) => p.v),
      weight,
    );
    const raw = new Map<number, number>(),
      soft = new Map<number, number>();
    keep.forEach((p, i) => {
      raw.set(p.x, p.v);
      soft.set(p.x, smoothed[i] as number);
    });
    return { raw, soft, latest: keep.length ? keep[keep.length - 1].v : null };
  });
  const x = [...new Set(perRun.flatMap((m) => [...m.raw.keys()]))].sort((a, b) => a - b);
  // Flat only for a run that spent none of the axis' resource (every point at 0): a run with one
  // point elsewhere (a single final eval) is a point, not a line across budgets it never had.
  const onlyX = perRun.map((m) => (m.raw.size === 1 ? [...m.raw.keys()][0] : null));
  const flat = perRun.map((m, i) => axis !== 'iteration' && onlyX[i] === 0 && x.length > 1 && m.latest !== null);
  const fill = (m: (typeof perRun)[number], i: number, map: Map<number, number>) =>
    x.map((at) => (flat[i] ? m.latest : (map.get(at) ?? null)));
  return {
    x,
    values: perRun.map((m, i) => fill(m, i, m.soft)),
    raw: perRun.map((m, i) => fill(m, i, m.raw)),
    flat,
    flatAt: flat.map((f, i) => (f ? onlyX[i] : null)),
  };
}

export const CSV_COLUMNS: { key: keyof CompareRow; header: string }[] = [
  { key: 'runId', header: 'run_id' },
  { key: 'name', header: 'name' },
  { key: 'env', header: 'env' },
  { key: 'mode', header: 'mode' },
  { key: 'algo', header: 'algo' },
  { key: 'preset', header: 'preset' },
  { key: 'seed', header: 'seed' },
  { key: 'iterations', header: 'iterations' },
  { key: 'iterationsPlanned', header: 'iterations_planned' },
  { key: 'realSteps', header: 'real_steps' },
  { key: 'dreamSteps', header: 'dream_steps' },
  { key: 'lastEvalSuccess', header: 'last_eval_success' },
  { key: 'lastEvalScore', header: 'last_eval_score' },
  { key: 'finalTrainSuccess', header: 'final_train_success' },
  { key: 'finalTrainJudge', header: 'final_train_judged_by' },
  { key: 'state', header: 'state' },
  { key: 'failure', header: 'failure' },
];

/** RFC 4180 field: quoted when it holds a comma, quote or line break; a leading =+-@ is prefixed with ' (no formula injection in spreadsheets). */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(rows: readonly CompareRow[]): string {
  const lines = [CSV_COLUMNS.map((c) => c.header).join(',')];
  for (const row of rows)
    lines.push(
      CSV_COLUMNS.map((c) =>
        csvField(Array.isArray(row[c.key]) ? (row[c.key] as string[]).join(' ') : row[c.key]),
      ).join(','),
    );
  return `${lines.join('\r\n')}\r\n`;
}

export const EXPORT_FORMAT = 'dreamgym-runs/1';

export interface RunsExport {
  format: typeof EXPORT_FORMAT;
  exportedAt: string;
  runs: { runId: string; createdAt: number; state: string; config: RunEntry['config']; history: IterationRecord[] }[];
}

export function runsExport(
  runs: readonly { entry: RunEntry; history: readonly IterationRecord[] }[],
  now: Date,
): RunsExport {
  return {
    format: EXPORT_FORMAT,
    exportedAt: now.toISOString(),
    runs: runs.map(({ entry, history }) => ({
      runId: entry.runId,
      createdAt: entry.createdAt,
      state: entry.state,
      config: entry.config,
      history: history.map((r) => ({ iteration: r.iteration, metrics: { ...r.metrics } })),
    })),
  };
}

/** A run's name: the one it was given (the start-here runs have one), else mode · algo · preset · seed. */
export function runName(entry: RunEntry): string {
  return (
    entry.name ?? `${entry.config.mode} · ${entry.config.algo} · ${entry.config.preset} · seed ${entry.config.seed}`
  );
}

/** A short label for a run in legends: its name (and the id's time suffix when two would read the same). */
export function runLabels(entries: readonly RunEntry[]): string[] {
  const base = entries.map(runName);
  return base.map((label, i) =>
    base.indexOf(label) !== base.lastIndexOf(label) ? `${label} (${entries[i].runId.split('-').pop()})` : label,
  );
}

/** Which runs the Compare page lists: by environment, mode and tag ('' = any). */
export interface RunFilter {
  env: string;
  mode: string;
  tag: string;
}

export function filterRuns(entries: readonly RunEntry[], filter: RunFilter): RunEntry[] {
  return entries.filter(
    (e) =>
      (!filter.env || e.config.env === filter.env) &&
      (!filter.mode || e.config.mode === filter.mode) &&
      (!filter.tag || (e.tags ?? []).includes(filter.tag)),
  );
}

/** The environments, modes and tags the runs have (the filter's choices). */
export function filterChoices(entries: readonly RunEntry[]): { envs: string[]; modes: string[]; tags: string[] } {
  const sorted = (values: Iterable<string>) => [...new Set(values)].sort();
  return {
    envs: sorted(entries.map((e) => e.config.env)),
    modes: sorted(entries.map((e) => e.config.mode)),
    tags: sorted(entries.flatMap((e) => e.tags ?? [])),
  };
}
