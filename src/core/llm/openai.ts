/**
 * ChatModel over any OpenAI-compatible chat-completions server: Ollama (http://127.0.0.1:11434/v1),
 * vLLM (`vllm serve MODEL`, :8000/v1), llama-server (`llama-server -m model.gguf`, :8080/v1) or
 * OpenAI itself: moving off the laptop is a change of base URL.
 *
 * Quirks it hides (docs/architecture.md §3.4):
 * - Structured output is sent in the OpenAI shape, `response_format: { type: 'json_schema', … }`.
 *   Servers that only know `{ type: 'json_object' }` (older Ollama, some llama-server builds,
 *   llama.cpp#11847) answer 400 naming response_format; the model then falls back once to
 *   `{ type: 'json_object', schema }` (llama-server still honours the schema there) and remembers it.
 * - `logprobs: true` always goes with `top_logprobs ≥ 1` (servers leave `content` empty otherwise);
 *   missing logprobs in the answer give `undefined`, never an error.
 * - `grammar` (GBNF) is llama-server's own field and is only sent when the request asks for it.
 *
 * Robustness: one timeout per attempt covers connecting, the headers and the whole body (a server
 * that trickles its answer still times out); network errors, 429 and 5xx are retried with
 * deterministic exponential backoff (no jitter: runs are reproducible, and one laptop talks to one
 * server, so there is no herd to spread), honouring Retry-After up to a cap; other 4xx, timeouts
 * and aborts are not retried. A response body is read as a stream and refused past maxResponseBytes
 * (1 MiB by default), so no server can make the caller buffer a huge body. Every failure is an
 * LlmError whose message names the fix; `transient` marks those of one call (timeout, refused,
 * 5xx, 429, a body over the cap or not JSON), which an experience model turns into one invalid
 * transition instead of ending the run.
 *
 * Concurrency: at most `concurrency` requests are in flight at once (limiter.ts; the run's
 * `llmConcurrency`), the rest wait in a first-come queue. A rollout step asks for every running
 * episode's step together, and a server with parallel slots or continuous batching answers them
 * together; the answers do not depend on the limit.
 *
 * The API key lives only in this object's private field: it is never written to storage, logs,
 * checkpoints or run configs, and JSON.stringify / structuredClone of the model do not carry it.
 */
import { LlmError, type ChatModel, type ChatRequest, type ChatResult, type LlmErrorCode } from './types';
import { normaliseBaseUrl } from './spec';
import { ConcurrencyLimiter } from './limiter';
import { pickString } from './helpers';
import { chatUsage, checkOneConstraint, mapFinishReason, parseLogprobs } from './chat-completion';
import {
  abortedError,
  badShape,
  bodyTooLarge,
  httpError,
  mentionsResponseFormat,
  networkCodes,
  networkError,
  noStructuredOutput,
  parseJsonBody,
  pullHint,
  type HttpReply,
} from './openai-errors';

export interface OpenAiChatModelOptions {
  /** Base URL of the API, e.g. http://127.0.0.1:11434/v1 (Ollama); a trailing slash is dropped. */
  baseUrl: string;
  /** Model id as the server names it (Ollama: 'qwen2.5:1.5b'; vLLM: the served model name). */
  model: string;
  /** Sent as `Authorization: Bearer …`; held in memory only, never persisted. */
  apiKey?: string;
  /** Per attempt, covering connect, headers and the whole response body. Default 60 000 ms. */
  timeoutMs?: number;
  /** Extra attempts after network errors, 429 and 5xx. Default 2 (so at most 3 attempts). */
  retries?: number;
  /** First backoff; doubles per retry up to maxBackoffMs. Default 500 ms. */
  backoffMs?: number;
  /** Cap of the exponential backoff. Default 8 000 ms. */
  maxBackoffMs?: number;
  /** Cap on a server's Retry-After. Default 30 000 ms. */
  maxRetryAfterMs?: number;
  /** Largest response body read; a larger one is refused unread (never buffered whole). Default 1 MiB. */
  maxResponseBytes?: number;
  /** Injectable fetch (tests, proxies). Default: the global fetch. */
  fetch?: typeof fetch;
  /** Clock in milliseconds for `usage.ms` and a connection test's `ms` (tests). Default: performance.now. */
  now?: () => number;
  /** Extra request headers (e.g. an OpenRouter referer); applied after the defaults. */
  headers?: Record<string, string>;
  /**
   * Origin of the page the requests come from, for telling CORS failures apart. Default:
   * `globalThis.location.origin` in browsers and workers, none in Node.
   */
  pageOrigin?: string;
  /** Called before each retry wait (for logs and progress UIs). */
  onRetry?: (info: RetryInfo) => void;
  /**
   * Requests kept in flight at once (limiter.ts); more concurrent calls wait in a first-come queue.
   * A server with parallel slots or continuous batching answers them together. Default 4.
   */
  concurrency?: number;
}

