/**
 * ChatModel over WebLLM (@mlc-ai/web-llm 0.2.86) on WebGPU, running in a dedicated worker:
 * the page holds web-llm's own WebWorkerMLCEngine (a proxy speaking web-llm's worker protocol),
 * the worker hosts web-llm's WebWorkerMLCEngineHandler (llm.worker.ts). web-llm is
 * imported dynamically (6 MB; docs/architecture.md §2.3) — only `import type` at the top.
 *
 * Quirks it hides (docs/architecture.md §3.4):
 * - Structured output goes as `response_format: { type: 'json_object', schema: JSON.stringify(schema) }`
 *   — a string; web-llm silently ignores the OpenAI `json_schema` shape, so it is never sent.
 *   A GBNF/EBNF grammar goes as `{ type: 'grammar', grammar }`.
 * - Runaway JSON whitespace: web-llm compiles schemas with unlimited whitespace between tokens, and
 *   a weak model can emit blank lines until max_tokens. JSON requests therefore carry stop strings
 *   that no compact or pretty-printed JSON contains (three newlines, 8 tabs, 32 spaces); an answer
 *   cut there is not complete JSON and is reported as finishReason 'length' (the caller retries,
 *   as for a max_tokens cut). maxTokens is always sent.
 * - logprobs need `top_logprobs ≥ 1` (else `content` is empty): top_logprobs = clamp(n, 1, 5).
 * - seed must be an integer; with a seed the chat is reset first (resetChat) so KV-cache reuse of
 *   an earlier conversation cannot change the answer.
 * - Qwen3 models get `extra_body.enable_thinking: false` (no hidden think block eating tokens).
 * - System messages are merged into one at the front (web-llm allows a system message only first).
 * - Abort: web-llm has no AbortSignal; an abort calls `interruptGenerate()` and rejects at once
 *   with LlmError('aborted'). Requests are queued here (the engine serializes them anyway), so an
 *   abort interrupts only its own generation, and the next request starts once the engine is free.
 * - Errors from the worker arrive as strings ("DeviceLostError: …"); they become LlmError with a
 *   message that says what to do (no WebGPU → wllama or a server; no shader-f16 → the q4f32 twin;
 *   out of memory → a smaller model; offline → only cached models load).
 * - A failed load clears the model's cache entries (a cached HTML 404 page poisons every later
 *   load) — except for failures that are not about the files (no WebGPU, no
 *   shader-f16, out of memory, aborted), where a good 1 GB download is kept.
 */
import type {
  AppConfig,
  ChatCompletion,
  ChatCompletionMessageParam,
  ChatCompletionRequestNonStreaming,
  ChatOptions,
  InitProgressReport,
  LogLevel,
  ModelRecord,
} from '@mlc-ai/web-llm';
import {
  LlmError,
  type ChatMessage,
  type ChatModel,
  type ChatRequest,
  type ChatResult,
  type LlmErrorCode,
  type LoadProgress,
} from './types';
import { mapFinishReason, parseLogprobs } from './openai';
import { checkWebGpu, type WebGpuCapabilities } from './capabilities';
import { twinModelId } from './webllm-models';
import { absoluteUrl, errorText, finiteOr } from './helpers';

type WebLlmModule = typeof import('@mlc-ai/web-llm');

let webLlmModule: Promise<WebLlmModule> | undefined;

/** The web-llm module, imported once on first use (keeps 6 MB out of the main chunk). */
export function importWebLlm(): Promise<WebLlmModule> {
  webLlmModule ??= import('@mlc-ai/web-llm').catch((error) => {
    webLlmModule = undefined;
    throw new LlmError(
      `Could not load the WebLLM library (${errorText(error)}); reload the page (a new version may have been deployed) or check the network.`,
      'load-failed',
      { cause: error },
    );
  });
  return webLlmModule;
}

/**
 * A new module worker hosting web-llm's WebWorkerMLCEngineHandler (llm.worker.ts). Vite
 * bundles the worker because of the literal `new Worker(new URL(…), …)` form.
 */
export function createLlmWorker(): Worker {
  return new Worker(new URL('./llm.worker.ts', import.meta.url), { type: 'module', name: 'webllm' });
}

// -------------------------------------------------------------------------------------------------
// Engine shape (web-llm's WebWorkerMLCEngine, or an in-page MLCEngine, or a test double)
// -------------------------------------------------------------------------------------------------

