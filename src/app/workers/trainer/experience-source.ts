/**
 * Inside the trainer worker: what the page owns for a run — the loaded browser engine, the API
 * key, the replay buffer, the answer budget — handed to the one run builder
 * (src/core/train/run-parts.ts), which parses `config.llm` (core's engine grammar) and builds the
 * experience model, the agent's LLM prior and the curriculum's task generator. The start request
 * carries what must not be in a config: the API key, a picked file the page could not store in
 * OPFS, and the dream answer budget.
 *
 *   wllama:…         WllamaChatModel loaded here (wllama starts its own nested worker); a picked
 *                    file is read from OPFS (workers/llm-files.ts), so a reload keeps it
 *   webllm:MODEL_ID  WebLlmChatModel: web-llm's WebWorkerMLCEngine in this worker, talking to
 *                    llm.worker.ts (a nested worker) — the weights come from web-llm's
 *                    cache, filled by the Setup page's download
 *   learned:PATH     the learned experience model: models/<env> (shipped with the app, fetched from
 *                    it: the service worker's precache answers offline) or local/<name> (trained in
 *                    this browser, in IndexedDB); read and checked by learned-source.ts, one kept
 *   oracle:, openai:  nothing to load here: the builder makes them (openai with the key)
 *
 * The reasoning experience model retrieves its k examples from the page's replay buffer
 * (IndexedDB, the Buffer page's data), and hands the same buffer to the trainer (deps.buffer),
 * which adds each iteration's transitions to it. One loaded browser engine is kept between runs
 * of the same engine, so a resume or a second run does not load it again — and its reasoning
 * model with its transition cache, so they do not pay again for transitions already dreamed.
 */
import type { ReplayBuffer } from '../../../core/buffer/buffer';
import { parseLlmSpec, type WebLlmSpec, type WllamaLlmSpec } from '../../../core/llm/spec';
import type { ChatModel } from '../../../core/llm/types';
import { WebLlmChatModel } from '../../../core/llm/webllm';
import { WllamaChatModel } from '../../../core/llm/wllama';
import type { TrainConfig } from '../../../core/train/config';
import type { TrainerDeps } from '../../../core/train/loop';
import { buildRunParts } from '../../../core/train/run-parts';
import { registeredEnvSchema } from '../../../core/train/policy-schema';
import { ReasoningExperienceModel } from '../../../core/experience/reasoning-model';
import type { ExperienceModel } from '../../../core/experience/types';
import { openModelFile } from '../../storage/llm-files';
import { LearnedModelCache } from '../learned-source';
import type { DecodeThreads } from '../decode/decode-workers';

/** What a start request carries besides the config (never saved with the run). */
export interface EngineRuntime {
  /** Token budget of one dreamed answer (default 400; a cut-off retry gets 1.5×). */
  maxTokens?: number;
  /** Retries after an unusable answer (default 2). */
  retries?: number;
  /** wllama: context size in tokens (default 4096). */
  nCtx?: number;
  /** openai: the API key — kept in memory only. */
  apiKey?: string;
  /** wllama file specs: the file itself, when the page could not keep it in OPFS. */
  file?: Blob;
  /** webllm: the worker script to host web-llm's handler in, instead of llm.worker.ts (state/setup/engine.ts WEBLLM_WORKER_KEY). */
  webllmWorkerUrl?: string;
}

type Unloadable = ChatModel & { unload?: () => Promise<void> };
type BrowserSpec = WebLlmSpec | WllamaLlmSpec;
export type BrowserEngineLoader = (spec: BrowserSpec, runtime: EngineRuntime) => Promise<Unloadable>;

let loaded: { key: string; model: Unloadable } | null = null;
/**
 * The last reasoning experience model built (its transition cache with it): a resume or a second
 * run with the same engine and prompt settings reuses the cached transitions instead of asking the
 * engine again for the same (task, history, action).
 */
let reasoning: { key: string; chat: ChatModel; model: ExperienceModel } | null = null;
/** The last learned experience model loaded in this worker (kept for a resume or a second run). */
const learned = new LearnedModelCache();

/** Where the learned model of the last run decodes, for the page (null: no learned model loaded). */
export function learnedDecodeThreads(): DecodeThreads | null {
  return learned.threads;
}

/** Loads (or reuses) the chat model of a browser engine; loading another unloads the previous one. */
export async function browserChatModel(
  spec: BrowserSpec,
  runtime: EngineRuntime = {},
  load: BrowserEngineLoader = loadBrowserEngine,
): Promise<ChatModel> {
  const key = JSON.stringify([spec, runtime.nCtx ?? null, runtime.webllmWorkerUrl ?? null]);
  if (loaded?.key === key) return loaded.model;
  if (loaded) {
    await loaded.model.unload?.().catch(() => undefined);
    loaded = null;
  }
  const model = await load(spec, runtime);
  loaded = { key, model };
  return model;
}

async function loadBrowserEngine(spec: BrowserSpec, runtime: EngineRuntime): Promise<Unloadable> {
  if (spec.kind === 'webllm') {
    const handler = runtime.webllmWorkerUrl;
    return WebLlmChatModel.load(
      spec.modelId,
      handler ? { worker: new Worker(handler, { type: 'module', name: 'webllm' }) } : {},
    );
  }
  const nCtx = runtime.nCtx ?? 4096;
  if (spec.source === 'url') return WllamaChatModel.load({ url: spec.url }, { nCtx });
  const file = runtime.file ?? (await openModelFile(spec.name));
  return WllamaChatModel.load({ file, name: spec.name }, { nCtx });
}

/** The trainer's parts for this config (a real run without prior: its feature schema alone), with the dreams' buffer. */
export async function trainerDeps(
  config: TrainConfig,
  runtime: EngineRuntime = {},
  openBuffer: () => Promise<ReplayBuffer | undefined> = async () => undefined,
): Promise<TrainerDeps> {
  const dreams = config.mode !== 'real';
  if (!dreams && !config.llmPrior) return { featureSchema: await registeredEnvSchema(config.env) };
  const spec = parseLlmSpec(config.llm);
  // The same buffer the trainer writes to (deps.buffer), so fresh transitions are retrievable at
  // once; undefined where IndexedDB is unavailable (private mode): dreams without retrieval.
  const buffer = dreams ? await openBuffer() : undefined;
  const chat = spec.kind === 'webllm' || spec.kind === 'wllama' ? await browserChatModel(spec, runtime) : undefined;
  const parts = await buildRunParts(config, {
    ...(chat ? { chat } : {}),
    ...(runtime.apiKey ? { apiKey: runtime.apiKey } : {}),
    ...(buffer ? { buffer } : {}),
    answers: { maxTokens: runtime.maxTokens, retries: runtime.retries },
    // learned:PATH (options.env is the run's: a model of another environment is refused with the fix).
    loadLearnedModel: (path, options) => learned.get(path, options),
  });
  if (chat && parts.experienceModel instanceof ReasoningExperienceModel) {
    const key = JSON.stringify([
      config.env,
      config.llm,
      config.seed,
      config.retrievalK,
      config.historyLength,
      config.reasoning,
      runtime.maxTokens ?? null,
      runtime.retries ?? null,
    ]);
    if (reasoning?.key === key && reasoning.chat === chat) parts.experienceModel = reasoning.model;
    else reasoning = { key, chat, model: parts.experienceModel };
  }
  return { ...parts, ...(buffer ? { buffer } : {}) };
}
