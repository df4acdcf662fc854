/**
 * Inside the trainer worker: the experience model (and the agent's LLM prior) a run asks for.
 * `config.llm` names the engine (src/app/state/engine.ts spec strings); the start request carries
 * what must not be in a config — the API key, a picked file the page could not store in OPFS —
 * and the dream answer budget.
 *
 *   oracle:…         core's createExperienceModel (the noisy oracle; no LLM, so no prior)
 *   openai:URL#MODEL OpenAiChatModel, talking to the server from this worker
 *   wllama:…         WllamaChatModel loaded here (wllama starts its own nested worker); a picked
 *                    file is read from OPFS (workers/llm-files.ts), so a reload keeps it
 *   webllm:MODEL_ID  WebLlmChatModel: web-llm's WebWorkerMLCEngine in this worker, talking to
 *                    workers/llm.worker.ts (a nested worker) — the weights come from web-llm's
 *                    cache, filled by the Setup page's download
 *
 * The reasoning experience model retrieves its k examples from the page's replay buffer
 * (IndexedDB, the Buffer page's data), and hands the same buffer to the trainer (deps.buffer),
 * which adds each iteration's transitions to it. One loaded model is kept between runs of the same engine,
 * so a resume or a second run does not load it again.
 */
import type { ReplayBuffer } from '../../core/buffer/buffer';
import { ReasoningExperienceModel } from '../../core/experience/reasoning-model';
import { OpenAiChatModel } from '../../core/llm/openai';
import type { ChatModel } from '../../core/llm/types';
import { WebLlmChatModel } from '../../core/llm/webllm';
import { WllamaChatModel } from '../../core/llm/wllama';
import type { TrainConfig } from '../../core/train/config';
import { createActionPrior, createExperienceModel, createTaskGenerator } from '../../core/train/experience';
import type { TrainerDeps } from '../../core/train/loop';
import { parseEngineSpec, type EngineSpec } from '../state/engine';
import { openModelFile } from './llm-files';

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
}

type Unloadable = ChatModel & { unload?: () => Promise<void> };

let loaded: { key: string; model: Unloadable } | null = null;

function engineKey(spec: EngineSpec, runtime: EngineRuntime): string {
  return JSON.stringify([spec, runtime.nCtx ?? null, runtime.apiKey ? 'key' : null]);
}

/** Builds (or reuses) the chat model of a non-oracle engine. */
export async function chatModelFor(spec: Exclude<EngineSpec, { kind: 'oracle' }>, runtime: EngineRuntime = {}): Promise<ChatModel> {
  const key = engineKey(spec, runtime);
  if (loaded?.key === key) return loaded.model;
  if (loaded) {
    await loaded.model.unload?.().catch(() => undefined);
    loaded = null;
  }
  let model: Unloadable;
  switch (spec.kind) {
    case 'openai':
      model = new OpenAiChatModel({ baseUrl: spec.baseUrl, model: spec.model, apiKey: runtime.apiKey });
      break;
    case 'wllama': {
      const nCtx = runtime.nCtx ?? 4096;
      if (spec.source === 'url') {
        model = await WllamaChatModel.load({ url: spec.url }, { nCtx });
      } else {
        const file = runtime.file ?? await openModelFile(spec.name);
        model = await WllamaChatModel.load({ file, name: spec.name }, { nCtx });
      }
      break;
    }
    case 'webllm':
      model = await WebLlmChatModel.load(spec.modelId);
      break;
  }
  loaded = { key, model };
  return model;
}

/** The trainer's experience model and prior for this config ({} for a real run without prior). */
export async function trainerDeps(config: TrainConfig, runtime: EngineRuntime = {},
  openBuffer: () => Promise<ReplayBuffer | undefined> = async () => undefined): Promise<TrainerDeps> {
  const dreams = config.mode !== 'real';
  if (!dreams && !config.llmPrior) return {};
  const spec = parseEngineSpec(config.llm);
  if (spec.kind === 'oracle') {
    return {
      ...(dreams ? { experienceModel: createExperienceModel(config) } : {}),
      // Throws a ConfigError naming the fix: the oracle has no language model to act as a prior.
      ...(config.llmPrior ? { prior: createActionPrior(config) } : {}),
    };
  }
  const chat = await chatModelFor(spec, runtime);
  const deps: TrainerDeps = {};
  if (dreams) {
    // The same buffer the trainer writes to (deps.buffer), so fresh transitions are retrievable at
    // once; undefined where IndexedDB is unavailable (private mode): dreams without retrieval.
    const buffer = await openBuffer();
    if (buffer) deps.buffer = buffer;
    deps.experienceModel = new ReasoningExperienceModel(chat, {
      buffer: config.retrievalK > 0 ? buffer : undefined,
      k: config.retrievalK, historyLength: config.historyLength, reasoning: config.reasoning, seed: config.seed,
      ...(runtime.maxTokens !== undefined ? { maxTokens: runtime.maxTokens } : {}),
      ...(runtime.retries !== undefined ? { retries: runtime.retries } : {}),
    });
  }
  if (config.llmPrior) deps.prior = createActionPrior(config, { chat });
  // LLM-written curriculum variations (dream-only tasks), when the run asks for them.
  const taskGenerator = createTaskGenerator(config, { chat });
  if (taskGenerator) deps.taskGenerator = taskGenerator;
  return deps;
}
