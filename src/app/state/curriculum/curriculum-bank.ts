/**
 * The Curriculum page's task bank, built from a run's checkpoint (CurriculumState: per task its
 * rollouts and successes, origin, parent, instruction, the iterations that drew it, and the
 * pending variations) and its metric history. Plain logic, no Svelte, unit-tested in Node.
 * A checkpoint written before the curriculum recorded instructions and iterations shows those
 * cells as unknown (null), never guessed.
 */
import { rewardVariance, type CurriculumState } from '../../../core/curriculum/curriculum';
import type { IterationRecord } from '../../../core/train/loop';
import type { Task } from '../../../core/types';

export interface TaskBankRow {
  id: string;
  /** null: not kept in the checkpoint (a variation already used). */
  instruction: string | null;
  origin: Task['origin'];
  parent: string | null;
  rollouts: number;
  successes: number;
  /** successes / rollouts (0 when never rolled out). */
  successRate: number;
  /** V = p(1 − p) over the run's rollouts of the task. */
  variance: number;
  /** Iterations whose batch held the task, and the last one; null when it cannot be known (see the file comment). */
  iterationsSeen: number | null;
  lastSeen: number | null;
  /** A variation waiting in the queue (not rolled out yet). */
  pending: boolean;
}

export const SHARE_METRIC = 'curriculum/synthetic_share';
export const VARIANCE_METRIC = 'curriculum/mean_variance';

export interface BankInput {
  state: CurriculumState;
}

export function buildTaskBank({ state }: BankInput): TaskBankRow[] {
  const rows: TaskBankRow[] = [];
  for (const [id, o] of Object.entries(state.outcomes)) {
    // Older checkpoints kept totals only (see the file comment).
    const recorded = typeof o.iterations === 'number' && typeof o.lastIteration === 'number';
    rows.push({
      id,
      instruction: typeof o.instruction === 'string' ? o.instruction : null,
      origin: o.origin,
      parent: o.parent ?? null,
      rollouts: o.rollouts,
      successes: o.successes,
      successRate: o.rollouts > 0 ? o.successes / o.rollouts : 0,
      variance: rewardVariance(o.successes, o.rollouts),
      iterationsSeen: recorded ? o.iterations : null,
      lastSeen: recorded ? o.lastIteration : null,
      pending: false,
    });
  }
  for (const task of state.pending) {
    if (task.id in state.outcomes) continue;
    rows.push({
      id: task.id,
      instruction: task.instruction,
      origin: task.origin,
      parent: task.parent ?? null,
      rollouts: 0,
      successes: 0,
      successRate: 0,
      variance: 0,
      iterationsSeen: 0,
      lastSeen: null,
      pending: true,
    });
  }
  return rows;
}

export const BANK_COLUMNS = [
  { key: 'id', label: 'Task id', numeric: false },
  { key: 'instruction', label: 'Instruction', numeric: false },
  { key: 'origin', label: 'Origin', numeric: false },
  { key: 'parent', label: 'Parent', numeric: false },
  { key: 'rollouts', label: 'Rollouts', numeric: true },
  { key: 'successes', label: 'Successes', numeric: true },
  { key: 'successRate', label: 'Success rate', numeric: true },
  { key: 'variance', label: 'Variance V', numeric: true },
  { key: 'iterationsSeen', label: 'Iterations seen', numeric: true },
  { key: 'lastSeen', label: 'Last seen', numeric: true },
] as const satisfies readonly { key: keyof TaskBankRow; label: string; numeric: boolean }[];

export type SortKey = (typeof BANK_COLUMNS)[number]['key'];
export type SortDirection = 'ascending' | 'descending';

/** Sorted copy; unknown values (null) go last in either direction; ties keep task-id order. */
export function sortBank(rows: readonly TaskBankRow[], key: SortKey, direction: SortDirection): TaskBankRow[] {
  const sign = direction === 'ascending' ? 1 : -1;
  const byId = (a: TaskBankRow, b: TaskBankRow) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return [...rows].sort((a, b) => {
    const x = a[key],
      y = b[key];
    if (x === null || y === null) return x === y ? byId(a, b) : x === null ? 1 : -1;
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return c !== 0 ? sign * c : byId(a, b);
  });
}

/** Next sort after a click on a column header: a new column starts descending for numbers, ascending for text. */
export function nextSort(
  current: { key: SortKey; direction: SortDirection },
  key: SortKey,
): { key: SortKey; direction: SortDirection } {
  if (current.key === key) return { key, direction: current.direction === 'ascending' ? 'descending' : 'ascending' };
  const numeric = BANK_COLUMNS.find((c) => c.key === key)?.numeric ?? false;
  return { key, direction: numeric ? 'descending' : 'ascending' };
}

/** Which rows the table shows: text in the id, instruction or parent, and an origin ('' = any). */
export interface BankFilter {
  text: string;
  origin: string;
}

export function filterBank(rows: readonly TaskBankRow[], filter: BankFilter): TaskBankRow[] {
  const text = filter.text.trim().toLowerCase();
  return rows.filter(
    (r) =>
      (!filter.origin || r.origin === filter.origin) &&
      (!text ||
        r.id.toLowerCase().includes(text) ||
        (r.instruction ?? '').toLowerCase().includes(text) ||
        (r.parent ?? '').toLowerCase().includes(text)),
  );
}

/** One page of rows (page 1-based, clamped to the pages there are), with the counts the pager shows. */
export interface BankPage {
  rows: TaskBankRow[];
  page: number;
  pages: number;
  first: number;
  last: number;
  total: number;
}

export function pageOf(rows: readonly TaskBankRow[], page: number, size: number): BankPage {
  const pages = Math.max(1, Math.ceil(rows.length / size));
  const at = Math.min(Math.max(1, Math.floor(page) || 1), pages);
  const start = (at - 1) * size;
  const slice = rows.slice(start, start + size);
  return {
    rows: slice,
    page: at,
    pages,
    first: slice.length ? start + 1 : 0,
    last: start + slice.length,
    total: rows.length,
  };
}

/** The synthetic share and mean variance over iterations, for the chart. */
export function curriculumSeries(history: readonly IterationRecord[]): {
  iterations: number[];
  share: (number | null)[];
  variance: (number | null)[];
} {
  const rows = history.filter((r) => SHARE_METRIC in r.metrics || VARIANCE_METRIC in r.metrics);
  return {
    iterations: rows.map((r) => r.iteration),
    share: rows.map((r) => r.metrics[SHARE_METRIC] ?? null),
    variance: rows.map((r) => r.metrics[VARIANCE_METRIC] ?? null),
  };
}
