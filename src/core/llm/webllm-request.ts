/**
 * ChatRequest → web-llm's (OpenAI-like) request, with the quirks webllm.ts hides: the schema as a string, stop
 * strings against runaway JSON whitespace, an integer seed, top_logprobs within web-llm's range, Qwen3's
 * thinking off, and one system message first.
 */
import type { ChatCompletionMessageParam, ChatCompletionRequestNonStreaming } from '@mlc-ai/web-llm';
import { LlmError, type ChatMessage, type ChatRequest } from './types';
import { checkOneConstraint } from './chat-completion';

/**
 * Stop strings that no JSON from a sane model contains outside strings (raw newlines/tabs are
 * invalid inside JSON strings; 32 spaces in a bounded string is implausible): they end a
 * whitespace runaway long before max_tokens.
 */
export const JSON_WHITESPACE_GUARD: readonly string[] = ['\n\n\n', '\r\n\r\n\r\n', '\t'.repeat(8), ' '.repeat(32)];

/** web-llm's top_logprobs range. */
const MAX_TOP_LOGPROBS = 5;

/** ChatRequest → web-llm's (OpenAI-like) non-streaming request. Pure; throws LlmError('unsupported') on a bad request. */
export function toWebLlmRequest(modelId: string, request: ChatRequest): ChatCompletionRequestNonStreaming {
  checkOneConstraint(request);
  if (!Number.isInteger(request.maxTokens) || request.maxTokens <= 0) {
    throw new LlmError(
      `maxTokens must be a positive integer (got ${request.maxTokens}); WebLLM needs a bound on every answer.`,
      'unsupported',
    );
  }
  const body: ChatCompletionRequestNonStreaming = {
    messages: toWebLlmMessages(request.messages),
    max_tokens: request.maxTokens,
    stream: false,
  };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.seed !== undefined) {
    if (!Number.isFinite(request.seed))
      throw new LlmError(`seed must be a finite number (got ${request.seed}).`, 'unsupported');
    body.seed = Math.floor(request.seed); // web-llm rejects non-integers (SeedTypeError)
  }
  const stop = [...(request.stop ?? [])];
  if (request.jsonSchema) {
    body.response_format = { type: 'json_object', schema: JSON.stringify(request.jsonSchema) };
    for (const guard of JSON_WHITESPACE_GUARD) if (!stop.includes(guard)) stop.push(guard);
  } else if (request.grammar !== undefined) {
    body.response_format = { type: 'grammar', grammar: request.grammar };
  }
  if (stop.length > 0) body.stop = stop;
  if (request.topLogprobs !== undefined) {
    body.logprobs = true;
    body.top_logprobs = Math.min(MAX_TOP_LOGPROBS, Math.max(1, Math.floor(request.topLogprobs) || 1));
  }
  if (/^Qwen3/i.test(modelId)) body.extra_body = { enable_thinking: false };
  return body;
}

/** One system message first (merged), then the rest in order; web-llm wants the last one from the user. */
function toWebLlmMessages(messages: ChatMessage[]): ChatCompletionMessageParam[] {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
  const rest = messages.filter((m) => m.role !== 'system');
  if (rest.length === 0 || rest[rest.length - 1].role !== 'user') {
    throw new LlmError(
      'WebLLM needs the last message to be from the user (it cannot continue an assistant message); end the messages with a user turn.',
      'unsupported',
    );
  }
  const out: ChatCompletionMessageParam[] = [];
  if (system.length > 0) out.push({ role: 'system', content: system.join('\n\n') });
  for (const m of rest)
    out.push(m.role === 'user' ? { role: 'user', content: m.content } : { role: 'assistant', content: m.content });
  return out;
}
