/**
 * The one builder of a run's parts (docs/architecture.md §3.5): the experience model, the agent's LLM prior and
 * the curriculum's LLM task generator, for a config. It parses `config.llm` once and builds what
 * the config asks for. Callers hand it only what they own:
 *
 *   chat              a loaded chat model (the page's WebLLM or wllama engine; a test double)
 *   apiKey            the key of an openai: server (the CLI reads it with its one rule; the page from Setup)
 *   buffer            the replay buffer the reasoning model retrieves from (or how to open it: opened
 *                     only when a model that retrieves is built)
 *   domain            an imported domain (its card, its recorded first states; no oracle for it)
 *   loadLearnedModel  reads a learned:PATH model (Node: a folder; the page: its own store)
 *   answers           the token budget and retries of one dreamed answer
 *
 * Every run also gets the policy's feature schema, mined from the offline data of its env or domain
 * (policy-schema.ts).
 *
 * A kind that runs only in the browser (webllm, wllama) needs the caller's chat model; without one
 * (e.g. in Node) the error says where it runs. The noisy oracle and the learned model are not
 * language models: a prior or LLM variations with them are config errors naming the fix.
 */
import type { ReplayBuffer } from '../buffer/buffer';
import { LlmTaskGenerator, type LlmTaskGeneratorOptions } from '../curriculum/llm-variations';
import type { DomainCard } from '../experience/domain-card';
import { DomainExperienceModel, type RecordedEpisodes } from '../experience/recorded-starts';
import { candidateInference } from '../data/candidates';
import { HaltingExperienceModel } from '../experience/halting-model';
import type { InferAdmissible } from '../experience/learned/learned-model';
import { realEpisodes } from '../experience/learned/sft-data';
import { NoisyOracleModel } from '../experience/noisy-oracle';
import {
  MIN_NOVELTY_EPISODES,
  NoveltyIndex,
  recordedNoveltySteps,
  trajectoryNoveltySteps,
  type NoveltyStep,
} from '../experience/novelty';
import { RealStartPool, RealStartsModel, type RealStartEpisode } from '../experience/real-starts';
import { ReasoningExperienceModel } from '../experience/reasoning-model';
import type { ExperienceModel } from '../experience/types';
import { OpenAiChatModel } from '../llm/openai';
import { parseLlmSpec, type LlmSpec } from '../llm/spec';
import type { ChatModel } from '../llm/types';
import { LlmActionPrior } from '../policy/llm-prior';
import type { ActionPrior } from '../policy/policy';
import type { FeatureSchema } from '../policy/feature-schema';
import { ConfigError, TRAIN_DEFAULTS, type TrainConfig } from './config';
import { registeredEnvSchema, schemaOfEpisodes } from './policy-schema';
import { requireRealTransitions } from './grounding';
import { DreamGymError } from '../errors';

type PartsSettings =
  | 'mode'
  | 'retrievalK'
  | 'historyLength'
  | 'reasoning'
  | 'verdictHead'
  | 'verdictCombine'
  | 'verdictLambda'
  | 'verdictMembers'
  | 'halt'
  | 'haltQuantile'
  | 'haltSuccessQuantile'
  | 'haltPenalty'
  | 'haltOffers'
  | 'haltRedraws'
  | 'realStartShare'
  | 'llmPrior'
  | 'curriculum'
  | 'curriculumVariations'
  | 'llmTimeoutMs'
  | 'llmRetries'
  | 'llmConcurrency';
/** What the builder reads of a config: env, llm and seed, and (defaults: TRAIN_DEFAULTS, mode 'dream') the rest. */
export type RunPartsConfig = Pick<TrainConfig, 'env' | 'llm' | 'seed'> & Partial<Pick<TrainConfig, PartsSettings>>;

export interface RunPartsDeps {
  chat?: ChatModel;
  apiKey?: string;
  buffer?: ReplayBuffer | (() => Promise<ReplayBuffer | undefined>);
  domain?: RunDomain;
  loadLearnedModel?: (path: string, options: LearnedLoadOptions) => Promise<ExperienceModel>;
  answers?: { maxTokens?: number; retries?: number };
  generator?: LlmTaskGeneratorOptions;
}

