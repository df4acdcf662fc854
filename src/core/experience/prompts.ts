/**
 * The experience model's prompts (the paper's §4.1 and Appendix C): the domain card, the task, the last H steps of
 * history, the current state, the action and the top-k retrieved transitions shown as worked
 * examples (state → action → next state, reward), and the output instruction:
 *
 *     {"reasoning": "…", "valid": true, "next_state": {"observation": "…", "admissible": ["…"]},
 *      "reward": 0, "terminated": false}
 *
 * with the matching JSON schema, every string bounded by `maxLength` and the reward an enum
 * [0, 1] (a weak model must not be able to ramble inside a string until
 * max_tokens). Reasoning comes first, so the state and reward are written after it (Eq. 4).
 *
 * Prefix reuse: every prompt starts with its STATIC part — the system message holds what the
 * model is, the domain card and the output instruction (the schema's shape in words; the schema
 * itself goes with the request) and is the same for every call of a run. Then the user message,
 * ordered from what many calls share to what only this call has: the task (an episode and its
 * GRPO group), the history (grows step by step), the state and its admissible actions (the G
 * rollouts of a group at one state), the retrieved examples (they depend on the action too), and
 * the action last. Servers with prefix caching (vLLM's automatic prefix caching, llama-server's
 * `cache_prompt`) and multi-round chat engines reuse the longest shared prefix; `staticShare`
 * reports how much of a prompt the static part is. Each ablation changes only its own part: k the
 * examples, H the history line, reasoning the output instruction and the schema.
 *
 * Dream cost is output tokens (docs/architecture.md §4.2), so everything is compact: abstract states
 * (domain-card.ts), bounded reasoning, bounded examples. The paper's ablations are switches:
 * `reasoning: false` drops the field from the schema and the instruction, `historyLength: 0`
 * drops the history, `k: 0` drops the examples.
 */
import type { ChatMessage } from '../llm/types';
import type { Observation, Step, Task, Transition } from '../types';
import { abstractAdmissible, abstractObservation, bound, collapse, type DomainCard } from './domain-card';

export interface PromptOptions {
  /** Retrieved examples shown (0 = the "no retrieval" ablation). */
  k: number;
  /** Past steps shown (0 = the "no history" ablation). */
  historyLength: number;
  /** Ask for a reasoning trace before the outcome (false = the "no reasoning" ablation). */
  reasoning: boolean;
  /** maxLength of the reasoning string. */
  reasoningChars: number;
  /** maxLength of the next observation (abstract). */
  observationChars: number;
  /** maxLength of one admissible action, and at most this many of them. */
  actionChars: number;
  maxAdmissible: number;
  /** Bounds of what the prompt shows: the current state, a history tag, an example's states. */
  stateChars: number;
  historyStateChars: number;
  exampleStateChars: number;
  exampleNextChars: number;
  /** Bound of an admissible list shown in the prompt (characters). */
  admissibleListChars: number;
}

export const DEFAULT_PROMPT_OPTIONS: Readonly<PromptOptions> = Object.freeze({
  k: 4,
  historyLength: 4,
  reasoning: true,
  reasoningChars: 120,
  observationChars: 360,
  actionChars: 80,
  maxAdmissible: 24,
  stateChars: 360,
  historyStateChars: 24,
  exampleStateChars: 64,
  exampleNextChars: 100,
  admissibleListChars: 220,
});

// =============================================================================================
// Schemas
// =============================================================================================

/** The JSON schema of a next-state answer (a plain object: engines convert it as they need). */
export function nextStateSchema(
  options: Pick<PromptOptions, 'reasoning' | 'reasoningChars' | 'observationChars' | 'actionChars' | 'maxAdmissible'>,
): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  if (options.reasoning) properties.reasoning = { type: 'string', maxLength: options.reasoningChars };
  properties.valid = { type: 'boolean' };
  properties.next_state = stateSchema(options, { maxItems: options.maxAdmissible });
  properties.reward = { type: 'integer', enum: [0, 1] };
  properties.terminated = { type: 'boolean' };
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** The JSON schema of a first observation (`initial(task)`). */
export function initialStateSchema(
  options: Pick<PromptOptions, 'observationChars' | 'actionChars' | 'maxAdmissible'>,
): Record<string, unknown> {
  return stateSchema(options, { minItems: 1, maxItems: options.maxAdmissible * 4 });
}

/** A state's schema: its observation and its admissible actions, as many as `listBounds` allows. */
function stateSchema(
  options: Pick<PromptOptions, 'observationChars' | 'actionChars'>,
  listBounds: { minItems?: number; maxItems: number },
): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      observation: { type: 'string', minLength: 1, maxLength: options.observationChars },
      admissible: {
        type: 'array',
        items: { type: 'string', minLength: 1, maxLength: options.actionChars },
        ...listBounds,
      },
    },
    required: ['observation', 'admissible'],
    additionalProperties: false,
  };
}

// =============================================================================================
// Pieces
// =============================================================================================

function outputInstruction(o: PromptOptions): string {
  const reasoning = o.reasoning ? `"reasoning":"≤${o.reasoningChars} chars: does it work, what follows, done?",` : '';
  return [
    `Reply JSON only: {${reasoning}"valid":bool,"next_state":{"observation":"≤${o.observationChars} chars, like the examples","admissible":["…"]},"reward":0|1,"terminated":bool}.`,
    'valid false = impossible here (state kept, reward 0). reward 1 only when the task is completed (terminated; admissible then empty).',
  ].join(' ');
}

/** A short tag for a past state in the history (which page / what happened). */
export function stateTag(card: DomainCard, text: string, maxChars: number): string {
  return abstractObservation(card, text, maxChars);
}