export interface RetryInfo {
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  /** e.g. 'HTTP 503', 'HTTP 429 (Retry-After)', 'network error ECONNRESET'. */
  reason: string;
}

export interface ConnectionTestResult {
  ok: boolean;
  /** Model ids the server lists (when ok). */
  models?: string[];
  /** Whether the configured model is among them (when ok). */
  modelFound?: boolean;
  /** Round-trip time of the GET /models request. */
  ms: number;
  /** What went wrong and what to do (when not ok), or why the model is missing (when ok). */
  error?: string;
  code?: LlmErrorCode;
}

/** How structured output is requested: the OpenAI shape, or the json_object fallback. */
export type StructuredOutputMode = 'json_schema' | 'json_object';

const DEFAULTS = {
  concurrency: 4,
  timeoutMs: 60_000,
  retries: 2,
  backoffMs: 500,
  maxBackoffMs: 8_000,
  maxRetryAfterMs: 30_000,
  maxResponseBytes: 1 << 20,
};

/** Deterministic exponential backoff: base·2^retryIndex, capped (retryIndex 0 = first retry). */
export function backoffDelayMs(retryIndex: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** retryIndex);
}

/** Retry-After as delta-seconds or an HTTP date → ms to wait (undefined when absent or unreadable). */
export function parseRetryAfterMs(value: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

export class OpenAiChatModel implements ChatModel {
  readonly engine = 'openai' as const;
  readonly id: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxRetryAfterMs: number;
  readonly maxResponseBytes: number;
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #headers: Record<string, string>;
  readonly #pageOrigin: string | undefined;
  readonly #onRetry: ((info: RetryInfo) => void) | undefined;
  #structuredOutput: StructuredOutputMode = 'json_schema';
  /** At most `concurrency` requests in flight; the rest queue (first come, first served). */
  readonly #slots: ConcurrencyLimiter;

  constructor(options: OpenAiChatModelOptions) {
    const baseUrl = normaliseBaseUrl(options.baseUrl ?? '');
    let parsed: URL | undefined;
    try {
      parsed = new URL(baseUrl);
    } catch {
      /* reported below */
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new LlmError(
        `'${options.baseUrl}' is not an http(s) base URL; give the API's base, e.g. http://127.0.0.1:11434/v1 (Ollama).`,
        'unsupported',
      );
    }
    if (!options.model) {
      throw new LlmError(
        `No model given for ${baseUrl}; pass the model id the server serves (list them at ${baseUrl}/models).`,
        'unsupported',
      );
    }
    this.baseUrl = baseUrl;
    this.id = options.model;
    this.timeoutMs = positive(options.timeoutMs, DEFAULTS.timeoutMs);
    this.retries = Math.max(0, Math.floor(options.retries ?? DEFAULTS.retries));
    this.backoffMs = Math.max(0, options.backoffMs ?? DEFAULTS.backoffMs);
    this.maxBackoffMs = Math.max(0, options.maxBackoffMs ?? DEFAULTS.maxBackoffMs);
    this.maxRetryAfterMs = Math.max(0, options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs);
    this.maxResponseBytes = positive(options.maxResponseBytes, DEFAULTS.maxResponseBytes);
    this.#apiKey = options.apiKey || undefined;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#now = options.now ?? (() => performance.now());
    this.#headers = { ...options.headers };
    this.#pageOrigin = options.pageOrigin ?? browserOrigin();
    this.#onRetry = options.onRetry;
    this.#slots = new ConcurrencyLimiter(Math.max(1, Math.floor(options.concurrency ?? DEFAULTS.concurrency)));
  }

  /** 'json_object' once the server has rejected the OpenAI json_schema shape. */
  get structuredOutputMode(): StructuredOutputMode {
    return this.#structuredOutput;
  }

  /** Whether an API key is set (the key itself is never exposed). */
  get hasApiKey(): boolean {
    return this.#apiKey !== undefined;
  }

  /** What JSON.stringify shows: never the key. */
  toJSON(): { engine: 'openai'; id: string; baseUrl: string } {
    return { engine: this.engine, id: this.id, baseUrl: this.baseUrl };
  }

  /**
   * One chat completion. `usage.ms` is the wall time of the whole call, retries included (not the
   * wait for a free slot).
   * @throws LlmError 'aborted' (signal), 'timeout', 'connection-refused', 'cors', 'http',
   *   'model-not-found', 'bad-response', 'unsupported' (jsonSchema with grammar, or no structured output).
   */
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    return this.#slots.run(
      () => this.#complete(request, signal),
      signal,
      () => abortedError(`${this.baseUrl}/chat/completions`, signal!),
    );
  }

  /** Requests kept in flight at once (the `concurrency` option), and the most that ever were. */
  get concurrency(): { limit: number; peak: number } {
    return { limit: this.#slots.limit, peak: this.#slots.peak };
  }

  async #complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    checkOneConstraint(request);
    const started = this.#now();
    let mode = this.#structuredOutput;
    let reply = await this.#exchange('POST', '/chat/completions', this.#chatBody(request, mode), signal);
    if (reply.status === 400 && request.jsonSchema && mode === 'json_schema' && mentionsResponseFormat(reply.text)) {
      // The server knows only { type: 'json_object' }: fall back once and remember it.
      this.#structuredOutput = mode = 'json_object';
      reply = await this.#exchange('POST', '/chat/completions', this.#chatBody(request, mode), signal);
      if (reply.status === 400 && mentionsResponseFormat(reply.text)) {
        throw noStructuredOutput(this.baseUrl, reply);
      }
    }
    if (reply.status < 200 || reply.status >= 300) throw httpError(reply, this.baseUrl, this.id);
    const json = parseJsonBody(reply);
    return parseChatResult(json, reply, this.#now() - started);
  }

  /**
   * Model ids the server serves (GET /models; OpenAI `data[].id`, or Ollama's `models[].name`).
   * @throws LlmError as complete() does.
   */
  async listModels(signal?: AbortSignal): Promise<string[]> {
    return this.#listModels(signal, this.retries);
  }

  /**
   * A quick connection check for the UI: one GET /models without retries. Never throws; the
   * error text says what to do.
   */
  async testConnection(signal?: AbortSignal): Promise<ConnectionTestResult> {
    const started = this.#now();
    try {
      const models = await this.#listModels(signal, 0);
      const ms = this.#now() - started;
      const modelFound = models.includes(this.id);
      if (modelFound || models.length === 0) return { ok: true, models, modelFound, ms };
      return {
        ok: true,
        models,
        modelFound,
        ms,
        error: `Connected, but the server does not list model '${this.id}'. ${pullHint(this.id)} Served models: ${models.join(', ')}.`,
      };
    } catch (error) {
      const ms = this.#now() - started;
      if (error instanceof LlmError) return { ok: false, ms, error: error.message, code: error.code };
      return { ok: false, ms, error: String(error) };
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Request body
  // ---------------------------------------------------------------------------------------------

  #chatBody(request: ChatRequest, mode: StructuredOutputMode): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.id,
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      max_tokens: request.maxTokens,
      stream: false,
    };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.seed !== undefined) body.seed = request.seed;
    if (request.stop && request.stop.length > 0) body.stop = request.stop;
    if (request.jsonSchema) {
      body.response_format =
        mode === 'json_schema'
          ? { type: 'json_schema', json_schema: { name: 'output', strict: true, schema: request.jsonSchema } }
          : { type: 'json_object', schema: request.jsonSchema };
    }
    if (request.grammar !== undefined) body.grammar = request.grammar;
    if (request.topLogprobs !== undefined) {
      body.logprobs = true;
      body.top_logprobs = Math.max(1, Math.floor(request.topLogprobs));
    }
    return body;
  }

  // ---------------------------------------------------------------------------------------------
  // Transport: attempts, retries, error mapping
  // ---------------------------------------------------------------------------------------------

  async #listModels(signal: AbortSignal | undefined, retries: number): Promise<string[]> {
    const reply = await this.#exchange('GET', '/models', undefined, signal, retries);
    if (reply.status < 200 || reply.status >= 300) throw httpError(reply, this.baseUrl, this.id);
    const json = parseJsonBody(reply) as { data?: unknown; models?: unknown };
    const list = Array.isArray(json?.data) ? json.data : Array.isArray(json?.models) ? json.models : undefined;
    if (!list) throw badShape(reply, 'a model list (data[].id)');
    return list
      .map((m: unknown) =>
        typeof m === 'string' ? m : (pickString(m, 'id') ?? pickString(m, 'name') ?? pickString(m, 'model')),
      )
      .filter((id): id is string => typeof id === 'string');
  }

  /** Sends one request with retries; returns the final reply (any status) or throws LlmError. */
  async #exchange(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    signal: AbortSignal | undefined,
    retries = this.retries,
  ): Promise<HttpReply> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    Object.assign(headers, this.#headers);
    const init: RequestInit = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };

    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw abortedError(url, signal);
      const outcome = await this.#attempt(url, init, signal);
      const retryIndex = attempt - 1;
      if ('networkError' in outcome) {
        const error = networkError(url, outcome.networkError, this.baseUrl, this.#pageOrigin);
        if (error.code === 'cors' || retryIndex >= retries) throw error;
        await this.#wait(
          retryIndex,
          backoffDelayMs(retryIndex, this.backoffMs, this.maxBackoffMs),
          `network error ${networkCodes(outcome.networkError)[0] ?? ''}`.trim(),
          url,
          signal,
        );
        continue;
      }
      const reply: HttpReply = { ...outcome, url, attempts: attempt };
      const retryable = outcome.status === 429 || outcome.status >= 500;
      if (!retryable || retryIndex >= retries) return reply;
      const retryAfter = outcome.retryAfterMs;
      const delay =
        retryAfter !== undefined
          ? Math.min(retryAfter, this.maxRetryAfterMs)
          : backoffDelayMs(retryIndex, this.backoffMs, this.maxBackoffMs);
      await this.#wait(
        retryIndex,
        delay,
        `HTTP ${outcome.status}${retryAfter !== undefined ? ' (Retry-After)' : ''}`,
        url,
        signal,
      );
    }
  }

  /** One attempt: the timeout covers the response headers and the whole body. */
  async #attempt(
    url: string,
    init: RequestInit,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; statusText: string; text: string; retryAfterMs?: number } | { networkError: unknown }> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.#fetch(url, { ...init, signal: controller.signal });
      const text = await readCappedBody(response, this.maxResponseBytes, url);
      // OpenAI also sends retry-after-ms; prefer it when it is a plain number.
      const retryAfterMsHeader = response.headers.get('retry-after-ms')?.trim();
      const retryAfterMs =
        retryAfterMsHeader && /^\d+(\.\d+)?$/.test(retryAfterMsHeader)
          ? Number(retryAfterMsHeader)
          : parseRetryAfterMs(response.headers.get('retry-after'));
      return { status: response.status, statusText: response.statusText, text, retryAfterMs };
    } catch (error) {
      if (signal?.aborted) throw abortedError(url, signal);
      if (error instanceof LlmError) throw error; // the body cap: not a network error, not retried
      if (timedOut) {
        throw new LlmError(
          `No complete answer from ${url} within ${this.timeoutMs} ms (the timeoutMs option of OpenAiChatModel, ` +
            `default ${DEFAULTS.timeoutMs}, which covers the whole request and response). The model may still be loading ` +
            `or generating slowly: raise timeoutMs (the CLI's and the page's setting llmTimeoutMs, e.g. --set llmTimeoutMs=120000), ` +
            `lower maxTokens, or use a smaller model.`,
          'timeout',
          { cause: error },
        );
      }
      return { networkError: error };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async #wait(
    retryIndex: number,
    delayMs: number,
    reason: string,
    url: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    this.#onRetry?.({ retry: retryIndex + 1, delayMs, reason });
    await sleep(delayMs, signal, url);
  }
}

