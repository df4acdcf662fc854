/**
 * The page's `loadLearnedModel` (core/train/run-parts.ts asks its caller for a learned:PATH
 * model): PATH is `models/<env>` (shipped with the app: fetched from the app's own origin, which
 * the service worker answers from its precache, so it works offline) or `local/<name>` (trained in
 * this browser, read from IndexedDB). See src/app/state/setup/learned-path.ts for the grammar.
 *
 * Both files are checked on load (decodeModelFiles: format, checksum, shapes, NaN), and a model
 * of another environment than the run's is refused with the fix. The trainer worker keeps the
 * last loaded model (same path, files, k and H) so a resume does not load it again.
 */
import type { ReplayBuffer } from '../../core/buffer/buffer';
import { LearnedExperienceModel, type LearnedModelOptions } from '../../core/experience/learned/learned-model';
import {
  MANIFEST_FILE,
  ModelFileError,
  readModelFiles,
  type ModelManifest,
} from '../../core/experience/learned/model-file';
import type { NamedWeight } from '../../core/experience/learned/network';
import { formatLearnedPath, parseLearnedPath, type LearnedPath } from '../state/setup/learned-path';
import { appBase, shippedModelUrl } from './learned-url';
import { defaultLearnedStore, type LearnedModelStore } from '../storage/learned-store';
import { decodeThreadsFor, startPageDecoders, type DecodeThreads } from './decode/decode-workers';
import { DreamGymError } from '../../core/errors';

export interface LearnedSourceDeps {
  fetch?: typeof fetch;
  /** The app's root URL (ends with '/'); default: BASE_URL on this origin. */
  base?: string;
  store?: LearnedModelStore;
  /** Logical cores (default navigator.hardwareConcurrency): how many decode workers to start. */
  cores?: number;
  /** Starts the decode workers (default: web workers; null when they cannot start). */
  startDecoders?: typeof startPageDecoders;
}

export class NoShippedModelError extends ModelFileError {
  constructor(env: string) {
    super(
      `This build ships no learned model for '${env}' (models/${env}/model.json is missing): build the app after 'npm run models', ` +
        'or train one on the Experience model page (#/model) and dream with learned:local/NAME.',
      {
        code: 'no-shipped-model',
        fix: "Build the app after 'npm run models', or train a model on the Experience model page and dream with learned:local/NAME.",
      },
    );
    this.name = 'NoShippedModelError';
  }
}

/** Reads and checks a shipped model's two files over fetch. */
export async function readShippedModel(
  env: string,
  deps: LearnedSourceDeps = {},
): Promise<{ manifest: ModelManifest; weights: NamedWeight[] }> {
  const get = deps.fetch ?? globalThis.fetch.bind(globalThis);
  const base = deps.base ?? appBase();
  return readModelFiles(async (file) => {
    const url = shippedModelUrl(env, file, base);
    let response: Response;
    try {
      response = await get(url);
    } catch (error) {
      throw new ModelFileError(
        `Could not fetch ${url} (${(error as Error).message}): reload the app once while online so it is kept for offline use.`,
      );
    }
    if (response.status === 404) throw new NoShippedModelError(env);
    if (!response.ok) throw new ModelFileError(`Could not fetch ${url}: HTTP ${response.status}.`);
    if (file === MANIFEST_FILE) {
      const text = await response.text();
      // A server that answers unknown paths with the app's index.html.
      if (/^\s*</.test(text)) throw new NoShippedModelError(env);
      return text;
    }
    return new Uint8Array(await response.arrayBuffer());
  }, `the app's models/${env}/`);
}

/** The checked files of a page learned model. */
export async function readPageLearnedModel(
  path: LearnedPath,
  deps: LearnedSourceDeps = {},
): Promise<{ manifest: ModelManifest; weights: NamedWeight[] }> {
  if (path.where === 'shipped') return readShippedModel(path.env, deps);
  return (deps.store ?? defaultLearnedStore()).readModel(path.name);
}

export interface PageLearnedLoadOptions {
  buffer?: ReplayBuffer;
  k?: number;
  historyLength?: number;
  /** The run's environment: a model of another one is refused. */
  env?: string;
  maxBatch?: number;
  /** The run's seed (the learned model's sampling stream). */
  seed?: number;
  /** Judge endings with the verdict head (default true; false: the generator-reward-only ablation). */
  verdictHead?: boolean;
  /** The verdict ensemble's members used, and how they combine (learned-model.ts). */
  verdictMembers?: number;
  verdictLambda?: number;
  /** A domain's candidates for a dreamed state, where its lists are inferred (learned-model.ts). */
  inferAdmissible?: LearnedModelOptions['inferAdmissible'];
  /** Decoders in other threads, and how to stop them (learnedModelWithThreads starts them). */
  decoders?: LearnedModelOptions['decoders'];
  release?: () => void;
}

export class LearnedModelEnvError extends DreamGymError {
  constructor(path: string, modelEnv: string, runEnv: string) {
    super(
      `The learned model learned:${path} was trained on ${modelEnv}, but this run's environment is ${runEnv}: ` +
        `dream with a model of ${runEnv} (learned:models/${runEnv}, or train one on the Experience model page).`,
      {
        code: 'learned-model-env-mismatch',
        fix: `Dream with a model of ${runEnv} (learned:models/${runEnv}, or train one on the Experience model page).`,
      },
    );
    this.name = 'LearnedModelEnvError';
  }
}

