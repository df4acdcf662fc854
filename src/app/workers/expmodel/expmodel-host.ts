/**
 * The Experience model worker's body (expmodel.worker.ts only wires it to `self`): trains
 * a learned experience model on the page's replay buffer (its real episodes of one env), stores
 * it in IndexedDB as learned:local/<name>, checkpoints every epoch (a reload resumes), keeps a
 * stopped training's best epoch as a model (`keep`), and evaluates a model (the fidelity audit,
 * dreamed vs real). One `train`, `keep` or `evaluate` at a time; `stop` and `status` answer at once.
 *
 * Backend: WebGPU when this machine has a hardware adapter, wasm otherwise (chooseBackend). A
 * software adapter (SwiftShader, WARP) counts as none: it runs WebGPU on the CPU, far slower than
 * wasm's SIMD kernels. The page can ask for either one; the reason is always reported.
 *
 * A model of an imported domain (env `byo:<name>`, the Domains page) learns from the domain's
 * training episodes as stored in this browser (domain-store.ts), told the domain's derived card,
 * as `dreamgym expmodel train --domain` does; its settings record the episodes' checksum, so a
 * resume on a domain imported again with other episodes is refused.
 *
 * Everything the host touches outside itself comes in through ExpModelHostDeps, so the unit tests
 * run it in Node with a memory buffer and fake-indexeddb.
 */
import { WASM_PATHS } from '../wasm-paths';
import { ReplayBuffer } from '../../../core/buffer/buffer';
import { IndexedDbBufferStore } from '../../../core/buffer/stores/indexeddb';
import { DOMAIN_ENV_PREFIX, type Domain } from '../../../core/domain/domain';
import { seedDomainBuffer } from '../../../core/domain/trainer';
import { builtInDomainCard, type DomainCard } from '../../../core/experience/domain-card';
import {
  learnedTrainOptions,
  modelFromCheckpoint,
  trainLearnedModel,
  type LearnedCheckpoint,
  type LearnedTrainOptions,
} from '../../../core/experience/learned/train-model';
import type { ModelManifest } from '../../../core/experience/learned/model-file';
import type { NamedWeight } from '../../../core/experience/learned/network';
import { envIds } from '../../../core/envs/registry';
import { initBackend, type BackendInfo, type BackendName } from '../../../core/tfjs/backend';
import {
  SIZE_INFO,
  settingsProblems,
  type BackendPreference,
  type ExpModelSettings,
} from '../../state/model/expmodel-settings';
import { keptMessage, stoppedMessage } from '../../state/model/expmodel-stop';
import { formatLearnedPath, parseLearnedPath, type LearnedPath } from '../../state/setup/learned-path';
import { evaluateModel } from './expmodel-evaluate';
import { serializeWorkerError } from '../worker-protocol';
import type {
  Evaluation,
  ExpModelProgress,
  ExpModelReply,
  ExpModelRequest,
  ExpModelState,
  ExpModelStatus,
  KeptModel,
  TrainOutcome,
} from './expmodel-protocol';
import { decodeThreadsOf, learnedModelWithThreads, readPageLearnedModel } from '../learned-source';
import { decodeThreadsLine } from '../decode/decode-workers';
import { defaultLearnedStore, type LearnedModelStore } from '../../storage/learned-store';
import { DomainStore } from '../../storage/domain-store';
import { DreamGymError } from '../../../core/errors';

/** Batch progress is sent at most this often (and always for an epoch's last batch). */
export const BATCH_PROGRESS_MS = 200;

export class ExpModelBusyError extends DreamGymError {
  constructor(message: string) {
    super(message, { code: 'expmodel-busy', fix: 'Stop the experience model worker, or wait for it to finish.' });
    this.name = 'ExpModelBusyError';
  }
}

export class NoCheckpointError extends DreamGymError {
  constructor(name: string, doing: 'resume' | 'keep' = 'resume') {
    super(
      doing === 'resume'
        ? `There is no unfinished training named '${name}' in this browser to resume: press Train to start it afresh.`
        : `There is no unfinished training named '${name}' in this browser with a finished epoch to keep: press Train ` +
            'to train it.',
      {
        code: 'no-checkpoint',
        fix: doing === 'resume' ? 'Press Train to start it afresh.' : 'Press Train to train it.',
      },
    );
    this.name = 'NoCheckpointError';
  }
}

