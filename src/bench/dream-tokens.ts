/**
 * benchDreamTokens: the size of one dreamed transition — prompt and completion tokens — with the
 * real prompts (ReasoningExperienceModel.buildPrompt, retrieval from the given buffer) on real
 * states of held-out episodes (expert and random, alternating).
 *
 * No tokenizer is available here, so tokens are ESTIMATED: ceil(characters / 4) per text, plus 4
 * tokens of chat template per message (prompts.ts `estimateTokens` / `estimatePromptTokens`). The
 * rule is the usual one for English text with BPE vocabularies; JSON punctuation and opaque ids
 * tokenize worse, so treat the figures as ±25%.
 *
 * The completion is the answer a perfect model would give in the output format: the real next
 * state in its abstract form (bounded like the schema bounds it) and a reasoning string at its
 * FULL length bound (the worst case), serialised as compact JSON.
 */
import type { ReplayBuffer } from '../core/buffer/buffer';
import { makeBaselinePolicy, rolloutEpisode } from '../core/data/rollout';
import { getEnvDefinition, makeEnv } from '../core/envs/registry';
import type { ChatModel } from '../core/llm/types';
import type { Step } from '../core/types';
import { HELD_OUT_SEED_BASE } from '../core/envs/env';
import { abstractAdmissible, abstractObservation, bound } from '../core/experience/domain-card';
import { estimatePromptTokens, estimateTokens, staticShare, type PromptOptions } from '../core/experience/prompts';
import { ReasoningExperienceModel } from '../core/experience/reasoning-model';

export interface TokenStats {
  mean: number;
  p50: number;
  p90: number;
  max: number;
}

export interface DreamTokenBench {
  env: string;
  transitions: number;
  k: number;
  historyLength: number;
  reasoning: boolean;
  prompt: TokenStats;
  completion: TokenStats;
  total: TokenStats;
  /** Mean examples actually shown (fewer than k when the buffer is small). */
  examplesShown: number;
  /** Share of the prompt tokens that is the static prefix (system prompt, domain card, output instruction): what prefix caching saves. */
  staticShare: number;
  rule: string;
}

export interface BenchDreamTokensOptions extends Partial<PromptOptions> {
  envId: string;
  buffer?: ReplayBuffer;
  /** Held-out episodes played (default 12: half expert, half random). */
  episodes?: number;
  seed?: number;
}

function stats(values: number[]): TokenStats {
  const sorted = values.slice().sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const mean = values.reduce((s, x) => s + x, 0) / Math.max(1, values.length);
  return { mean: Math.round(mean * 10) / 10, p50: at(0.5), p90: at(0.9), max: sorted[sorted.length - 1] ?? 0 };
}

const NO_CALLS: ChatModel = {
  id: 'token-bench',
  engine: 'test',
  complete: () => Promise.reject(new Error('benchDreamTokens never calls the model')),
};

export async function benchDreamTokens(options: BenchDreamTokensOptions): Promise<DreamTokenBench> {
  const { envId, buffer, episodes = 12, seed = 0, ...prompt } = options;
  const definition = getEnvDefinition(envId);
  const model = new ReasoningExperienceModel(NO_CALLS, { ...prompt, ...(buffer ? { buffer } : {}) });
  const o = model.prompt;
  const card = model.cardFor(envId);
  const promptTokens: number[] = [],
    completionTokens: number[] = [],
    totals: number[] = [];
  let examples = 0;
  let staticTokens = 0;
  for (let i = 0; i < episodes; i++) {
    const episodeSeed = HELD_OUT_SEED_BASE + 500_000 + seed + i;
    const task = definition.generateTask(episodeSeed, [0, 0.25, 0.5, 0.75, 1][i % 5]);
    const trajectory = await rolloutEpisode(makeEnv(envId), makeBaselinePolicy(i % 2 === 0 ? 'expert' : 'random'), {
      seed: episodeSeed,
      task,
    });
    const steps = trajectory.steps;
    for (let t = 0; t < steps.length; t++) {
      const step = steps[t];
      const history: Step[] = steps.slice(0, t);
      const state = { text: step.observation, admissible: step.admissible, task };
      const retrieved = await model.retrieve({ task, state, action: step.action });
      examples += retrieved.length;
      const built = model.buildPrompt({ task, history, state, action: step.action }, retrieved);
      const next = steps[t + 1];
      const nextText = next ? next.observation : trajectory.final_observation;
      const nextAdmissible = next ? next.admissible : [];
      const completion = JSON.stringify({
        ...(o.reasoning ? { reasoning: 'x'.repeat(o.reasoningChars) } : {}),
        valid: step.valid,
        next_state: {
          observation: abstractObservation(card, nextText, o.observationChars),
          admissible: step.terminated
            ? []
            : abstractAdmissible(card, nextAdmissible)
                .slice(0, o.maxAdmissible)
                .map((a) => bound(a, o.actionChars)),
        },
        reward: step.reward >= 1 ? 1 : 0,
        terminated: step.terminated,
      });
      const p = estimatePromptTokens(built.messages);
      staticTokens += staticShare(built.messages) * p;
      const c = estimateTokens(completion);
      promptTokens.push(p);
      completionTokens.push(c);
      totals.push(p + c);
    }
  }
  return {
    env: envId,
    transitions: totals.length,
    k: o.k,
    historyLength: o.historyLength,
    reasoning: o.reasoning,
    prompt: stats(promptTokens),
    completion: stats(completionTokens),
    total: stats(totals),
    examplesShown: Math.round((examples / Math.max(1, totals.length)) * 100) / 100,
    staticShare:
      Math.round(
        (staticTokens /
          Math.max(
            1,
            promptTokens.reduce((a, b) => a + b, 0),
          )) *
          1000,
      ) / 1000,
    rule: 'tokens ≈ ceil(chars / 4) per text + 4 per chat message; completion = the ideal answer with reasoning at its length bound',
  };
}
