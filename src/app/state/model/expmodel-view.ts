/**
 * Plain logic of the Experience model page (no Svelte; unit-tested in Node): the loss chart's
 * series from the worker's progress events, the progress bar and its line (with the time left
 * measured on the training itself: core's time-left.ts), the audit table's rows, and the
 * comparison of a dreamed transition with the real one.
 */
import type { AuditReport } from '../../../core/experience/audit';
import type { EpochRecord, FitProgress } from '../../../core/experience/learned/fit';
import type { DreamSample } from '../../workers/expmodel/expmodel-protocol';
import { diffText, type TextDiff } from '../inspect/inspect-logic';

// ---- the loss chart ------------------------------------------------------------------------------

/**
 * Aligned series for one uPlot chart, x in epochs: a batch of epoch e at (e − 1) + batch/batches
 * carries the running training loss of that epoch; x = e carries the epoch's train and
 * validation loss (and its last batch).
 */
export interface LossSeries {
  x: number[];
  running: (number | null)[];
  train: (number | null)[];
  validation: (number | null)[];
}

export const EMPTY_LOSS: LossSeries = { x: [], running: [], train: [], validation: [] };

/** Drops the points at or after `x` (a resumed epoch replays its batches). */
function cut(series: LossSeries, x: number): LossSeries {
  let keep = series.x.length;
  while (keep > 0 && series.x[keep - 1] >= x) keep--;
  if (keep === series.x.length) return series;
  return {
    x: series.x.slice(0, keep),
    running: series.running.slice(0, keep),
    train: series.train.slice(0, keep),
    validation: series.validation.slice(0, keep),
  };
}

export function addBatch(series: LossSeries, event: Extract<FitProgress, { kind: 'batch' }>): LossSeries {
  const x = event.epoch - 1 + event.batch / event.batches;
  const s = cut(series, x);
  return {
    x: [...s.x, x],
    running: [...s.running, event.loss],
    train: [...s.train, null],
    validation: [...s.validation, null],
  };
}

export function addEpoch(series: LossSeries, record: EpochRecord): LossSeries {
  const x = record.epoch;
  const last = series.x.length - 1;
  if (last >= 0 && series.x[last] === x) {
    // The epoch's last batch is at the same x: the epoch figures join it.
    return {
      ...series,
      train: [...series.train.slice(0, last), record.trainLoss],
      validation: [...series.validation.slice(0, last), record.validationLoss],
    };
  }
  const s = cut(series, x);
  return {
    x: [...s.x, x],
    running: [...s.running, null],
    train: [...s.train, record.trainLoss],
    validation: [...s.validation, record.validationLoss],
  };
}

/** The chart of a training's saved epochs (a resume, or a stored model's record). */
export function lossFromHistory(records: readonly EpochRecord[]): LossSeries {
  return records.reduce(addEpoch, EMPTY_LOSS);
}

export function epochPoints(series: LossSeries): number {
  return series.validation.filter((v) => v !== null).length;
}

// ---- progress ------------------------------------------------------------------------------------

export interface TrainProgress {
  /** 0..1 over all epochs. */
  fraction: number;
  epoch: number;
  epochs: number;
  batch: number;
  batches: number;
  /** Seconds left at most (early stopping may end sooner); null while the speed is being measured. */
  secondsLeft: number | null;
  /** Seconds to this epoch's end and checkpoint; null while unmeasured. */
  epochSecondsLeft: number | null;
  /** Training tokens per second, measured over `speedBatches` batches (the epoch so far while that is 0). */
  tokensPerSecond: number;
  speedBatches: number;
  /** Training tokens of one epoch. */
  epochTokens: number;
  loss: number;
}

export function progressOf(event: Extract<FitProgress, { kind: 'batch' }>): TrainProgress {
  return {
    fraction: Math.max(0, Math.min(1, (event.epoch - 1 + event.batch / event.batches) / event.epochs)),
    epoch: event.epoch,
    epochs: event.epochs,
    batch: event.batch,
    batches: event.batches,
    secondsLeft: event.secondsLeft,
    epochSecondsLeft: event.epochSecondsLeft,
    tokensPerSecond: event.tokensPerSecond,
    speedBatches: event.speedBatches,
    epochTokens: event.epochTokens,
    loss: event.loss,
  };
}

/** A duration as precise as an estimate is: seconds under 90 s, then whole minutes ("about 27 min", "1 h 05 min"). */
export function roughDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '';
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** Where the training runs, in words ("one wasm thread in this page's worker"). */
export function runsOn(backend: string | null): string {
  if (backend === 'wasm') return "one wasm thread in this page's worker";
  if (backend === 'webgpu') return "WebGPU in this page's worker";
  return backend ? `${backend} in this page's worker` : "this page's worker";
}

