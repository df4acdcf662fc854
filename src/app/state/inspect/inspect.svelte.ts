/**
 * State of the Inspect page: the episodes the trainer worker stored for a run (EpisodeStore in
 * IndexedDB), filtered; one episode step by step; and for a dreamed step the real env's answer
 * to the same action, computed here on demand (real envs are fast) and compared with the dream.
 * Everything shown is plain text.
 */
import {
  compareOutcome,
  acceptedActionsBefore,
  nextOf,
  replayInRealEnv,
  type EpisodeTrace,
  type OutcomeComparison,
  type RealOutcome,
} from '../../../core/train/trace';
import { EpisodeStore, type EpisodeSummary } from '../../storage/episode-store';
import { loadRuns, type RunEntry } from '../../storage/run-list';
import { inspectDefaultRun } from '../shared/default-run';
import {
  DEFAULT_FILTERS,
  diffText,
  episodePage,
  filterEpisodes,
  inspectQuery,
  parseInspectQuery,
  type EpisodeFilters,
  type EpisodePage,
  type TextDiff,
} from './inspect-logic';

export interface RealView {
  outcome: RealOutcome;
  comparison: OutcomeComparison | null;
  /** Dream (left) vs real (right) next observation. */
  diff: TextDiff | null;
}

export class InspectState {
  runs = $state.raw<RunEntry[]>([]);
  runId = $state<string | null>(null);
  episodes = $state.raw<EpisodeSummary[]>([]);
  filters = $state<EpisodeFilters>({ ...DEFAULT_FILTERS });
  trace = $state.raw<EpisodeTrace | null>(null);
  /** 0-based. */
  stepIndex = $state(0);
  real = $state.raw<RealView | null>(null);
  computing = $state(false);
  loading = $state(false);
  message = $state('');
  error = $state<string | null>(null);
  private readonly store = new EpisodeStore();
  private listToken = 0;
  private realToken = 0;

  get filtered(): EpisodeSummary[] {
    return filterEpisodes(this.episodes, this.filters);
  }
  /** The list's page (1-based; clamped to the filtered list). */
  page = $state(1);
  get shown(): EpisodePage {
    return episodePage(this.filtered, this.page);
  }
  goToPage(page: number): void {
    this.page = Math.min(Math.max(1, page), this.shown.pages);
  }
  search(text: string): void {
    this.filters.text = text;
    this.page = 1;
  }
  get step() {
    return this.trace?.steps[this.stepIndex] ?? null;
  }
  get next() {
    return this.trace && this.step ? nextOf(this.trace, this.stepIndex) : null;
  }
  get query(): string {
    return inspectQuery({
      run: this.runId,
      episode: this.trace ? { iteration: this.trace.iteration, index: this.trace.index } : null,
      step: this.trace ? this.stepIndex + 1 : null,
    });
  }

  /** Opens what a URL query asks for, else the run training now, else the newest dream run (default-run.ts). */
  async open(query: string, trainingRunId: string | null): Promise<void> {
    this.runs = loadRuns();
    const q = parseInspectQuery(query);
    const runId = q.run ?? inspectDefaultRun(this.runs, trainingRunId);
    if (runId !== this.runId) await this.selectRun(runId);
    else await this.refresh();
    if (q.episode && (this.trace?.iteration !== q.episode.iteration || this.trace?.index !== q.episode.index)) {
      await this.openEpisode(q.episode.iteration, q.episode.index, (q.step ?? 1) - 1);
    } else if (q.step && this.trace) {
      this.goTo(q.step - 1);
    }
  }

  async selectRun(runId: string | null): Promise<void> {
    this.runId = runId;
    this.trace = null;
    this.real = null;
    this.episodes = [];
    this.page = 1;
    await this.refresh();
  }

  /** Re-reads the run's episode list (the worker adds an iteration's episodes as it trains). */
  async refresh(): Promise<void> {
    const token = ++this.listToken;
    this.runs = loadRuns();
    if (!this.runId) {
      this.message = 'No training run yet: start one on the Train page, then inspect its episodes here.';
      return;
    }
    this.loading = true;
    this.error = null;
    try {
      const episodes = await this.store.list(this.runId);
      if (token !== this.listToken) return;
      this.episodes = episodes;
      const iterations = new Set(episodes.map((e) => e.iteration));
      this.message =
        episodes.length === 0
          ? 'No episodes stored for this run yet (they appear after its first iteration).'
          : `${episodes.length} episodes of the last ${iterations.size} iterations (the page keeps the last 20 of each run).`;
    } catch (error) {
      if (token === this.listToken) this.error = `Could not read the stored episodes: ${(error as Error).message}`;
    } finally {
      if (token === this.listToken) this.loading = false;
    }
  }

  async openEpisode(iteration: number, index: number, step = 0): Promise<void> {
    if (!this.runId) return;
    this.error = null;
    const trace = await this.store.get(this.runId, iteration, index);
    if (!trace) {
      this.error = `Episode ${iteration}-${index} of this run is not stored (only the last 20 iterations are kept). Pick one from the list.`;
      return;
    }
    this.trace = trace;
    this.goTo(step);
  }

  closeEpisode(): void {
    this.trace = null;
    this.real = null;
  }

  goTo(step: number): void {
    if (!this.trace) return;
    this.stepIndex = Math.max(0, Math.min(this.trace.steps.length - 1, step));
    void this.computeReal();
  }

  nextStep(): void {
    this.goTo(this.stepIndex + 1);
  }
  previousStep(): void {
    this.goTo(this.stepIndex - 1);
  }

  /** For a dreamed step: the real env's answer to the same action, and where it differs. */
  private async computeReal(): Promise<void> {
    const token = ++this.realToken;
    this.real = null;
    const trace = this.trace;
    if (!trace || trace.phase !== 'dream') return;
    const i = this.stepIndex;
    const step = trace.steps[i];
    this.computing = true;
    try {
      const outcome = await replayInRealEnv(trace.task.env, trace.task, acceptedActionsBefore(trace, i), step.action);
      if (token !== this.realToken) return;
      if (outcome.kind === 'none') {
        this.real = { outcome, comparison: null, diff: null };
        return;
      }
      this.real = {
        outcome,
        comparison: compareOutcome(trace, i, outcome),
        diff: diffText(nextOf(trace, i).observation, outcome.result.text),
      };
    } catch (error) {
      if (token === this.realToken)
        this.real = {
          outcome: { kind: 'none', reason: `The real env failed on this step: ${(error as Error).message}` },
          comparison: null,
          diff: null,
        };
    } finally {
      if (token === this.realToken) this.computing = false;
    }
  }
}
