/**
 * ChatModel over @wllama/wllama (llama.cpp compiled to WebAssembly): the engine for
 * browsers without WebGPU. It runs GGUF models on the CPU inside wllama's own worker, so the page
 * stays responsive, and it is the one engine that really runs in headless Chromium in CI (with the
 * tiny `stories260K.gguf` of llama2.c's tinyllamas, which tests read from ../shared/models/, outside the repo).
 *
 * Loading (`WllamaChatModel.load`):
 * - `{ url }`: downloaded once into wllama's OPFS cache (`navigator.storage.getDirectory()/cache`,
 *   keyed by the absolute URL) and read from there afterwards; `loadInfo.cache` says 'hit' or
 *   'miss' ('off' with `useCache: false`). The URL must end in `.gguf` (optionally `?query`).
 * - `{ file }`: a File/Blob the user picked (no copy is cached).
 * - Before llama.cpp sees the bytes, the GGUF header is read (gguf-header.ts): a file that is not GGUF (an HTML
 *   error page, a safetensors file, …) fails with a clear LlmError instead of a wasm abort, and we
 *   learn whether the model carries a chat template.
 * - Progress: 0–0.85 download (or cache read), 0.85–1 loading into WebAssembly; `text` names the
 *   phase and, for URLs, the cache hit/miss.
 * - CPU only (`n_gpu_layers: 0`, so wllama never touches WebGPU); one thread unless the page is
 *   cross-origin isolated (multi-threading needs SharedArrayBuffer, i.e. COOP/COEP headers).
 *
 * Chat template: the model's own (`tokenizer.chat_template` in the GGUF), or `chatTemplate` (a
 * Jinja template, as in HF tokenizer_config.json) when given, or — for models with none, such as
 * stories260K — DEFAULT_CHAT_TEMPLATE, a plain transcript:
 *
 *     System: <system text>
 *     User: <user text>
 *     Assistant: <assistant text>
 *     Assistant: ← generation starts here
 *
 * (llama.cpp alone would fall back to ChatML, whose `<|im_start|>` markers are many byte tokens in
 * a small vocabulary and mean nothing to a model that never saw them.)
 *
 * Completion (`complete`): OpenAI-shaped, through wllama's llama-server core. `jsonSchema` goes as
 * `response_format: json_schema` (llama.cpp turns it into a grammar, whitespace bounded; bound every
 * string with maxLength or a weak model rambles until maxTokens), `grammar` as GBNF; `seed`,
 * `temperature`, `maxTokens` (n_predict), `stop`, `topLogprobs`. Requests run one at a time (a
 * queue), and prompt caching is off by default, so the same seed and request give the same text.
 * Aborting the signal stops generation between two tokens (the request's slot is cancelled in
 * llama.cpp) and rejects with LlmError('aborted').
 *
 * wllama is imported dynamically (it is ~275 kB of JS plus a 10 MB wasm) so the main bundle stays
 * small; nothing of it loads until `load` is called.
 */
import {
  LlmError,
  type ChatModel,
  type ChatRequest,
  type ChatResult,
  type FinishReason,
  type LoadProgress,
  type TokenLogprob,
} from './types';
import { readGgufHeader, type GgufHeaderInfo } from './gguf-header';
import { absoluteUrl } from './helpers';
import { chatUsage } from './chat-completion';
import { abortable, RequestQueue } from './request-queue';

// Types only: erased at build time, so the main bundle does not pull wllama in.
import type { ChatCompletionParams, ChatCompletionResponse, Wllama } from '@wllama/wllama';

/**
 * The template used when the model has none and none is given: a plain "Role: text" transcript,
 * one message per line, ending with "Assistant: " for the answer. No BOS token in the template —
 * llama.cpp adds it when the vocabulary asks for one.
 */
export const DEFAULT_CHAT_TEMPLATE =
  '{% for message in messages %}' +
  "{% if message['role'] == 'system' %}System: {% elif message['role'] == 'user' %}User: {% else %}Assistant: {% endif %}" +
  "{{ message['content'] }}\n" +
  '{% endfor %}' +
  '{% if add_generation_prompt %}Assistant: {% endif %}';