/** What WebLlmChatModel uses of web-llm's MLCEngineInterface. */
export interface WebLlmEngineLike {
  chat: { completions: { create(request: ChatCompletionRequestNonStreaming): Promise<ChatCompletion> } };
  interruptGenerate(): void;
  unload(): Promise<void>;
  resetChat(keepStats?: boolean, modelId?: string): Promise<void>;
  runtimeStatsText(modelId?: string): Promise<string>;
}

export interface WebLlmLoadOptions {
  /** A worker hosting WebWorkerMLCEngineHandler. Default: a new one (createLlmWorker), terminated on unload or failure. */
  worker?: Worker;
  onProgress?: (progress: WebLlmLoadProgress) => void;
  /** Aborting stops the download/load (web-llm's unload aborts a reload in flight). */
  signal?: AbortSignal;
  /** Model records (self-hosted weights: `model` must be an absolute URL). Default: web-llm's prebuiltAppConfig. */
  appConfig?: AppConfig;
  /** Overrides of mlc-chat-config.json, e.g. `{ context_window_size: 2048 }` (less VRAM for the KV cache). */
  chatOpts?: ChatOptions;
  /**
   * Check WebGPU on this page before starting (no WebGPU → 'no-webgpu'; a q4f16/q0f16 model
   * without shader-f16 → 'no-shader-f16') without downloading anything. true (default) runs
   * checkWebGpu(); capabilities already at hand can be passed instead; false skips it.
   */
  preflight?: boolean | Pick<WebGpuCapabilities, 'available' | 'reason' | 'features'>;
  /** Clear the model's cache entries when loading fails (see the file comment). Default true. */
  clearCacheOnError?: boolean;
  logLevel?: LogLevel;
}

export interface WebLlmModelOptions {
  /** The worker behind the engine, when there is one (its crash is reported; terminated on unload if owned). */
  worker?: Worker;
  /** Terminate the worker on unload. */
  ownsWorker?: boolean;
  appConfig?: AppConfig;
}

/** web-llm's own speed numbers for the last request (usage.extra). */
export interface WebLlmUsageExtra {
  e2e_latency_s?: number;
  prefill_tokens_per_s?: number;
  decode_tokens_per_s?: number;
  time_to_first_token_s?: number;
  time_per_output_token_s?: number;
  grammar_init_s?: number;
  grammar_per_token_s?: number;
}

// -------------------------------------------------------------------------------------------------
// The model
// -------------------------------------------------------------------------------------------------

export class WebLlmChatModel implements ChatModel {
  readonly engine = 'webllm' as const;
  readonly id: string;
  readonly appConfig: AppConfig | undefined;
  readonly #engine: WebLlmEngineLike;
  readonly #worker: Worker | undefined;
  readonly #ownsWorker: boolean;
  #tail: Promise<void> = Promise.resolve();
  #unloaded = false;
  #lastUsageExtra: WebLlmUsageExtra | undefined;

  /** Wraps an engine that already has `modelId` loaded (load() is the usual way in). */
  constructor(engine: WebLlmEngineLike, modelId: string, options: WebLlmModelOptions = {}) {
    this.#engine = engine;
    this.id = modelId;
    this.appConfig = options.appConfig;
    this.#worker = options.worker;
    this.#ownsWorker = options.ownsWorker ?? false;
  }

