/**
 * Builds the experience model a training config names (`config.llm`): the noisy oracle — the
 * real env with dialled errors, always labelled as such — or the reasoning model over an
 * OpenAI-compatible server, retrieving from the replay buffer.
 */
import type { ReplayBuffer } from '../buffer/buffer';
import { NoisyOracleModel } from '../experience/noisy-oracle';
import { ReasoningExperienceModel } from '../experience/reasoning-model';
import type { ExperienceModel } from '../experience/types';
import { OpenAiChatModel } from '../llm/openai';
import { parseLlmSpec } from '../llm/spec';
import type { ChatModel } from '../llm/types';
import { LlmActionPrior } from '../policy/llm-prior';
import type { ActionPrior } from '../policy/policy';
import { LlmTaskGenerator, type LlmTaskGeneratorOptions } from '../curriculum/llm-variations';
import { ConfigError, type TrainConfig } from './config';

export interface ExperienceModelDeps {
  buffer?: ReplayBuffer;
  /** API key for openai: specs (read by the caller from the environment; never stored). */
  apiKey?: string;
  /** A chat model to use instead of building one from the spec (the page's WebLLM / wllama engine). */
  chat?: ChatModel;
}

export function createExperienceModel(config: TrainConfig, deps: ExperienceModelDeps = {}): ExperienceModel {
  const spec = parseLlmSpec(config.llm);
  if (spec.kind === 'oracle' && !deps.chat) {
    return new NoisyOracleModel(config.env, { epsilonReward: spec.epsilonReward, epsilonTransition: spec.epsilonTransition, seed: config.seed });
  }
  const chat = deps.chat ?? new OpenAiChatModel({ baseUrl: (spec as { baseUrl: string }).baseUrl, model: (spec as { model: string }).model, apiKey: deps.apiKey });
  return new ReasoningExperienceModel(chat, {
    buffer: deps.buffer, k: config.retrievalK, historyLength: config.historyLength, reasoning: config.reasoning, seed: config.seed,
  });
}

/**
 * The agent's LLM prior when `config.llmPrior` is on (undefined when off: the no-prior ablation).
 * The noisy oracle has no language model, so asking for a prior with it is a config error.
 */
export function createActionPrior(config: TrainConfig, deps: ExperienceModelDeps = {}): ActionPrior | undefined {
  if (!config.llmPrior) return undefined;
  const spec = parseLlmSpec(config.llm);
  if (spec.kind === 'oracle' && !deps.chat) {
    throw new ConfigError(`'llmPrior' needs a language model, but llm is '${config.llm}' (the noisy oracle has none). ` +
      'Use --llm openai:BASE_URL#MODEL, or turn the prior off (llmPrior=false).');
  }
  const chat = deps.chat ?? new OpenAiChatModel({ baseUrl: (spec as { baseUrl: string }).baseUrl, model: (spec as { model: string }).model, apiKey: deps.apiKey });
  return new LlmActionPrior(chat);
}

/** Whether a config asks the LLM for curriculum variations (curriculum on, source 'llm' or 'both'). */
export function wantsLlmVariations(config: TrainConfig): boolean {
  return config.curriculum && (config.curriculumVariations === 'llm' || config.curriculumVariations === 'both');
}

/**
 * The curriculum's LLM task generator when the config asks for LLM variations (undefined
 * otherwise). The noisy oracle is a copy of the real env, not a language model: it cannot write
 * tasks, so asking for LLM variations with it is a config error.
 */
export function createTaskGenerator(config: TrainConfig, deps: ExperienceModelDeps & { generator?: LlmTaskGeneratorOptions } = {}): LlmTaskGenerator | undefined {
  if (!wantsLlmVariations(config)) return undefined;
  const spec = parseLlmSpec(config.llm);
  if (spec.kind === 'oracle' && !deps.chat) {
    throw new ConfigError(`'curriculumVariations' ${config.curriculumVariations} needs a language model to write tasks, but llm is '${config.llm}' ` +
      '(the noisy oracle cannot generate tasks). Use --llm openai:BASE_URL#MODEL, or curriculumVariations=procedural.');
  }
  const chat = deps.chat ?? new OpenAiChatModel({ baseUrl: (spec as { baseUrl: string }).baseUrl, model: (spec as { model: string }).model, apiKey: deps.apiKey });
  return new LlmTaskGenerator(chat, { seed: config.seed, ...deps.generator });
}
