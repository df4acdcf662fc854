/**
 * State of the Curriculum page: the chosen run, its task bank (from the run's IndexedDB
 * checkpoint) and its curriculum metrics (from the metric history). While the chosen run is
 * the one training, it re-reads both every few seconds.
 */
import { IndexedDbCheckpointStore } from '../../../core/train/checkpoint';
import type { TrainConfig } from '../../../core/train/config';
import { MetricsHistoryStore } from '../../storage/metrics-store';
import { loadRuns, type RunEntry } from '../../storage/run-list';
import {
  buildTaskBank,
  curriculumSeries,
  filterBank,
  nextSort,
  pageOf,
  sortBank,
  type BankFilter,
  type BankPage,
  type SortDirection,
  type SortKey,
  type TaskBankRow,
} from './curriculum-bank';
import { curriculumRun } from '../shared/default-run';

export const REFRESH_MS = 3000;
/** Rows per page of the task bank (a long run's bank holds thousands of tasks). */
export const PAGE_SIZES = [25, 50, 100, 250] as const;

export type BankStatus = 'idle' | 'loading' | 'ready' | 'no-run' | 'no-checkpoint' | 'no-curriculum' | 'error';

export class CurriculumView {
  runs = $state.raw<RunEntry[]>([]);
  runId = $state<string | null>(null);
  status = $state<BankStatus>('idle');
  message = $state('');
  rows = $state.raw<TaskBankRow[]>([]);
  sort = $state<{ key: SortKey; direction: SortDirection }>({ key: 'variance', direction: 'descending' });
  series = $state.raw<{ iterations: number[]; share: (number | null)[]; variance: (number | null)[] }>({
    iterations: [],
    share: [],
    variance: [],
  });
  /** Iterations completed in the checkpoint shown. */
  iteration = $state(0);
  config = $state.raw<TrainConfig | null>(null);

  private readonly history = new MetricsHistoryStore();
  private loads = 0;

  filter = $state<BankFilter>({ text: '', origin: '' });
  page = $state(1);
  pageSize = $state<number>(50);

  readonly filtered = $derived(filterBank(this.rows, this.filter));
  readonly sorted = $derived(sortBank(this.filtered, this.sort.key, this.sort.direction));
  /** The page on screen (sorting and filtering apply to the whole bank, then it is paged). */
  readonly shown = $derived<BankPage>(pageOf(this.sorted, this.page, this.pageSize));
  readonly origins = $derived([...new Set(this.rows.map((r) => r.origin))].sort());

  get entry(): RunEntry | null {
    return this.runs.find((r) => r.runId === this.runId) ?? null;
  }

  /**
   * Reads the run list and picks the run to show (default-run.ts): the URL's ?run=, the run training
   * now when it has a curriculum, the run on screen, else the newest run with a curriculum.
   */
  refreshRuns(urlRun: string | null, trainingRunId: string | null): void {
    this.runs = loadRuns();
    const pick = curriculumRun(this.runs, { url: urlRun, training: trainingRunId, shown: this.runId });
    if (pick !== this.runId) this.select(pick);
    else if (!pick) {
      this.status = 'no-run';
      this.message = 'No training runs in this browser yet: start one on the Train page.';
    }
  }

  select(runId: string | null): void {
    this.runId = runId;
    this.rows = [];
    this.series = { iterations: [], share: [], variance: [] };
    this.iteration = 0;
    this.page = 1;
    this.status = runId ? 'loading' : 'no-run';
    this.message = runId
      ? 'Reading the checkpoint…'
      : 'No training runs in this browser yet: start one on the Train page.';
    if (runId) void this.load();
  }

  toggleSort(key: SortKey): void {
    this.sort = nextSort(this.sort, key);
    this.page = 1;
  }
  setFilter(change: Partial<BankFilter>): void {
    this.filter = { ...this.filter, ...change };
    this.page = 1;
  }
  setPageSize(size: number): void {
    this.pageSize = size;
    this.page = 1;
  }
  goTo(page: number): void {
    this.page = Math.min(Math.max(1, page), this.shown.pages);
  }

  /** Reads the chosen run's checkpoint and history and rebuilds the table. */
  async load(): Promise<void> {
    const runId = this.runId;
    const entry = this.entry;
    if (!runId || !entry) return;
    const ticket = ++this.loads;
    const store = new IndexedDbCheckpointStore(runId);
    try {
      const [saved, history] = await Promise.all([store.load(), this.history.list(runId)]);
      if (ticket !== this.loads || runId !== this.runId) return;
      this.config = saved?.config ?? entry.config;
      this.series = curriculumSeries(history);
      if (!saved) {
        this.status = 'no-checkpoint';
        this.message = 'This run has no checkpoint yet (it saves one after each iteration).';
        return;
      }
      this.iteration = saved.iteration;
      if (!saved.curriculum) {
        this.status = 'no-curriculum';
        this.message =
          `This run has no curriculum (${saved.config.mode} mode, curriculum ${saved.config.curriculum ? 'on' : 'off'}): ` +
          'its tasks come from the fixed task pool, so there is no task bank to show.';
        this.rows = [];
        return;
      }
      this.rows = buildTaskBank({ state: saved.curriculum });
      this.status = 'ready';
      this.message = `${this.rows.length} tasks in the bank after iteration ${saved.iteration}.`;
    } catch (error) {
      if (ticket !== this.loads) return;
      this.status = 'error';
      this.message = `Could not read this run's checkpoint: ${(error as Error).message}. Pick another run, or delete this one on the Compare page.`;
    } finally {
      await store.close();
    }
  }
}
