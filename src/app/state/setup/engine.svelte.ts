/**
 * State of the Setup page's "Language model" section: which engine dreams (persisted: see
 * engine.ts), the WebLLM model list that fits this GPU with download sizes and cache status,
 * loading with progress and time left, the GGUF files kept in OPFS for wllama, and the
 * OpenAI-compatible endpoint's connection test. One instance for the app (engineSetup()), so the
 * Train page sees what Setup chose.
 *
 * Loading here is a download-and-check: the model is loaded in the page with progress, asked for a
 * few tokens, and unloaded again — its files stay cached (WebLLM: Cache API; wllama URLs: OPFS),
 * and the trainer worker loads it from there when a dream run starts.
 */
import type { WebGpuCapabilities } from '../../../core/llm/capabilities';
import type { LoadProgress } from '../../../core/llm/types';
import { LlmError } from '../../../core/llm/types';
import {
  WebLlmChatModel,
  deleteModelFromCache,
  hasModelInCache,
  importWebLlm,
  type WebLlmLoadProgress,
} from '../../../core/llm/webllm';
import { listWebLlmModels, type WebLlmModelInfo, type WebLlmModelList } from '../../../core/llm/webllm-models';
import { WllamaChatModel } from '../../../core/llm/wllama';
import type { EngineRuntime } from '../../workers/trainer/experience-source';
import {
  OpfsUnavailableError,
  deleteModelFile,
  listModelFiles,
  openModelFile,
  saveModelFile,
  type StoredModelFile,
} from '../../storage/llm-files';
import { testOpenAiConnection, type ConnectionReport } from './engine-connection';
import {
  choiceSpec,
  dreamEngine,
  etaSeconds,
  formEngine,
  loadChoice,
  progressLine,
  saveChoice,
  storageErrorText,
  webLlmWorkerOverride,
  type DreamEngine,
  type EngineChoice,
  type SetupEngineKind,
} from './engine';
import { learnedModels } from './learned-models.svelte';

export interface LoadState {
  engine: 'webllm' | 'wllama';
  target: string;
  progress: number;
  line: string;
  running: boolean;
}

const PROBE = { messages: [{ role: 'user' as const, content: 'Say OK.' }], maxTokens: 8, seed: 1 };

export class EngineSetup {
  choice = $state<EngineChoice>(loadChoice());
  /** The OpenAI-compatible server's key: this tab's memory only, never stored. */
  apiKey = $state('');
  /** A picked file the browser could not keep in OPFS (used for this tab only). */
  memoryFile = $state.raw<File | null>(null);
  files = $state.raw<StoredModelFile[]>([]);
  webllm = $state.raw<WebLlmModelList | null>(null);
  /** Cached-or-not for each listed WebLLM model (undefined: not checked yet). */
  cached = $state.raw<Record<string, boolean>>({});
  load = $state.raw<LoadState | null>(null);
  connection = $state.raw<ConnectionReport | null>(null);
  testing = $state(false);
  /** The last thing that happened, in words (shown in an aria-live line). */
  message = $state<string | null>(null);
  error = $state<string | null>(null);
  private abort: AbortController | null = null;

  /** Persists the choice (never the key, never the file's bytes). */
  save(): void {
    saveChoice($state.snapshot(this.choice) as EngineChoice);
  }

  use(kind: SetupEngineKind): void {
    if (kind !== this.choice.kind && !this.load?.running) {
      // What was said about the previous engine does not apply to this one.
      this.load = null;
      this.message = null;
      this.error = null;
    }
    this.choice.kind = kind;
    this.save();
  }

  /** Dream with a learned experience model (`models/<env>` or `local/<name>`, see learned-path.ts). */
  useLearned(path: string): void {
    this.choice.learned = { path };
    this.use('learned');
  }

  /** The spec of the picked engine as picked, or why there is none yet (what a run uses: dream()). */
  spec(epsR = 0, epsP = 0): { spec: string } | { error: string } {
    return choiceSpec(this.choice, epsR, epsP);
  }

  /**
   * The engine a dream run of `env` uses and its one label (engine.ts dreamEngine: Setup's pick,
   * else the shipped learned model of `env`, else the noisy oracle with ε_R, ε_P). Reactive: it
   * reads the learned models (learnedModels().refresh()) and the WebLLM cache (checkChosen()).
   */
  dream(env: string, epsR?: number, epsP?: number): DreamEngine {
    const learned = learnedModels();
    const modelId = this.choice.kind === 'webllm' ? this.choice.webllm.modelId : '';
    return dreamEngine(this.choice, env, {
      shipped: learned.shippedEnvs,
      local: learned.localModels,
      webllmCached: modelId ? this.cached[modelId] : undefined,
      ...(epsR === undefined ? {} : { epsR }),
      ...(epsP === undefined ? {} : { epsP }),
    });
  }

