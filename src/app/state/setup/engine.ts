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
import {
  formatLlmSpec,
  llmSpecLabel,
  LlmSpecError,
  parseLlmSpec,
  type EngineKind,
  type LlmSpec,
} from '../../../core/llm/spec';
import { formatLearnedPath, learnedPathLabel, learnedPathOfSpec, learnedSpec, parseLearnedPath } from './learned-path';

/** The engines the Setup page offers (a learned model is trained on the Experience model page, then picked here or on Train). */
export const SETUP_ENGINE_KINDS = [
  'oracle',
  'webllm',
  'wllama',
  'openai',
  'learned',
] as const satisfies readonly EngineKind[];
export type SetupEngineKind = (typeof SETUP_ENGINE_KINDS)[number];

/** The Setup page's engine radios, in the order it shows them (the oracle last: a teaching option). */
export const ENGINE_KIND_CHOICES: readonly { kind: SetupEngineKind; label: string }[] = [
  { kind: 'webllm', label: 'WebLLM (WebGPU, downloads a model)' },
  { kind: 'wllama', label: 'wllama (CPU, a GGUF file)' },
  { kind: 'openai', label: 'OpenAI-compatible server' },
  { kind: 'learned', label: 'Learned experience model (tfjs, trained on the buffer) — not a chat model' },
  { kind: 'oracle', label: 'Noisy oracle — teaching option, not a language model' },
];