/** The transcript DEFAULT_CHAT_TEMPLATE renders (for docs, tests and token estimates). */
export function renderDefaultTemplate(
  messages: readonly { role: string; content: string }[],
  addGenerationPrompt = true,
): string {
  const label = (role: string) => (role === 'system' ? 'System' : role === 'user' ? 'User' : 'Assistant');
  return messages.map((m) => `${label(m.role)}: ${m.content}\n`).join('') + (addGenerationPrompt ? 'Assistant: ' : '');
}

export type WllamaModelSource = { url: string } | { file: File | Blob; name?: string };

export interface WllamaLoadOptions {
  onProgress?: (progress: LoadProgress) => void;
  /** Aborts the download or the load (→ LlmError('aborted')); nothing stays loaded. */
  signal?: AbortSignal;
  /** A Jinja chat template overriding the model's (default: the model's, else DEFAULT_CHAT_TEMPLATE). */
  chatTemplate?: string;
  /** Context size in tokens (prompt + answer; default 4096). */
  nCtx?: number;
  /**
   * CPU threads (default: half the cores when the page is cross-origin isolated, else 1). More than
   * one needs SharedArrayBuffer, i.e. COOP/COEP headers; without them wllama runs single-threaded.
   */
  threads?: number;
  /** URL loads: keep the file in wllama's OPFS cache (default true). */
  useCache?: boolean;
  /** Re-use llama.cpp's KV cache across requests with a common prefix (default false: faster, but
   * results may then differ in the last bits between runs, so seeds no longer reproduce exactly). */
  cachePrompt?: boolean;
  /** URL of wllama.wasm (default: the copy bundled by Vite from the package). */
  wasmUrl?: string;
  /** Forward llama.cpp's native log and wllama's debug messages to the console (default false). */
  verbose?: boolean;
}

export interface WllamaLoadInfo {
  source: 'url' | 'file';
  /** URL loads: found in the OPFS cache ('hit'), downloaded now ('miss'), or cache not used ('off'). */
  cache: 'hit' | 'miss' | 'off' | 'none';
  /** Size of the model file(s). */
  bytes: number;
  /** Whole load, download included. */
  ms: number;
  /** Which template formats the messages. */
  chatTemplate: 'model' | 'given' | 'default';
  architecture?: string;
  nCtx: number;
  threads: number;
  multithread: boolean;
}

const LOAD_DOWNLOAD_SHARE = 0.85;

export class WllamaChatModel implements ChatModel {
  readonly engine = 'wllama' as const;
  readonly id: string;
  readonly loadInfo: WllamaLoadInfo;
  #wllama: Wllama | null;
  readonly #cachePrompt: boolean;
  /** Requests run one at a time: each waits for the previous one. */
  readonly #requests = new RequestQueue();
  /** Aborts whatever runs when `unload()` is called. */
  #unloading = new AbortController();

  private constructor(wllama: Wllama, id: string, loadInfo: WllamaLoadInfo, cachePrompt: boolean) {
    this.#wllama = wllama;
    this.id = id;
    this.loadInfo = loadInfo;
    this.#cachePrompt = cachePrompt;
  }

  /** Whether this browser can run wllama at all (WebAssembly + module workers). */
  static isSupported(): boolean {
    return typeof WebAssembly === 'object' && typeof Worker === 'function' && typeof navigator === 'object';
  }

