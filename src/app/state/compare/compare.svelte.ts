/**
 * State of the Compare page: the runs in this browser (run list + metric histories), the ones
 * chosen for the overlay, the metric shown, exports and deletion.
 */
import { IndexedDbCheckpointStore } from '../../../core/train/checkpoint';
import type { IterationRecord } from '../../../core/train/loop';
import { EpisodeStore } from '../../storage/episode-store';
import { MetricsHistoryStore } from '../../storage/metrics-store';
import { loadRuns, removeRun, type RunEntry } from '../../storage/run-list';
import {
  alignSeries,
  compareRow,
  dreamGymRow,
  filterChoices,
  filterRuns,
  runLabels,
  runsExport,
  toCsv,
  type AlignedSeries,
  type CompareRow,
  type DreamGymRow,
  type RunFilter,
  type XAxis,
} from './compare';

/** Deletes a run's checkpoint record. */
async function deleteCheckpoint(runId: string): Promise<void> {
  const store = new IndexedDbCheckpointStore(runId);
  try {
    await store.remove();
  } finally {
    await store.close();
  }
}

function download(text: string, type: string, filename: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export class CompareView {
  runs = $state.raw<RunEntry[]>([]);
  histories = $state.raw<Record<string, IterationRecord[]>>({});
  selected = $state.raw<string[]>([]);
  /** Held-out success in the real env: DreamGym's headline. */
  metric = $state('eval/success_rate');
  /** The x axis of the curves: real steps spent by default (what DreamGym saves). */
  axis = $state<XAxis>('real_steps');
  smoothing = $state(0.6);
  /** The DreamGym table's target: the real steps spent when held-out success first reached it. */
  target = $state(0.5);
  filter = $state<RunFilter>({ env: '', mode: '', tag: '' });
  message = $state('');
  error = $state<string | null>(null);
  confirmingDelete = $state<string | null>(null);
  busy = $state(false);

  private readonly store = new MetricsHistoryStore();
  private loaded = false;

  readonly choices = $derived(filterChoices(this.runs));
  /** The runs the filter lets through (the table lists these; the chart and exports take the ticked ones among them). */
  readonly listed = $derived(filterRuns(this.runs, this.filter));
  readonly labels = $derived(runLabels(this.listed));
  readonly rows = $derived<CompareRow[]>(this.listed.map((r) => compareRow(r, this.histories[r.runId] ?? [])));
  readonly chosen = $derived(this.listed.filter((r) => this.selected.includes(r.runId)));
  readonly series = $derived<AlignedSeries>(
    alignSeries(
      this.chosen.map((r) => this.histories[r.runId] ?? []),
      this.metric,
      this.smoothing,
      this.axis,
    ),
  );
  readonly chosenLabels = $derived(this.chosen.map((r) => this.labels[this.listed.indexOf(r)]));
  readonly dreamGym = $derived<DreamGymRow[]>(
    this.chosen.map((r) => dreamGymRow(r, this.histories[r.runId] ?? [], this.target)),
  );

  /** Re-reads the run list and every run's history; the first time, all runs are chosen. */
  async refresh(): Promise<void> {
    try {
      const runs = loadRuns();
      const entries = await Promise.all(runs.map(async (r) => [r.runId, await this.store.list(r.runId)] as const));
      this.runs = runs;
      this.histories = Object.fromEntries(entries);
      const ids = new Set(runs.map((r) => r.runId));
      this.selected = this.loaded ? this.selected.filter((id) => ids.has(id)) : runs.map((r) => r.runId);
      this.loaded = true;
      if (!this.message)
        this.message = runs.length
          ? `${runs.length} runs in this browser.`
          : 'No runs yet: train one on the Train page.';
    } catch (error) {
      this.error = `Could not read the runs' metric histories: ${(error as Error).message}.`;
    }
  }

  /** `#/compare?tag=start-here&env=…&mode=…&metric=…&axis=…`: a link that opens the page on some runs (the start-here page links here). */
  applyQuery(query: string): void {
    const q = new URLSearchParams(query);
    this.filter = { env: q.get('env') ?? '', mode: q.get('mode') ?? '', tag: q.get('tag') ?? '' };
    const metric = q.get('metric');
    if (metric) this.metric = metric;
    const axis = q.get('axis');
    if (axis === 'iteration' || axis === 'real_steps' || axis === 'dream_steps' || axis === 'wall_time')
      this.axis = axis;
  }

  toggle(runId: string, on: boolean): void {
    this.selected = on ? [...new Set([...this.selected, runId])] : this.selected.filter((id) => id !== runId);
  }

  exportJson(): void {
    if (this.chosen.length === 0) {
      this.message = 'Choose at least one run to export.';
      return;
    }
    const data = runsExport(
      this.chosen.map((entry) => ({ entry, history: this.histories[entry.runId] ?? [] })),
      new Date(),
    );
    download(`${JSON.stringify(data, null, 2)}\n`, 'application/json', `dreamgym-runs-${this.chosen.length}.json`);
    this.message = `Exported ${this.chosen.length} runs (configs and metric histories) as JSON.`;
  }

  exportCsv(): void {
    const rows = this.rows.filter((r) => this.selected.includes(r.runId));
    if (rows.length === 0) {
      this.message = 'Choose at least one run to export.';
      return;
    }
    download(toCsv(rows), 'text/csv', `dreamgym-runs-${rows.length}.csv`);
    this.message = `Exported the table of ${rows.length} runs as CSV.`;
  }

  /** Deletes a run's checkpoint, metric history, kept episodes (Inspect) and run-list entry (not the run training now). */
  async remove(runId: string, activeRunId: string | null): Promise<void> {
    this.confirmingDelete = null;
    this.error = null;
    if (runId === activeRunId) {
      this.error = 'This run is training now: stop it on the Train page before deleting it.';
      return;
    }
    this.busy = true;
    try {
      await deleteCheckpoint(runId);
      await this.store.remove(runId);
      const episodes = new EpisodeStore();
      try {
        await episodes.remove(runId);
      } finally {
        await episodes.close();
      }
      removeRun(runId);
      this.message = `Deleted run ${runId} (checkpoint, metric history, kept episodes and list entry).`;
      await this.refresh();
    } catch (error) {
      this.error = `Could not delete run ${runId}: ${(error as Error).message}. Reload the page and try again.`;
    } finally {
      this.busy = false;
    }
  }
}