/** The progress bar's line: where it is, the running loss, and the time left measured here. */
export function progressLine(p: TrainProgress, backend: string | null): string {
  const where =
    `${Math.round(p.fraction * 100)}% — epoch ${p.epoch} of ${p.epochs}, batch ${p.batch} of ` +
    `${p.batches} — running loss ${p.loss.toFixed(3)}`;
  if (p.fraction >= 1) return `${where} — done`;
  if (p.secondsLeft === null) return `${where} — estimating the time left: measuring this browser's speed first…`;
  return (
    `${where} — about ${roughDuration(p.secondsLeft)} left at most (measured here at ` +
    `${count(p.tokensPerSecond)} tokens/s over ${p.speedBatches} batches, ${runsOn(backend)}; ` +
    `${count(p.epochTokens)} tokens an epoch; early ` +
    'stopping may end sooner)'
  );
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

// ---- the audit table -----------------------------------------------------------------------------

export interface AuditRow {
  key: keyof AuditReport;
  label: string;
  help: string;
  learned: string;
  oracle: string;
  better: 'higher' | 'lower';
}

const AUDIT_ROWS: Omit<AuditRow, 'learned' | 'oracle'>[] = [
  {
    key: 'reward_accuracy',
    label: 'Reward accuracy (outcome steps)',
    help: 'the dreamed outcome (success or not) equals the real one, on the steps where the episode ends',
    better: 'higher',
  },
  {
    key: 'terminated_accuracy',
    label: 'Terminated accuracy',
    help: 'the dream ends the episode exactly when the real env does',
    better: 'higher',
  },
  {
    key: 'admissible_jaccard',
    label: 'Admissible actions (Jaccard)',
    help: 'overlap of the dreamed and the real next admissible actions',
    better: 'higher',
  },
  {
    key: 'observation_f1',
    label: 'Observation F1',
    help: 'word overlap of the dreamed and the real next observation',
    better: 'higher',
  },
  {
    key: 'valid_agreement',
    label: 'Valid-action agreement',
    help: 'the dream accepts or refuses the action as the real env does',
    better: 'higher',
  },
  {
    key: 'invalid_rate',
    label: 'Unusable answers',
    help: 'answers that failed the consistency checks (never learned from)',
    better: 'lower',
  },
  {
    key: 'tokens_per_transition',
    label: 'Tokens per transition',
    help: 'context and answer tokens per dreamed transition',
    better: 'lower',
  },
  {
    key: 'ms_per_transition',
    label: 'Milliseconds per transition',
    help: 'decoding time per dreamed transition (batched)',
    better: 'lower',
  },
];

function cell(key: keyof AuditReport, report: AuditReport | null): string {
  if (!report) return '—';
  const v = report[key];
  if (v === null) return 'no outcome step sampled';
  if (typeof v !== 'number') return String(v);
  if (key === 'tokens_per_transition') return v.toFixed(0);
  if (key === 'ms_per_transition') return v.toFixed(1);
  return v.toFixed(3);
}

export function auditRows(learned: AuditReport, oracle: AuditReport | null): AuditRow[] {
  return AUDIT_ROWS.map((r) => ({ ...r, learned: cell(r.key, learned), oracle: cell(r.key, oracle) }));
}

// ---- dreamed vs real -----------------------------------------------------------------------------

export interface SampleComparison {
  /** The dreamed answer is usable and agrees with the real env on each verdict. */
  validAgrees: boolean;
  rewardAgrees: boolean;
  terminatedAgrees: boolean;
  observation: TextDiff;
  /** Admissible actions only in the dream, only in the real env, and in both. */
  onlyDreamed: string[];
  onlyReal: string[];
  shared: string[];
}

export function compareSample(sample: DreamSample): SampleComparison {
  const d = sample.dreamed,
    r = sample.real;
  const realSet = new Set(r.admissible),
    dreamSet = new Set(d.admissible);
  return {
    validAgrees: d.usable && d.actionValid === r.valid,
    // The binary outcome, as the audit counts it (WebShop's real reward is a graded score, a verdict head's its p(success)).
    rewardAgrees: d.usable && d.success === r.success,
    terminatedAgrees: d.usable && d.terminated === r.terminated,
    observation: diffText(d.observation, r.observation),
    onlyDreamed: d.admissible.filter((a) => !realSet.has(a)),
    onlyReal: r.admissible.filter((a) => !dreamSet.has(a)),
    shared: d.admissible.filter((a) => realSet.has(a)),
  };
}

/** "1.2 MB", "850 kB". */
export function formatSize(bytes: number): string {
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1e3))} kB`;
}

/** One phrase on who judges a model's episode endings: its verdict head (verdict.ts) or the generator. */
export function verdictLine(
  verdict: { successes: number; failures: number; balancedAccuracy: number } | null | undefined,
): string {
  if (!verdict) return 'no verdict head: the generator judges endings';
  return `a verdict head judges endings (fitted on ${verdict.successes} successful and ${verdict.failures} failed real endings, balanced accuracy ${verdict.balancedAccuracy.toFixed(3)})`;
}
