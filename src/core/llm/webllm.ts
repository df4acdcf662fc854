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
 *
 * Its parts: webllm-request.ts (the request web-llm is sent), webllm-progress.ts (load progress),
 * webllm-library.ts (the library and its cache of model files), webllm-errors.ts (failures naming the fix).
 */
import type {
  AppConfig,
  ChatCompletion,
  ChatCompletionRequestNonStreaming,
  ChatOptions,
  InitProgressReport,
  LogLevel,
  WebWorkerMLCEngine,
} from '@mlc-ai/web-llm';
import { LlmError, type ChatModel, type ChatRequest, type ChatResult } from './types';
import { chatUsage, mapFinishReason, parseLogprobs } from './chat-completion';
import { checkWebGpu, type WebGpuCapabilities } from './capabilities';
import { errorText } from './helpers';
import { abortable, RequestQueue } from './request-queue';
import { toWebLlmRequest } from './webllm-request';
import { LoadProgressTracker, type WebLlmLoadProgress } from './webllm-progress';
import { deleteModelFromCache, importWebLlm } from './webllm-library';
import {
  KEEP_CACHE_ON,
  classifyGenerationError,
  classifyLoadError,
  completionAborted,
  loadAborted,
  modelNotFoundError,
  needsShaderF16,
  noShaderF16Error,
} from './webllm-errors';

// The engine's public names that live in its parts: callers import them from here.
export { JSON_WHITESPACE_GUARD, toWebLlmRequest } from './webllm-request';
export { LoadProgressTracker, type WebLlmLoadPhase, type WebLlmLoadProgress } from './webllm-progress';
export { deleteModelFromCache, hasModelInCache, importWebLlm } from './webllm-library';

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
  readonly #requests = new RequestQueue();
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
    if (options.preflight !== false) await preflight(modelId, options.preflight);
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
    try {
      await reloadInWorker(engine, worker, modelId, options);
    } catch (error) {
      throw await failedLoad(modelId, error, { engine, worker, ownsWorker, options });
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
    try {
      // Queued behind earlier requests: an abort while waiting has nothing to interrupt.
      const response = await this.#requests.run(
        async (busyUntil) => {
          if (request.seed !== undefined) await this.#engine.resetChat();
          if (signal?.aborted) throw completionAborted(this.id, signal);
          const pending = this.#engine.chat.completions.create(body);
          // The next request starts when the engine has really finished this one (even if aborted).
          busyUntil(pending);
          return abortable(pending, signal, () => {
            this.#engine.interruptGenerate();
            return completionAborted(this.id, signal!);
          });
        },
        signal,
        () => completionAborted(this.id, signal!),
      );
      return this.#toResult(response, request, performance.now() - started);
    } catch (error) {
      if (error instanceof LlmError) throw error;
      throw classifyGenerationError(this.id, error);
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
      usage: chatUsage(usage, ms),
    };
    if (request.topLogprobs !== undefined) {
      const logprobs = parseLogprobs(choice.logprobs);
      if (logprobs) result.logprobs = logprobs;
    }
    return result;
  }
}

/**
 * Checks WebGPU on this page without downloading anything: no WebGPU → 'no-webgpu'; a q4f16/q0f16 model
 * without shader-f16 → 'no-shader-f16'. `given`: capabilities already at hand (else checkWebGpu()).
 */
async function preflight(modelId: string, given: WebLlmLoadOptions['preflight']): Promise<void> {
  const caps = typeof given === 'object' ? given : await checkWebGpu(undefined, { probeDevice: false });
  if (!caps.available) {
    throw new LlmError(`Cannot run ${modelId} with WebLLM: ${caps.reason ?? 'WebGPU is not available.'}`, 'no-webgpu');
  }
  if (needsShaderF16(modelId) && !caps.features.shaderF16) throw noShaderF16Error(modelId);
}

/** web-llm's reload of `modelId` in the worker, cut short by the worker's crash or the signal. */
async function reloadInWorker(
  engine: WebWorkerMLCEngine,
  worker: Worker,
  modelId: string,
  options: WebLlmLoadOptions,
): Promise<void> {
  const { signal } = options;
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
  } finally {
    if (workerError) worker.removeEventListener('error', workerError);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * What a failed load throws, its worker stopped: an abort or a dead worker as it is; any other failure
 * classified, with the model's cached files deleted unless the failure says nothing about them.
 */
async function failedLoad(
  modelId: string,
  error: unknown,
  load: { engine: WebWorkerMLCEngine; worker: Worker; ownsWorker: boolean; options: WebLlmLoadOptions },
): Promise<unknown> {
  const { engine, worker, ownsWorker, options } = load;
  if (error instanceof LlmError && (error.code === 'aborted' || error.code === 'load-failed')) {
    // Abort or a dead worker: stop the load; nothing was proven wrong with the cached files.
    if (ownsWorker) worker.terminate();
    else
      engine.unload().catch(() => {
        /* the worker may be gone */
      });
    return error;
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
  return new LlmError(classified.message + cacheNote, classified.code, { cause: error });
}

function workerStartError(modelId: string, event: Event): LlmError {
  const detail = (event as ErrorEvent).message ? `: ${(event as ErrorEvent).message}` : '';
  return new LlmError(
    `The WebLLM worker for ${modelId} failed to start or crashed${detail}. Check the browser console; the worker must be ` +
      `a module worker hosting WebWorkerMLCEngineHandler (llm.worker.ts, created with new Worker(new URL(…), { type: 'module' })).`,
    'load-failed',
  );
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
