/**
 * LlmActionPrior: the LLM acting as the agent, as the `prior(a | s)` term of the candidate-scoring
 * policy (docs/architecture.md §3.8: π(a|s) = softmax(β·prior(a|s) + f_θ(x(s,a)))).
 *
 * The prompt lists the admissible actions under one-character labels (1–9, a–z, A–Z: a label is
 * a single token in every BPE vocabulary, so the first generated token alone says which action the
 * model prefers; multi-digit numbers would tokenize differently across models). The output is
 * restricted to the labels — a JSON schema enum (`{"action": "<label>"}`, default) or a grammar
 * (`root ::= "1" | "2" | …`) — and the engine is asked for the top logprobs of each token.
 *
 * Logprobs → prior logits. At the token where the label was written, each top alternative that
 * is a label (quotes and spaces stripped; duplicates merged by log-sum-exp) gives that label its
 * logprob. Labels not in the top list (WebLLM returns at most 5) get the FLOOR:
 *     min(lowest top logprob, max(floor, log(residual mass / labels missing)))
 * i.e. the leftover probability spread evenly, never above a listed label, never below `floor`.
 * Fallback when the engine gives no logprobs: the chosen label gets 0 and every other label
 * `floor` (a hard but overridable preference); when even the answer is unusable, all zeros (no
 * preference). Actions beyond the 61st label get `floor`.
 *
 * Logprobs are computed after the temperature (at temperature 0 they collapse to
 * 0 / −inf), so the prior samples at temperature 1 with a fixed seed. Results are cached per
 * state (instruction, observation, actions); `stats` reports calls and cache hits.
 */
import type { ChatModel, ChatRequest, TokenLogprob } from '../llm/types';
import type { ActionPrior, PolicyState } from './policy';

/** Single-character labels, in order. */
export const PRIOR_LABELS: readonly string[] = [...'123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'];

export interface LlmPriorOptions {
  /** How the answer is restricted to the labels (default 'json'). */
  constraint?: 'json' | 'grammar';
  /** Sampling temperature (default 1: logprobs are the model's probabilities). */
  temperature?: number;
  seed?: number;
  /** Top alternatives asked per token (default 5, WebLLM's maximum; ≥ 1 or engines return none). */
  topLogprobs?: number;
  /** Lowest prior logit (default −5). */
  floor?: number;
  /** Observation characters shown (default 1,200). */
  observationChars?: number;
  /** States cached (default 4,096; least recently used go first). */
  cacheSize?: number;
}

export interface LlmPriorStats {
  calls: number;
  cacheHits: number;
  withLogprobs: number;
  fallbacks: number;
}

function logSumExp(a: number, b: number): number {
  const m = Math.max(a, b);
  return m === -Infinity ? -Infinity : m + Math.log(Math.exp(a - m) + Math.exp(b - m));
}

function normaliseToken(token: string): string {
  return token.replace(/[\s"'{}:,]/g, '');
}

/** The prompt and request of one state (exposed for tests and inspection). */
export function priorRequest(
  state: PolicyState,
  actions: readonly string[],
  options: LlmPriorOptions = {},
): { request: ChatRequest; labels: string[] } {
  const labels = PRIOR_LABELS.slice(0, Math.min(actions.length, PRIOR_LABELS.length));
  const observation = state.observation.replace(/\s+/g, ' ').trim();
  const maxObs = options.observationChars ?? 1200;
  const shown = observation.length > maxObs ? `${observation.slice(0, maxObs - 1)}…` : observation;
  const lines = [
    `Task: ${state.instruction}`,
    `Observation: ${shown}`,
    ...(state.previousActions?.length ? [`Previous actions: ${state.previousActions.slice(-4).join('; ')}`] : []),
    'Actions:',
    ...labels.map((label, i) => `${label}. ${actions[i]}`),
    options.constraint === 'grammar'
      ? 'Reply with the label of the best next action only.'
      : 'Reply with JSON {"action": "<label of the best next action>"}.',
  ];
  const request: ChatRequest = {
    messages: [
      {
        role: 'system',
        content: 'You are an agent completing the task in a text environment. Choose the best next action.',
      },
      { role: 'user', content: lines.join('\n') },
    ],
    maxTokens: options.constraint === 'grammar' ? 2 : 12,
    temperature: options.temperature ?? 1,
    seed: options.seed ?? 0,
    topLogprobs: Math.max(1, options.topLogprobs ?? 5),
  };
  if (options.constraint === 'grammar')
    request.grammar = `root ::= ${labels.map((l) => JSON.stringify(l)).join(' | ')}`;
  else
    request.jsonSchema = {
      type: 'object',
      properties: { action: { type: 'string', enum: labels } },
      required: ['action'],
      additionalProperties: false,
    };
  return { request, labels };
}

/** The label in an answer (JSON `action` or the bare label), and where in the text it stands. */
export function chosenLabel(text: string, labels: readonly string[]): { label: string; at: number } | null {
  const json = /"action"\s*:\s*"([^"]*)"/.exec(text);
  if (json) {
    const label = json[1].trim();
    return labels.includes(label) ? { label, at: json.index + json[0].lastIndexOf(json[1]) } : null;
  }
  const bare = text.trim().replace(/\.$/, '');
  return labels.includes(bare) ? { label: bare, at: text.indexOf(bare) } : null;
}