  /** Loads a GGUF model from a URL (cached in OPFS) or from a File/Blob. */
  static async load(source: WllamaModelSource, options: WllamaLoadOptions = {}): Promise<WllamaChatModel> {
    const started = performance.now();
    const { signal, onProgress } = options;
    const report = (progress: number, text: string, bytes?: { loaded: number; total: number }) => {
      onProgress?.({
        progress: Math.max(0, Math.min(1, progress)),
        text,
        elapsed: (performance.now() - started) / 1000,
        ...(bytes ? { loadedBytes: bytes.loaded, totalBytes: bytes.total } : {}),
      });
    };
    throwIfAborted(signal, 'Loading the model was aborted.');
    if (!WllamaChatModel.isSupported()) {
      throw new LlmError(
        'This browser lacks WebAssembly or Web Workers, which wllama needs; use a current Chrome, Edge, Firefox or Safari.',
        'unsupported',
      );
    }
    report(0, 'Starting wllama…');
    const lib = await importWllama();
    const wasmUrl = options.wasmUrl ?? (await import('@wllama/wllama/esm/wasm/wllama.wasm?url')).default;
    const logger = options.verbose ? console : quietLogger();
    const wllama = new lib.Wllama({ default: wasmUrl }, { suppressNativeLog: !options.verbose, logger });

    // 1. The bytes: from the OPFS cache, the network, or the user's file.
    let blobs: Blob[];
    let id: string;
    let cache: WllamaLoadInfo['cache'];
    if ('url' in source) {
      const url = modelUrl(source.url);
      id = fileNameOf(url);
      if (!/\.gguf(\?.*)?$/i.test(url)) {
        throw new LlmError(
          `The model URL ${url} does not end in .gguf; wllama loads GGUF files only (e.g. …/model-q4_k_m.gguf). Convert other formats with llama.cpp's convert_hf_to_gguf.py.`,
          'load-failed',
        );
      }
      ({ blobs, cache } = await fetchModel(wllama, url, options.useCache ?? true, signal, report));
    } else {
      if (!(source.file instanceof Blob)) throw new LlmError('No model file given; pick a .gguf file.', 'load-failed');
      id = source.name ?? ((source.file as File).name || 'model.gguf');
      blobs = [source.file];
      cache = 'none';
      report(LOAD_DOWNLOAD_SHARE * 0.5, `Reading ${id}…`, { loaded: 0, total: source.file.size });
    }
    const bytes = blobs.reduce((n, b) => n + b.size, 0);
    if (bytes === 0)
      throw new LlmError(
        `${id} is empty (0 bytes); pick the .gguf model file again (a download may have failed).`,
        'load-failed',
      );

    // 2. Check the header before llama.cpp sees it.
    let header: GgufHeaderInfo;
    try {
      header = await readGgufHeader(blobs[0]);
    } catch (error) {
      if ('url' in source && cache !== 'off')
        await wllama.cacheManager.delete(modelUrl(source.url)).catch(() => undefined);
      throw error instanceof LlmError
        ? error
        : new LlmError(`Could not read ${id}: ${messageOf(error)}`, 'load-failed', { cause: error });
    }
    throwIfAborted(signal, 'Loading the model was aborted.');

    // 3. Load into WebAssembly.
    const chatTemplate: WllamaLoadInfo['chatTemplate'] = options.chatTemplate
      ? 'given'
      : header.hasChatTemplate === false
        ? 'default'
        : 'model';
    const isolated = typeof crossOriginIsolated === 'boolean' && crossOriginIsolated;
    const threads = Math.max(
      1,
      Math.floor(options.threads ?? (isolated ? Math.floor((navigator.hardwareConcurrency || 2) / 2) : 1)),
    );
    const nCtx = Math.max(64, Math.floor(options.nCtx ?? 4096));
    report(LOAD_DOWNLOAD_SHARE, `Loading ${id} (${formatBytes(bytes)}) into WebAssembly…`, {
      loaded: bytes,
      total: bytes,
    });
    const loading = wllama.loadModel(blobs, {
      n_ctx: nCtx,
      n_threads: threads,
      n_gpu_layers: 0,
      n_parallel: 1,
      ...(chatTemplate === 'model'
        ? {}
        : { chat_template: options.chatTemplate ?? DEFAULT_CHAT_TEMPLATE, jinja: true }),
    });
    try {
      await abortable(loading, signal, abortError);
    } catch (error) {
      loading.catch(() => undefined);
      await wllama.exit().catch(() => undefined);
      if (isAbort(error)) throw new LlmError('Loading the model was aborted.', 'aborted', { cause: error });
      throw loadError(error, id, bytes);
    }
    const info: WllamaLoadInfo = {
      source: 'url' in source ? 'url' : 'file',
      cache,
      bytes,
      ms: performance.now() - started,
      chatTemplate,
      architecture: header.architecture,
      nCtx,
      threads: wllama.getNumThreads(),
      multithread: wllama.isMultithread(),
    };
    const model = new WllamaChatModel(wllama, id, info, options.cachePrompt ?? false);
    const cacheText = cache === 'hit' ? ' (from the OPFS cache)' : cache === 'miss' ? ' (downloaded, now cached)' : '';
    report(1, `Loaded ${id}${cacheText} in ${(info.ms / 1000).toFixed(1)} s`, { loaded: bytes, total: bytes });
    return model;
  }

  /** Whether a model URL is in wllama's OPFS cache (complete). */
  static async isCached(url: string): Promise<boolean> {
    const lib = await importWllama();
    const abs = modelUrl(url);
    const models = await new lib.ModelManager({ logger: quietLogger() }).getModels();
    return models.some((m) => m.url === abs);
  }

