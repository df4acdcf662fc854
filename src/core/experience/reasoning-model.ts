/**
 * ReasoningExperienceModel: the paper's M_exp (its §4.1) over any ChatModel. Per dreamed step it
 *
 *   1. retrieves the top-k most similar past transitions from the replay buffer (same env,
 *      valid only, at most one per episode) unless the caller passed `retrieved`;
 *   2. builds the prompt (prompts.ts): domain card, task, last H steps, current state, action,
 *      the k examples, and the bounded JSON output instruction + schema;
 *   3. calls the model and checks the answer: JSON parse, schema (types, required fields), and
 *      consistency (observation non-empty; admissible non-empty unless terminated; reward in
 *      {0, 1}; reward 1 only when terminated; an invalid action neither ends the episode nor
 *      earns reward);
 *   4. retries a bounded number of times on a length cut-off (with 1.5× the token budget), a
 *      parse/schema error or an inconsistency — each retry shows the model its rejected answer
 *      and the reason, and is noted in `Prediction.notes`;
 *   5. after the last retry returns an INVALID prediction (`valid: false`) carrying the raw text
 *      and the reason. It never throws for a bad answer. An engine call that failed in transport
 *      after the engine's own retries (timeout, refused, 5xx: LlmError.transient) is an invalid
 *      prediction too, with `engineError` set (engine-failures.ts decides when too many such
 *      failures stop a run); errors of the setup (bad key, missing model, aborted) propagate.
 *
 * Transition cache: at temperature 0 the same (task, history, state, action) gets the same
 * answer, so GRPO rollouts of one group that share a prefix share the model calls. On by default
 * at temperature 0; only usable answers are cached; `cacheStats` reports hits and misses.
 *
 * Concurrency: a rollout step asks for all its episodes' steps at once, so `next` may be called
 * concurrently. A call for a step already in flight waits for it and then reads the cache, so
 * hits, misses and answers are those of the same calls made one after another.
 */
import type { ReplayBuffer } from '../buffer/buffer';
import { askJson, type Asked, type ParseOutcome } from './ask-json';
import { isFailedEngineCall, type ChatModel } from '../llm/types';
import type { Observation, Task, Transition } from '../types';
import {
  bound,
  promptCardFor,
  collapse,
  concreteAdmissible,
  concreteObservation,
  checkConsistency,
  globalActionsOf,
  type DomainCard,
  type DreamedAnswer,
} from './domain-card';
import {
  buildInitialPrompt,
  buildNextPrompt,
  DEFAULT_PROMPT_OPTIONS,
  type BuiltPrompt,
  type PromptOptions,
} from './prompts';
import { ExperienceModelError, ZERO_USAGE, type DreamContext, type ExperienceModel, type Prediction } from './types';

export interface ReasoningModelOptions extends Partial<PromptOptions> {
  /** Replay buffer to retrieve examples from (none: no examples unless the caller passes them). */
  buffer?: ReplayBuffer;
  /** The env's card; default: the built-in card of the task's env. */
  domainCard?: DomainCard;
  /** Token budget of one answer (default 400; a cut-off retry gets 1.5× more). */
  maxTokens?: number;
  /** Sampling temperature (default 0: deterministic dreams). */
  temperature?: number;
  /** Sampling seed of the first attempt (retry i uses seed + i). */
  seed?: number;
  /** Retries after a rejected answer (default 2). */
  retries?: number;
  /** Answer repeated (task, history, state, action) from a cache (default: on at temperature 0). */
  transitionCache?: boolean;
  /** Most cached transitions kept (least recently used go first; default 10,000). */
  cacheSize?: number;
}

export interface CacheStats {
  hits: number;
  misses: number;
  size: number;
}

/** A checked answer of the model (before it becomes a Prediction). */
export interface NextAnswer extends DreamedAnswer {
  reasoning: string;
}

export type { ParseOutcome };

// =============================================================================================
// Parsing and checking
// =============================================================================================