  /**
   * The Train form's engine for `env`: '' for the oracle, the engine's spec, or null while a check is
   * out. A WebLLM model counts once it is in the browser's cache (downloaded and checked on Setup),
   * so no page downloads a model the user has not asked for.
   */
  formSpec(env: string): string | null {
    return formEngine(this.dream(env));
  }

  /** Checks everything dream() depends on: the learned models, and whether the picked WebLLM model is cached. */
  async ready(): Promise<void> {
    await Promise.all([learnedModels().refresh(), this.checkChosen()]);
  }

  /** Checks whether the picked WebLLM model is in the browser's cache, when not known yet (no Setup model list). */
  async checkChosen(): Promise<void> {
    const modelId = this.choice.kind === 'webllm' ? this.choice.webllm.modelId : '';
    if (!modelId || this.cached[modelId] !== undefined) return;
    const inCache = await hasModelInCache(modelId).catch(() => false);
    this.cached = { ...this.cached, [modelId]: inCache };
  }

  /** The start request's engine extras for a run whose config.llm is `spec`. */
  runtime(spec: string): EngineRuntime {
    const out: EngineRuntime = { nCtx: this.choice.wllama.nCtx };
    if (spec.startsWith('openai:') && this.apiKey) out.apiKey = this.apiKey;
    if (this.memoryFile && spec === `wllama:file:${this.memoryFile.name}`) out.file = this.memoryFile;
    const handler = spec.startsWith('webllm:') ? webLlmWorkerOverride() : null;
    if (handler) out.webllmWorkerUrl = handler;
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // WebLLM
  // ---------------------------------------------------------------------------------------------

  /** The chat models that fit these capabilities, and which of them are cached. */
  async listWebLlm(caps: WebGpuCapabilities | null): Promise<void> {
    try {
      const webllm = await importWebLlm();
      const deviceMemoryGB = (navigator as { deviceMemory?: number }).deviceMemory;
      // No model is picked for the user: a pick names its download and GPU memory first, and
      // "Download and check" is the one step that downloads (never a radio click, never Train's Start).
      this.webllm = listWebLlmModels(webllm.prebuiltAppConfig, caps, deviceMemoryGB ? { deviceMemoryGB } : {});
      await this.refreshCache();
    } catch (error) {
      this.error = `Could not list WebLLM models: ${(error as Error).message}`;
    }
  }

  async refreshCache(): Promise<void> {
    const list = this.webllm;
    if (!list) return;
    const out: Record<string, boolean> = {};
    for (const m of [...list.chat, ...list.tooLarge]) out[m.id] = await hasModelInCache(m.id);
    this.cached = out;
  }

  get cachedModels(): WebLlmModelInfo[] {
    const list = this.webllm;
    return list ? [...list.chat, ...list.tooLarge].filter((m) => this.cached[m.id]) : [];
  }

  /** Downloads (or reads from the cache) and checks a WebLLM model, with progress and time left. */
  async loadWebLlm(modelId: string, caps: WebGpuCapabilities | null): Promise<void> {
    this.choice.webllm.modelId = modelId;
    this.save();
    await this.loading('webllm', modelId, async (signal, progress) => {
      const model = await WebLlmChatModel.load(modelId, {
        signal,
        ...(caps ? { preflight: caps } : {}),
        onProgress: (p: WebLlmLoadProgress) => progress(p, p.etaSeconds),
      });
      try {
        const r = await model.complete(PROBE, signal);
        return `${modelId} is downloaded and works: it answered ${r.usage.completionTokens} tokens in ${Math.round(r.usage.ms)} ms. Its files stay cached for offline use.`;
      } finally {
        await model.unload().catch(() => undefined);
      }
    });
    await this.refreshCache();
  }

  async deleteWebLlm(modelId: string): Promise<void> {
    this.error = null;
    try {
      const { removed } = await deleteModelFromCache(modelId);
      this.message = `Deleted ${modelId} from the cache${removed ? ` (${removed} files)` : ''}.`;
    } catch (error) {
      this.error = storageErrorText(error, `Deleting ${modelId}`);
    }
    await this.refreshCache();
  }

  // ---------------------------------------------------------------------------------------------
  // wllama
  // ---------------------------------------------------------------------------------------------

  async refreshFiles(): Promise<void> {
    try {
      this.files = await listModelFiles();
    } catch {
      this.files = [];
    }
  }

  /** A GGUF file picked from disk: kept in OPFS so the trainer worker and a reload find it. */
  async pickFile(file: File | undefined): Promise<void> {
    this.error = null;
    if (!file) return;
    if (!/\.gguf$/i.test(file.name)) {
      this.error = `'${file.name}' is not a .gguf file. wllama loads GGUF models only (e.g. qwen2.5-0.5b-instruct-q4_k_m.gguf); convert others with llama.cpp's convert_hf_to_gguf.py.`;
      return;
    }
    this.message = `Keeping ${file.name} in this browser's storage…`;
    try {
      const stored = await saveModelFile(file);
      this.memoryFile = null;
      this.choice.wllama = { ...this.choice.wllama, source: 'file', fileName: stored.name, fileBytes: stored.bytes };
      this.message = `${stored.name} is stored in this browser (OPFS): dream runs and reloads use it without picking it again.`;
    } catch (error) {
      if (error instanceof OpfsUnavailableError) {
        this.memoryFile = file;
        this.choice.wllama = { ...this.choice.wllama, source: 'file', fileName: file.name, fileBytes: file.size };
        this.message = error.message;
      } else {
        this.error = storageErrorText(error, `Storing ${file.name}`);
        return;
      }
    }
    this.choice.kind = 'wllama';
    this.save();
    await this.refreshFiles();
  }

  async deleteFile(name: string): Promise<void> {
    this.error = null;
    try {
      await deleteModelFile(name);
      this.message = `Deleted ${name} from this browser's storage.`;
      if (this.choice.wllama.fileName === name && this.choice.wllama.source === 'file') {
        this.choice.wllama = { ...this.choice.wllama, fileName: '', fileBytes: 0 };
        this.save();
      }
    } catch (error) {
      this.error = storageErrorText(error, `Deleting ${name}`);
    }
    await this.refreshFiles();
  }

  /** Loads the chosen GGUF (file or URL) in the page with progress, asks for a few tokens, unloads. */
  async testWllama(): Promise<void> {
    const w = this.choice.wllama;
    const spec = choiceSpec({ ...this.choice, kind: 'wllama' });
    if ('error' in spec) {
      this.error = spec.error;
      return;
    }
    const target = w.source === 'file' ? w.fileName : w.url;
    await this.loading('wllama', target, async (signal, progress) => {
      const source =
        w.source === 'url'
          ? { url: w.url.trim() }
          : {
              file: this.memoryFile?.name === w.fileName ? this.memoryFile : await openModelFile(w.fileName),
              name: w.fileName,
            };
      const model = await WllamaChatModel.load(source, {
        signal,
        nCtx: w.nCtx,
        onProgress: (p: LoadProgress) => progress(p, etaSeconds(p.progress, p.elapsed)),
      });
      try {
        const r = await model.complete(PROBE, signal);
        const perSecond =
          r.usage.ms > 0 ? ` (${(r.usage.completionTokens / (r.usage.ms / 1000)).toFixed(0)} tokens/s)` : '';
        return (
          `${model.id} loads and runs on the CPU (${model.loadInfo.threads} thread${model.loadInfo.threads === 1 ? '' : 's'}): ` +
          `${r.usage.completionTokens} tokens in ${Math.round(r.usage.ms)} ms${perSecond}.`
        );
      } finally {
        await model.unload().catch(() => undefined);
      }
    });
    this.choice.kind = 'wllama';
    this.save();
  }

  // ---------------------------------------------------------------------------------------------
  // OpenAI-compatible server
  // ---------------------------------------------------------------------------------------------

  async testOpenAi(): Promise<void> {
    this.testing = true;
    this.connection = null;
    try {
      this.connection = await testOpenAiConnection({
        baseUrl: this.choice.openai.baseUrl,
        model: this.choice.openai.model,
        apiKey: this.apiKey,
      });
    } finally {
      this.testing = false;
    }
  }

  // ---------------------------------------------------------------------------------------------

  cancel(): void {
    this.abort?.abort();
  }

  private async loading(
    engine: 'webllm' | 'wllama',
    target: string,
    run: (signal: AbortSignal, progress: (p: LoadProgress, eta: number | undefined) => void) => Promise<string>,
  ): Promise<void> {
    if (this.load?.running) {
      this.error = 'A model is loading already: wait for it or cancel it.';
      return;
    }
    this.error = null;
    this.message = null;
    this.abort = new AbortController();
    this.load = { engine, target, progress: 0, line: `Starting ${target}…`, running: true };
    try {
      const done = await run(this.abort.signal, (p, eta) => {
        this.load = {
          engine,
          target,
          progress: p.progress,
          line: progressLine({ progress: p.progress, text: p.text, eta }),
          running: true,
        };
      });
      this.load = {
        engine,
        target,
        progress: 1,
        line: progressLine({ progress: 1, text: `${target} is ready`, eta: 0 }),
        running: false,
      };
      this.message = done;
    } catch (error) {
      const at = this.load?.progress ?? 0;
      const how =
        error instanceof LlmError && error.code === 'aborted' ? 'cancelled' : 'failed (see the message below)';
      this.load = {
        engine,
        target,
        progress: at,
        line: `${Math.round(at * 100)}% — loading ${target} ${how}`,
        running: false,
      };
      this.error = error instanceof LlmError ? error.message : storageErrorText(error, `Loading ${target}`);
    } finally {
      this.abort = null;
    }
  }
}

let instance: EngineSetup | null = null;

/** The app's one engine setup (Setup writes it, Train reads it). */
export function engineSetup(): EngineSetup {
  instance ??= new EngineSetup();
  return instance;
}