/** What a run needs of an imported domain (domain/domain.ts Domain): its name, card and recorded episodes. */
export interface RunDomain extends RecordedEpisodes {
  name: string;
  card: DomainCard;
}

/** Why `--llm oracle:…` cannot serve an imported domain. */
export function oracleUnavailableMessage(domain: { name: string }): string {
  return (
    `The oracle is not available for the imported domain '${domain.name}': the oracle is a real environment with dialled errors, ` +
    'and an imported domain has no real environment — only its recorded episodes. Use an LLM experience model (--llm openai:BASE_URL#MODEL) ' +
    'or a learned one (--llm learned:PATH): neither needs a real environment.'
  );
}

/** The one decision which engines can serve an imported domain: every kind but the oracle. */
export function checkDomainEngine(spec: LlmSpec, domain: { name: string }): void {
  if (spec.kind === 'oracle') throw new ConfigError(oracleUnavailableMessage(domain));
}

/** What a learned model is given when it is loaded: the run's retrieval buffer and its k and H. */
export interface LearnedLoadOptions {
  env: string;
  buffer?: ReplayBuffer;
  k: number;
  historyLength: number;
  seed: number;
  /** Judge endings with the model's verdict head, where it has one (false: the generator's own reward). */
  verdictHead?: boolean;
  /** The verdict ensemble's members used, and λ of mean − λ·std (absent: their minimum). */
  verdictMembers?: number;
  verdictLambda?: number;
  /** A domain's candidates for a dreamed state, where its lists are inferred (LearnedModelOptions.inferAdmissible). */
  inferAdmissible?: InferAdmissible;
}

export interface RunParts {
  /** The policy's feature schema: mined from the domain's training episodes, or the registered env's offline data. */
  featureSchema: FeatureSchema;
  /** Present when the config dreams (mode dream or s2r). */
  experienceModel?: ExperienceModel;
  /** Present when config.llmPrior is on. */
  prior?: ActionPrior;
  /** Present when the curriculum asks for LLM variations. */
  taskGenerator?: LlmTaskGenerator;
}

/** Raised for a browser-only engine where no chat model was handed in (Node, or a caller that did not load it). */
export class BrowserEngineError extends DreamGymError {
  constructor(spec: string) {
    super(
      `'${spec}' runs in the browser only (WebLLM needs WebGPU, wllama keeps its GGUF file in the page's storage): ` +
        'pick it on the page (Setup, then Train). From the command line use an OpenAI-compatible server instead, ' +
        'e.g. --llm openai:http://127.0.0.1:8080/v1#default (llama-server serves the same GGUF file).',
      {
        code: 'browser-only-engine',
        fix: 'Pick the engine on the page; from the command line use an OpenAI-compatible server (--llm openai:BASE_URL#MODEL).',
      },
    );
    this.name = 'BrowserEngineError';
  }
}

/** Whether a config asks the LLM for curriculum variations (curriculum on, source 'llm' or 'both'). */
export function wantsLlmVariations(config: Pick<TrainConfig, 'curriculum' | 'curriculumVariations'>): boolean {
  return config.curriculum && (config.curriculumVariations === 'llm' || config.curriculumVariations === 'both');
}

export async function buildRunParts(partial: RunPartsConfig, given: RunPartsDeps = {}): Promise<RunParts> {
  // The model and the halt both read the buffer: open it once.
  const deps = { ...given, buffer: onceBuffer(given.buffer) };
  const config = { ...TRAIN_DEFAULTS, mode: 'dream' as const, ...partial };
  const spec = parseLlmSpec(config.llm);
  if (deps.domain) checkDomainEngine(spec, deps.domain);
  let made: ChatModel | null | undefined;
  const chat = () => (made === undefined ? (made = chatFor(spec, config, deps)) : made); // built once, only if a part needs it
  const parts: RunParts = {
    featureSchema: deps.domain
      ? schemaOfEpisodes(config.env, deps.domain.train)
      : await registeredEnvSchema(config.env),
  };
  if (config.mode !== 'real') parts.experienceModel = await experienceModelFor(spec, config, deps, chat);
  if (config.llmPrior) parts.prior = new LlmActionPrior(needChat(chat(), config.llm, 'llmPrior'));
  if (wantsLlmVariations(config)) {
    parts.taskGenerator = new LlmTaskGenerator(needChat(chat(), config.llm, 'curriculumVariations'), {
      seed: config.seed,
      ...deps.generator,
    });
  }
  return parts;
}

