/**
 * State of the Train page (docs/architecture.md §9.1: components render, state lives here). One TrainSession
 * lives for the whole app (provided by context from App.svelte), so switching pages does not stop
 * a run. It owns the TrainerClient, the run list entry and the metric series for the charts.
 */
import { getContext, setContext } from 'svelte';
import type { TrainConfig } from '../../../core/train/config';
import type { IterationRecord } from '../../../core/train/loop';
import { TrainerClient } from '../../workers/trainer/trainer-client';
import type { TrainerProgress, TrainerStatus } from '../../workers/trainer/trainer-protocol';
import type { LiveProgress } from '../../../core/train/progress';
import type { TryStepResult } from '../../../core/experience/try-step';
import type { EngineRuntime } from '../../workers/trainer/experience-source';
import { recordSpeed, speedFromLive } from '../setup/engine-speed';
import { MetricsHistoryStore } from '../../storage/metrics-store';
import { loadRuns, newRunId, removeRun, unfinishedRun, upsertRun, type RunEntry } from '../../storage/run-list';
import {
  configFromParams,
  engineConflict,
  engineRuntimeFromParams,
  paramsFromConfig,
  paramsFromQuery,
  paramsToQuery,
  withEngine,
  type TrainParams,
} from './train-params';
import { iterationProgress, pastRuns, reopenedStatus } from './train-runs';
import { seriesRecords } from './train-charts';
import { dreamWarnings } from '../../../core/train/dream-health';
import { engineSetup } from '../setup/engine.svelte';
import { TrainClock } from './train-clock.svelte';
import type { XAxis } from '../compare/compare';

/** Every chart the Train page can draw (docs/architecture.md §3.11 names). */
export const CHART_METRICS = [
  'charts/success_rate',
  'dream/success_rate',
  'charts/episodic_return',
  'dream/episodic_return',
  'eval/success_rate',
  'losses/policy_loss',
  'losses/entropy',
] as const;

/**
 * The charts of a mode: real rollouts' outcomes are `charts/…`, a dream's own judgement `dream/…`
 * (never one chart for both: metrics.ts); S2R has both phases. Held-out real success in every mode.
 */
export function chartMetrics(mode: TrainParams['mode']): (typeof CHART_METRICS)[number][] {
  const rollouts =
    mode === 'real'
      ? (['charts/success_rate', 'charts/episodic_return'] as const)
      : mode === 'dream'
        ? (['dream/success_rate', 'dream/episodic_return'] as const)
        : (['dream/success_rate', 'charts/success_rate'] as const);
  return [...rollouts, 'eval/success_rate', 'losses/policy_loss', 'losses/entropy'];
}

export interface MetricSeries {
  iterations: number[];
  values: Record<string, (number | null)[]>;
}

const EMPTY_SERIES: MetricSeries = { iterations: [], values: {} };

const IDLE: TrainerStatus = {
  runId: null,
  state: 'idle',
  iteration: 0,
  iterations: 0,
  realSteps: 0,
  dreamSteps: 0,
  backend: null,
  backendReason: null,
  decoding: null,
  message: 'No run yet. Pick the settings and press Start.',
};

/** Appends records to a series (a record at or before the last iteration replaces the tail: a repeated iteration after a crash). */
export function appendRecords(series: MetricSeries, records: IterationRecord[]): MetricSeries {
  if (records.length === 0) return series;
  let keep = series.iterations.length;
  while (keep > 0 && series.iterations[keep - 1] >= records[0].iteration) keep--;
  const names = new Set([...Object.keys(series.values), ...records.flatMap((r) => Object.keys(r.metrics))]);
  const iterations = [...series.iterations.slice(0, keep), ...records.map((r) => r.iteration)];
  const values: Record<string, (number | null)[]> = {};
  for (const name of names) {
    const old = series.values[name] ?? [];
    const head = Array.from({ length: keep }, (_, i) => old[i] ?? null);
    values[name] = [...head, ...records.map((r) => r.metrics[name] ?? null)];
  }
  return { iterations, values };
}

export class TrainSession {
  params = $state<TrainParams>(paramsFromQuery(''));
  status = $state.raw<TrainerStatus>(IDLE);
  series = $state.raw<MetricSeries>(EMPTY_SERIES);
  /** What the run's dream so far says about its experience model (core/train/dream-health.ts). */
  readonly warnings = $derived(dreamWarnings(seriesRecords(this.series)));
  /** The config of the run on screen. */
  runConfig = $state.raw<TrainConfig | null>(null);
  /** A run left unfinished by a reload or crash, offered for resuming. */
  resumable = $state.raw<RunEntry | null>(null);
  error = $state<string | null>(null);
  /** Set when the worker died: the page offers a restart from the last checkpoint. */
  crashed = $state<string | null>(null);
  /** A control request is in flight. */
  busy = $state(false);
  smoothing = $state(0.6);
  /** The charts' x axis (a mode without that axis falls back to the iteration: see chartAxes). */
  axis = $state<XAxis>('iteration');
  /** What the model is doing inside the iteration in flight (the worker sends it every second). */
  live = $state.raw<LiveProgress | null>(null);
  /** The run's time estimates from this machine's measured speed (train-clock.svelte.ts). */
  readonly clock = new TrainClock();
  /** This browser's past runs, newest first (the "Past runs" list: reopen one with its charts and settings). */
  runs = $state.raw<RunEntry[]>([]);