/** The JSON object inside a reply: code fences and text around the outermost braces are ignored. */
export function extractJson(text: string): ParseOutcome<Record<string, unknown>> {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return { ok: false, kind: 'parse', reason: 'no JSON object in the answer' };
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch (error) {
    return { ok: false, kind: 'parse', reason: `JSON does not parse (${(error as Error).message})` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, kind: 'parse', reason: 'the answer is not a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}

function isStringArray(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((a) => typeof a === 'string');
}

/** JSON parse + schema check of a next-state answer (consistency is `checkConsistency`, domain-card.ts). */
export function parseNextAnswer(text: string, options: { reasoning: boolean }): ParseOutcome<NextAnswer> {
  const json = extractJson(text);
  if (!json.ok) return json;
  const o = json.value;
  const problems: string[] = [];
  if (options.reasoning && typeof o.reasoning !== 'string') problems.push('"reasoning" must be a string');
  if (typeof o.valid !== 'boolean') problems.push('"valid" must be true or false');
  const next = o.next_state as Record<string, unknown> | undefined;
  if (!next || typeof next !== 'object' || Array.isArray(next)) problems.push('"next_state" must be an object');
  else {
    if (typeof next.observation !== 'string') problems.push('"next_state.observation" must be a string');
    if (!isStringArray(next.admissible)) problems.push('"next_state.admissible" must be an array of strings');
  }
  if (typeof o.reward !== 'number') problems.push('"reward" must be the number 0 or 1');
  if (typeof o.terminated !== 'boolean') problems.push('"terminated" must be true or false');
  if (problems.length) return { ok: false, kind: 'schema', reason: problems.join('; ') };
  return {
    ok: true,
    value: {
      reasoning: typeof o.reasoning === 'string' ? o.reasoning.trim() : '',
      valid: o.valid as boolean,
      observation: collapse(next!.observation as string),
      admissible: (next!.admissible as string[]).map(collapse).filter((a) => a.length > 0),
      reward: o.reward as number,
      terminated: o.terminated as boolean,
    },
  };
}

/** JSON parse + schema + non-empty check of a first-state answer. */
export function parseInitialAnswer(text: string): ParseOutcome<{ observation: string; admissible: string[] }> {
  const json = extractJson(text);
  if (!json.ok) return json;
  const o = json.value;
  if (typeof o.observation !== 'string' || !isStringArray(o.admissible)) {
    return { ok: false, kind: 'schema', reason: '"observation" must be a string and "admissible" an array of strings' };
  }
  const observation = collapse(o.observation);
  const admissible = o.admissible.map(collapse).filter((a) => a.length > 0);
  if (!observation) return { ok: false, kind: 'inconsistent', reason: 'the observation is empty' };
  if (!admissible.length) return { ok: false, kind: 'inconsistent', reason: 'a first state needs admissible actions' };
  return { ok: true, value: { observation, admissible } };
}

// =============================================================================================
// The model
// =============================================================================================

/** What an invalid prediction says of the step: nothing happened (the state stays, no reward, no ending). */
function unusableStep(
  ctx: DreamContext,
): Pick<Prediction, 'reasoning' | 'next' | 'reward' | 'terminated' | 'valid' | 'actionValid'> {
  return {
    reasoning: '',
    next: { ...ctx.state, admissible: ctx.state.admissible.slice() },
    reward: 0,
    terminated: false,
    valid: false,
    actionValid: false,
  };
}

/** The invalid prediction of a step whose engine call failed in transport (never cached: the next call may succeed). */
function failedCall(
  ctx: DreamContext,
  retrieved: readonly Transition[],
  prompt: BuiltPrompt,
  message: string,
): Prediction {
  return {
    ...unusableStep(ctx),
    usage: { ...ZERO_USAGE },
    attempts: 1,
    notes: [],
    prompt: prompt.messages,
    retrievedIds: retrieved.map((t) => t.id),
    invalidReason: `the engine call failed: ${message}`,
    engineError: message,
  };
}

export class ReasoningExperienceModel implements ExperienceModel {
  readonly label: string;
  readonly prompt: PromptOptions;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly seed: number;
  readonly retries: number;
  readonly cacheEnabled: boolean;
  private readonly cacheSize: number;
  private readonly cache = new Map<string, Prediction>();
  private readonly inFlight = new Map<string, Promise<Prediction>>();
  private readonly initialCache = new Map<string, Observation>();
  private hits = 0;
  private misses = 0;

  constructor(
    readonly chat: ChatModel,
    readonly options: ReasoningModelOptions = {},
  ) {
    const {
      buffer: _b,
      domainCard: _d,
      maxTokens,
      temperature,
      seed,
      retries,
      transitionCache,
      cacheSize,
      ...prompt
    } = options;
    this.prompt = { ...DEFAULT_PROMPT_OPTIONS, ...prompt };
    this.maxTokens = maxTokens ?? 400;
    this.temperature = temperature ?? 0;
    this.seed = seed ?? 0;
    this.retries = Math.max(0, retries ?? 2);
    this.cacheEnabled = transitionCache ?? this.temperature === 0;
    this.cacheSize = cacheSize ?? 10_000;
    const ablations = [
      `k=${this.prompt.k}`,
      `H=${this.prompt.historyLength}`,
      ...(this.prompt.reasoning ? [] : ['no reasoning']),
    ];
    this.label = `${chat.engine} ${chat.id} (${ablations.join(', ')})`;
  }

  get cacheStats(): CacheStats {
    return { hits: this.hits, misses: this.misses, size: this.cache.size };
  }

  clearCache(): void {
    this.cache.clear();
    this.initialCache.clear();
  }

  /** The card used for `envId`: the configured one, the built-in one, or a minimal generic card. */
  cardFor(envId: string): DomainCard {
    return this.options.domainCard ?? promptCardFor(envId);
  }

  /** The top-k examples for a step: the caller's, else the buffer's (same env, valid, diverse). */
  async retrieve(ctx: Pick<DreamContext, 'task' | 'state' | 'action' | 'retrieved'>): Promise<Transition[]> {
    if (ctx.retrieved) return ctx.retrieved.slice(0, this.prompt.k);
    const buffer = this.options.buffer;
    if (!buffer || this.prompt.k <= 0) return [];
    const hits = await buffer.retrieve(
      { instruction: ctx.task.instruction, observation: ctx.state.text, action: ctx.action },
      this.prompt.k,
      { env: ctx.task.env, validOnly: true, diverse: true },
    );
    return hits.map((h) => h.transition);
  }

  /** The prompt of a step with the given examples (exposed for inspection and benchmarks). */
  buildPrompt(
    ctx: Pick<DreamContext, 'task' | 'history' | 'state' | 'action'>,
    retrieved: readonly Transition[],
  ): BuiltPrompt {
    return buildNextPrompt(
      {
        card: this.cardFor(ctx.task.env),
        task: ctx.task,
        history: ctx.history,
        state: ctx.state,
        action: ctx.action,
        retrieved,
      },
      this.prompt,
    );
  }

  private cacheKey(ctx: DreamContext): string {
    // The answer is a function of the prompt; at temperature 0 the history's observations follow
    // from its actions, so the actions (with their validity) stand for the history.
    return JSON.stringify([
      ctx.task.env,
      ctx.task.id,
      ctx.task.instruction,
      ctx.history.map((s) => (s.valid ? s.action : `!${s.action}`)),
      ctx.state.text,
      ctx.action,
    ]);
  }

  async next(ctx: DreamContext): Promise<Prediction> {
    if (!this.cacheEnabled) return this.predict(ctx, null);
    const key = this.cacheKey(ctx);
    // A call for a step already in flight (a GRPO group stepping together) waits for it, then reads
    // the cache; the check and the claim below run with no await between them.
    while (this.inFlight.has(key)) await this.inFlight.get(key)!.catch(() => undefined);
    const cached = this.cache.get(key);
    if (cached) {
      this.hits++;
      this.cache.delete(key);
      this.cache.set(key, cached);
      // No call was made: no prompt and no tries of its own (the cache keeps neither).
      return {
        ...cached,
        next: { ...cached.next, admissible: cached.next.admissible.slice() },
        usage: { ...ZERO_USAGE },
        attempts: 0,
        notes: [],
        cached: true,
      };
    }
    this.misses++;
    const asked = this.predict(ctx, key);
    this.inFlight.set(key, asked);
    try {
      return await asked;
    } finally {
      if (this.inFlight.get(key) === asked) this.inFlight.delete(key);
    }
  }

  /** Asks the model (with retries); a usable answer goes to the cache under `key`. */
  private async predict(ctx: DreamContext, key: string | null): Promise<Prediction> {
    const card = this.cardFor(ctx.task.env);
    const retrieved = await this.retrieve(ctx);
    const prompt = this.buildPrompt(ctx, retrieved);
    const globals = globalActionsOf(card, ctx.history[0]?.admissible ?? ctx.state.admissible);
    const settled = await this.ask(
      prompt,
      (text): ParseOutcome<{ answer: NextAnswer; next: Observation }> => {
        const parsed = parseNextAnswer(text, { reasoning: this.prompt.reasoning });
        if (!parsed.ok) return parsed;
        const answer = parsed.value;
        const nextText = concreteObservation(
          card,
          bound(answer.observation, this.prompt.observationChars),
          ctx.task.instruction,
        );
        const admissible =
          answer.terminated || !answer.valid
            ? []
            : concreteAdmissible(card, answer.admissible.slice(0, this.prompt.maxAdmissible), globals, nextText);
        const inconsistent = checkConsistency(answer, answer.valid ? admissible : answer.admissible);
        if (inconsistent) return { ok: false, kind: 'inconsistent', reason: inconsistent };
        return { ok: true, value: { answer, next: { text: nextText, admissible, task: ctx.task } } };
      },
      ctx.signal,
    ).catch((error: unknown) => {
      if (!isFailedEngineCall(error)) throw error;
      return error;
    });
    if (settled instanceof Error) return failedCall(ctx, retrieved, prompt, settled.message);
    const base = {
      usage: settled.usage,
      attempts: settled.attempts,
      notes: settled.notes,
      prompt: prompt.messages,
      tries: settled.tries,
      retrievedIds: retrieved.map((t) => t.id),
    };
    if (!settled.value) {
      return {
        ...base,
        ...unusableStep(ctx),
        raw: settled.raw,
        invalidReason: settled.reason ?? 'no usable answer',
      };
    }
    const { answer, next } = settled.value;
    const reasoning = bound(answer.reasoning, this.prompt.reasoningChars);
    const prediction: Prediction = answer.valid
      ? {
          ...base,
          reasoning,
          next,
          reward: answer.reward,
          terminated: answer.terminated,
          valid: true,
          actionValid: true,
          score: answer.reward,
          raw: settled.raw,
        }
      : {
          ...base,
          reasoning,
          next: { ...ctx.state, admissible: ctx.state.admissible.slice() },
          reward: 0,
          terminated: false,
          valid: true,
          actionValid: false,
          score: 0,
          raw: settled.raw,
        };
    if (key !== null) {
      const { prompt: _prompt, tries: _tries, ...kept } = prediction;
      this.cache.set(key, kept);
      if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
    }
    return prediction;
  }

  async initial(task: Task, signal?: AbortSignal): Promise<Observation> {
    const key = `${task.env}\u0000${task.id}\u0000${task.instruction}`;
    const cached = this.cacheEnabled ? this.initialCache.get(key) : undefined;
    if (cached) return { ...cached, admissible: cached.admissible.slice() };
    const card = this.cardFor(task.env);
    let examples: Transition[] = [];
    const buffer = this.options.buffer;
    if (buffer && this.prompt.k > 0) {
      const hits = await buffer.retrieve(
        { instruction: task.instruction, observation: '', action: '' },
        this.prompt.k * 8,
        { env: task.env, validOnly: true, diverse: true },
      );
      examples = hits
        .map((h) => h.transition)
        .filter((t) => t.stepIndex === 0)
        .slice(0, this.prompt.k);
    }
    const settled = await this.ask(
      buildInitialPrompt(card, task, examples, this.prompt),
      parseInitialAnswer,
      signal,
    ).catch((error: unknown) => {
      if (!isFailedEngineCall(error)) throw error;
      throw new ExperienceModelError(
        `The experience model (${this.label}) could not write the first state of task '${task.id}': ${error.message}`,
      );
    });
    if (!settled.value) {
      throw new ExperienceModelError(
        `The experience model (${this.label}) gave no usable first state for task '${task.id}' after ${settled.attempts} attempts: ${settled.reason}. ` +
          'Try a larger model, more retries, or start the task from a real environment.',
        settled.raw,
      );
    }
    const text = concreteObservation(
      card,
      bound(settled.value.observation, this.prompt.observationChars),
      task.instruction,
    );
    const observation: Observation = {
      text,
      admissible: concreteAdmissible(
        card,
        settled.value.admissible.slice(0, this.prompt.maxAdmissible * 4),
        [],
        text,
        false,
      ),
      task,
    };
    if (this.cacheEnabled) this.initialCache.set(key, observation);
    return { ...observation, admissible: observation.admissible.slice() };
  }

  /** Calls the model with bounded retries until `check` accepts an answer (ask-json.ts). */
  private ask<T>(
    prompt: BuiltPrompt,
    check: (text: string) => ParseOutcome<T>,
    signal?: AbortSignal,
  ): Promise<Asked<T>> {
    return askJson(this.chat, prompt, check, {
      maxTokens: this.maxTokens,
      temperature: this.temperature,
      seed: this.seed,
      retries: this.retries,
      signal,
    });
  }
}
