/**
 * State of the Experience model page (design.md §6: components render, state lives here): training
 * a learned experience model on the buffer's real data in the Experience model worker, the live
 * progress and loss curves, the resume offer for an unfinished training (its epoch checkpoint is
 * in IndexedDB), and the evaluation of a model (the fidelity audit, dreamed vs real). One session
 * for the app (provided by context from App.svelte), so leaving the page does not stop a training.
 */
import { getContext, setContext } from 'svelte';
import type { EpochRecord } from '../../core/experience/learned/fit';
import { ExpModelClient, ExpModelStoppedError } from '../workers/expmodel-client';
import type { Evaluation, ExpModelProgress, ExpModelStatus, TrainOutcome } from '../workers/expmodel-protocol';
import { defaultLearnedStore, type CheckpointSummary } from '../workers/learned-store';
import { BufferState } from './buffer.svelte';
import { engineSetup } from './engine.svelte';
import { addBatch, addEpoch, EMPTY_LOSS, lossFromHistory, progressOf, type LossSeries, type TrainProgress } from './expmodel-view';
import { settingsFromQuery, settingsProblems, settingsToQuery, type ExpModelSettings } from './expmodel-settings';
import { formatLearnedPath, learnedSpec, parseLearnedPath } from './learned-path';
import { learnedModels } from './learned-models.svelte';
import { paramsForPreset, paramsToQuery, presetsFor, TINY, withEngine } from './train-params';

const IDLE: ExpModelStatus = { state: 'idle', path: null, backend: null, backendReason: null, message: 'Nothing trained yet. Pick the settings and press Train.' };

export class ExpModelSession {
  settings = $state<ExpModelSettings>(settingsFromQuery(''));
  status = $state.raw<ExpModelStatus>(IDLE);
  progress = $state.raw<TrainProgress | null>(null);
  loss = $state.raw<LossSeries>(EMPTY_LOSS);
  lastEpoch = $state.raw<EpochRecord | null>(null);
  /** Epochs whose checkpoint is in IndexedDB (this training). */
  checkpointEpochs = $state(0);
  audit = $state.raw<{ done: number; total: number } | null>(null);
  evaluation = $state.raw<Evaluation | null>(null);
  /** The last training that finished (its model is stored). */
  trained = $state.raw<Extract<TrainOutcome, { outcome: 'finished' }> | null>(null);
  unfinished = $state.raw<CheckpointSummary<ExpModelSettings>[]>([]);
  error = $state<string | null>(null);
  /** A train or evaluate request is running. */
  running = $state(false);
  readonly buffer = new BufferState();
  readonly models = learnedModels();
  private client: ExpModelClient | null = null;

  constructor(query = '') {
    this.settings = settingsFromQuery(query);
  }

  get query(): string { return settingsToQuery(this.settings); }

  /** Another environment; a default model name follows it. */
  changeEnv(env: string): void {
    const name = this.settings.name === `${this.settings.env}-mine` ? `${env}-mine` : this.settings.name;
    this.settings = { ...this.settings, env, name };
  }

  /** Real transitions (offline and real) of an env in the buffer. */
  realTransitions(env: string): number {
    const by = this.buffer.stats?.byEnvAndSource[env] ?? {};
    return (by.offline ?? 0) + (by.real ?? 0);
  }

  async refresh(): Promise<void> {
    await Promise.all([this.buffer.refresh(), this.models.refresh(), this.refreshUnfinished()]);
  }

  private async refreshUnfinished(): Promise<void> {
    try {
      this.unfinished = await defaultLearnedStore().listCheckpoints<ExpModelSettings>();
    } catch (error) {
      this.error = `Could not read the unfinished trainings: ${(error as Error).message}`;
    }
  }

  /** Imports the shipped offline datasets into the buffer (the Buffer page's action). */
  async loadShippedData(): Promise<void> {
    await this.buffer.loadShipped();
  }

  private ensureClient(): ExpModelClient {
    if (!this.client || this.client.gone) this.client = new ExpModelClient();
    return this.client;
  }

  async train(): Promise<void> {
    const settings = $state.snapshot(this.settings) as ExpModelSettings;
    const problems = settingsProblems(settings);
    if (problems.length) { this.error = problems.join(' '); return; }
    if (this.buffer.stats && this.realTransitions(settings.env) === 0) {
      this.error = `The replay buffer has no real transitions of ${settings.env} to learn from: load the shipped datasets (button above, or the Buffer page) or import trajectories first.`;
      return;
    }
    await this.runTraining(settings, false, []);
  }

  /** Continues an unfinished training from its last epoch's checkpoint. */
  async resumeTraining(entry: CheckpointSummary<ExpModelSettings>): Promise<void> {
    this.settings = { ...entry.settings, backend: this.settings.backend };
    await this.runTraining($state.snapshot(this.settings) as ExpModelSettings, true, entry.history);
  }

