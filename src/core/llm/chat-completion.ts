/**
 * An OpenAI-shaped chat completion, as OpenAI-compatible servers (openai.ts) and web-llm (webllm.ts) take and give
 * it: the one output constraint a request may carry, and the answer's finish reason, logprobs and token counts.
 */
import { LlmError, type ChatRequest, type ChatUsage, type FinishReason, type TokenLogprob } from './types';
import { finiteOr } from './helpers';

/** A request constrains its output with a JSON schema or with a grammar, never both. */
export function checkOneConstraint(request: ChatRequest): void {
  if (request.jsonSchema && request.grammar !== undefined) {
    throw new LlmError(
      'A request can constrain its output with jsonSchema or with grammar, not both; drop one of them.',
      'unsupported',
    );
  }
}

/** `usage` of a chat completion → ChatUsage; a missing or odd count is 0. */
export function chatUsage(
  usage: { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined,
  ms: number,
): ChatUsage {
  return {
    promptTokens: finiteOr(usage?.prompt_tokens, 0),
    completionTokens: finiteOr(usage?.completion_tokens, 0),
    ms,
  };
}

/** OpenAI's finish_reason (and the other servers' spellings) → FinishReason. */
export function mapFinishReason(reason: unknown): FinishReason {
  switch (reason) {
    case 'length':
    case 'max_tokens':
    case 'model_length':
      return 'length';
    case 'abort':
    case 'cancelled':
    case 'canceled':
      return 'abort';
    case 'content_filter':
    case 'error':
      return 'error';
    default:
      return 'stop'; // 'stop', 'eos', 'stop_sequence', 'tool_calls', null, …
  }
}

/**
 * `choices[0].logprobs` → TokenLogprob[]: the chat shape `{ content: [{ token, logprob, top_logprobs }] }`,
 * or the legacy completions shape `{ tokens, token_logprobs, top_logprobs: [{ tok: lp }] }`.
 * Anything else (absent, null, empty, malformed) → undefined.
 */
export function parseLogprobs(raw: unknown): TokenLogprob[] | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const record = raw as Record<string, unknown>;
  if (Array.isArray(record.content)) {
    const out: TokenLogprob[] = [];
    for (const entry of record.content as unknown[]) {
      if (!entry || typeof entry !== 'object') continue;
      const e = entry as Record<string, unknown>;
      if (typeof e.token !== 'string' || typeof e.logprob !== 'number') continue;
      const top = Array.isArray(e.top_logprobs)
        ? (e.top_logprobs as unknown[]).flatMap((t) => {
            const a = t as Record<string, unknown> | null;
            return a && typeof a.token === 'string' && typeof a.logprob === 'number'
              ? [{ token: a.token, logprob: a.logprob }]
              : [];
          })
        : [];
      out.push({ token: e.token, logprob: e.logprob, top });
    }
    return out.length > 0 ? out : undefined;
  }
  if (Array.isArray(record.tokens) && Array.isArray(record.token_logprobs)) {
    const tops = Array.isArray(record.top_logprobs) ? (record.top_logprobs as unknown[]) : [];
    const out: TokenLogprob[] = [];
    (record.tokens as unknown[]).forEach((token, i) => {
      const logprob = (record.token_logprobs as unknown[])[i];
      if (typeof token !== 'string' || typeof logprob !== 'number') return;
      const t = tops[i];
      const top =
        t && typeof t === 'object'
          ? Object.entries(t as Record<string, unknown>).flatMap(([tok, lp]) =>
              typeof lp === 'number' ? [{ token: tok, logprob: lp }] : [],
            )
          : [];
      out.push({ token, logprob, top });
    });
    return out.length > 0 ? out : undefined;
  }
  return undefined;
}