/** Where each loaded model decodes (decode workers or its own thread), for the page to say. */
const threadsOf = new WeakMap<LearnedExperienceModel, DecodeThreads>();

export function decodeThreadsOf(model: LearnedExperienceModel): DecodeThreads | null {
  return threadsOf.get(model) ?? null;
}

/** Loads `learned:PATH` for a run (PATH as in learned-path.ts), retrieving from `options.buffer`. */
export async function loadPageLearnedModel(
  pathText: string,
  options: PageLearnedLoadOptions = {},
  deps: LearnedSourceDeps = {},
): Promise<LearnedExperienceModel> {
  const path = parseLearnedPath(pathText);
  return learnedModelWithThreads(path, await readPageLearnedModel(path, deps), options, deps);
}

/**
 * learnedModelFromFiles with decode workers (decode-workers.ts): one per core but the caller's,
 * or this thread where workers cannot start. The answers are the same either way.
 */
export async function learnedModelWithThreads(
  path: LearnedPath,
  files: { manifest: ModelManifest; weights: NamedWeight[] },
  options: PageLearnedLoadOptions = {},
  deps: LearnedSourceDeps = {},
): Promise<LearnedExperienceModel> {
  if (options.env && files.manifest.env !== options.env)
    throw new LearnedModelEnvError(formatLearnedPath(path), files.manifest.env, options.env);
  const cores = deps.cores ?? (globalThis.navigator as Navigator | undefined)?.hardwareConcurrency;
  const wanted = decodeThreadsFor(cores, typeof Worker !== 'undefined' || !!deps.startDecoders);
  const engine = { decoder: 'fused', capacity: Math.max(2, options.maxBatch ?? 64) } as const;
  const pool = wanted.workers ? await (deps.startDecoders ?? startPageDecoders)(files, wanted.workers, engine) : null;
  const model = learnedModelFromFiles(path, files, {
    ...options,
    ...(pool ? { decoders: pool.decoders, release: () => void pool.close() } : {}),
  });
  threadsOf.set(model, pool || !wanted.workers ? wanted : { workers: 0, why: 'the decode workers did not start' });
  return model;
}

/** The model of checked files (readPageLearnedModel), refused when it is of another env than the run's. */
export function learnedModelFromFiles(
  path: LearnedPath,
  files: { manifest: ModelManifest; weights: NamedWeight[] },
  options: PageLearnedLoadOptions = {},
): LearnedExperienceModel {
  const { manifest, weights } = files;
  if (options.env && manifest.env !== options.env)
    throw new LearnedModelEnvError(formatLearnedPath(path), manifest.env, options.env);
  return LearnedExperienceModel.fromFiles(manifest, weights, {
    ...(options.buffer ? { buffer: options.buffer } : {}),
    ...(options.k !== undefined ? { k: options.k } : {}),
    ...(options.historyLength !== undefined ? { historyLength: options.historyLength } : {}),
    ...(options.maxBatch !== undefined ? { maxBatch: options.maxBatch } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.verdictHead !== undefined ? { verdictHead: options.verdictHead } : {}),
    ...(options.verdictMembers !== undefined ? { verdictMembers: options.verdictMembers } : {}),
    ...(options.verdictLambda !== undefined ? { verdictLambda: options.verdictLambda } : {}),
    ...(options.decoders ? { decoders: options.decoders } : {}),
    ...(options.release ? { release: options.release } : {}),
    ...(options.inferAdmissible ? { inferAdmissible: options.inferAdmissible } : {}),
  });
}

/**
 * One loaded model kept per worker: the same path (with the same files: a local model retrained
 * under the same name is reloaded), buffer, k, H and seed reuse it; another one disposes it.
 */
export class LearnedModelCache {
  private kept: {
    key: string;
    model: LearnedExperienceModel;
    buffer: ReplayBuffer | undefined;
    infer: PageLearnedLoadOptions['inferAdmissible'];
  } | null = null;

  constructor(
    private readonly load: typeof loadPageLearnedModel = loadPageLearnedModel,
    private readonly deps: LearnedSourceDeps = {},
  ) {}

  async get(path: string, options: PageLearnedLoadOptions = {}): Promise<LearnedExperienceModel> {
    const stamp = await this.stamp(path);
    const key = JSON.stringify([
      path.trim(),
      stamp,
      options.k ?? null,
      options.historyLength ?? null,
      options.env ?? null,
      options.seed ?? null,
      options.verdictHead ?? true,
      options.verdictMembers ?? null,
      options.verdictLambda ?? null,
    ]);
    const infer = options.inferAdmissible;
    if (this.kept?.key === key && this.kept.buffer === options.buffer && this.kept.infer === infer)
      return this.kept.model;
    this.dispose();
    const model = await this.load(path, options, this.deps);
    this.kept = { key, model, buffer: options.buffer, infer };
    return model;
  }

  /** What identifies a local model's current files (its save time); shipped files change only with the build. */
  private async stamp(path: string): Promise<number | null> {
    try {
      const parsed = parseLearnedPath(path);
      if (parsed.where === 'shipped') return null;
      const list = await (this.deps.store ?? defaultLearnedStore()).listModels();
      return list.find((m) => m.name === parsed.name)?.savedAt ?? null;
    } catch {
      return null;
    }
  }

  /** Where the kept model decodes (null: none kept). */
  get threads(): DecodeThreads | null {
    return this.kept ? decodeThreadsOf(this.kept.model) : null;
  }

  dispose(): void {
    this.kept?.model.dispose();
    this.kept = null;
  }
}
