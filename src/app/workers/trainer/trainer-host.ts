/**
 * The trainer worker's body (trainer.worker.ts only wires it to `self`): owns one Trainer,
 * runs its iterations off the page's main thread, checkpoints after every iteration and streams
 * metrics back in batches.
 *
 * Backend: wasm is tried first. The policy is small (hashed features, a few dense layers), so
 * per-op dispatch cost dominates and wasm SIMD in a module worker is the fastest measured path
 * (docs/architecture.md §11.2: about 5 steps/s against 0.1 on WebGPU/SwiftShader); core's custom ops are tuned
 * for it; and webgl in a worker would contend with the page for the GPU. The page may ask for
 * another backend (`?backend=webgpu`) to exercise that code path; initBackend reports the
 * fallbacks it took.
 */
import { WASM_PATHS } from '../wasm-paths';
import { BUFFER_CAP, EVICTION_ORDER } from '../../storage/buffer-cap';
import { initBackend, type BackendInfo, type BackendName } from '../../../core/tfjs/backend';
import { ReplayBuffer } from '../../../core/buffer/buffer';
import { IndexedDbBufferStore } from '../../../core/buffer/stores/indexeddb';
import { IndexedDbCheckpointStore } from '../../../core/train/checkpoint';
import { learnedDecodeThreads, trainerDeps, type EngineRuntime } from './experience-source';
import { decodeThreadsLine } from '../decode/decode-workers';
import { Trainer, type IterationRecord, type TrainerDeps, type TrainerState } from '../../../core/train/loop';
import { engineIdle, NO_DREAM_LEFT, s2rStateFromDream } from '../../../core/train/s2r-from-dream';
import type { TrainConfig } from '../../../core/train/config';
import { EpisodeStore } from '../../storage/episode-store';
import { MetricsHistoryStore } from '../../storage/metrics-store';
import { ProgressMeter } from '../../../core/train/progress';
import { tryOneStep, type TryStepResult } from '../../../core/experience/try-step';
import { IterationStoppedError } from '../../../core/train/rollout';
import { dreamRetrieves, groundDream } from './offline-data';
import {
  BATCH_MS,
  LIVE_MS,
  type RunState,
  type TrainerProgress,
  type TrainerReply,
  type TrainerRequest,
  type TrainerStatus,
} from './trainer-protocol';
import { serializeWorkerError } from '../worker-protocol';
import { DreamGymError } from '../../../core/errors';

type StartRequest = Extract<TrainerRequest, { type: 'start' }>;

/** A checkpoint to continue from, the metric history up to it, and what the status line says. */
interface SavedRun {
  state: TrainerState;
  history: IterationRecord[];
  message: string;
}

export class TrainerBusyError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'trainer-busy',
      fix: 'Wait for the run to reach the state the action needs (start, pause or stop it first).',
    });
    this.name = 'TrainerBusyError';
  }
}

export class TrainerHost {
  private trainer: Trainer | null = null;
  private checkpoints: IndexedDbCheckpointStore | null = null;
  private readonly history = new MetricsHistoryStore();
  /** Episode traces for the Inspect page (the last iterations of each run). */
  private readonly episodes = new EpisodeStore();
  /** The replay buffer in IndexedDB (the Buffer page's database), opened once per worker. */
  private replay: Promise<ReplayBuffer> | null = null;
  private backendInfo: BackendInfo | null = null;
  private runId: string | null = null;
  private runRequestId = -1;
  private state: RunState = 'idle';
  private message = 'No run yet.';
  /** Where the learned experience model of the run decodes (null: another engine, or no dream). */
  private decoding: string | null = null;
  private loop: Promise<void> | null = null;
  private pending: IterationRecord[] = [];
  private lastFlush = 0;
  private finishRun: ((status: TrainerStatus) => void) | null = null;
  /** Live progress of the iteration in flight (sent every LIVE_MS while one runs). */
  private meter: ProgressMeter | null = null;
  private liveTimer: ReturnType<typeof setInterval> | null = null;
  private iterating = false;
  /** Aborts the iteration in flight (Stop: the run stops before its next rollout step). */
  private abort: AbortController | null = null;

  constructor(private readonly post: (reply: TrainerReply) => void) {}

  async handle(request: TrainerRequest): Promise<void> {
    try {
      const value = await this.dispatch(request);
      if (value !== undefined) this.post({ id: request.id, kind: 'return', value });
    } catch (error) {
      this.post({ id: request.id, kind: 'throw', error: serializeWorkerError(error) });
    }
  }

