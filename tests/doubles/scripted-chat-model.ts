/**
 * ScriptedChatModel — a TEST DOUBLE of the ChatModel interface (no model behind it): it answers
 * from a queue of scripted replies or from a function of the request, and records every request
 * so tests can read the prompts that were sent.
 *
 * A reply is a string (finishReason 'stop'), or a partial ChatResult (e.g. { text, finishReason:
 * 'length' } or { text, logprobs }). Usage defaults to ceil(chars / 4) tokens each way and 1 ms.
 */
import type { ChatModel, ChatRequest, ChatResult } from '../../src/core/llm/types';

export type ScriptedReply = string | (Partial<ChatResult> & { text: string });
export type ScriptFunction = (request: ChatRequest, index: number) => ScriptedReply;

export class ScriptExhaustedError extends Error {
  constructor(readonly calls: number) {
    super(`ScriptedChatModel: the script ran out after ${calls} replies; add replies or script a function.`);
    this.name = 'ScriptExhaustedError';
  }
}

export class ScriptedChatModel implements ChatModel {
  readonly engine = 'test' as const;
  readonly requests: ChatRequest[] = [];
  private readonly queue: ScriptedReply[];
  private readonly fn: ScriptFunction | null;

  constructor(
    script: readonly ScriptedReply[] | ScriptFunction,
    readonly id = 'scripted-chat-model',
  ) {
    this.queue = typeof script === 'function' ? [] : script.slice();
    this.fn = typeof script === 'function' ? script : null;
  }

  /** Replies not yet used (queue scripts). */
  get remaining(): number {
    return this.queue.length;
  }

  /** Adds replies at the end of the queue. */
  push(...replies: ScriptedReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** The text of the last user message of request i (default: the last request). */
  userPrompt(i = this.requests.length - 1): string {
    const messages = this.requests[i]?.messages ?? [];
    return [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  }

  /** All message texts of request i, joined. */
  promptText(i = this.requests.length - 1): string {
    return (this.requests[i]?.messages ?? []).map((m) => m.content).join('\n');
  }

  async complete(request: ChatRequest): Promise<ChatResult> {
    const index = this.requests.length;
    this.requests.push(structuredClone(request));
    let reply: ScriptedReply | undefined;
    if (this.fn) reply = this.fn(request, index);
    else reply = this.queue.shift();
    if (reply === undefined) throw new ScriptExhaustedError(index);
    const result: Partial<ChatResult> & { text: string } = typeof reply === 'string' ? { text: reply } : reply;
    const promptChars = request.messages.reduce((s, m) => s + m.content.length, 0);
    return {
      text: result.text,
      finishReason: result.finishReason ?? 'stop',
      usage: result.usage ?? {
        promptTokens: Math.ceil(promptChars / 4),
        completionTokens: Math.ceil(result.text.length / 4),
        ms: 1,
      },
      ...(result.logprobs ? { logprobs: result.logprobs } : {}),
    };
  }
}