  private client: TrainerClient | null = null;
  private runEntry: RunEntry | null = null;
  private readonly history = new MetricsHistoryStore();
  /** The Setup engine spec the form last followed (undefined: none yet; see followSetup). */
  private setupFollowed: string | undefined;
  /** The form's engine came from a link's own ?llm= (it wins until Setup's choice changes). */
  private linkEngine = false;

  /**
   * `restore` (the page, not unit tests): a run left unfinished by a reload resumes from its
   * checkpoint at once, with its charts (the README's promise); otherwise the newest past run is
   * reopened (on a plain #/train, or the link it ran from), so a finished run is still on screen after a reload.
   */
  constructor(query = '', restore = typeof window !== 'undefined' && typeof Worker !== 'undefined') {
    this.applyQuery(query);
    this.runs = pastRuns(loadRuns());
    const unfinished = unfinishedRun(loadRuns());
    if (!restore) {
      this.resumable = unfinished;
      return;
    }
    const newest = this.runs[0];
    if (unfinished) void this.resumeRun(unfinished);
    else if (newest && (!query || newest.query === query)) void this.openRun(newest.runId);
  }

  /** The form from a #/train?… link; a link without its own engine (?llm=) gets Setup's (engine.ts dreamEngine). */
  applyQuery(query: string): void {
    const params = paramsFromQuery(query);
    this.linkEngine = new URLSearchParams(query).has('llm');
    const chosen = this.linkEngine ? null : setupEngineSpec(params.env);
    this.params = chosen ? withEngine(params, chosen) : params;
  }

  /**
   * Setup's engine is the form's engine: whenever the engine for the form's env changes (spec '' is
   * the noisy oracle; EngineSetup.formSpec), the form takes it. A link's own engine (?llm=) wins
   * until that changes. The page's own URL always carries the engine, so only a followed or
   * opened link counts as one (applyQuery), never the page's own address.
   */
  followSetup(spec: string): void {
    if (this.setupFollowed === undefined && this.linkEngine) {
      this.setupFollowed = spec;
      return;
    }
    if (spec === this.setupFollowed || this.active) return;
    this.setupFollowed = spec;
    if (spec !== this.params.llm) this.params = withEngine(this.params, spec);
  }

  /** Shows a past run on the page: its settings in the form, its charts and counters from this browser's history. */
  async openRun(runId: string): Promise<void> {
    if (this.active) {
      this.error = 'A run is active: stop it before opening another.';
      return;
    }
    const entry = loadRuns().find((r) => r.runId === runId);
    if (!entry) {
      this.error = `The run '${runId}' is not in this browser's run list any more (deleted on Compare?).`;
      return;
    }
    const records = await this.history.list(runId).catch(() => []);
    if (this.active) return;
    this.error = null;
    this.crashed = null;
    this.live = null;
    this.params = entry.query ? paramsFromQuery(entry.query) : paramsFromConfig(entry.config);
    this.runConfig = entry.config;
    this.runEntry = entry;
    this.series = appendRecords(EMPTY_SERIES, records);
    this.status = reopenedStatus(entry, records);
  }

  get state() {
    return this.status.state;
  }
  get active() {
    return ['starting', 'running', 'paused'].includes(this.status.state);
  }
  get query() {
    return paramsToQuery(this.params);
  }
  get announcement(): string {
    const s = this.status;
    if (this.crashed) return this.crashed;
    if (s.state === 'idle') return s.message;
    return `${capitalise(s.state)}: ${iterationProgress(s.iteration, s.iterations, this.runConfig?.mode)}. ${s.message}`;
  }

  async start(): Promise<void> {
    this.error = null;
    // A chat-only setting with an engine that is not a chat model: refused here, with the reason.
    const conflict = engineConflict(this.params);
    if (conflict) {
      this.error = conflict;
      return;
    }
    let config: TrainConfig;
    try {
      config = configFromParams(this.params);
    } catch (error) {
      this.error = (error as Error).message;
      return;
    }
    const runId = newRunId(config);
    this.runEntry = {
      runId,
      query: this.query,
      config,
      ...(this.params.backend ? { backend: this.params.backend } : {}),
      createdAt: Date.now(),
      state: 'starting',
      iteration: 0,
      iterations: config.iterations,
    };
    upsertRun(this.runEntry);
    this.runs = pastRuns(loadRuns());
    // The run's time is counted from the click: a stale speed check is taken again first.
    const entry = this.runEntry;
    await this.clock.check();
    this.clock.begin(config);
    await this.launch(entry, false);
  }

  /** Resumes a run from its IndexedDB checkpoint (after a reload or a worker crash). */
  async resumeRun(entry: RunEntry): Promise<void> {
    this.error = null;
    this.resumable = null;
    this.params = paramsFromQuery(entry.query);
    this.runEntry = entry;
    this.clock.cancel(); // a resumed run's start is not known: no run estimate
    await this.launch(entry, true);
  }