  /** Returns the reply value, or undefined when the reply comes later (a start request). */
  private async dispatch(request: TrainerRequest): Promise<unknown> {
    switch (request.type) {
      case 'status':
        return this.status();
      case 'start':
        return this.start(request);
      case 'pause': {
        if (this.state !== 'running')
          throw new TrainerBusyError(`Cannot pause: the run is ${this.state}. Start or resume a run first.`);
        // The iteration in flight finishes first: the message names the iteration it paused after (never the one before).
        this.setState('paused', 'Pausing after the iteration in flight…');
        await this.loop;
        this.flush();
        if ((this.state as RunState) === 'paused') this.message = `Paused after iteration ${this.trainer!.iteration}.`;
        return this.status();
      }
      case 'resume': {
        if (this.state !== 'paused') throw new TrainerBusyError(`Cannot resume: the run is ${this.state}, not paused.`);
        this.setState('running', `Running from iteration ${this.trainer!.iteration}.`);
        this.loop = this.runLoop();
        return this.status();
      }
      case 'step': {
        if (this.state !== 'paused')
          throw new TrainerBusyError(
            `Cannot step: the run is ${this.state}. Pause it first (Step runs one iteration of a paused run).`,
          );
        const record = await this.iterate();
        this.flush();
        if (this.trainer!.finished) this.end('finished', `Finished after ${this.trainer!.iteration} iterations.`);
        else this.setState('paused', `Stepped one iteration (now ${record.iteration}).`);
        return record;
      }
      case 'stop': {
        if (!this.trainer || !['running', 'paused'].includes(this.state))
          throw new TrainerBusyError(`Cannot stop: the run is ${this.state}.`);
        const wasRunning = this.state === 'running';
        this.state = 'stopped';
        // Said at once, then the iteration in flight is dropped before its next rollout step.
        this.send({
          kind: 'status',
          status: { ...this.status(), state: wasRunning ? 'running' : 'paused', message: 'Stopping…' },
        });
        this.abort?.abort();
        if (wasRunning) await this.loop;
        this.end('stopped', `Stopped at iteration ${this.trainer.iteration}; its checkpoint stays in IndexedDB.`);
        return this.status();
      }
      case 'tryStep':
        return this.tryStep(request);
      case 'crash':
        setTimeout(() => {
          throw new Error('Deliberate crash (test hook)');
        }, 0);
        return this.status();
    }
  }

  private async start(request: StartRequest): Promise<undefined> {
    if (this.state === 'running' || this.state === 'paused' || this.state === 'starting') {
      throw new TrainerBusyError(`A run (${this.runId}) is already ${this.state}; stop it before starting another.`);
    }
    this.trainer?.dispose();
    this.trainer = null;
    this.runId = request.runId;
    this.runRequestId = request.id;
    this.pending = [];
    this.decoding = null;
    this.setState('starting', 'Choosing a tfjs backend…');
    try {
      this.backendInfo ??= await initBackend(request.backend ?? 'wasm', { wasmPaths: WASM_PATHS });
      const config: TrainConfig = request.config;
      this.checkpoints = new IndexedDbCheckpointStore(request.runId);
      const saved = await this.savedRun(request);
      // Past S2R's dream phase its engine has nothing left to do: none is loaded, no buffer grounded.
      const idle = saved !== null && engineIdle(config, saved.state.iteration);
      const grounding = idle ? null : await this.groundBuffer(config);
      const deps = idle ? { experienceModel: NO_DREAM_LEFT } : await this.engineDeps(config, request.engine);
      // Transitions go to the persistent buffer (the Buffer page's data; it survives a reload) and
      // each iteration's episodes to the Inspect page's store, both before the checkpoint is written.
      const runId = request.runId;
      const meter = (this.meter = new ProgressMeter(() => performance.now(), config.iterations));
      const withStores: TrainerDeps = {
        ...deps,
        buffer: deps.buffer ?? (await this.replayBuffer()),
        runId,
        now: () => Date.now(),
        clock: () => performance.now(),
        onEpisodes: (traces, _phase, iteration) => this.episodes.put(runId, iteration, traces),
        progress: meter,
      };
      if (saved) {
        this.trainer = await Trainer.restore(saved.state, {}, withStores);
        // The checkpoint manifest does not carry the dream-step counter; the metric history does.
        const last = saved.history[saved.history.length - 1];
        this.trainer.dreamSteps = last?.metrics['budget/dream_steps'] ?? 0;
        this.send({ kind: 'history', records: saved.history, status: this.status() });
        this.message = saved.message;
      } else {
        if (!request.resume)
          await Promise.all([this.history.remove(request.runId), this.episodes.remove(request.runId)]);
        this.trainer = new Trainer(config, withStores);
        await this.evaluateUntrained(request.runId);
        this.message = request.resume
          ? 'No checkpoint was found for this run: started it from iteration 0.'
          : 'Started.';
        if (grounding) this.message += ` ${grounding}`;
      }
    } catch (error) {
      this.end('error', `Could not start: ${serializeWorkerError(error).message}`);
      throw error;
    }
    const done = new Promise<TrainerStatus>((resolve) => {
      this.finishRun = resolve;
    });
    this.startLive();
    this.setState('running', this.message);
    this.loop = this.runLoop();
    const final = await done;
    this.post({ id: request.id, kind: 'return', value: final });
    return undefined;
  }