  /**
   * Loads `modelId` in a worker (downloading it unless cached) and resolves when it is ready.
   * @throws LlmError 'no-webgpu', 'no-shader-f16', 'out-of-memory', 'model-not-found',
   *   'connection-refused' (offline), 'http', 'bad-response' (a file came back as HTML),
   *   'unsupported', 'aborted', 'load-failed'.
   */
  static async load(modelId: string, options: WebLlmLoadOptions = {}): Promise<WebLlmChatModel> {
    const { signal } = options;
    if (signal?.aborted) throw loadAborted(modelId, signal);
    if (options.preflight !== false) {
      const caps =
        typeof options.preflight === 'object'
          ? options.preflight
          : await checkWebGpu(undefined, { probeDevice: false });
      if (!caps.available) {
        throw new LlmError(
          `Cannot run ${modelId} with WebLLM: ${caps.reason ?? 'WebGPU is not available.'}`,
          'no-webgpu',
        );
      }
      if (needsShaderF16(modelId) && !caps.features.shaderF16) throw noShaderF16Error(modelId);
    }
    const webllm = await importWebLlm();
    if (signal?.aborted) throw loadAborted(modelId, signal);
    const config = options.appConfig ?? webllm.prebuiltAppConfig;
    if (!config.model_list.some((record) => record.model_id === modelId)) throw modelNotFoundError(modelId, config);

    const ownsWorker = options.worker === undefined;
    const worker = options.worker ?? createLlmWorker();
    const tracker = new LoadProgressTracker();
    const engine = new webllm.WebWorkerMLCEngine(worker, {
      appConfig: options.appConfig,
      logLevel: options.logLevel,
      initProgressCallback: (report: InitProgressReport) => options.onProgress?.(tracker.update(report)),
    });

    const reload = engine.reload(modelId, options.chatOpts);
    reload.catch(() => {
      /* settled below, or abandoned after an abort */
    });
    let workerError: ((event: Event) => void) | undefined;
    const workerFailed = new Promise<never>((_, reject) => {
      workerError = (event: Event) => reject(workerStartError(modelId, event));
      worker.addEventListener('error', workerError);
    });
    workerFailed.catch(() => {
      /* observed by the race; never unhandled */
    });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      if (!signal) return;
      onAbort = () => reject(loadAborted(modelId, signal));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => {
      /* observed by the race; never unhandled */
    });
    try {
      await Promise.race([reload, workerFailed, aborted]);
    } catch (error) {
      if (error instanceof LlmError && (error.code === 'aborted' || error.code === 'load-failed')) {
        // Abort or a dead worker: stop the load; nothing was proven wrong with the cached files.
        if (ownsWorker) worker.terminate();
        else
          engine.unload().catch(() => {
            /* the worker may be gone */
          });
        throw error;
      }
      const classified = classifyLoadError(modelId, error);
      let cacheNote = '';
      if (options.clearCacheOnError !== false && !KEEP_CACHE_ON.has(classified.code)) {
        try {
          const { removed } = await deleteModelFromCache(modelId, options.appConfig);
          cacheNote =
            removed > 0 ? ` Its ${removed} cached file(s) were deleted, so the next try downloads them afresh.` : '';
        } catch (clearError) {
          cacheNote = ` Deleting its cached files failed too (${errorText(clearError)}): clear this site's data, or call deleteModelFromCache('${modelId}').`;
        }
      }
      if (ownsWorker) worker.terminate();
      throw new LlmError(classified.message + cacheNote, classified.code, { cause: error });
    } finally {
      if (workerError) worker.removeEventListener('error', workerError);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
    return new WebLlmChatModel(engine, modelId, { worker, ownsWorker, appConfig: options.appConfig });
  }

  /** The web-llm engine behind this model (WebWorkerMLCEngine after load()). */
  get mlcEngine(): WebLlmEngineLike {
    return this.#engine;
  }

  /** The worker hosting the engine, if any. */
  get worker(): Worker | undefined {
    return this.#worker;
  }

  /** web-llm's speed numbers of the last completed request. */
  get lastUsageExtra(): WebLlmUsageExtra | undefined {
    return this.#lastUsageExtra;
  }

  get loaded(): boolean {
    return !this.#unloaded;
  }

  /**
   * One chat completion.
   * @throws LlmError 'aborted' (signal; the generation is interrupted), 'unsupported' (bad request,
   *   context window exceeded, schema rejected, model unloaded), 'out-of-memory', 'bad-response'.
   */
  async complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    if (this.#unloaded)
      throw new LlmError(
        `${this.id} was unloaded; load it again with WebLlmChatModel.load('${this.id}').`,
        'unsupported',
      );
    const body = toWebLlmRequest(this.id, request);
    if (signal?.aborted) throw completionAborted(this.id, signal);
    const started = performance.now();

    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    let engineFree: Promise<unknown> = previous;
    try {
      // Queued behind earlier requests: an abort here has nothing to interrupt.
      await abortable(previous, signal, () => completionAborted(this.id, signal!));
      if (request.seed !== undefined) await this.#engine.resetChat();
      if (signal?.aborted) throw completionAborted(this.id, signal);
      const pending = this.#engine.chat.completions.create(body);
      engineFree = pending.catch(() => {
        /* reported through the race below */
      });
      const response = await abortable(pending, signal, () => {
        this.#engine.interruptGenerate();
        return completionAborted(this.id, signal!);
      });
      return this.#toResult(response, request, performance.now() - started);
    } catch (error) {
      if (error instanceof LlmError) throw error;
      throw classifyGenerationError(this.id, error);
    } finally {
      // The next request starts when the engine has really finished this one (even if aborted).
      engineFree.then(release, release);
    }
  }