/**
 * The run's chat model: the caller's, else one for an openai: spec; null for kinds that are not
 * language models (the oracle, the learned model). A browser engine without the caller's throws.
 */
function chatFor(
  spec: LlmSpec,
  config: Pick<TrainConfig, 'llm' | 'llmTimeoutMs' | 'llmRetries' | 'llmConcurrency'>,
  deps: RunPartsDeps,
): ChatModel | null {
  if (deps.chat) return deps.chat;
  switch (spec.kind) {
    // At most llmConcurrency requests in flight (limiter.ts); a rollout step asks for all its episodes' steps at once.
    case 'openai':
      return new OpenAiChatModel({
        baseUrl: spec.baseUrl,
        model: spec.model,
        timeoutMs: config.llmTimeoutMs,
        retries: config.llmRetries,
        concurrency: config.llmConcurrency,
        ...(deps.apiKey ? { apiKey: deps.apiKey } : {}),
      });
    case 'webllm':
    case 'wllama':
      throw new BrowserEngineError(config.llm);
    case 'oracle':
    case 'learned':
      return null;
  }
}

function needChat(chat: ChatModel | null, llm: string, setting: 'llmPrior' | 'curriculumVariations'): ChatModel {
  if (chat) return chat;
  const what = llm.startsWith('oracle:')
    ? 'the noisy oracle has none'
    : 'the learned experience model is not a chat model';
  const fix = setting === 'llmPrior' ? 'turn the prior off (llmPrior=false)' : 'use curriculumVariations=procedural';
  throw new ConfigError(
    `'${setting}' needs a language model, but llm is '${llm}' (${what}). ` +
      `Use an LLM engine (--llm openai:BASE_URL#MODEL, or WebLLM / wllama in the page), or ${fix}.`,
  );
}

async function experienceModelFor(
  spec: LlmSpec,
  config: RunPartsConfig & typeof TRAIN_DEFAULTS,
  deps: RunPartsDeps,
  chat: () => ChatModel | null,
): Promise<ExperienceModel> {
  const model =
    spec.kind === 'oracle'
      ? new NoisyOracleModel(config.env, {
          epsilonReward: spec.epsilonReward,
          epsilonTransition: spec.epsilonTransition,
          seed: config.seed,
        })
      : spec.kind === 'learned'
        ? await learnedModel(spec.path, deps, {
            env: config.env,
            seed: config.seed,
            buffer: config.retrievalK > 0 ? await openBuffer(deps.buffer) : undefined,
            k: config.retrievalK,
            historyLength: config.historyLength,
            verdictHead: config.verdictHead,
            verdictMembers: config.verdictMembers,
            ...(config.verdictCombine === 'mean-std' ? { verdictLambda: config.verdictLambda } : {}),
            ...(deps.domain?.card.inferredAdmissible ? { inferAdmissible: candidateInference(deps.domain.train) } : {}),
          })
        : new ReasoningExperienceModel(chat()!, {
            buffer: config.retrievalK > 0 ? await openBuffer(deps.buffer) : undefined,
            k: config.retrievalK,
            historyLength: config.historyLength,
            reasoning: config.reasoning,
            seed: config.seed,
            ...(deps.domain ? { domainCard: deps.domain.card } : {}),
            ...deps.answers,
          });
  // A domain's demonstrated tasks start from their recorded first states, whatever the model.
  const grounded = deps.domain ? new DomainExperienceModel(model, deps.domain) : model;
  // The halt and real starts both read the buffer's real episodes: read them once.
  const bufferReal = onceBufferReal(config.env, deps);
  const halting = await withHalt(grounded, spec, config, deps, bufferReal);
  if (!(config.realStartShare > 0)) return halting;
  const pool = new RealStartPool(await realStartEpisodes(deps, bufferReal));
  // No real episode to begin at (an empty buffer, a test double): every task begins at its first state.
  return pool.size > 0 ? new RealStartsModel(halting, pool) : halting;
}