  /** The experience model (and prior, task generator) the config's engine gives; `decoding` says where it decodes. */
  private async engineDeps(config: TrainConfig, engine: EngineRuntime | undefined): Promise<TrainerDeps> {
    if (config.mode !== 'real') this.setState('starting', `Loading the experience model (${config.llm})…`);
    const deps = await trainerDeps(config, engine, () => this.replayBuffer().catch(() => undefined));
    const threads = config.mode !== 'real' && /^learned:/.test(config.llm.trim()) ? learnedDecodeThreads() : null;
    this.decoding = threads ? decodeThreadsLine(threads) : null;
    return deps;
  }

  /** The checkpoint a run continues from, with its metric history: its own, else (S2R) the finished dream's. */
  private async savedRun(request: StartRequest): Promise<SavedRun | null> {
    const own = request.resume ? await this.checkpoints!.load() : null;
    if (own) {
      const history = await this.history.list(request.runId, own.iteration);
      return { state: own, history, message: `Resumed from the checkpoint at iteration ${own.iteration}.` };
    }
    return request.fromDream ? this.continueDream(request.runId, request.config, request.fromDream) : null;
  }

  /**
   * S2R from the finished dream run's final checkpoint (core s2r-from-dream.ts), not a second dream.
   * The dream's metric history is copied under this run, so its charts, a reload and Compare need
   * nothing of the dream run (which may be deleted); the state is saved at once as this run's own
   * checkpoint, after the history (metrics-store.ts).
   */
  private async continueDream(runId: string, config: TrainConfig, dreamId: string): Promise<SavedRun> {
    this.setState('starting', "Loading the dream run's final checkpoint…");
    const store = new IndexedDbCheckpointStore(dreamId);
    const dream = await store.load().finally(() => store.close());
    if (!dream) throw new Error(`the dream run '${dreamId}' has no checkpoint, so S2R has no dream to continue from`);
    const state = s2rStateFromDream(dream, config);
    const history = await this.history.list(dreamId, dream.iteration);
    await Promise.all([this.history.remove(runId), this.episodes.remove(runId)]);
    for (const record of history) await this.history.put(runId, record);
    await this.checkpoints!.save(state);
    const steps = (state.dreamSteps ?? 0).toLocaleString('en-US');
    return {
      state,
      history,
      message:
        `Continued from the dream run's final checkpoint (iteration ${dream.iteration}, ${steps} dream steps): ` +
        'no second dream, straight to the real phase.',
    };
  }

  /** A dream that retrieves gets the env's shipped offline data when the buffer holds no real data of it (offline-data.ts). */
  private async groundBuffer(config: TrainConfig): Promise<string | null> {
    if (!dreamRetrieves(config)) return null; // real runs and the oracle read no buffer
    const buffer = await this.replayBuffer().catch(() => undefined);
    if (!buffer) return null; // no IndexedDB: a learned model that retrieves is refused with the fix (grounding.ts)
    this.setState('starting', `Checking the replay buffer for real transitions of ${config.env}…`);
    return groundDream(config, buffer);
  }

  /** Iteration 0 of a new run: the untrained policy's held-out success, the point every curve starts from. */
  private async evaluateUntrained(runId: string): Promise<void> {
    this.setState('starting', 'Evaluating the untrained policy on held-out real tasks (iteration 0)…');
    const record = await this.trainer!.initialRecord();
    if (!record) return;
    await this.history.put(runId, record);
    this.pending.push(record);
  }