  /** Forgets the conversation (KV cache) in the engine. */
  async resetChat(): Promise<void> {
    await this.#engine.resetChat();
  }

  /** web-llm's prefill/decode speed text. */
  async runtimeStatsText(): Promise<string> {
    return this.#engine.runtimeStatsText();
  }

  /** Frees the GPU memory; terminates the worker when this model created it. Idempotent. */
  async unload(): Promise<void> {
    if (this.#unloaded) return;
    this.#unloaded = true;
    try {
      await this.#engine.unload();
    } finally {
      if (this.#ownsWorker) this.#worker?.terminate();
    }
  }

  #toResult(response: ChatCompletion, request: ChatRequest, ms: number): ChatResult {
    const choice = response?.choices?.[0];
    if (!choice) {
      throw new LlmError(
        `WebLLM answered ${this.id}'s request without choices; reload the model (unload() then load()).`,
        'bad-response',
      );
    }
    const content = choice.message?.content;
    const text = typeof content === 'string' ? content : '';
    let finishReason = mapFinishReason(choice.finish_reason);
    // Cut by the runaway-whitespace stop strings (or by a caller's stop string): not complete JSON.
    if (request.jsonSchema && finishReason === 'stop' && !isCompleteJson(text)) finishReason = 'length';
    const usage = response.usage;
    this.#lastUsageExtra = usage?.extra ? ({ ...usage.extra } as WebLlmUsageExtra) : undefined;
    const result: ChatResult = {
      text,
      finishReason,
      usage: {
        promptTokens: finiteOr(usage?.prompt_tokens, 0),
        completionTokens: finiteOr(usage?.completion_tokens, 0),
        ms,
      },
    };
    if (request.topLogprobs !== undefined) {
      const logprobs = parseLogprobs(choice.logprobs);
      if (logprobs) result.logprobs = logprobs;
    }
    return result;
  }
}

// -------------------------------------------------------------------------------------------------
// ChatRequest → web-llm request
// -------------------------------------------------------------------------------------------------

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
  if (request.jsonSchema && request.grammar !== undefined) {
    throw new LlmError(
      'A request can constrain its output with jsonSchema or with grammar, not both; drop one of them.',
      'unsupported',
    );
  }
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

// -------------------------------------------------------------------------------------------------
// Load progress
// -------------------------------------------------------------------------------------------------

export type WebLlmLoadPhase = 'start' | 'fetch' | 'cache' | 'shaders' | 'done' | 'other';

export interface WebLlmLoadProgress extends LoadProgress {
  /** web-llm reports progress per phase: downloading (fetch), reading from cache, compiling shaders. */
  phase: WebLlmLoadPhase;
  /** Seconds left in this phase at its rate so far (undefined until there is a rate). */
  etaSeconds?: number;
}

/** web-llm's InitProgressReport → LoadProgress with elapsed time, bytes and a time-left estimate. */
export class LoadProgressTracker {
  readonly #now: () => number;
  readonly #start: number;
  #phase: WebLlmLoadPhase | undefined;
  #phaseStart = 0;
  #phaseStartProgress = 0;

  /** @param now clock in ms (default performance.now) */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#start = now();
  }