function renderList(actions: readonly string[], maxChars: number): string {
  return bound(actions.join('; '), maxChars);
}

/**
 * One worked example on one line: `state => action => next`, then, where they matter, the next
 * admissible actions, and for a final step the outcome and the example's task (the reward
 * depends on it). Non-final examples have reward 0 (said once in the header).
 */
function renderExample(card: DomainCard, t: Transition, index: number, o: PromptOptions): string {
  const state = abstractObservation(card, t.observation, o.exampleStateChars);
  const nextFull = abstractObservation(card, t.nextObservation);
  const next = nextFull === abstractObservation(card, t.observation) ? '(same)' : bound(nextFull, o.exampleNextChars);
  let line = `${index + 1}. ${state} => ${t.action} => ${next}`;
  if (card.showAdmissible && !t.terminated)
    line += ` {${renderList(abstractAdmissible(card, t.nextAdmissible), Math.floor(o.admissibleListChars / 2))}}`;
  if (t.terminated) line += ` [END reward ${t.reward >= 1 ? 1 : 0}; task: ${bound(collapse(t.instruction), 70)}]`;
  return line;
}

// =============================================================================================
// Prompts
// =============================================================================================

export interface NextPromptInput {
  card: DomainCard;
  task: Task;
  history: readonly Step[];
  state: Observation;
  action: string;
  retrieved: readonly Transition[];
}

export interface BuiltPrompt {
  messages: ChatMessage[];
  jsonSchema: Record<string, unknown>;
}

/** The system message: what the model is, the domain card, the output format. */
export function systemPrompt(card: DomainCard, options: PromptOptions): string {
  return [
    'You simulate the environment of an RL agent: predict the next state and reward of its action.',
    card.text,
    outputInstruction(options),
  ].join('\n');
}

/** The prompt of one dreamed step (M_exp's inputs, paper Eq. 4). */
export function buildNextPrompt(input: NextPromptInput, options: PromptOptions = DEFAULT_PROMPT_OPTIONS): BuiltPrompt {
  const { card, task, state, action } = input;
  // Most shared first (the file comment): task, history, state, examples, action.
  const lines: string[] = [`Task: ${collapse(task.instruction)}`];
  // History: the last H state-changing steps (no-ops change nothing and are skipped).
  const steps = options.historyLength > 0 ? input.history.filter((s) => s.valid).slice(-options.historyLength) : [];
  if (steps.length) {
    lines.push(
      `Recent steps: ${steps.map((s) => `${stateTag(card, s.observation, options.historyStateChars)} => ${bound(s.action, 48)}`).join('; ')}`,
    );
  }
  lines.push(`State: ${abstractObservation(card, state.text, options.stateChars)}`);
  if (card.showAdmissible)
    lines.push(`Admissible: ${renderList(abstractAdmissible(card, state.admissible), options.admissibleListChars)}`);
  const examples = options.k > 0 ? input.retrieved.slice(0, options.k) : [];
  if (examples.length) {
    lines.push(
      `Similar transitions (state => action => next${card.showAdmissible ? ' {admissible}' : ''}; reward 0 unless END):`,
    );
    examples.forEach((t, i) => lines.push(renderExample(card, t, i, options)));
  }
  lines.push(`Action: ${action}`);
  return {
    messages: [
      { role: 'system', content: systemPrompt(card, options) },
      { role: 'user', content: lines.join('\n') },
    ],
    jsonSchema: nextStateSchema(options),
  };
}

/** The prompt for a first observation of a task with no real start page. */
export function buildInitialPrompt(
  card: DomainCard,
  task: Task,
  examples: readonly Transition[],
  options: PromptOptions = DEFAULT_PROMPT_OPTIONS,
): BuiltPrompt {
  const lines: string[] = [`Task: ${collapse(task.instruction)}`];
  const shown = options.k > 0 ? examples.slice(0, options.k) : [];
  if (shown.length) {
    lines.push('First states of other tasks:');
    shown.forEach((t, i) => {
      lines.push(`[${i + 1}] task: ${bound(collapse(t.instruction), 80)}`);
      lines.push(`state: ${abstractObservation(card, t.observation, options.exampleNextChars)}`);
      if (card.showAdmissible)
        lines.push(`admissible: ${renderList(abstractAdmissible(card, t.admissible), options.admissibleListChars)}`);
    });
  }
  lines.push('Write the first state of this task.');
  const system = [
    'You simulate an environment for an RL agent: write the first state an episode of the task starts in.',
    card.text,
    `Answer with JSON only: {"observation":"…","admissible":["…"]}; observation ≤${options.observationChars} chars, compact, in the examples' format; admissible: ALL actions allowed there, the always-allowed ones included (at least one).`,
  ].join('\n');
  return {
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: lines.join('\n') },
    ],
    jsonSchema: initialStateSchema(options),
  };
}

/** Rough token count of a text: ceil(characters / 4) (no tokenizer here; a common English-text rule). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Rough token count of a chat prompt: the texts plus 4 tokens of chat template per message. */
export function estimatePromptTokens(messages: readonly ChatMessage[]): number {
  return messages.reduce((sum, m) => sum + estimateTokens(m.content) + 4, 0);
}

/**
 * The share of a prompt's (estimated) tokens that is its static prefix — the leading system
 * message, the same for every call of a run — which a server with prefix caching computes once.
 */
export function staticShare(messages: readonly ChatMessage[]): number {
  const total = estimatePromptTokens(messages);
  const prefix = messages[0]?.role === 'system' ? estimatePromptTokens(messages.slice(0, 1)) : 0;
  return total > 0 ? prefix / total : 0;
}
