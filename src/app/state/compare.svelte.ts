/**
 * State of the Compare page: the runs in this browser (run list + metric histories), the ones
 * chosen for the overlay, the metric shown, exports and deletion.
 */
import { IndexedDbCheckpointStore } from '../../core/train/checkpoint';
import type { IterationRecord } from '../../core/train/loop';
import { EpisodeStore } from '../workers/episode-store';
import { MetricsHistoryStore } from '../workers/metrics-store';
import { loadRuns, removeRun, type RunEntry } from '../workers/run-list';
import { alignSeries, compareRow, runLabels, runsExport, toCsv, type AlignedSeries, type CompareRow } from './compare';

/** Deletes a run's checkpoint record. */
async function deleteCheckpoint(runId: string): Promise<void> {
  const store = new IndexedDbCheckpointStore(runId);
  try { await store.remove(); } finally { await store.close(); }
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
  metric = $state('charts/success_rate');
  smoothing = $state(0.6);
  message = $state('');
  error = $state<string | null>(null);
  confirmingDelete = $state<string | null>(null);
  busy = $state(false);

  private readonly store = new MetricsHistoryStore();
  private loaded = false;

  readonly labels = $derived(runLabels(this.runs));
  readonly rows = $derived<CompareRow[]>(this.runs.map((r) => compareRow(r, this.histories[r.runId] ?? [])));
  readonly chosen = $derived(this.runs.filter((r) => this.selected.includes(r.runId)));
  readonly series = $derived<AlignedSeries>(alignSeries(this.chosen.map((r) => this.histories[r.runId] ?? []), this.metric, this.smoothing));
  readonly chosenLabels = $derived(this.chosen.map((r) => this.labels[this.runs.indexOf(r)]));

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
      if (!this.message) this.message = runs.length ? `${runs.length} runs in this browser.` : 'No runs yet: train one on the Train page.';
    } catch (error) {
      this.error = `Could not read the runs' metric histories: ${(error as Error).message}.`;
    }
  }

  toggle(runId: string, on: boolean): void {
    this.selected = on ? [...new Set([...this.selected, runId])] : this.selected.filter((id) => id !== runId);
  }

  exportJson(): void {
    if (this.chosen.length === 0) { this.message = 'Choose at least one run to export.'; return; }
    const data = runsExport(this.chosen.map((entry) => ({ entry, history: this.histories[entry.runId] ?? [] })), new Date());
    download(`${JSON.stringify(data, null, 2)}\n`, 'application/json', `dreamgym-runs-${this.chosen.length}.json`);
    this.message = `Exported ${this.chosen.length} runs (configs and metric histories) as JSON.`;
  }

  exportCsv(): void {
    const rows = this.rows.filter((r) => this.selected.includes(r.runId));
    if (rows.length === 0) { this.message = 'Choose at least one run to export.'; return; }
    download(toCsv(rows), 'text/csv', `dreamgym-runs-${rows.length}.csv`);
    this.message = `Exported the table of ${rows.length} runs as CSV.`;
  }

  /** Deletes a run's checkpoint, metric history, kept episodes (Inspect) and run-list entry (not the run training now). */
  async remove(runId: string, activeRunId: string | null): Promise<void> {
    this.confirmingDelete = null;
    this.error = null;
    if (runId === activeRunId) { this.error = 'This run is training now: stop it on the Train page before deleting it.'; return; }
    this.busy = true;
    try {
      await deleteCheckpoint(runId);
      await this.store.remove(runId);
      const episodes = new EpisodeStore();
      try { await episodes.remove(runId); } finally { await episodes.close(); }
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