  update(report: Pick<InitProgressReport, 'progress' | 'text'> & { timeElapsed?: number }): WebLlmLoadProgress {
    const t = this.#now();
    const progress = clamp01(report.progress);
    const phase = phaseOf(report.text);
    if (phase !== this.#phase) {
      this.#phase = phase;
      this.#phaseStart = t;
      this.#phaseStartProgress = progress;
    }
    const out: WebLlmLoadProgress = { progress, text: report.text, elapsed: (t - this.#start) / 1000, phase };
    if (phase === 'done' || progress >= 1) {
      out.etaSeconds = 0;
    } else {
      const gained = progress - this.#phaseStartProgress;
      const spent = (t - this.#phaseStart) / 1000;
      if (gained > 0.005 && spent > 0) out.etaSeconds = (spent / gained) * (1 - progress);
    }
    const mb = /(\d+(?:\.\d+)?)\s*MB (?:fetched|loaded)/.exec(report.text);
    if (mb) {
      out.loadedBytes = Math.round(Number(mb[1]) * 2 ** 20);
      if (progress > 0) out.totalBytes = Math.round(out.loadedBytes / progress);
    }
    return out;
  }
}

function phaseOf(text: string): WebLlmLoadPhase {
  if (/^Start to fetch/i.test(text)) return 'start';
  if (/^Fetching param cache/i.test(text)) return 'fetch';
  if (/^Loading model from cache/i.test(text)) return 'cache';
  if (/^Loading GPU shader/i.test(text)) return 'shaders';
  if (/^Finish loading/i.test(text)) return 'done';
  return 'other';
}

// -------------------------------------------------------------------------------------------------
// Cache helpers
// -------------------------------------------------------------------------------------------------

const CACHE_SCOPES = ['webllm/config', 'webllm/model', 'webllm/wasm'] as const;

/**
 * Whether the model's weights are fully cached (web-llm's hasModelInCache). Pass the same
 * appConfig as for load(). A corrupt (e.g. HTML) cached manifest counts as not cached.
 */
export async function hasModelInCache(modelId: string, appConfig?: AppConfig): Promise<boolean> {
  const webllm = await importWebLlm();
  try {
    return await webllm.hasModelInCache(modelId, appConfig);
  } catch {
    return false;
  }
}

/**
 * Deletes everything cached for the model: config, weights, tokenizer, wasm. With the Cache API
 * backend (the default) every entry under the model's URL is removed directly — web-llm's own
 * deleteModelInCache first reads tensor-cache.json, which fails on a poisoned (HTML) entry and
 * downloads the file when it is missing. Other backends use web-llm's helpers one by one.
 * @returns how many entries were removed (Cache API backend; 0 otherwise)
 */
export async function deleteModelFromCache(modelId: string, appConfig?: AppConfig): Promise<{ removed: number }> {
  const webllm = await importWebLlm();
  const config = appConfig ?? webllm.prebuiltAppConfig;
  const record = config.model_list.find((r) => r.model_id === modelId);
  if (!record) throw modelNotFoundError(modelId, config);
  const backend = config.cacheBackend ?? 'cache';
  if ((backend === 'cache' || backend === 'cross-origin') && typeof caches !== 'undefined') {
    return { removed: await sweepCacheStorage(record) };
  }
  const problems: string[] = [];
  for (const remove of [webllm.deleteChatConfigInCache, webllm.deleteModelWasmInCache, webllm.deleteModelInCache]) {
    try {
      await remove(modelId, config);
    } catch (error) {
      problems.push(errorText(error));
    }
  }
  if (problems.length === 3) throw new Error(problems.join('; '));
  return { removed: 0 };
}

async function sweepCacheStorage(record: ModelRecord): Promise<number> {
  const base = modelBaseUrl(record.model);
  const lib = absoluteUrl(record.model_lib);
  let removed = 0;
  for (const scope of CACHE_SCOPES) {
    if (!(await caches.has(scope))) continue;
    const cache = await caches.open(scope);
    for (const key of await cache.keys()) {
      if ((base !== undefined && key.url.startsWith(base)) || (lib !== undefined && key.url === lib)) {
        if (await cache.delete(key)) removed++;
      }
    }
  }
  return removed;
}

/** web-llm's cleanModelUrl: '…/MODEL' → '…/MODEL/resolve/main/' unless it already has /resolve/x/. */
function modelBaseUrl(model: string): string | undefined {
  let url = model.endsWith('/') ? model : `${model}/`;
  if (!/.+\/resolve\/.+\//.test(url)) url += 'resolve/main/';
  return absoluteUrl(url);
}

// -------------------------------------------------------------------------------------------------
// Errors
// -------------------------------------------------------------------------------------------------

const FALLBACK_ENGINES =
  'use the wllama engine (CPU) or an OpenAI-compatible server (Ollama, vLLM, llama-server) instead';

/** Failures that say nothing about the cached files: keep a good download. */
const KEEP_CACHE_ON = new Set<LlmErrorCode>([
  'no-webgpu',
  'no-shader-f16',
  'out-of-memory',
  'aborted',
  'model-not-found',
]);

/** A load failure (an Error, or the "Name: message" string web-llm's worker sends) → code + message naming the fix. */
export function classifyLoadError(modelId: string, error: unknown): { code: LlmErrorCode; message: string } {
  const text = errorText(error);
  const what = `Loading ${modelId} with WebLLM failed`;
  if (/WebGPUNotAvailableError|WebGPUNotFoundError|Unable to find a compatible GPU|navigator\.gpu/i.test(text)) {
    return {
      code: 'no-webgpu',
      message: `${what}: this browser has no usable WebGPU (${brief(text)}). Enable WebGPU (Chrome/Edge 113+, Safari 26+) or ${FALLBACK_ENGINES}.`,
    };
  }
  if (/ShaderF16SupportError|shader-f16|\bf16\b.*(extension|not supported|not enabled)/i.test(text)) {
    return { code: 'no-shader-f16', message: noShaderF16Error(modelId).message };
  }
  if (
    /DeviceLostError|device was lost|out of memory|\bOOM\b|QuotaExceeded.*GPU|Failed to allocate|allocation failed/i.test(
      text,
    )
  ) {
    return {
      code: 'out-of-memory',
      message: `${what}: the GPU ran out of memory (${brief(text)}). Pick a smaller model (listWebLlmModels() lists the ones that fit), a '-1k' variant, or a smaller chatOpts.context_window_size; close other GPU-heavy tabs.`,
    };
  }
  if (/Cannot initialize runtime because of requested/i.test(text)) {
    return {
      code: 'unsupported',
      message: `${what}: this GPU's WebGPU limits are too low for WebLLM (${brief(text)}); ${FALLBACK_ENGINES}.`,
    };
  }
  if (/ModelNotFoundError|Cannot find model record/i.test(text)) {
    return {
      code: 'model-not-found',
      message: `${what}: ${brief(text)} Pick an id from listWebLlmModels(), or add a model record to appConfig.`,
    };
  }
  if (/QuotaExceededError|quota/i.test(text)) {
    return {
      code: 'load-failed',
      message: `${what}: the browser has no room left to cache the model (${brief(text)}). Free disk space, delete other cached models (deleteModelFromCache) or pick a smaller model.`,
    };
  }
  if (/not valid JSON|Unexpected token '?<|<!doctype|<html/i.test(text)) {
    return {
      code: 'bad-response',
      message: `${what}: a model file came back as an HTML page instead of the file (${brief(text)}) — typically a 404 answered with index.html (SPA fallback), or a captive portal. Check the model URL in appConfig and serve model folders with real 404s.`,
    };
  }
  if (/Invalid URL/i.test(text)) {
    return {
      code: 'unsupported',
      message: `${what}: the model URL is not a valid absolute URL (${brief(text)}). A custom record's 'model' must be absolute, e.g. new URL('models/X/', location.origin).href.`,
    };
  }
  if (
    /Failed to fetch|NetworkError|Load failed|ERR_INTERNET_DISCONNECTED|ERR_NAME_NOT_RESOLVED|network error/i.test(text)
  ) {
    return {
      code: 'connection-refused',
      message: `${what}: the model files could not be downloaded (${brief(text)}). You seem to be offline: WebLLM works offline only for models already fully cached (hasModelInCache) — connect once to download it, or pick a cached model.`,
    };
  }
  if (/Failed to execute 'add' on 'Cache'|Request failed|\b404\b|\b403\b|status (?:code )?\d{3}/i.test(text)) {
    return {
      code: 'http',
      message: `${what}: a model file could not be downloaded (the server answered with an error, e.g. 404: ${brief(text)}). Check the model id/URL in appConfig, or try again later.`,
    };
  }
  return {
    code: 'load-failed',
    message: `${what}: ${brief(text)}. Try again; if it keeps failing, pick another model or ${FALLBACK_ENGINES}.`,
  };
}

/** A failure while generating → LlmError naming the fix. */
export function classifyGenerationError(modelId: string, error: unknown): LlmError {
  const text = errorText(error);
  const what = `WebLLM (${modelId}) failed to answer`;
  let code: LlmErrorCode = 'bad-response';
  let message = `${what}: ${brief(text)}. Retry; if it keeps failing, unload() and load the model again.`;
  if (/ContextWindowSizeExceeded|context window|context_window_size/i.test(text)) {
    code = 'unsupported';
    message = `${what}: the prompt plus maxTokens does not fit the model's context window (${brief(text)}). Shorten the prompt or history, lower maxTokens, or load with a larger chatOpts.context_window_size.`;
  } else if (/DeviceLostError|device was lost|out of memory/i.test(text)) {
    code = 'out-of-memory';
    message = `${what}: the WebGPU device was lost (${brief(text)}), usually out of GPU memory. Load a smaller model or context window and retry.`;
  } else if (/InvalidResponseFormat|Grammar|xgrammar|schema/i.test(text)) {
    code = 'unsupported';
    message = `${what}: the JSON schema or grammar was rejected (${brief(text)}). Simplify the schema (plain types, enums, maxLength) or check the grammar's syntax (root ::= …).`;
  } else if (/ModelNotLoaded|EngineNotLoaded|not loaded/i.test(text)) {
    code = 'unsupported';
    message = `${what}: the model is not loaded in the worker (${brief(text)}). Load it again with WebLlmChatModel.load('${modelId}').`;
  } else if (
    /MessageOrderError|SystemMessageOrderError|SeedTypeError|UnsupportedFields|RangeError|ConfigValueError|MinValueError/i.test(
      text,
    )
  ) {
    code = 'unsupported';
    message = `${what}: the request was rejected (${brief(text)}).`;
  }
  return new LlmError(message, code, { cause: error });
}

function noShaderF16Error(modelId: string): LlmError {
  const twin = twinModelId(modelId, 'f32');
  return new LlmError(
    `${modelId} needs the WebGPU feature shader-f16, which this browser's GPU adapter lacks. ` +
      `Pick a q4f32 model${twin ? ` (e.g. ${twin})` : ''} — listWebLlmModels() offers only models that run here.`,
    'no-shader-f16',
  );
}

function modelNotFoundError(modelId: string, config: AppConfig): LlmError {
  const near = config.model_list
    .map((r) => r.model_id)
    .filter((id) => id.toLowerCase().startsWith(modelId.split('-')[0].toLowerCase()))
    .slice(0, 4);
  return new LlmError(
    `'${modelId}' is not in WebLLM's model list${near.length ? ` (similar: ${near.join(', ')})` : ''}. ` +
      `Pick an id from listWebLlmModels(), or pass an appConfig with a record for it.`,
    'model-not-found',
  );
}

function workerStartError(modelId: string, event: Event): LlmError {
  const detail = (event as ErrorEvent).message ? `: ${(event as ErrorEvent).message}` : '';
  return new LlmError(
    `The WebLLM worker for ${modelId} failed to start or crashed${detail}. Check the browser console; the worker must be ` +
      `a module worker hosting WebWorkerMLCEngineHandler (llm.worker.ts, created with new Worker(new URL(…), { type: 'module' })).`,
    'load-failed',
  );
}

function needsShaderF16(modelId: string): boolean {
  return /-q\d+f16(?:_\d+)?(?:-|$)/.test(modelId);
}

function loadAborted(modelId: string, signal: AbortSignal): LlmError {
  return new LlmError(
    `Loading ${modelId} was cancelled by its AbortSignal; files already downloaded stay cached.`,
    'aborted',
    { cause: signal.reason },
  );
}

function completionAborted(modelId: string, signal: AbortSignal): LlmError {
  return new LlmError(
    `The request to ${modelId} (WebLLM) was cancelled by its AbortSignal; its generation was interrupted.`,
    'aborted',
    { cause: signal.reason },
  );
}

// -------------------------------------------------------------------------------------------------
// Helpers
// -------------------------------------------------------------------------------------------------

/** Mirrors `promise`, or rejects with onAbort()'s error as soon as the signal aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, onAbort: () => Error): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) {
      reject(onAbort());
      return;
    }
    const listener = () => reject(onAbort());
    signal.addEventListener('abort', listener, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', listener);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', listener);
        reject(error);
      },
    );
  });
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function clamp01(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}

/** The error text without a trailing period, cut to a readable length. */
function brief(text: string): string {
  const t = text.trim().replace(/\.$/, '');
  return t.length > 300 ? `${t.slice(0, 297)}…` : t;
}