/** How the UI names an engine; the oracle is always labelled as not a language model. */
export function engineLabel(spec: LlmSpec): string {
  switch (spec.kind) {
    case 'oracle':
      return `${llmSpecLabel(spec)} — teaching option, not a language model`;
    case 'openai':
      return `OpenAI-compatible server: ${spec.model} at ${spec.baseUrl}`;
    case 'webllm':
      return `WebLLM (WebGPU): ${spec.modelId}`;
    case 'wllama':
      return spec.source === 'file' ? `wllama (CPU): ${spec.name}, picked from disk` : `wllama (CPU): ${spec.url}`;
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
  /**
   * The engine picked on Setup for dream and S2R runs (Train and Start here); null while nothing
   * is picked: the default applies (dreamEngine: the shipped learned model of the run's env, else the oracle).
   */
  kind: SetupEngineKind | null;
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
  kind: null,
  webllm: { modelId: '' },
  wllama: { source: 'file', fileName: '', fileBytes: 0, url: '', nCtx: 4096 },
  openai: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:1.5b-instruct' },
  learned: { path: '' },
};

export const CHOICE_KEY = 'dreamgym.engine.choice';

export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/**
 * A same-origin module worker hosting web-llm's WebWorkerMLCEngineHandler, to run WebLLM in
 * instead of the bundled src/core/llm/llm.worker.ts (a self-hosted handler; the e2e test's fake
 * engine). Set by hand in localStorage; nothing in the UI sets it. Only a path on this origin counts.
 */
export const WEBLLM_WORKER_KEY = 'dreamgym.webllm.worker';

export function webLlmWorkerOverride(storage: StorageLike | null = globalThis.localStorage ?? null): string | null {
  let value: string | null = null;
  try {
    value = storage?.getItem(WEBLLM_WORKER_KEY) ?? null;
  } catch {
    /* storage blocked: no override */
  }
  return value && /^\/[^/\\]/.test(value) ? value : null;
}

function str(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
function nonNegative(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** Reads the saved choice; anything missing or malformed falls back to the defaults (no kind: nothing picked yet). */
export function loadChoice(storage: StorageLike | null = globalThis.localStorage ?? null): EngineChoice {
  let raw: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(storage?.getItem(CHOICE_KEY) ?? '{}');
    if (parsed && typeof parsed === 'object') raw = parsed as Record<string, unknown>;
  } catch {
    /* a corrupt entry: start from the defaults */
  }
  const d = DEFAULT_CHOICE;
  const w = (raw.webllm ?? {}) as Record<string, unknown>;
  const l = (raw.wllama ?? {}) as Record<string, unknown>;
  const o = (raw.openai ?? {}) as Record<string, unknown>;
  const n = (raw.learned ?? {}) as Record<string, unknown>;
  return {
    kind: (SETUP_ENGINE_KINDS as readonly unknown[]).includes(raw.kind) ? (raw.kind as SetupEngineKind) : d.kind,
    webllm: { modelId: str(w.modelId, d.webllm.modelId) },
    wllama: {
      source: l.source === 'url' ? 'url' : 'file',
      fileName: str(l.fileName, d.wllama.fileName),
      fileBytes: nonNegative(l.fileBytes, 0),
      url: str(l.url, d.wllama.url),
      nCtx: Math.max(256, Math.round(nonNegative(l.nCtx, d.wllama.nCtx))),
    },
    openai: { baseUrl: str(o.baseUrl, d.openai.baseUrl), model: str(o.model, d.openai.model) },
    learned: { path: str(n.path, d.learned.path) },
  };
}

export function saveChoice(choice: EngineChoice, storage: StorageLike | null = globalThis.localStorage ?? null): void {
  try {
    storage?.setItem(CHOICE_KEY, JSON.stringify(choice));
  } catch {
    /* storage blocked or full: the choice lives for this tab */
  }
}

/**
 * The spec of the chosen engine (the oracle takes the Train page's ε_R, ε_P), or an error in
 * words when the choice is incomplete (no model picked, no file, bad URL). What a run dreams with,
 * the default and the fallbacks included, is dreamEngine's answer.
 */
export function choiceSpec(choice: EngineChoice, epsR = 0, epsP = 0): { spec: string } | { error: string } {
  try {
    switch (choice.kind) {
      case null:
        return { error: 'No engine is picked on the Setup page yet: the default applies.' };
      case 'oracle':
        return { spec: formatLlmSpec({ kind: 'oracle', epsilonReward: epsR, epsilonTransition: epsP }) };
      case 'webllm':
        if (!choice.webllm.modelId)
          return { error: 'No WebLLM model is picked yet: pick one in the model list on the Setup page.' };
        return { spec: formatLlmSpec(parseLlmSpec(`webllm:${choice.webllm.modelId}`)) };
      case 'wllama':
        if (choice.wllama.source === 'file') {
          if (!choice.wllama.fileName)
            return { error: 'No GGUF file is picked yet: choose one with "GGUF model file" on the Setup page.' };
          return { spec: `wllama:file:${choice.wllama.fileName}` };
        }
        if (!choice.wllama.url.trim()) return { error: 'No GGUF URL is given yet: enter one on the Setup page.' };
        return { spec: formatLlmSpec(parseLlmSpec(`wllama:${choice.wllama.url.trim()}`)) };
      case 'openai': {
        const baseUrl = choice.openai.baseUrl.trim();
        const model = choice.openai.model.trim();
        if (!baseUrl || !model)
          return { error: 'The OpenAI-compatible server needs a base URL and a model id (Setup page).' };
        return { spec: formatLlmSpec(parseLlmSpec(`openai:${baseUrl}#${model}`)) };
      }
      case 'learned': {
        if (!choice.learned.path)
          return {
            error:
              'No learned experience model is picked yet: pick the shipped one or one trained on the Experience model page (Setup).',
          };
        return { spec: learnedSpec(parseLearnedPath(choice.learned.path)) };
      }
    }
  } catch (error) {
    return { error: error instanceof LlmSpecError ? error.problem : (error as Error).message };
  }
}

// -------------------------------------------------------------------------------------------------
// The one rule: what a dream run uses (Setup, Train and Start here all read dreamEngine)
// -------------------------------------------------------------------------------------------------

/** The noisy oracle's ε_R and ε_P unless a form says otherwise (the Train form's default; the LLM demo presets'). */
export const DEFAULT_ORACLE_EPS = 0.1;

/** What dreamEngine needs to know beyond the choice; a check not done yet is null (undefined for the cache). */
export interface EngineFacts {
  /** The envs this build ships a learned model for (public/models/<env>); null while not checked yet. */
  shipped: readonly string[] | null;
  /** The learned models trained in this browser, with their env; null while not read yet (a local pick needs it). */
  local?: readonly { name: string; env: string }[] | null;
  /** Whether the picked WebLLM model is in this browser's cache; undefined while not checked. */
  webllmCached?: boolean;
  /** The noisy oracle's error rates (the Train form's; DEFAULT_ORACLE_EPS each when absent). */
  epsR?: number;
  epsP?: number;
}

/** The experience model a dream run of one env uses, and how every page names it. */
export interface DreamEngine {
  /** The run's config.llm: the engine's spec (the oracle with its ε). */
  llm: string;
  kind: SetupEngineKind;
  /** The one label Setup, Train and Start here show (the oracle always named as the teaching instrument it is). */
  label: string;
  /** 'chosen': Setup's pick as picked; 'default': nothing picked yet; 'fallback': the pick cannot be used (`why`). */
  source: 'chosen' | 'default' | 'fallback';
  /** Why the picked engine is not the one used ('' unless source is 'fallback'). */
  why: string;
  /** false while a check the answer depends on (shipped models, local models, the WebLLM cache) is still out. */
  settled: boolean;
}

const KIND_NAMES: Record<SetupEngineKind, string> = {
  oracle: 'the noisy oracle',
  webllm: 'WebLLM (WebGPU)',
  wllama: 'wllama (CPU)',
  openai: 'the OpenAI-compatible server',
  learned: 'a learned experience model',
};

/** How the pages name the engine of `spec` ("noisy oracle (ε_R=…) — teaching option, …" for the oracle). */
export function dreamLabel(spec: string): string {
  const parsed = parseLlmSpec(spec);
  return parsed.kind === 'oracle' ? `noisy ${engineLabel(parsed)}` : engineLabel(parsed);
}

/**
 * A run's engine from its spec alone (a saved run, a link's own ?llm=), labelled as dreamEngine
 * labels it; throws LlmSpecError for a bad spec.
 */
export function dreamEngineOfSpec(spec: string): DreamEngine {
  const kind = parseLlmSpec(spec).kind as SetupEngineKind;
  return { llm: spec, kind, label: dreamLabel(spec), source: 'chosen', why: '', settled: true };
}

/**
 * The default: the learned experience model shipped for `env` when the build has one, else the
 * noisy oracle (named as such, with the reason). Unsettled while the shipped models are not checked.
 */
function defaultEngine(env: string, facts: EngineFacts, oracle: string): DreamEngine {
  const settled = facts.shipped !== null;
  const base = { source: 'default', why: '', settled } as const;
  if (facts.shipped?.includes(env)) {
    const llm = learnedSpec({ where: 'shipped', env });
    return { ...base, llm, kind: 'learned', label: `${dreamLabel(llm)} (the default: no engine is picked on Setup)` };
  }
  const because = settled
    ? `this build ships no learned experience model for ${env}`
    : 'checking which learned models this build ships…';
  return { ...base, llm: oracle, kind: 'oracle', label: `${dreamLabel(oracle)} (the default: ${because})` };
}

/**
 * The engine a dream run of `env` uses, given the Setup choice (null, or kind null: nothing picked
 * yet), and its one label. The rule:
 *  - nothing picked: the learned model shipped for `env`, else the noisy oracle;
 *  - a complete pick: that engine (a shipped learned model follows the run's env);
 *  - a pick that cannot be used (no model picked, a WebLLM model not downloaded, a learned model of
 *    another env or not in this build/browser): the default instead, the label saying which pick
 *    is set aside and why.
 */
export function dreamEngine(choice: EngineChoice | null, env: string, facts: EngineFacts): DreamEngine {
  const epsilonReward = facts.epsR ?? DEFAULT_ORACLE_EPS;
  const epsilonTransition = facts.epsP ?? DEFAULT_ORACLE_EPS;
  const oracle = formatLlmSpec({ kind: 'oracle', epsilonReward, epsilonTransition });
  const fallback = defaultEngine(env, facts, oracle);
  const kind = choice?.kind ?? null;
  if (!choice || kind === null) return fallback;
  if (kind === 'oracle') return dreamEngineOfSpec(oracle);
  const chosen = (llm: string, settled = true): DreamEngine => ({ ...dreamEngineOfSpec(llm), settled });
  const instead = (name: string, why: string, settled = true): DreamEngine => ({
    ...fallback,
    source: 'fallback',
    why,
    settled: settled && fallback.settled,
    label: `${dreamLabel(fallback.llm)} — instead of Setup's pick (${name}): ${why}`,
  });
  const spec = choiceSpec(choice);
  if ('error' in spec) return instead(KIND_NAMES[kind], spec.error);
  const name = dreamLabel(spec.spec);
  switch (kind) {
    case 'webllm':
      if (facts.webllmCached === true) return chosen(spec.spec);
      if (facts.webllmCached === undefined) return instead(name, 'checking whether it is downloaded…', false);
      return instead(
        name,
        'it is not downloaded yet: press "Download and check" on Setup ' +
          '(no page downloads a model you have not asked for).',
      );
    case 'learned': {
      const path = learnedPathOfSpec(spec.spec)!;
      if (path.where === 'shipped') {
        // The shipped model of the run's env (a run dreams only with a model of its own env).
        const own = learnedSpec({ where: 'shipped', env });
        if (facts.shipped === null) return chosen(own, false);
        if (facts.shipped.includes(env)) return chosen(own);
        return instead(KIND_NAMES.learned, `this build ships no learned experience model for ${env}.`);
      }
      if (!facts.local) return chosen(spec.spec, false);
      const stored = facts.local.find((m) => m.name === path.name);
      if (!stored) {
        return instead(name, `'${path.name}' is not in this browser any more (deleted on the Experience model page?).`);
      }
      if (stored.env !== env) {
        return instead(
          name,
          `'${path.name}' was trained on ${stored.env}, and this run is on ${env}: ` +
            'a learned model dreams only its own environment.',
        );
      }
      return chosen(spec.spec);
    }
    default:
      return chosen(spec.spec);
  }
}

/**
 * What the Setup page shows as picked for `engine` (dreamEngine's answer for `choice`): the kind
 * and the learned model whose radios are checked — the default's while nothing is picked, and
 * none while that default is still being checked (a radio shown checked then could not be picked).
 */
export interface ShownOnSetup {
  kind: SetupEngineKind | null;
  learnedPath: string;
}

export function shownOnSetup(choice: EngineChoice, engine: DreamEngine): ShownOnSetup {
  if (choice.kind !== null) return { kind: choice.kind, learnedPath: choice.learned.path };
  if (!engine.settled) return { kind: null, learnedPath: '' };
  const path = learnedPathOfSpec(engine.llm);
  return { kind: engine.kind, learnedPath: path ? formatLearnedPath(path) : '' };
}

/**
 * The Train form's engine for `engine`: '' for the oracle (the form keeps its own ε), else the
 * spec; null while unsettled, so the form does not follow an answer that is about to change.
 */
export function formEngine(engine: DreamEngine): string | null {
  if (!engine.settled) return null;
  return engine.kind === 'oracle' ? '' : engine.llm;
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
    return (
      `${what} failed: the browser's storage quota for this site is exceeded. Free space by deleting cached models ` +
      '(Setup → cached models) or old runs, ask for persistent storage, or leave private/incognito mode, which has a tiny quota.'
    );
  }
  if (name === 'SecurityError' || name === 'NotAllowedError') {
    return `${what} failed: this browser does not allow site storage here (${message}). Allow storage for this site or leave private mode.`;
  }
  return `${what} failed: ${message}`;
}

/** Caps of the hardware report → the message shown above the WebLLM model list ('' when all is well). */
export function webGpuNotice(
  caps: {
    available: boolean;
    reason?: string;
    features: { shaderF16: boolean };
    adapter: { isFallbackAdapter: boolean } | null;
  } | null,
): string {
  if (!caps) return '';
  if (!caps.available) {
    return `No WebGPU here: ${caps.reason ?? 'the browser found no usable GPU adapter.'} WebLLM cannot run; use wllama (CPU, a GGUF file) or an OpenAI-compatible server below.`;
  }
  const parts: string[] = [];
  if (!caps.features.shaderF16)
    parts.push(
      'This GPU adapter has no shader-f16, so only q4f32 models are offered (q4f16 models would fail with ShaderF16SupportError).',
    );
  if (caps.adapter?.isFallbackAdapter)
    parts.push('It is a software adapter (SwiftShader/WARP): models load but run on the CPU, very slowly.');
  return parts.join(' ');
}