  async discard(entry: CheckpointSummary<ExpModelSettings>): Promise<void> {
    await defaultLearnedStore().deleteCheckpoint(entry.name);
    await this.refreshUnfinished();
  }

  private async runTraining(settings: ExpModelSettings, resume: boolean, history: EpochRecord[]): Promise<void> {
    if (this.running) { this.error = 'A training or an evaluation is running: stop it first.'; return; }
    this.error = null;
    this.running = true;
    this.evaluation = null;
    this.audit = null;
    this.progress = null;
    this.lastEpoch = history[history.length - 1] ?? null;
    this.loss = lossFromHistory(history);
    this.checkpointEpochs = history.length;
    this.status = { ...IDLE, state: 'starting', path: `local/${settings.name}`, message: resume ? 'Resuming from the checkpoint…' : 'Starting…' };
    let outcome: TrainOutcome | null = null;
    try {
      outcome = await this.ensureClient().train(settings, resume, (p) => this.onProgress(p));
    } catch (error) {
      if (error instanceof ExpModelStoppedError) outcome = { outcome: 'stopped', path: `local/${settings.name}`, epochsDone: this.checkpointEpochs };
      else this.error = (error as Error).message;
    } finally {
      this.running = false;
    }
    if (outcome?.outcome === 'stopped') {
      this.status = { ...this.status, state: 'stopped', message: outcome.epochsDone > 0
        ? `Stopped. The checkpoint after epoch ${outcome.epochsDone} stays in this browser: resume it any time, even after a reload.`
        : 'Stopped before the first epoch ended: nothing was kept.' };
    }
    await Promise.all([this.refreshUnfinished(), this.models.refresh()]);
    if (outcome?.outcome === 'finished') {
      this.trained = outcome;
      await this.evaluate(outcome.path, settings.env);
    }
  }

  /** The fidelity audit and dreamed-vs-real examples of a model (`local/<name>` or `models/<env>`). */
  async evaluate(path: string, env: string): Promise<void> {
    if (this.running) { this.error = 'A training or an evaluation is running: stop it first.'; return; }
    this.error = null;
    this.running = true;
    this.audit = null;
    this.evaluation = null;
    const s = this.settings;
    try {
      this.evaluation = await this.ensureClient().evaluate({ path, env, audit: s.audit, samples: s.samples, seed: 0, backend: s.backend }, (p) => this.onProgress(p));
    } catch (error) {
      if (!(error instanceof ExpModelStoppedError)) this.error = (error as Error).message;
      else this.status = { ...this.status, state: 'stopped', message: 'The evaluation was stopped.' };
    } finally {
      this.running = false;
    }
  }

  async stop(): Promise<void> {
    await this.client?.stop();
  }

  private onProgress(p: ExpModelProgress): void {
    switch (p.kind) {
      case 'status': this.status = p.status; break;
      case 'batch': this.progress = progressOf(p); this.loss = addBatch(this.loss, p); break;
      case 'epoch': this.lastEpoch = p.record; this.loss = addEpoch(this.loss, p.record); break;
      case 'history': this.loss = lossFromHistory(p.records); this.lastEpoch = p.records[p.records.length - 1] ?? null; break;
      case 'checkpoint': this.checkpointEpochs = p.epochsDone; break;
      case 'audit': this.audit = { done: p.done, total: p.total }; break;
    }
  }

  // ---- using a model ----------------------------------------------------------------------------

  /** A Train page link that dreams with `path` on `env`'s first preset (tiny batches when `tiny`). */
  trainHref(path: string, env: string, tiny = false): string {
    const preset = presetsFor(env)[0];
    if (!preset) return '#/train';
    const params = withEngine({ ...paramsForPreset(preset, tiny ? TINY : {}), mode: 'dream' }, learnedSpec(parseLearnedPath(path)));
    return `#/train?${paramsToQuery(params)}`;
  }

  /** Makes `path` the dream engine chosen on Setup (the Train page offers it). */
  useOnSetup(path: string): void {
    engineSetup().useLearned(formatLearnedPath(parseLearnedPath(path)));
  }

  async deleteModel(name: string): Promise<void> {
    this.error = null;
    try {
      await this.models.remove(name);
      const setup = engineSetup();
      if (setup.choice.kind === 'learned' && setup.choice.learned.path === `local/${name}`) { setup.choice.learned = { path: '' }; setup.use('oracle'); }
    } catch (error) {
      this.error = `Could not delete ${name}: ${(error as Error).message}`;
    }
  }
}

const KEY = Symbol('expmodel-session');
export function provideExpModelSession(session: ExpModelSession): ExpModelSession { return setContext(KEY, session); }
export function useExpModelSession(): ExpModelSession { return getContext<ExpModelSession>(KEY); }
