/**
 * The Compare page's plain logic (no Svelte, unit-tested in Node): the final table of each run,
 * the curves of several runs aligned on one iteration axis, and the exports (CSV of the table,
 * JSON of the runs' configs and metric histories).
 */
import type { IterationRecord } from '../../core/train/loop';
import type { RunEntry } from '../workers/run-list';
import { smooth } from './smoothing';

/** Metrics offered for overlaying (design.md §5 names). */
export const COMPARE_METRICS = [
  { metric: 'charts/success_rate', label: 'Training success rate', rate: true },
  { metric: 'eval/success_rate', label: 'Held-out eval success (real env)', rate: true },
  { metric: 'eval/score', label: 'Held-out eval score', rate: true },
  { metric: 'charts/episodic_return', label: 'Episodic return', rate: false },
  { metric: 'charts/episode_length', label: 'Episode length', rate: false },
  { metric: 'losses/policy_loss', label: 'Policy loss', rate: false },
  { metric: 'losses/entropy', label: 'Policy entropy', rate: false },
  { metric: 'losses/approx_kl', label: 'Approx. KL', rate: false },
  { metric: 'budget/real_steps', label: 'Real steps', rate: false },
  { metric: 'budget/dream_steps', label: 'Dream steps', rate: false },
  { metric: 'curriculum/synthetic_share', label: 'Curriculum synthetic share', rate: true },
  { metric: 'curriculum/mean_variance', label: 'Curriculum mean variance', rate: false },
] as const;

export interface CompareRow {
  runId: string;
  mode: string;
  algo: string;
  preset: string;
  seed: number;
  /** Iterations in the metric history, and the config's target. */
  iterations: number;
  iterationsPlanned: number;
  realSteps: number | null;
  dreamSteps: number | null;
  lastEvalSuccess: number | null;
  lastEvalScore: number | null;
  /** The last iteration's training success rate. */
  finalTrainSuccess: number | null;
  state: string;
}

function last(history: readonly IterationRecord[], metric: string): number | null {
  for (let i = history.length - 1; i >= 0; i--) {
    const v = history[i].metrics[metric];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return null;
}

export function compareRow(entry: RunEntry, history: readonly IterationRecord[]): CompareRow {
  const c = entry.config;
  return {
    runId: entry.runId, mode: c.mode, algo: c.algo, preset: c.preset, seed: c.seed,
    iterations: history.length ? history[history.length - 1].iteration : 0, iterationsPlanned: c.iterations,
    realSteps: last(history, 'budget/real_steps'), dreamSteps: last(history, 'budget/dream_steps'),
    lastEvalSuccess: last(history, 'eval/success_rate'), lastEvalScore: last(history, 'eval/score'),
    finalTrainSuccess: history.length ? (history[history.length - 1].metrics['charts/success_rate'] ?? null) : null,
    state: entry.state,
  };
}

export interface AlignedSeries {
  /** Union of the runs' iterations, ascending. */
  iterations: number[];
  /** One array per run, aligned on `iterations` (null where a run has no value). */
  values: (number | null)[][];
}

/** Aligns one metric of several runs on a shared iteration axis (each run smoothed on its own points first). */
export function alignSeries(histories: readonly (readonly IterationRecord[])[], metric: string, smoothing = 0): AlignedSeries {
  const perRun = histories.map((h) => {
    const points = h.filter((r) => typeof r.metrics[metric] === 'number' && Number.isFinite(r.metrics[metric]));
    const smoothed = smooth(points.map((r) => r.metrics[metric]), smoothing);
    return new Map(points.map((r, i) => [r.iteration, smoothed[i]]));
  });
  const iterations = [...new Set(perRun.flatMap((m) => [...m.keys()]))].sort((a, b) => a - b);
  return { iterations, values: perRun.map((m) => iterations.map((it) => m.get(it) ?? null)) };
}

export const CSV_COLUMNS: { key: keyof CompareRow; header: string }[] = [
  { key: 'runId', header: 'run_id' }, { key: 'mode', header: 'mode' }, { key: 'algo', header: 'algo' },
  { key: 'preset', header: 'preset' }, { key: 'seed', header: 'seed' }, { key: 'iterations', header: 'iterations' },
  { key: 'iterationsPlanned', header: 'iterations_planned' }, { key: 'realSteps', header: 'real_steps' },
  { key: 'dreamSteps', header: 'dream_steps' }, { key: 'lastEvalSuccess', header: 'last_eval_success' },
  { key: 'lastEvalScore', header: 'last_eval_score' }, { key: 'finalTrainSuccess', header: 'final_train_success' },
  { key: 'state', header: 'state' },
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
  for (const row of rows) lines.push(CSV_COLUMNS.map((c) => csvField(row[c.key])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

export const EXPORT_FORMAT = 'dreamgym-runs/1';

export interface RunsExport {
  format: typeof EXPORT_FORMAT;
  exportedAt: string;
  runs: { runId: string; createdAt: number; state: string; config: RunEntry['config']; history: IterationRecord[] }[];
}

export function runsExport(runs: readonly { entry: RunEntry; history: readonly IterationRecord[] }[], now: Date): RunsExport {
  return {
    format: EXPORT_FORMAT, exportedAt: now.toISOString(),
    runs: runs.map(({ entry, history }) => ({
      runId: entry.runId, createdAt: entry.createdAt, state: entry.state, config: entry.config,
      history: history.map((r) => ({ iteration: r.iteration, metrics: { ...r.metrics } })),
    })),
  };
}

/** A short label for a run in legends: mode · algo · seed (and the id's time suffix when two would read the same). */
export function runLabels(entries: readonly RunEntry[]): string[] {
  const base = entries.map((e) => `${e.config.mode} · ${e.config.algo} · ${e.config.preset} · seed ${e.config.seed}`);
  return base.map((label, i) => (base.indexOf(label) !== base.lastIndexOf(label) ? `${label} (${entries[i].runId.split('-').pop()})` : label));
}