  discard(entry: RunEntry): void {
    removeRun(entry.runId);
    if (this.resumable?.runId === entry.runId) this.resumable = null;
  }

  /** After a crash: a fresh worker continues the run from its last checkpoint. */
  restartAfterCrash(): Promise<void> {
    if (!this.runEntry) return Promise.resolve();
    return this.resumeRun(this.runEntry);
  }

  private async launch(entry: RunEntry, resume: boolean): Promise<void> {
    if (this.active) {
      this.error = 'A run is already active: stop it first.';
      return;
    }
    this.crashed = null;
    this.runConfig = entry.config;
    this.series = EMPTY_SERIES;
    this.live = null;
    const client = this.workerClient();
    this.status = {
      ...IDLE,
      runId: entry.runId,
      state: 'starting',
      iterations: entry.iterations,
      message: resume ? 'Resuming from the checkpoint…' : 'Starting…',
    };
    try {
      // config.llm names the engine; the extras (answer budget from the run's URL, API key and
      // context from Setup) travel beside it and are never saved with the run.
      const params = paramsFromQuery(entry.query);
      const request = {
        runId: entry.runId,
        config: entry.config,
        resume,
        backend: entry.backend,
        engine: { ...engineSetup().runtime(entry.config.llm), ...engineRuntimeFromParams(params) },
      };
      const final = await client.start(request, (p) => this.onProgress(p));
      this.applyStatus(final);
    } catch (error) {
      if (this.client?.gone) return;
      const message = (error as Error).message;
      this.error = message;
      // A run that failed (at start, or a resume that could not load) is marked failed, with its reason (Compare shows it).
      if (this.status.runId === entry.runId && this.status.state !== 'error')
        this.applyStatus({ ...this.status, state: 'error', message });
    }
  }

  /** The trainer worker's client (a fresh one after a crash). */
  private workerClient(): TrainerClient {
    if (!this.client || this.client.gone) {
      this.client = new TrainerClient();
      const client = this.client;
      client.oncrash = (error) => {
        if (this.client !== client) return;
        this.crashed = error.message;
        this.status = { ...this.status, state: 'error', message: error.message };
      };
    }
    return this.client;
  }

  /** Setup's "Try one step", in the trainer worker (the engine is loaded there as for a run, and stays loaded). */
  tryStep(config: TrainConfig, engine: EngineRuntime, attempt: number): Promise<TryStepResult> {
    return this.workerClient().tryStep({ config, engine, attempt });
  }

  private onProgress(progress: TrainerProgress): void {
    if (progress.kind === 'live') {
      this.live = progress.live;
      return;
    }
    if (progress.kind === 'metrics' && this.live && this.runConfig) {
      // An iteration ended: the engine's measured speed is kept for the next cost estimate.
      const measured = speedFromLive(this.live, `the run ${this.status.runId ?? ''}`.trim(), Date.now());
      if (measured) recordSpeed(this.runConfig.llm, measured);
    }
    if (progress.kind === 'history') this.series = appendRecords(EMPTY_SERIES, progress.records);
    else if (progress.kind === 'metrics') this.series = appendRecords(this.series, progress.records);
    this.applyStatus(progress.status);
  }

  private applyStatus(status: TrainerStatus): void {
    this.status = status;
    this.clock.record(status.iteration);
    if (status.state === 'finished') this.clock.finish();
    else if (['error', 'stopped', 'paused'].includes(status.state)) this.clock.cancel();
    if (this.runEntry && status.runId === this.runEntry.runId && status.state !== 'idle') {
      const changed = status.state !== this.runEntry.state;
      this.runEntry = { ...this.runEntry, state: status.state, iteration: status.iteration };
      upsertRun({
        runId: this.runEntry.runId,
        state: status.state,
        iteration: status.iteration,
        ...(status.state === 'error' ? { message: status.message } : {}),
      });
      if (changed) this.runs = pastRuns(loadRuns());
    }
  }

  pause() {
    return this.control(() => this.client!.pause());
  }
  resume() {
    return this.control(() => this.client!.resume());
  }
  stop() {
    return this.control(() => this.client!.stop());
  }
  step() {
    return this.control(async () => {
      await this.client!.step();
      return this.client!.status();
    });
  }
  /** Test/debug only: crash the worker. */
  crashWorker() {
    return this.client?.crash();
  }

  private async control(action: () => Promise<TrainerStatus>): Promise<void> {
    if (!this.client) return;
    this.busy = true;
    this.error = null;
    try {
      this.applyStatus(await action());
    } catch (error) {
      if (!this.client?.gone) this.error = (error as Error).message;
    } finally {
      this.busy = false;
    }
  }
}

/** Setup's engine for `env` as the form's engine ('' for the oracle and while a check is out: EngineSetup.formSpec). */
export function setupEngineSpec(env: string): string {
  return engineSetup().formSpec(env) ?? '';
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

const KEY = Symbol('train-session');
export function provideTrainSession(session: TrainSession): TrainSession {
  return setContext(KEY, session);
}
export function useTrainSession(): TrainSession {
  return getContext<TrainSession>(KEY);
}