/** The generated token that covers character `at` of the text (tokens concatenate to the text). */
function tokenAt(logprobs: readonly TokenLogprob[], at: number): TokenLogprob | null {
  let offset = 0;
  for (const t of logprobs) {
    if (at >= offset && at < offset + t.token.length) return t;
    offset += t.token.length;
  }
  // Tokens that do not concatenate to the text (some servers): the first token naming a label.
  return null;
}

/**
 * Prior logits from the top alternatives at the label's token (see the file comment). Returns
 * null when the token cannot be found or names no label.
 */
export function logitsFromLogprobs(
  logprobs: readonly TokenLogprob[],
  at: number,
  labels: readonly string[],
  floor: number,
): number[] | null {
  let token = tokenAt(logprobs, at);
  if (!token) token = logprobs.find((t) => labels.includes(normaliseToken(t.token))) ?? null;
  if (!token) return null;
  const byLabel = new Map<string, number>();
  const alternatives = token.top.length ? token.top : [{ token: token.token, logprob: token.logprob }];
  for (const alt of alternatives) {
    const label = normaliseToken(alt.token);
    if (!labels.includes(label) || !Number.isFinite(alt.logprob)) continue;
    byLabel.set(label, logSumExp(byLabel.get(label) ?? -Infinity, alt.logprob));
  }
  const chosen = normaliseToken(token.token);
  if (labels.includes(chosen) && !byLabel.has(chosen) && Number.isFinite(token.logprob))
    byLabel.set(chosen, token.logprob);
  if (byLabel.size === 0) return null;
  const listed = [...byLabel.values()];
  const lowest = Math.min(...listed);
  const mass = listed.reduce((s, l) => s + Math.exp(l), 0);
  const missing = labels.length - byLabel.size;
  const spread = missing > 0 ? Math.log(Math.max(1 - mass, 1e-12) / missing) : floor;
  const rest = Math.min(lowest, Math.max(floor, spread));
  return labels.map((l) => byLabel.get(l) ?? rest);
}

export class LlmActionPrior implements ActionPrior {
  readonly id: string;
  private readonly cache = new Map<string, number[]>();
  private readonly counters: LlmPriorStats = { calls: 0, cacheHits: 0, withLogprobs: 0, fallbacks: 0 };

  constructor(
    readonly chat: ChatModel,
    readonly options: LlmPriorOptions = {},
  ) {
    this.id = `llm-prior:${chat.engine}:${chat.id}`;
  }

  get stats(): LlmPriorStats {
    return { ...this.counters };
  }

  get floor(): number {
    return this.options.floor ?? -5;
  }

  async prior(state: PolicyState, actions: readonly string[]): Promise<number[]> {
    if (actions.length === 0) return [];
    const key = JSON.stringify([state.instruction, state.observation, state.previousActions?.slice(-4) ?? [], actions]);
    const cached = this.cache.get(key);
    if (cached) {
      this.counters.cacheHits++;
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached.slice();
    }
    const { request, labels } = priorRequest(state, actions, this.options);
    this.counters.calls++;
    const result = await this.chat.complete(request);
    const chosen = chosenLabel(result.text, labels);
    let logits: number[] | null = null;
    if (chosen && result.logprobs?.length) logits = logitsFromLogprobs(result.logprobs, chosen.at, labels, this.floor);
    if (!chosen && result.logprobs?.length) logits = logitsFromLogprobs(result.logprobs, -1, labels, this.floor);
    let scores: number[];
    if (logits) {
      this.counters.withLogprobs++;
      // Actions beyond the last label were not offered: they get the floor.
      scores = actions.map((_, i) => (i < logits!.length ? logits![i] : this.floor));
    } else {
      this.counters.fallbacks++;
      scores = chosen ? actions.map((_, i) => (labels[i] === chosen.label ? 0 : this.floor)) : actions.map(() => 0);
    }
    this.cache.set(key, scores);
    if (this.cache.size > (this.options.cacheSize ?? 4096)) this.cache.delete(this.cache.keys().next().value as string);
    return scores.slice();
  }
}