/** Core's training options for the page's settings (the size picks the network). */
export function trainOptions(s: ExpModelSettings): LearnedTrainOptions {
  const size = SIZE_INFO[s.size];
  return learnedTrainOptions({
    name: s.name,
    ...(s.episodes > 0 ? { maxEpisodes: s.episodes } : {}),
    network: size.network,
    format: { k: s.k, historyLength: s.history },
    fit: {
      epochs: s.epochs,
      batchSize: s.batchSize,
      learningRate: s.learningRate,
      seed: s.seed,
      ...(size.warmupSteps !== undefined ? { warmupSteps: size.warmupSteps } : {}),
    },
  });
}

/** What the machine offers for WebGPU: an adapter, and whether it is a software one. */
export interface WebGpuProbe {
  adapter: boolean;
  fallback: boolean;
  reason?: string;
}

/** The backend `auto` picks, and why (a software adapter is treated as no WebGPU). */
export function autoBackend(probe: WebGpuProbe): { backend: 'webgpu' | 'wasm'; why: string } {
  if (!probe.adapter)
    return { backend: 'wasm', why: `auto: no WebGPU here (${probe.reason ?? 'no adapter'}), so wasm` };
  if (probe.fallback)
    return {
      backend: 'wasm',
      why: 'auto: the WebGPU adapter is a software one (SwiftShader/WARP: WebGPU on the CPU, slower than wasm SIMD), so wasm',
    };
  return { backend: 'webgpu', why: 'auto: a hardware WebGPU adapter, so webgpu' };
}

export async function probeWebGpu(): Promise<WebGpuProbe> {
  const gpu = (globalThis as { navigator?: { gpu?: { requestAdapter(): Promise<unknown> } } }).navigator?.gpu;
  if (!gpu) return { adapter: false, fallback: false, reason: 'navigator.gpu is missing' };
  try {
    const adapter = (await gpu.requestAdapter()) as {
      isFallbackAdapter?: boolean;
      info?: { isFallbackAdapter?: boolean };
    } | null;
    if (!adapter) return { adapter: false, fallback: false, reason: 'requestAdapter() returned no adapter' };
    return { adapter: true, fallback: Boolean(adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false) };
  } catch (error) {
    return { adapter: false, fallback: false, reason: `requestAdapter() failed: ${(error as Error).message}` };
  }
}

/** Initialises the backend a preference asks for; a failed webgpu falls back to wasm (never webgl), with the reason. */
export async function chooseBackend(
  preference: BackendPreference,
  deps: { probe?: () => Promise<WebGpuProbe>; init?: typeof initBackend } = {},
): Promise<BackendInfo> {
  const init = deps.init ?? ((name?: BackendName) => initBackend(name, { wasmPaths: WASM_PATHS }));
  let target: 'webgpu' | 'wasm' = preference === 'auto' ? 'wasm' : preference;
  let why = `asked for ${preference}`;
  if (preference === 'auto') ({ backend: target, why } = autoBackend(await (deps.probe ?? probeWebGpu)()));
  if (target === 'webgpu') {
    const gpu = await init('webgpu');
    if (gpu.backend === 'webgpu') return { backend: 'webgpu', reason: `${why}: ${gpu.reason}` };
    const wasm = await init('wasm');
    return {
      backend: wasm.backend,
      reason: `${why}, but WebGPU did not start (${gpu.reason}); fell back to ${wasm.reason}`,
    };
  }
  const wasm = await init('wasm');
  return { backend: wasm.backend, reason: `${why}: ${wasm.reason}` };
}

