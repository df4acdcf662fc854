/**
 * The experience model's engine, as the page names it: the choice made on the Setup page, the
 * spec string that travels in the Train URL (`llm=…`) and in a run's config (`config.llm`), and
 * the small pure helpers the Setup and Train pages share (labels, time left, errors in words).
 * Plain logic, no Svelte, no DOM: unit-tested in Node (tests/unit/app/engine.test.ts).
 *
 * The spec strings are core's engine grammar (src/core/llm/spec.ts: oracle:, openai:, webllm:,
 * wllama:, learned:), parsed there and only there; this file adds how the page words them. An
 * API key is never part of a spec (specs are shown, shared in links and saved with runs).
 */
import { formatLlmSpec, llmSpecLabel, LlmSpecError, parseLlmSpec, type EngineKind, type LlmSpec } from '../../core/llm/spec';
import { learnedPathLabel, learnedPathOfSpec, learnedSpec, parseLearnedPath } from './learned-path';

/** The engines the Setup page offers (a learned model is trained on the Experience model page, then picked here or on Train). */
export const SETUP_ENGINE_KINDS = ['oracle', 'webllm', 'wllama', 'openai', 'learned'] as const satisfies readonly EngineKind[];
export type SetupEngineKind = (typeof SETUP_ENGINE_KINDS)[number];

/** How the UI names an engine; the oracle is always labelled as not a language model. */
export function engineLabel(spec: LlmSpec): string {
  switch (spec.kind) {
    case 'oracle': return `${llmSpecLabel(spec)} — teaching option, not a language model`;
    case 'openai': return `OpenAI-compatible server: ${spec.model} at ${spec.baseUrl}`;
    case 'webllm': return `WebLLM (WebGPU): ${spec.modelId}`;
    case 'wllama': return spec.source === 'file' ? `wllama (CPU): ${spec.name}, picked from disk` : `wllama (CPU): ${spec.url}`;
    case 'learned': {
      // The page's paths (models/ENV, local/NAME) get their own words; others (a CLI folder) as given.
      const path = learnedPathOfSpec(formatLlmSpec(spec));
      return path ? learnedPathLabel(path) : `learned experience model: ${spec.path}`;
    }
  }
}

// -------------------------------------------------------------------------------------------------
// The Setup page's choice (persisted in localStorage; never the API key, never the file itself)
// -------------------------------------------------------------------------------------------------

export interface EngineChoice {
  /** The engine the Train page offers for dream and S2R runs. */
  kind: SetupEngineKind;
  webllm: { modelId: string };
  wllama: {
    source: 'file' | 'url';
    /** The picked file's name (its bytes are kept in OPFS, see workers/llm-files.ts). */
    fileName: string;
    fileBytes: number;
    url: string;
    /** Context size in tokens (prompt + answer). */
    nCtx: number;
  };
  openai: { baseUrl: string; model: string };
  /** A learned experience model: `models/<env>` (shipped) or `local/<name>` (trained in this browser). */
  learned: { path: string };
}

export const DEFAULT_CHOICE: EngineChoice = {
  kind: 'oracle',
  webllm: { modelId: '' },
  wllama: { source: 'file', fileName: '', fileBytes: 0, url: '', nCtx: 4096 },
  openai: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:1.5b-instruct' },
  learned: { path: '' },
};

export const CHOICE_KEY = 'dreamgym.engine.choice';

export interface StorageLike { getItem(key: string): string | null; setItem(key: string, value: string): void }

/**
 * A same-origin module worker hosting web-llm's WebWorkerMLCEngineHandler, to run WebLLM in
 * instead of the bundled workers/llm.worker.ts (a self-hosted handler; the e2e test's fake
 * engine). Set by hand in localStorage; nothing in the UI sets it. Only a path on this origin counts.
 */
export const WEBLLM_WORKER_KEY = 'dreamgym.webllm.worker';

export function webLlmWorkerOverride(storage: StorageLike | null = globalThis.localStorage ?? null): string | null {
  let value: string | null = null;
  try { value = storage?.getItem(WEBLLM_WORKER_KEY) ?? null; } catch { /* storage blocked: no override */ }
  return value && /^\/[^/\\]/.test(value) ? value : null;
}

function str(value: unknown, fallback: string): string { return typeof value === 'string' ? value : fallback; }
function nonNegative(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** Reads the saved choice; anything missing or malformed falls back to the defaults. */
export function loadChoice(storage: StorageLike | null = globalThis.localStorage ?? null): EngineChoice {
  let raw: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(storage?.getItem(CHOICE_KEY) ?? '{}');
    if (parsed && typeof parsed === 'object') raw = parsed as Record<string, unknown>;
  } catch { /* a corrupt entry: start from the defaults */ }
  const d = DEFAULT_CHOICE;
  const w = (raw.webllm ?? {}) as Record<string, unknown>;
  const l = (raw.wllama ?? {}) as Record<string, unknown>;
  const o = (raw.openai ?? {}) as Record<string, unknown>;
  const n = (raw.learned ?? {}) as Record<string, unknown>;
  return {
    kind: (SETUP_ENGINE_KINDS as readonly unknown[]).includes(raw.kind) ? raw.kind as SetupEngineKind : d.kind,
    webllm: { modelId: str(w.modelId, d.webllm.modelId) },
    wllama: {
      source: l.source === 'url' ? 'url' : 'file',
      fileName: str(l.fileName, d.wllama.fileName), fileBytes: nonNegative(l.fileBytes, 0), url: str(l.url, d.wllama.url),
      nCtx: Math.max(256, Math.round(nonNegative(l.nCtx, d.wllama.nCtx))),
    },
    openai: { baseUrl: str(o.baseUrl, d.openai.baseUrl), model: str(o.model, d.openai.model) },
    learned: { path: str(n.path, d.learned.path) },
  };
}