  /** Removes a model URL from wllama's OPFS cache (no-op when absent). */
  static async removeFromCache(url: string): Promise<void> {
    const lib = await importWllama();
    await new lib.CacheManager().delete(modelUrl(url));
  }

  get loaded(): boolean {
    return this.#wllama !== null;
  }

  /** The Jinja template the model carries (null when it has none or it is unloaded). */
  modelChatTemplate(): string | null {
    return this.#wllama?.getChatTemplate() ?? null;
  }

  async complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    throwIfAborted(signal, 'The request was aborted before it started.');
    if (!this.#wllama) throw unloadedError(this.id);
    validateRequest(request);
    // Wait for earlier requests (abortable while waiting); one aborted while waiting does not let the next jump ahead.
    try {
      return await this.#requests.run(() => this.#run(request, signal), signal, abortError);
    } catch (error) {
      if (isAbort(error)) throw new LlmError('Generation was aborted.', 'aborted', { cause: error });
      throw error;
    }
  }

  async #run(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    const wllama = this.#wllama;
    if (!wllama || this.#unloading.signal.aborted) throw unloadedError(this.id);
    const combined = anySignal([signal, this.#unloading.signal]);
    throwIfAborted(combined, 'Generation was aborted.');
    const params: ChatCompletionParams & { stop?: string[] } = {
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      max_tokens: Math.max(1, Math.floor(request.maxTokens)),
      abortSignal: combined,
      cache_prompt: this.#cachePrompt,
    };
    if (request.temperature !== undefined) params.temperature = request.temperature;
    if (request.seed !== undefined) params.seed = request.seed >>> 0;
    if (request.stop?.length) params.stop = request.stop;
    if (request.jsonSchema) {
      params.response_format = {
        type: 'json_schema',
        json_schema: { name: 'response', schema: request.jsonSchema, strict: true },
      };
    } else if (request.grammar) {
      params.grammar = request.grammar;
    }
    if (request.topLogprobs !== undefined && request.topLogprobs >= 1) {
      params.logprobs = true;
      params.top_logprobs = Math.floor(request.topLogprobs);
    }
    const started = performance.now();
    let response: ChatCompletionResponse;
    try {
      response = await wllama.createChatCompletion({ ...params, stream: false });
    } catch (error) {
      if (isAbort(error) || combined.aborted) {
        if (this.#unloading.signal.aborted && !signal?.aborted) throw unloadedError(this.id);
        throw new LlmError('Generation was aborted.', 'aborted', { cause: error });
      }
      throw this.#inferenceError(error);
    }
    const ms = performance.now() - started;
    const choice = response?.choices?.[0];
    if (!choice)
      throw new LlmError(`wllama returned no answer for ${this.id}; try again, or reload the model.`, 'bad-response');
    const finishReason: FinishReason = choice.finish_reason === 'length' ? 'length' : 'stop';
    const result: ChatResult = {
      text: typeof choice.message?.content === 'string' ? choice.message.content : '',
      finishReason,
      usage: chatUsage(response.usage, ms),
    };
    const content = choice.logprobs?.content;
    if (params.logprobs && content) {
      result.logprobs = content.map((c): TokenLogprob => ({
        token: c.token,
        logprob: c.logprob,
        top: (c.top_logprobs ?? []).map((t) => ({ token: t.token, logprob: t.logprob })),
      }));
    }
    return result;
  }

  #inferenceError(error: unknown): LlmError {
    const message = messageOf(error);
    const name = (error as { name?: string } | null)?.name;
    if (name === 'RuntimeError' || /crashed|Aborted\(|unreachable|memory access out of bounds/i.test(message)) {
      // The wasm instance is dead: nothing more can run on it.
      const wllama = this.#wllama;
      this.#wllama = null;
      void wllama?.exit().catch(() => undefined);
      const oom = /out of memory|OOM|Cannot allocate|allocation failed/i.test(message);
      return new LlmError(
        `wllama crashed while generating with ${this.id} (${message}); load the model again${oom ? ' with a smaller nCtx or a smaller quantisation' : ''}.`,
        oom ? 'out-of-memory' : 'bad-response',
        { cause: error },
      );
    }
    if (/context|exceeds|kv.?cache/i.test(message) || (error as { type?: string } | null)?.type === 'kv_cache_full') {
      return new LlmError(
        `The request does not fit ${this.id}'s context of ${this.loadInfo.nCtx} tokens (${message}); load it with a larger nCtx, or shorten the prompt / maxTokens.`,
        'unsupported',
        { cause: error },
      );
    }
    if (/grammar|schema/i.test(message)) {
      return new LlmError(
        `llama.cpp rejected the output constraint (${message}); check the JSON schema (supported: type, properties, required, enum, items, min/maxLength, min/maxItems) or the GBNF grammar.`,
        'unsupported',
        { cause: error },
      );
    }
    return new LlmError(`wllama failed to generate with ${this.id}: ${message}`, 'bad-response', { cause: error });
  }

  /** Stops any running request and frees the model's memory. Later calls to `complete` fail. */
  async unload(): Promise<void> {
    const wllama = this.#wllama;
    if (!wllama) return;
    this.#unloading.abort();
    await this.#requests.drained;
    this.#wllama = null;
    await wllama.exit().catch(() => undefined);
  }
}

// =============================================================================================
// Loading helpers
// =============================================================================================

type WllamaModule = typeof import('@wllama/wllama');
type Report = (progress: number, text: string, bytes?: { loaded: number; total: number }) => void;

async function importWllama(): Promise<WllamaModule> {
  try {
    return await import('@wllama/wllama');
  } catch (error) {
    throw new LlmError(
      `Could not load the wllama library (${messageOf(error)}); reload the page, or check that the app's files are served completely.`,
      'load-failed',
      { cause: error },
    );
  }
}

async function fetchModel(
  wllama: Wllama,
  url: string,
  useCache: boolean,
  signal: AbortSignal | undefined,
  report: Report,
): Promise<{ blobs: Blob[]; cache: WllamaLoadInfo['cache'] }> {
  const name = fileNameOf(url);
  const progressCallback = ({ loaded, total }: { loaded: number; total: number }) => {
    report(
      total > 0 ? (LOAD_DOWNLOAD_SHARE * loaded) / total : 0,
      `Downloading ${name}: ${formatBytes(loaded)}${total > 0 ? ` of ${formatBytes(total)}` : ''} (not in the cache)`,
      { loaded, total },
    );
  };
  try {
    if (!useCache) {
      report(0, `Downloading ${name} (cache off)…`);
      return { blobs: [await downloadBlob(url, signal, progressCallback)], cache: 'off' };
    }
    report(0, `Looking for ${name} in the OPFS cache…`);
    const cached = (await wllama.modelManager.getModels()).find((m) => m.url === url);
    if (cached) {
      const blobs = await cached.open();
      const size = blobs.reduce((n, b) => n + b.size, 0);
      report(LOAD_DOWNLOAD_SHARE, `Found ${name} in the OPFS cache (${formatBytes(size)}), no download`, {
        loaded: size,
        total: size,
      });
      return { blobs, cache: 'hit' };
    }
    report(0, `${name} is not in the OPFS cache; downloading…`);
    const model = await wllama.modelManager.downloadModel(url, { signal, progressCallback });
    return { blobs: await model.open(), cache: 'miss' };
  } catch (error) {
    if (isAbort(error) || signal?.aborted)
      throw new LlmError('Downloading the model was aborted.', 'aborted', { cause: error });
    throw downloadError(error, url);
  }
}

/** Plain download without the cache, with progress. */
async function downloadBlob(
  url: string,
  signal: AbortSignal | undefined,
  progress: (p: { loaded: number; total: number }) => void,
): Promise<Blob> {
  const response = await fetch(url, { signal });
  if (!response.ok) throw new Error(`Failed to fetch ${url}: HTTP ${response.status}`);
  const total = Number(response.headers.get('content-length') ?? 0);
  if (!response.body) return response.blob();
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.byteLength;
    progress({ loaded, total });
  }
  return new Blob(parts as BlobPart[]);
}

function downloadError(error: unknown, url: string): LlmError {
  const message = messageOf(error);
  const status = /HTTP (\d{3})/.exec(message)?.[1];
  if (status === '404' || status === '410') {
    return new LlmError(
      `The model file was not found at ${url} (HTTP ${status}); check the URL, or pick the .gguf file from disk instead.`,
      'model-not-found',
      { cause: error },
    );
  }
  if (status) {
    return new LlmError(
      `The server answered HTTP ${status} for ${url}; check the URL and the server's access rules, or pick the .gguf file from disk instead.`,
      'http',
      { cause: error },
    );
  }
  if (/QuotaExceeded|quota|NoModificationAllowed|storage/i.test(message)) {
    return new LlmError(
      `The browser's storage (OPFS) refused to cache ${fileNameOf(url)} (${message}); free some site storage, or load with useCache: false / from a file.`,
      'out-of-memory',
      { cause: error },
    );
  }
  if (error instanceof TypeError || /Failed to fetch|NetworkError|network/i.test(message)) {
    return new LlmError(
      `Could not download ${url} (${message}): the server is unreachable, offline, or blocks cross-origin requests (CORS). Check the URL and the connection, or pick the .gguf file from disk instead.`,
      'connection-refused',
      { cause: error },
    );
  }
  return new LlmError(`Downloading ${url} failed: ${message}`, 'load-failed', { cause: error });
}

function loadError(error: unknown, id: string, bytes: number): LlmError {
  const message = messageOf(error);
  if (
    /out of memory|OOM|Cannot allocate|allocation failed|Array buffer allocation|failed to allocate|RangeError/i.test(
      message,
    )
  ) {
    return new LlmError(
      `Not enough memory to load ${id} (${formatBytes(bytes)}): ${message}. Close other tabs, load a smaller quantisation (e.g. Q4_K_M), or a smaller nCtx.`,
      'out-of-memory',
      { cause: error },
    );
  }
  if (/version/i.test(message)) {
    return new LlmError(
      `wllama's JS and wasm versions differ (${message}); reinstall @wllama/wllama and rebuild the app.`,
      'load-failed',
      { cause: error },
    );
  }
  return new LlmError(
    `llama.cpp could not load ${id}: ${message}. The file may be truncated, or its architecture/quantisation newer than this wllama build (3.13.0); try another GGUF.`,
    'load-failed',
    { cause: error },
  );
}

// =============================================================================================
// Small helpers
// =============================================================================================

function validateRequest(request: ChatRequest): void {
  if (!Array.isArray(request.messages) || request.messages.length === 0) {
    throw new LlmError('A chat request needs at least one message.', 'unsupported');
  }
  if (!(request.maxTokens >= 1))
    throw new LlmError(`maxTokens must be at least 1, got ${request.maxTokens}.`, 'unsupported');
  if (request.jsonSchema && request.grammar) {
    throw new LlmError(
      'Give either jsonSchema or grammar, not both (llama.cpp applies one constraint).',
      'unsupported',
    );
  }
}

function unloadedError(id: string): LlmError {
  return new LlmError(`${id} is unloaded; load it again with WllamaChatModel.load.`, 'unsupported');
}

function throwIfAborted(signal: AbortSignal | undefined, message: string): void {
  if (signal?.aborted) throw new LlmError(message, 'aborted', { cause: signal.reason });
}

function isAbort(error: unknown): boolean {
  if (error instanceof LlmError) return error.code === 'aborted';
  const name = (error as { name?: string } | null)?.name;
  return name === 'AbortError';
}

/** The error a wait cut short by its signal rejects with (isAbort tells it apart). */
function abortError(): DOMException {
  return new DOMException('Aborted', 'AbortError');
}

function anySignal(signals: (AbortSignal | undefined)[]): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length === 1) return present[0];
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(present);
  const controller = new AbortController();
  for (const s of present) {
    if (s.aborted) {
      controller.abort(s.reason);
      break;
    }
    s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}

/** The model URL resolved against the page (wllama's cache key); a clear error when it is not a URL. */
function modelUrl(url: string): string {
  const absolute = absoluteUrl(url);
  if (absolute === undefined)
    throw new LlmError(`'${url}' is not a valid model URL; give an http(s) URL of a .gguf file.`, 'load-failed');
  return absolute;
}

function fileNameOf(url: string): string {
  const path = url.split(/[?#]/)[0];
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)) || 'model.gguf';
}

function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(2)} GB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(0)} kB`;
  return `${n} B`;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** wllama's logger without the debug chatter (warnings and errors still reach the console). */
function quietLogger(): {
  debug: typeof console.debug;
  log: typeof console.log;
  warn: typeof console.warn;
  error: typeof console.error;
} {
  const noop = () => undefined;
  return {
    debug: noop,
    log: noop,
    warn: (...a: unknown[]) => console.warn(...a),
    error: (...a: unknown[]) => console.error(...a),
  };
}