export interface ExpModelHostDeps {
  /** The page's replay buffer (the Buffer page's IndexedDB data). */
  openBuffer: () => Promise<ReplayBuffer>;
  store: LearnedModelStore;
  chooseBackend?: (preference: BackendPreference) => Promise<BackendInfo>;
  /** Reads and checks a model's files for evaluation (default: the page's reader, learned-source.ts; a test serves shipped files). */
  readModel?: (path: LearnedPath) => Promise<{ manifest: ModelManifest; weights: NamedWeight[] }>;
  /** Milliseconds (performance.now in the worker). */
  now?: () => number;
  /** Wall-clock time for the stored records (Date.now). */
  date?: () => number;
  /** An imported domain stored in this browser and its training episodes' checksum, or null (default: DomainStore). */
  readDomain?: (name: string) => Promise<{ domain: Domain; checksum: string } | null>;
}

/** A domain of the Domains page's store, with its training episodes' checksum. */
export async function readStoredDomain(name: string): Promise<{ domain: Domain; checksum: string } | null> {
  const store = new DomainStore();
  try {
    const stored = await store.read(name);
    return stored && { domain: stored.domain, checksum: stored.manifest.checksums.train };
  } finally {
    await store.close();
  }
}

/** What a model of an env learns from: the card it is told and the buffer of its real episodes. */
interface ModelSource {
  card: DomainCard;
  buffer: ReplayBuffer;
  /** A domain's training episodes' checksum (null: a built-in env, learned from the page's buffer). */
  data: string | null;
}

/** The worker's dependencies: the page's IndexedDB replay buffer and model store. */
export function browserHostDeps(): ExpModelHostDeps {
  let buffer: Promise<ReplayBuffer> | null = null;
  return {
    openBuffer: () => {
      const opening = (buffer ??= IndexedDbBufferStore.open().then((store) => new ReplayBuffer(store)));
      opening.catch(() => {
        if (buffer === opening) buffer = null;
      }); // retried on the next request
      return opening;
    },
    store: defaultLearnedStore(),
  };
}