export function saveChoice(choice: EngineChoice, storage: StorageLike | null = globalThis.localStorage ?? null): void {
  try { storage?.setItem(CHOICE_KEY, JSON.stringify(choice)); } catch { /* storage blocked or full: the choice lives for this tab */ }
}

/**
 * The spec of the chosen engine (the oracle takes the Train page's ε_R, ε_P), or an error in
 * words when the choice is incomplete (no model picked, no file, bad URL).
 */
export function choiceSpec(choice: EngineChoice, epsR = 0, epsP = 0): { spec: string } | { error: string } {
  try {
    switch (choice.kind) {
      case 'oracle': return { spec: formatLlmSpec({ kind: 'oracle', epsilonReward: epsR, epsilonTransition: epsP }) };
      case 'webllm':
        if (!choice.webllm.modelId) return { error: 'No WebLLM model is picked yet: pick one in the model list on the Setup page.' };
        return { spec: formatLlmSpec(parseLlmSpec(`webllm:${choice.webllm.modelId}`)) };
      case 'wllama':
        if (choice.wllama.source === 'file') {
          if (!choice.wllama.fileName) return { error: 'No GGUF file is picked yet: choose one with "GGUF model file" on the Setup page.' };
          return { spec: `wllama:file:${choice.wllama.fileName}` };
        }
        if (!choice.wllama.url.trim()) return { error: 'No GGUF URL is given yet: enter one on the Setup page.' };
        return { spec: formatLlmSpec(parseLlmSpec(`wllama:${choice.wllama.url.trim()}`)) };
      case 'openai': {
        const baseUrl = choice.openai.baseUrl.trim();
        const model = choice.openai.model.trim();
        if (!baseUrl || !model) return { error: 'The OpenAI-compatible server needs a base URL and a model id (Setup page).' };
        return { spec: formatLlmSpec(parseLlmSpec(`openai:${baseUrl}#${model}`)) };
      }
      case 'learned': {
        if (!choice.learned.path) return { error: 'No learned experience model is picked yet: pick the shipped one or one trained on the Experience model page (Setup).' };
        return { spec: learnedSpec(parseLearnedPath(choice.learned.path)) };
      }
    }
  } catch (error) {
    return { error: error instanceof LlmSpecError ? error.problem : (error as Error).message };
  }
}

// -------------------------------------------------------------------------------------------------
// Progress and time left
// -------------------------------------------------------------------------------------------------

/** "42 s", "3 min 05 s", "1 h 02 min"; '' for unknown. */
export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/**
 * Time left from the progress so far: elapsed × (1 − p) / p, once there is enough progress to
 * extrapolate (undefined before, 0 when done).
 */
export function etaSeconds(progress: number, elapsedSeconds: number | undefined): number | undefined {
  if (progress >= 1) return 0;
  if (elapsedSeconds === undefined || !(progress > 0.01) || !(elapsedSeconds > 0)) return undefined;
  return (elapsedSeconds * (1 - progress)) / progress;
}

/** One progress line: "37% — Fetching… — 1 min 05 s left". */
export function progressLine(p: { progress: number; text: string; eta?: number }): string {
  const pct = `${Math.round(Math.max(0, Math.min(1, p.progress)) * 100)}%`;
  const left = p.eta === undefined ? 'estimating time left…' : p.eta === 0 ? 'done' : `${formatDuration(p.eta)} left`;
  return `${pct} — ${p.text} — ${left}`;
}

// -------------------------------------------------------------------------------------------------
// Errors in words
// -------------------------------------------------------------------------------------------------

/** A storage failure (OPFS, Cache API) in words: quota exceeded gets its own fix. */
export function storageErrorText(error: unknown, what: string): string {
  const name = (error as { name?: string } | null)?.name ?? '';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'QuotaExceededError' || /quota/i.test(message)) {
    return `${what} failed: the browser's storage quota for this site is exceeded. Free space by deleting cached models ` +
      '(Setup → cached models) or old runs, ask for persistent storage, or leave private/incognito mode, which has a tiny quota.';
  }
  if (name === 'SecurityError' || name === 'NotAllowedError') {
    return `${what} failed: this browser does not allow site storage here (${message}). Allow storage for this site or leave private mode.`;
  }
  return `${what} failed: ${message}`;
}

/** Caps of the hardware report → the message shown above the WebLLM model list ('' when all is well). */
export function webGpuNotice(caps: { available: boolean; reason?: string; features: { shaderF16: boolean }; adapter: { isFallbackAdapter: boolean } | null } | null): string {
  if (!caps) return '';
  if (!caps.available) {
    return `No WebGPU here: ${caps.reason ?? 'the browser found no usable GPU adapter.'} WebLLM cannot run; use wllama (CPU, a GGUF file) or an OpenAI-compatible server below.`;
  }
  const parts: string[] = [];
  if (!caps.features.shaderF16) parts.push('This GPU adapter has no shader-f16, so only q4f32 models are offered (q4f16 models would fail with ShaderF16SupportError).');
  if (caps.adapter?.isFallbackAdapter) parts.push('It is a software adapter (SwiftShader/WARP): models load but run on the CPU, very slowly.');
  return parts.join(' ');
}
