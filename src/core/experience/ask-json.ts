/**
 * The one retry loop every JSON-answering LLM call goes through (the experience model's next
 * state and first state, the curriculum's variation and selection prompts): ask, check the answer,
 * and on a broken one ask again with the answer and what was wrong with it, at most `retries`
 * more times. A length cut-off raises the token limit by half for the next attempt. The result
 * carries the accepted value, or — never thrown — the last raw answer and why it failed.
 */
import { LlmError, type ChatMessage, type ChatModel, type ChatResult } from '../llm/types';
import { bound } from './domain-card';
import { addUsage, ZERO_USAGE, type AnswerAttempt, type ChatUsage } from './types';

export type ParseOutcome<T> =
  { ok: true; value: T } | { ok: false; kind: 'parse' | 'schema' | 'inconsistent'; reason: string };

export interface JsonPrompt {
  messages: ChatMessage[];
  jsonSchema: Record<string, unknown>;
}

export interface AskOptions {
  maxTokens: number;
  temperature: number;
  /** Seed of the first attempt; attempt i uses seed + i. */
  seed: number;
  retries: number;
  signal?: AbortSignal;
}

export interface Asked<T> {
  value?: T;
  usage: ChatUsage;
  attempts: number;
  /** Every call, in order (the accepted one last). */
  tries: AnswerAttempt[];
  /** One line per failed attempt: `attempt N: reason`. */
  notes: string[];
  raw: string;
  /** Why the last attempt failed (absent when an answer was accepted). */
  reason?: string;
}

export async function askJson<T>(
  chat: ChatModel,
  prompt: JsonPrompt,
  check: (text: string) => ParseOutcome<T>,
  options: AskOptions,
): Promise<Asked<T>> {
  const { temperature, seed, retries, signal } = options;
  let usage: ChatUsage = { ...ZERO_USAGE };
  const notes: string[] = [];
  const tries: AnswerAttempt[] = [];
  let maxTokens = options.maxTokens;
  let messages: ChatMessage[] = prompt.messages;
  let raw = '';
  let reason = '';
  for (let attempt = 0; attempt <= retries; attempt++) {
    const result: ChatResult = await chat.complete(
      { messages, maxTokens, temperature, seed: seed + attempt, jsonSchema: prompt.jsonSchema },
      signal,
    );
    usage = addUsage(usage, result.usage);
    raw = result.text;
    if (signal?.aborted) throw new LlmError('The request was cancelled (its AbortSignal fired).', 'aborted');
    let feedback: string;
    if (result.finishReason === 'length') {
      reason = `length cut-off at ${maxTokens} tokens`;
      feedback = 'That answer was cut off at the token limit. Answer again, shorter: JSON only.';
      maxTokens = Math.ceil(maxTokens * 1.5);
    } else if (result.finishReason === 'abort' || result.finishReason === 'error') {
      reason = `the engine ended the answer with '${result.finishReason}'`;
      feedback = 'Answer again: JSON only.';
    } else {
      const checked = check(result.text);
      if (checked.ok) {
        tries.push({ raw, finishReason: result.finishReason, usage: result.usage });
        return { value: checked.value, usage, attempts: attempt + 1, tries, notes, raw };
      }
      reason = `${checked.kind === 'inconsistent' ? 'inconsistent' : checked.kind === 'schema' ? 'schema error' : 'parse error'}: ${checked.reason}`;
      feedback = `That answer was rejected (${checked.reason}). Answer again: JSON only.`;
    }
    notes.push(`attempt ${attempt + 1}: ${reason}`);
    tries.push({ raw, finishReason: result.finishReason, usage: result.usage, rejected: reason });
    messages = [
      ...prompt.messages,
      { role: 'assistant', content: bound(raw, 800) },
      { role: 'user', content: feedback },
    ];
  }
  return { usage, attempts: retries + 1, tries, notes, raw, reason };
}
