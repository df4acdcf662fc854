/**
 * What a dream will cost, before it starts (the page's Train form and `dreamgym train`): how many
 * transitions it dreams, how many of them the engine must really answer (the rest come from the
 * transition cache), how many tokens, and how long at the engine's speed — measured where there is
 * a measurement (Setup's "Try one step", `train --estimate`, the last run with the engine), else
 * the typical speed of the engine kind, said to be an assumption. Every figure is an estimate.
 *
 * Transitions: episodes (iterations × tasks × G) × the typical episode length of the env
 * (measured with the noisy oracle on the presets, or with the shipped learned model, whose halt
 * ends episodes sooner; at most the step limit, given as the bound). The share of a dream's tasks
 * begun at a real state plays at most its horizon.
 */
import { parseLlmSpec, type EngineKind } from '../llm/spec';
import { getEnvDefinition, listEnvDefinitions } from '../envs/registry';
import type { TrainConfig } from './config';

/** How fast an engine dreams: seconds per transition one call at a time, and how many it serves at once. */
export interface EngineSpeed {
  secondsPerTransition: number;
  /** Calls served at once (openai: llmConcurrency, if the server batches them; the others: 1). */
  parallel: number;
  /** Measured (a real call timed here) or assumed (the engine kind's typical figure). */
  measured: boolean;
  /** Where the figure comes from, in words. */
  source: string;
}

export interface EnvTypicals {
  /** Dreamed steps per episode (the policy learning over a run; measured with the noisy oracle). */
  stepsPerEpisode: number;
  /** Prompt + completion tokens of one dreamed transition (`npm run bench -- dream`, k = 4, H = 4; ≈ characters / 4). */
  tokensPerTransition: number;
  /** Share of the dream's model calls a transition cache answers (measured on the LLM demo preset). */
  cacheHitRate: number;
  /**
   * The shipped learned model's dreamed transitions per second at batch 64 on one wasm thread, fused
   * decoder (`npm run bench -- dream`, the mean of two runs; 2026-12-05, the k = 0 webshop model).
   */
  learnedTransitionsPerSecond?: number;
  /**
   * Dreamed steps per episode begun at the task's first state in the shipped learned model's dream
   * (with its halt): the intercept of episode length against the real-start share over the
   * iterations of the dev runs of docs/results/honest-dream.md ("What a dream costs").
   */
  learnedStepsPerEpisode?: number;
}

/**
 * Per env, measured here: steps per episode from the LLM demo presets' runs with oracle:0.1,0.1
 * (3 seeds; webshop 5.3 as its policy learns to buy, household ~48 of its 50-step limit), tokens
 * from the dream token bench, and the cache hit rate from the same runs (the share of dreamed
 * transitions a reasoning model's transition cache would have answered: the same task, history
 * and action, mostly a GRPO group's members stepping alike).
 */
export const ENV_TYPICALS: Record<string, EnvTypicals> = {
  'webshop-lite-v0': {
    stepsPerEpisode: 5.3,
    tokensPerTransition: 682,
    cacheHitRate: 0.15,
    learnedTransitionsPerSecond: 146.1,
    learnedStepsPerEpisode: 5.6,
  },
  'household-v0': {
    stepsPerEpisode: 48,
    tokensPerTransition: 638,
    cacheHitRate: 0,
    learnedTransitionsPerSecond: 235.4,
    learnedStepsPerEpisode: 25.1,
  },
};
const FALLBACK_TYPICALS: EnvTypicals = { stepsPerEpisode: 8, tokensPerTransition: 680, cacheHitRate: 0 };

/**
 * Typical speeds by engine kind (docs/results/real-llm-dream.md; every one an estimate):
 * WebLLM 0.5–1.5B on a laptop GPU ≈ 3 s per transition (680 tokens, 138 generated at 30–60 tokens/s);
 * wllama on a laptop CPU ≈ 20 s (0.5B Q4, ~10 tokens/s decode); a local server (Ollama,
 * llama-server) ≈ 2 s per call, a few at once; vLLM on a GPU server ≈ 1 s per call with many at once.
 */
export function assumedSpeed(
  llm: string,
  config: Pick<TrainConfig, 'llmConcurrency'> & Partial<Pick<TrainConfig, 'env'>>,
): EngineSpeed {
  const kind: EngineKind = parseLlmSpec(llm).kind;
  switch (kind) {
    case 'webllm':
      return {
        secondsPerTransition: 3,
        parallel: 1,
        measured: false,
        source: 'assumed: WebLLM, a 0.5–1.5B model on a laptop GPU',
      };
    case 'wllama':
      return {
        secondsPerTransition: 20,
        parallel: 1,
        measured: false,
        source: 'assumed: wllama, a 0.5B Q4 model on a laptop CPU',
      };
    case 'openai':
      return {
        secondsPerTransition: 2,
        parallel: config.llmConcurrency,
        measured: false,
        source: `assumed: a local server, ${config.llmConcurrency} calls at once if it batches them (llmConcurrency)`,
      };
    case 'learned': {
      // A long-answer env (webshop's results pages) dreams several times slower than a short one.
      const rate = ENV_TYPICALS[config.env ?? '']?.learnedTransitionsPerSecond;
      return rate
        ? {
            secondsPerTransition: 1 / rate,
            parallel: 1,
            measured: false,
            source: `typical: the shipped ${config.env} learned model, ${rate} transitions/s in batches on one wasm thread`,
          }
        : {
            secondsPerTransition: 0.01,
            parallel: 1,
            measured: false,
            source: 'assumed: a learned model, decoding in batches',
          };
    }
    case 'oracle':
      return {
        secondsPerTransition: 0.001,
        parallel: 1,
        measured: false,
        source: 'the noisy oracle: no model calls, only real env steps',
      };
  }
}

