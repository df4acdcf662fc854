/**
 * What the Inspect page and Setup's "Try one step" show of a dreamed step's question and answer
 * (plain logic, unit-tested in Node): the prompt (chat models; collapsible on the page), every
 * call's raw answer with why it was rejected, the tokens and milliseconds — and, where there is
 * no answer text, why not (the oracle is the real env; a learned model is not a chat model; a
 * cache hit made no call). Text only: the page renders it as text, never as HTML.
 */
import type { DreamAnswer } from '../../../core/types';

export interface AnswerTry {
  /** 1-based. */
  n: number;
  raw: string;
  /** Why this answer was rejected and asked again; null for the accepted (or last) one. */
  rejected: string | null;
  tokens: string;
  ms: string;
}

export interface AnswerView {
  /** The prompt as one text (role headers), or null. */
  prompt: string | null;
  /** Why there is no prompt, when there is none. */
  promptNote: string | null;
  tries: AnswerTry[];
  /** The raw answer when no tries were recorded (a learned model, a cache hit). */
  raw: string | null;
  /** Totals over the calls: '512 prompt + 131 answer tokens, 2,840 ms'. */
  cost: string;
  /** A short line about the answer's origin (cache, engine failure), or null. */
  note: string | null;
}

export type EngineClass = 'oracle' | 'learned' | 'chat' | 'unknown';

/** What kind of experience model a label names (traces carry the label). */
export function engineClassOf(label: string | undefined): EngineClass {
  if (!label) return 'unknown';
  if (label.startsWith('oracle')) return 'oracle';
  if (/^learned\b|learned (experience )?model/i.test(label)) return 'learned';
  return 'chat';
}

function tokens(u: { promptTokens: number; completionTokens: number }): string {
  return `${u.promptTokens.toLocaleString('en-US')} prompt + ${u.completionTokens.toLocaleString('en-US')} answer tokens`;
}

function ms(x: number): string {
  return `${Math.round(x).toLocaleString('en-US')} ms`;
}

export function answerView(
  answer: DreamAnswer | undefined,
  options: { engine: EngineClass; cached?: boolean; engineError?: string },
): AnswerView {
  const promptNote =
    options.engine === 'oracle'
      ? 'The noisy oracle is the real environment with dialled errors: it is not asked a prompt and writes no answer text.'
      : options.engine === 'learned'
        ? 'The learned experience model is a small tfjs network, not a chat model: it has no prompt text (it reads the task, the state, the action, the history and the retrieved examples in its own token format).'
        : options.cached
          ? 'Answered from the transition cache: no call was made for this step (the same task, history and action were answered before).'
          : 'No prompt was recorded for this step.';
  const prompt = answer?.prompt?.length ? answer.prompt.map((m) => `[${m.role}]\n${m.content}`).join('\n\n') : null;
  const tries = (answer?.tries ?? []).map((t, i): AnswerTry => ({
    n: i + 1,
    raw: t.raw,
    rejected: t.rejected ?? null,
    tokens: tokens(t.usage),
    ms: ms(t.usage.ms),
  }));
  const usage = answer?.usage ?? { promptTokens: 0, completionTokens: 0, ms: 0 };
  const note = options.engineError
    ? `The engine call failed: ${options.engineError}`
    : options.cached
      ? 'From the transition cache: no tokens, no time.'
      : null;
  return {
    prompt,
    promptNote: prompt ? null : promptNote,
    tries,
    raw: tries.length ? null : (answer?.raw ?? null),
    cost: `${tokens(usage)}, ${ms(usage.ms)}${tries.length > 1 ? ` over ${tries.length} calls` : ''}`,
    note,
  };
}