/** The halt (MOReL) around a model, where it applies and the data can calibrate it. */
async function withHalt(
  model: ExperienceModel,
  spec: LlmSpec,
  config: RunPartsConfig & typeof TRAIN_DEFAULTS,
  deps: RunPartsDeps,
  bufferReal: BufferReal,
): Promise<ExperienceModel> {
  // The oracle is the real env with dialled errors: nothing to halt against.
  if (!config.halt || spec.kind === 'oracle') return model;
  const real = await realNoveltyEpisodes(deps, bufferReal);
  // Nothing real to measure against (a test double, a k = 0 model on an empty buffer): no halt.
  if (real.length < MIN_NOVELTY_EPISODES) return model;
  const index = NoveltyIndex.fromEpisodes(real, {
    quantile: config.haltQuantile,
    successQuantile: config.haltSuccessQuantile,
  });
  return new HaltingExperienceModel(model, index, {
    penalty: config.haltPenalty,
    offers: config.haltOffers,
    redraws: config.haltRedraws,
  });
}

/** The buffer's real episodes of an env and their tasks, read once however many parts use them. */
type BufferReal = () => Promise<Awaited<ReturnType<typeof realEpisodes>> | null>;

function onceBufferReal(env: string, deps: RunPartsDeps): BufferReal {
  let read: ReturnType<BufferReal> | undefined;
  return () => (read ??= openBuffer(deps.buffer).then((buffer) => (buffer ? realEpisodes(buffer, env) : null)));
}

/** The real episodes the halt measures a dream against: an imported domain's training episodes, else the buffer's. */
async function realNoveltyEpisodes(deps: RunPartsDeps, bufferReal: BufferReal): Promise<NoveltyStep[][]> {
  if (deps.domain) return deps.domain.train.map(trajectoryNoveltySteps);
  return ((await bufferReal())?.episodes ?? []).map(recordedNoveltySteps);
}

/** The real episodes a dream may begin in: a domain's training episodes, else the buffer's (with their task). */
async function realStartEpisodes(deps: RunPartsDeps, bufferReal: BufferReal): Promise<RealStartEpisode[]> {
  if (deps.domain) return deps.domain.train.map((t) => ({ task: t.task, steps: t.steps }));
  const real = await bufferReal();
  return (real?.episodes ?? []).flatMap((e) => {
    const task = real!.tasks.get(e.taskId);
    return task ? [{ task, steps: e.steps }] : [];
  });
}

function onceBuffer(buffer: RunPartsDeps['buffer']): RunPartsDeps['buffer'] {
  if (typeof buffer !== 'function') return buffer;
  let opened: Promise<ReplayBuffer | undefined> | undefined;
  return () => (opened ??= buffer());
}

function openBuffer(buffer: RunPartsDeps['buffer']): Promise<ReplayBuffer | undefined> {
  return typeof buffer === 'function' ? buffer() : Promise.resolve(buffer);
}

/** A learned model that retrieves is refused on a buffer with no real data of its env (grounding.ts). */
async function learnedModel(path: string, deps: RunPartsDeps, options: LearnedLoadOptions): Promise<ExperienceModel> {
  if (!deps.loadLearnedModel) {
    throw new Error(
      `'learned:${path}' names a learned experience model, and loading one is the caller's job: ` +
        'hand buildRunParts a loadLearnedModel(path) (Node reads a folder; the page reads its stored model).',
    );
  }
  const model = await deps.loadLearnedModel(path, options);
  // A model trained without retrieval needs no real transitions, whatever the run's k.
  await requireRealTransitions(options.buffer, options.env, model.retrievalK ?? options.k);
  return model;
}