export class ExpModelHost {
  private state: ExpModelState = 'idle';
  private path: string | null = null;
  private message = 'Nothing trained yet in this session.';
  private backend: BackendInfo | null = null;
  private backendAsked: BackendPreference | null = null;
  private abort: AbortController | null = null;
  private runRequestId = -1;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly post: (reply: ExpModelReply) => void,
    private readonly deps: ExpModelHostDeps,
  ) {}

  /** `train`, `keep` and `evaluate` run one after the other; `stop` and `status` answer at once. */
  handle(request: ExpModelRequest): Promise<void> {
    if (request.type === 'stop' || request.type === 'status') {
      if (request.type === 'stop') this.abort?.abort();
      this.post({ id: request.id, kind: 'return', value: this.status() });
      return Promise.resolve();
    }
    if (this.abort) {
      this.post({
        id: request.id,
        kind: 'throw',
        error: serializeWorkerError(
          new ExpModelBusyError(
            `The experience model worker is busy (${this.state} ${this.path ?? ''}); stop it or wait for it to finish.`,
          ),
        ),
      });
      return Promise.resolve();
    }
    const controller = new AbortController();
    this.abort = controller;
    this.queue = this.queue.then(async () => {
      this.runRequestId = request.id;
      try {
        const value =
          request.type === 'train'
            ? await this.train(request, controller.signal)
            : request.type === 'keep'
              ? await this.keep(request)
              : await this.evaluate(request, controller.signal);
        this.post({ id: request.id, kind: 'return', value });
      } catch (error) {
        const stopped = controller.signal.aborted;
        this.setState(
          stopped ? 'stopped' : 'error',
          stopped ? 'Stopped.' : `Failed: ${serializeWorkerError(error).message}`,
        );
        this.post({ id: request.id, kind: 'throw', error: serializeWorkerError(error) });
      } finally {
        this.abort = null;
        this.runRequestId = -1;
      }
    });
    return this.queue;
  }

  status(): ExpModelStatus {
    return {
      state: this.state,
      path: this.path,
      backend: this.backend?.backend ?? null,
      backendReason: this.backend?.reason ?? null,
      message: this.message,
    };
  }

  private send(progress: ExpModelProgress): void {
    if (this.runRequestId >= 0) this.post({ id: this.runRequestId, kind: 'progress', progress });
  }

  private setState(state: ExpModelState, message: string): void {
    this.state = state;
    this.message = message;
    this.send({ kind: 'status', status: this.status() });
  }

  private async backendFor(preference: BackendPreference): Promise<void> {
    if (this.backend && this.backendAsked === preference) return;
    this.setState('starting', 'Choosing a tfjs backend…');
    this.backend = await (this.deps.chooseBackend ?? chooseBackend)(preference);
    this.backendAsked = preference;
  }

  /** A built-in env's card and the page's buffer, or an imported domain's card and training episodes. */
  private async sourceOf(env: string, doing: string): Promise<ModelSource> {
    if (env.startsWith(DOMAIN_ENV_PREFIX)) {
      const name = env.slice(DOMAIN_ENV_PREFIX.length);
      const stored = await (this.deps.readDomain ?? readStoredDomain)(name);
      if (!stored)
        throw new Error(`No domain named '${name}' is stored in this browser: import it on the Domains page first.`);
      return { card: stored.domain.card, buffer: await seedDomainBuffer(stored.domain), data: stored.checksum };
    }
    const card = builtInDomainCard(env);
    if (!card)
      throw new Error(
        `No domain card for '${env}': the page ${doing} models of ${envIds().join(', ')}, and of the domains ` +
          'imported on the Domains page.',
      );
    return { card, buffer: await this.deps.openBuffer(), data: null };
  }

  private async train(
    request: Extract<ExpModelRequest, { type: 'train' }>,
    signal: AbortSignal,
  ): Promise<TrainOutcome> {
    const store = this.deps.store;
    let settings = request.settings;
    let resume: LearnedCheckpoint | undefined;
    this.path = `local/${settings.name}`;
    if (request.resume) {
      const saved = await store.readCheckpoint<ExpModelSettings>(settings.name);
      if (!saved) throw new NoCheckpointError(settings.name);
      settings = { ...saved.settings, backend: request.settings.backend };
      resume = saved.checkpoint;
      this.send({ kind: 'history', records: resume.fit.history });
    }
    const problems = settingsProblems(settings);
    if (problems.length) throw new Error(problems.join(' '));
    const { card, buffer, data } = await this.sourceOf(settings.env, 'trains');
    if (resume && data !== null && settings.data !== data)
      throw new Error(
        `The episodes of ${settings.env} changed since the training '${settings.name}' was saved (it was imported ` +
          'again), so it would go on half on each: press Train to train anew, or discard the unfinished training.',
      );
    if (data !== null) settings = { ...settings, data };
    await this.backendFor(settings.backend);
    this.setState(
      'training',
      resume
        ? `Resuming after epoch ${resume.fit.epochsDone} of ${resume.options.fit.epochs}: rebuilding the SFT pairs from the buffer…`
        : `Preparing the data: the real episodes of ${settings.env} → a tokenizer and SFT pairs…`,
    );
    const now = this.deps.now ?? (() => performance.now());
    const date = this.deps.date ?? (() => Date.now());
    let lastBatch = -Infinity;
    let epochsDone = resume?.fit.epochsDone ?? 0;
    let announced = false;
    try {
      const result = await trainLearnedModel(buffer, settings.env, card, trainOptions(settings), {
        now,
        signal,
        backend: this.backend!.backend,
        ...(resume ? { resume } : {}),
        onProgress: (event) => {
          if (!announced) {
            announced = true;
            this.setState('training', `Training on ${this.backend!.backend}.`);
          }
          if (event.kind === 'batch') {
            const t = now();
            if (t - lastBatch < BATCH_PROGRESS_MS && event.batch < event.batches) return;
            lastBatch = t;
          }
          this.send(event);
        },
        onCheckpoint: async (checkpoint) => {
          await store.saveCheckpoint(settings.name, settings, checkpoint, date());
          epochsDone = checkpoint.fit.epochsDone;
          this.send({ kind: 'checkpoint', epochsDone });
        },
      });
      try {
        const summary = await store.saveModel(settings.name, result, date());
        const t = result.parsed.training;
        this.setState(
          'finished',
          `Trained ${settings.name}: best validation loss ${t.bestValidationLoss.toFixed(3)} at epoch ${t.bestEpoch} of ` +
            `${t.epochs.length}, ${Math.round(t.seconds)} s on ${t.backend}. Stored in this browser as learned:local/${settings.name}.`,
        );
        return { outcome: 'finished', path: `local/${settings.name}`, summary, training: t };
      } finally {
        result.network.dispose();
      }
    } catch (error) {
      if (!signal.aborted) throw error;
      this.setState('stopped', stoppedMessage(epochsDone));
      return { outcome: 'stopped', path: `local/${settings.name}`, epochsDone };
    }
  }

  /**
   * Stores the best epoch of `name`'s checkpoint as learned:local/<name> (core's modelFromCheckpoint:
   * the files a finished training writes), keeping the checkpoint so the training still resumes.
   */
  private async keep(request: Extract<ExpModelRequest, { type: 'keep' }>): Promise<KeptModel> {
    const store = this.deps.store;
    const path = `local/${request.name}`;
    this.path = path;
    const saved = await store.readCheckpoint(request.name);
    if (!saved || saved.checkpoint.fit.epochsDone === 0) throw new NoCheckpointError(request.name, 'keep');
    const checkpoint = saved.checkpoint;
    const { card, buffer } = await this.sourceOf(checkpoint.env, 'keeps');
    const fit = checkpoint.fit;
    const kept = { epochsDone: fit.epochsDone, epochs: checkpoint.options.fit.epochs, bestEpoch: fit.bestEpoch };
    await this.backendFor(request.backend);
    this.setState(
      'saving',
      `Keeping what was trained: the model of epoch ${fit.bestEpoch} (the best of the ` +
        `${fit.epochsDone} finished) — rebuilding its data from the buffer…`,
    );
    const result = await modelFromCheckpoint(buffer, card, checkpoint, { backend: this.backend!.backend });
    try {
      const date = this.deps.date ?? (() => Date.now());
      const options = { keepCheckpoint: true, epochsPlanned: kept.epochs };
      const summary = await store.saveModel(request.name, result, date(), options);
      this.setState('stopped', keptMessage({ ...kept, path }));
      return { path, summary, ...kept };
    } finally {
      result.network.dispose();
    }
  }

  private async evaluate(
    request: Extract<ExpModelRequest, { type: 'evaluate' }>,
    signal: AbortSignal,
  ): Promise<Evaluation> {
    const path = formatLearnedPath(parseLearnedPath(request.path));
    this.path = path;
    await this.backendFor(request.backend);
    this.setState('evaluating', `Loading learned:${path}…`);
    const buffer = await this.deps.openBuffer().catch(() => undefined);
    const parsed = parseLearnedPath(path);
    const files = await (
      this.deps.readModel ?? ((p: LearnedPath) => readPageLearnedModel(p, { store: this.deps.store }))
    )(parsed);
    const model = await learnedModelWithThreads(parsed, files, { ...(buffer ? { buffer } : {}), env: request.env });
    const threads = decodeThreadsOf(model);
    try {
      const ours = envIds().includes(request.env);
      this.setState(
        'evaluating',
        ours
          ? `Auditing ${model.label} against the real ${request.env}…`
          : `Dreaming held-out transitions with ${model.label}…`,
      );
      const result = await evaluateModel(model, {
        envId: request.env,
        audit: ours ? request.audit : 0,
        samples: ours ? request.samples : 0,
        seed: request.seed,
        signal,
        onAudit: (done, total) => this.send({ kind: 'audit', done, total }),
        ...(threads ? { decoding: decodeThreadsLine(threads) } : {}),
      });
      this.setState(
        'finished',
        `Evaluated ${model.label}${result.audit ? ` on ${result.audit.report.n} held-out transitions` : ''}.`,
      );
      return { ...result, path, training: files.manifest.training, verdict: files.manifest.verdict?.fittedOn ?? null };
    } finally {
      model.dispose();
    }
  }
}