export interface DreamCostEstimate {
  /** Dream-phase iterations and the episodes they play. */
  iterations: number;
  episodes: number;
  /** Expected dreamed transitions, and the most there can be (every episode to its step limit). */
  transitions: number;
  transitionsAtMost: number;
  /** Share answered by the transition cache (0 when the engine has none in use). */
  cacheHitRate: number;
  cacheMeasured: boolean;
  /** Transitions the engine must answer (after the cache). */
  calls: number;
  tokensPerTransition: number;
  tokensMeasured: boolean;
  tokens: number;
  seconds: number;
  speed: EngineSpeed;
}

export interface EstimateInputs {
  /** Measured speed (else the engine kind's assumed one). */
  speed?: EngineSpeed;
  /** Measured tokens per transition (else the env's typical). */
  tokensPerTransition?: number;
  /** Measured cache hit rate (else the env's typical, for chat models at temperature 0). */
  cacheHitRate?: number;
}

type EstimateConfig = Pick<
  TrainConfig,
  'mode' | 'env' | 'llm' | 'iterations' | 'tasksPerIteration' | 'groupSize' | 'llmConcurrency'
> &
  Partial<Pick<TrainConfig, 'realStartShare' | 'realStartHorizon'>>;

export function estimateDreamCost(config: EstimateConfig, inputs: EstimateInputs = {}): DreamCostEstimate {
  const typicals = ENV_TYPICALS[config.env] ?? FALLBACK_TYPICALS;
  const stepLimit = listEnvDefinitions().some((d) => d.id === config.env)
    ? getEnvDefinition(config.env).defaultStepLimit
    : typicals.stepsPerEpisode * 2;
  const kind = parseLlmSpec(config.llm).kind;
  const iterations = config.mode === 'real' ? 0 : config.iterations;
  const episodes = iterations * config.tasksPerIteration * config.groupSize;
  // The bound stays every episode at its step limit: a dream with no real episode to begin at has no real starts.
  const transitions = Math.round(episodes * typicalEpisodeLength(config, typicals, stepLimit, kind));
  // The chat and learned models keep a transition cache (repeated task, history and action); the oracle answers everything itself.
  const cached = kind !== 'oracle';
  const cacheHitRate = cached ? (inputs.cacheHitRate ?? typicals.cacheHitRate) : 0;
  const calls = Math.round(transitions * (1 - cacheHitRate));
  const talks = kind === 'openai' || kind === 'webllm' || kind === 'wllama';
  const tokensPerTransition = talks ? (inputs.tokensPerTransition ?? typicals.tokensPerTransition) : 0;
  const speed = inputs.speed ?? assumedSpeed(config.llm, config);
  return {
    iterations,
    episodes,
    transitions,
    transitionsAtMost: episodes * stepLimit,
    cacheHitRate,
    cacheMeasured: inputs.cacheHitRate !== undefined,
    calls,
    tokensPerTransition,
    tokensMeasured: inputs.tokensPerTransition !== undefined,
    tokens: Math.round(calls * tokensPerTransition),
    seconds: (calls * speed.secondsPerTransition) / Math.max(1, speed.parallel),
    speed,
  };
}

/** Dreamed steps an episode typically takes, with the share of real starts at their horizon. */
function typicalEpisodeLength(
  config: EstimateConfig,
  typicals: EnvTypicals,
  stepLimit: number,
  kind: EngineKind,
): number {
  const fromFirst = Math.min(
    stepLimit,
    (kind === 'learned' ? typicals.learnedStepsPerEpisode : undefined) ?? typicals.stepsPerEpisode,
  );
  const share = config.realStartShare ?? 0;
  const horizon = config.realStartHorizon && config.realStartHorizon > 0 ? config.realStartHorizon : stepLimit;
  return (1 - share) * fromFirst + share * Math.min(horizon, fromFirst);
}

function count(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)} M` : n >= 1e4 ? `${Math.round(n / 1e3)} k` : n.toLocaleString('en-US');
}

/** The estimate in a sentence (page and CLI); `duration` formats seconds. */
export function describeEstimate(e: DreamCostEstimate, duration: (seconds: number) => string): string {
  const cache =
    e.cacheHitRate > 0
      ? `, ${Math.round(e.cacheHitRate * 100)}% of them from the transition cache (${e.cacheMeasured ? 'measured' : 'assumed'})`
      : '';
  const tokens =
    e.tokensPerTransition > 0
      ? `, ≈ ${count(e.tokens)} tokens (${e.tokensPerTransition} a transition, ${e.tokensMeasured ? 'measured' : 'estimated'})`
      : '';
  const parallel = e.speed.parallel > 1 ? ` with ${e.speed.parallel} calls at once` : '';
  return (
    `Estimate: ≈ ${count(e.transitions)} dreamed transitions (at most ${count(e.transitionsAtMost)}) in ${e.iterations} iterations${cache}` +
    `; ≈ ${count(e.calls)} model calls${tokens}; ≈ ${duration(e.seconds)} of model time at ${e.speed.secondsPerTransition < 0.1 ? `${Math.round(1 / e.speed.secondsPerTransition)} transitions/s` : `${e.speed.secondsPerTransition.toFixed(1)} s per transition`}${parallel} (${e.speed.source}).`
  );
}