// -----------------------------------------------------------------------------------------------
// Response parsing
// -----------------------------------------------------------------------------------------------

/**
 * The body as text, read as a stream and refused once it passes `capBytes` (a declared
 * Content-Length over the cap is refused before reading): a runaway or hostile server cannot make
 * the caller buffer hundreds of megabytes.
 */
async function readCappedBody(response: Response, capBytes: number, url: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > capBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw bodyTooLarge(url, `declares ${declared} bytes`, capBytes);
  }
  if (!response.body) return response.text();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > capBytes) {
      await reader.cancel().catch(() => undefined);
      throw bodyTooLarge(url, `sent more than ${capBytes} bytes`, capBytes);
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
}

function parseChatResult(json: unknown, reply: HttpReply, ms: number): ChatResult {
  const choices = (json as { choices?: unknown } | null)?.choices;
  const choice = Array.isArray(choices) ? (choices[0] as Record<string, unknown> | undefined) : undefined;
  if (!choice || typeof choice !== 'object') throw badShape(reply, 'choices[0]');
  const message = choice.message as Record<string, unknown> | undefined;
  let text: string;
  if (message && typeof message === 'object') {
    const content = message.content;
    // null content: every token went elsewhere (e.g. a reasoning model ran out of tokens).
    if (typeof content === 'string') text = content;
    else if (content == null) text = '';
    else throw badShape(reply, 'a string choices[0].message.content');
  } else if (typeof choice.text === 'string') {
    text = choice.text;
  } else {
    throw badShape(reply, 'choices[0].message');
  }
  const usage = (json as { usage?: Record<string, unknown> }).usage;
  const result: ChatResult = {
    text,
    finishReason: mapFinishReason(choice.finish_reason),
    usage: chatUsage(usage, ms),
  };
  const logprobs = parseLogprobs(choice.logprobs);
  if (logprobs) result.logprobs = logprobs;
  return result;
}

// -----------------------------------------------------------------------------------------------
// Helpers
// -----------------------------------------------------------------------------------------------

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

function browserOrigin(): string | undefined {
  const origin = (globalThis as { location?: { origin?: unknown } }).location?.origin;
  return typeof origin === 'string' && origin !== 'null' ? origin : undefined;
}

function sleep(ms: number, signal: AbortSignal | undefined, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(url, signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(url, signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
