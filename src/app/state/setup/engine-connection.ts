/**
 * The Setup page's "Test connection" for an OpenAI-compatible server: one tiny chat completion
 * (no retries, a short timeout), reported as latency and tokens, or as the failure in words.
 *
 * In a browser a refused connection and a CORS refusal both surface as "Failed to fetch". When
 * core reports that ambiguity (code 'cors'), a second request in `no-cors` mode tells them apart:
 * it succeeds (with an opaque answer) when a server is listening but refuses this page, and fails
 * when nothing listens at all. Plain logic with an injectable fetch: unit-tested in Node.
 */
import { OpenAiChatModel } from '../../../core/llm/openai';
import { LlmError, type LlmErrorCode } from '../../../core/llm/types';

export interface ConnectionReport {
  ok: boolean;
  /** Round trip of the test request (ms). */
  ms: number;
  /** What happened, and on failure what to do. */
  text: string;
  /** The model's reply (plain text, cut short) when ok. */
  reply?: string;
  /** 'cors-refused' and 'connection-refused' are told apart here; other codes come from core. */
  code?: LlmErrorCode | 'cors-refused';
}

export interface ConnectionTestOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Default 20 s: enough for a loaded model to say one word. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  pageOrigin?: string;
  signal?: AbortSignal;
  now?: () => number;
}

const SERVER_HINTS =
  "Ollama: 'ollama serve' (http://127.0.0.1:11434/v1); vLLM: 'vllm serve MODEL' (http://127.0.0.1:8000/v1); llama-server: 'llama-server -m model.gguf' (http://127.0.0.1:8080/v1).";

export async function testOpenAiConnection(options: ConnectionTestOptions): Promise<ConnectionReport> {
  const now = options.now ?? (() => performance.now());
  const fetchFn = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const started = now();
  let model: OpenAiChatModel;
  try {
    model = new OpenAiChatModel({
      baseUrl: options.baseUrl,
      model: options.model.trim(),
      apiKey: options.apiKey || undefined,
      retries: 0,
      timeoutMs: options.timeoutMs ?? 20_000,
      fetch: fetchFn,
      ...(options.pageOrigin !== undefined ? { pageOrigin: options.pageOrigin } : {}),
    });
  } catch (error) {
    return { ok: false, ms: 0, text: (error as Error).message, code: (error as LlmError).code };
  }
  try {
    const result = await model.complete(
      { messages: [{ role: 'user', content: 'Reply with the single word OK.' }], maxTokens: 8, temperature: 0 },
      options.signal,
    );
    const ms = Math.round(now() - started);
    return {
      ok: true,
      ms,
      reply: result.text.slice(0, 200),
      text: `Connected: ${model.id} at ${model.baseUrl} answered in ${ms} ms (${result.usage.promptTokens} prompt + ${result.usage.completionTokens} answer tokens).`,
    };
  } catch (error) {
    const ms = Math.round(now() - started);
    if (!(error instanceof LlmError))
      return { ok: false, ms, text: `The test request failed: ${(error as Error).message ?? String(error)}` };
    if (error.code !== 'cors') return { ok: false, ms, text: error.message, code: error.code };
    return {
      ok: false,
      ms,
      ...(await tellCorsFromRefused(
        model.baseUrl,
        fetchFn,
        options.pageOrigin ?? globalThis.location?.origin ?? 'this page',
      )),
    };
  }
}

/** A no-cors request reaches a listening server (opaque answer) and fails only when nothing listens. */
async function tellCorsFromRefused(
  baseUrl: string,
  fetchFn: typeof fetch,
  page: string,
): Promise<Pick<ConnectionReport, 'text' | 'code'>> {
  const origin = new URL(baseUrl).origin;
  let listening: boolean;
  try {
    await fetchFn(`${baseUrl}/models`, { mode: 'no-cors', cache: 'no-store' });
    listening = true;
  } catch {
    listening = false;
  }
  if (listening) {
    return {
      code: 'cors-refused',
      text:
        `CORS refused: a server is running at ${origin}, but it does not allow requests from this page (${page}) — its answer carries no ` +
        `Access-Control-Allow-Origin for this origin, so the browser hides it. Allow this page: Ollama — OLLAMA_ORIGINS=${page} ollama serve; ` +
        `vLLM — vllm serve MODEL --allowed-origins '["${page}"]'; llama-server — allows any origin by default (newer builds: --cors-origins ${page}); ` +
        'or put a proxy that adds the header in front of it.',
    };
  }
  return {
    code: 'connection-refused',
    text: `Connection refused: nothing is listening at ${origin}. Start an OpenAI-compatible server there, or fix the base URL's host and port. ${SERVER_HINTS}`,
  };
}