  /** Setup's "Try one step" with the config's engine (see the protocol); the engine stays loaded for the next run. */
  private async tryStep(request: Extract<TrainerRequest, { type: 'tryStep' }>): Promise<TryStepResult> {
    if (this.state === 'running' || this.state === 'starting') {
      throw new TrainerBusyError(
        `A run (${this.runId}) is ${this.state} and its engine is busy: pause or stop it, then try one step.`,
      );
    }
    this.backendInfo ??= await initBackend('wasm', { wasmPaths: WASM_PATHS });
    const config: TrainConfig = { ...request.config, mode: 'dream' };
    await groundDream(config, await this.replayBuffer().catch(() => undefined));
    const deps = await trainerDeps(config, request.engine, () => this.replayBuffer().catch(() => undefined));
    return tryOneStep(deps.experienceModel!, {
      envId: config.env,
      attempt: request.attempt,
      clock: () => performance.now(),
    });
  }

  /**
   * The replay buffer on IndexedDB (the same database the Buffer page shows), indexed lazily by
   * its first write. A store that failed to open is retried on the next run.
   */
  replayBuffer(): Promise<ReplayBuffer> {
    const opening = (this.replay ??= IndexedDbBufferStore.open().then((store) => new ReplayBuffer(store)));
    opening.catch(() => {
      if (this.replay === opening) this.replay = null;
    });
    return opening;
  }

  /**
   * Keeps the page's replay buffer under BUFFER_CAP transitions: the oldest dreamed ones go first,
   * then the oldest real ones; the offline seed data is never evicted. Cheap when under the cap
   * (the store plans eviction in memory).
   */
  private async capBuffer(): Promise<void> {
    const buffer = await this.replay?.catch(() => null);
    if (!buffer) return;
    await buffer.evict({ sources: [...EVICTION_ORDER], maxTransitions: BUFFER_CAP });
  }

  /** Iterates while running; returns when paused, stopped or finished. */
  private async runLoop(): Promise<void> {
    try {
      while (this.state === 'running' && this.trainer && !this.trainer.finished) {
        await this.iterate();
        if (performance.now() - this.lastFlush >= BATCH_MS) this.flush();
      }
      this.flush();
      if (this.state === 'running' && this.trainer?.finished)
        this.end('finished', `Finished after ${this.trainer.iteration} iterations.`);
    } catch (error) {
      this.flush();
      // A stop inside an iteration drops it: the stop request ends the run (see 'stop').
      if (error instanceof IterationStoppedError) return;
      this.end(
        'error',
        `Training failed at iteration ${(this.trainer?.iteration ?? 0) + 1}: ${serializeWorkerError(error).message}`,
      );
    }
  }

  /** One iteration, then its metrics and checkpoint (metrics first: see metrics-store.ts). */
  private async iterate(): Promise<IterationRecord> {
    const trainer = this.trainer!;
    this.iterating = true;
    const abort = (this.abort = new AbortController());
    let record: IterationRecord;
    try {
      record = await trainer.runIteration({ signal: abort.signal }); // with perf/* from the clock it was given
    } finally {
      this.iterating = false;
      this.abort = null;
    }
    await this.capBuffer();
    await this.history.put(this.runId!, record);
    await this.checkpoints!.save(await trainer.state());
    this.pending.push(record);
    return record;
  }

  private flush(): void {
    this.lastFlush = performance.now();
    if (this.pending.length === 0) return;
    const records = this.pending;
    this.pending = [];
    this.send({ kind: 'metrics', records, status: this.status() });
  }

  private setState(state: RunState, message: string): void {
    this.state = state;
    this.message = message;
    this.send({ kind: 'status', status: this.status() });
  }

  /** Every LIVE_MS while an iteration runs: the meter's snapshot (steps, speed, time left). */
  private startLive(): void {
    this.stopLive();
    this.liveTimer = setInterval(() => {
      if (this.iterating && this.meter) this.send({ kind: 'live', live: this.meter.snapshot() });
    }, LIVE_MS);
  }

  private stopLive(): void {
    if (this.liveTimer !== null) clearInterval(this.liveTimer);
    this.liveTimer = null;
  }

  private end(state: 'finished' | 'stopped' | 'error', message: string): void {
    this.stopLive();
    this.flush();
    this.setState(state, message);
    const finish = this.finishRun;
    this.finishRun = null;
    finish?.(this.status());
  }

  private send(progress: TrainerProgress): void {
    if (this.runRequestId >= 0) this.post({ id: this.runRequestId, kind: 'progress', progress });
  }

  status(): TrainerStatus {
    const t = this.trainer;
    return {
      runId: this.runId,
      state: this.state,
      iteration: t?.iteration ?? 0,
      iterations: t?.config.iterations ?? 0,
      realSteps: t?.realSteps ?? 0,
      dreamSteps: t?.dreamSteps ?? 0,
      backend: (this.backendInfo?.backend ?? null) as BackendName | null,
      backendReason: this.backendInfo?.reason ?? null,
      decoding: this.decoding,
      message: this.message,
    };
  }
}
