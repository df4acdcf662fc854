/**
 * Which WebLLM models fit this browser: pure functions over web-llm's `prebuiltAppConfig` (or any
 * AppConfig with custom records) and the capabilities from capabilities.ts, so they run in Node.
 *
 * The filter (listWebLlmModels):
 *  1. chat models only (model_type LLM); vision models and base (non-chat) models are left out,
 *     embedding models (snowflake-arctic-embed) are listed separately;
 *  2. the right quantization: q4f16_1 when the adapter has shader-f16, else q4f32_1
 *     (pickQuantization); q0 (unquantized) and q3 builds are not offered;
 *  3. memory: `vram_required_MB` ≤ the VRAM budget (estimateVramBudget, below);
 *  4. low-limit adapters (maxStorageBufferBindingSize < 1 GiB: phones, old iGPUs) get only the
 *     records marked `low_resource_required` — web-llm's own mark for "runs on limited devices";
 *  5. `buffer_size_required_bytes` ≤ the adapter's maxStorageBufferBindingSize.
 * Sorted small → large by VRAM.
 *
 * The VRAM budget heuristic. WebGPU does not expose how much memory a GPU has, so:
 *  - a user-given VRAM (MB) wins: they know their machine (`userVramMB`);
 *  - otherwise 4 × maxBufferSize, clamped to 1–8 GiB. Browsers size maxBufferSize by device class
 *    (256 MiB–1 GiB on phones and small iGPUs, 2–4 GiB on desktop GPUs); a model needs roughly
 *    its largest buffer times a few, and 8 GiB caps the guess on big GPUs (where a bigger model
 *    would be slow to download anyway);
 *  - a software (fallback) adapter is capped at 2 GiB: it runs on the CPU, only tiny models make sense;
 *  - `navigator.deviceMemory` (GB, browsers cap it at 8), when given, caps the budget at half of it:
 *    integrated GPUs share RAM with everything else.
 *
 * Download size is not in the config; `downloadMBEstimate` ≈ parameters (from the id, e.g. "1.5B",
 * "360M") × bits per weight (q4f16_1 ≈ 4.5, q4f32_1 ≈ 5, q0f16 16, q0f32 32) / 8, and is undefined
 * when the id does not say the parameter count.
 */
import { pickQuantization, type QuantizationChoice, type WebGpuCapabilities } from './capabilities';

/** The fields of web-llm's ModelRecord these functions read (structural: no runtime import). */
export interface ModelRecordLike {
  model: string;
  model_id: string;
  model_lib: string;
  vram_required_MB?: number;
  low_resource_required?: boolean;
  buffer_size_required_bytes?: number;
  required_features?: string[];
  /** 0 LLM (or absent), 1 embedding, 2 VLM. */
  model_type?: number;
  overrides?: { context_window_size?: number };
}

export interface AppConfigLike {
  model_list: ModelRecordLike[];
}

export type ModelKind = 'chat' | 'embedding' | 'vision';

export interface WebLlmModelInfo {
  id: string;
  kind: ModelKind;
  /** The id without its quantization suffix, e.g. 'Qwen2.5-1.5B-Instruct' (groups q4f16/q4f32 twins). */
  family: string;
  /** web-llm's quantization code from the id, e.g. 'q4f16_1', 'q4f32_1', 'q0f32'; '' if none. */
  quantization: string;
  /** VRAM web-llm measured for it (MB), weights + KV cache for its context window. */
  vramMB?: number;
  /** web-llm marks it as able to run on limited devices (phones). */
  lowResource: boolean;
  contextWindow?: number;
  /** Parameters in billions, from the id (undefined when the id does not say). */
  paramsB?: number;
  /** ≈ download size in MB (see the file comment); undefined when unknown. */
  downloadMBEstimate?: number;
  requiredFeatures: string[];
  /** Set by listWebLlmModels: why it does not fit here. */
  excludedBecause?: string;
}

export interface VramBudget {
  mb: number;
  source: 'user' | 'adapter-limits' | 'none';
  /** How the number came about, for the UI. */
  explanation: string;
}

export interface ModelFilterOptions {
  /** VRAM the user says the GPU has (MB); overrides the estimate. */
  userVramMB?: number;
  /** navigator.deviceMemory (GB), when known. */
  deviceMemoryGB?: number;
  /** Force a quantization (e.g. a user who knows better); default from the capabilities. */
  quantization?: 'q4f16' | 'q4f32';
}

export interface WebLlmModelList {
  quantization: QuantizationChoice;
  budget: VramBudget;
  /** Chat models that fit, small → large. */
  chat: WebLlmModelInfo[];
  /** Chat models of the right quantization that do not fit, with `excludedBecause`, small → large. */
  tooLarge: WebLlmModelInfo[];
  /** Embedding models (snowflake-arctic-embed), small → large, each with `excludedBecause` when it does not fit. */
  embedding: WebLlmModelInfo[];
}

type CapsLike = Pick<WebGpuCapabilities, 'available' | 'features' | 'limits'> &
  Partial<Pick<WebGpuCapabilities, 'adapter'>>;

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** The VRAM budget (see the file comment for the heuristic). */
export function estimateVramBudget(
  caps: CapsLike | null,
  options: Pick<ModelFilterOptions, 'userVramMB' | 'deviceMemoryGB'> = {},
): VramBudget {
  if (options.userVramMB !== undefined && Number.isFinite(options.userVramMB) && options.userVramMB > 0) {
    return {
      mb: Math.round(options.userVramMB),
      source: 'user',
      explanation: `${Math.round(options.userVramMB)} MB, as given.`,
    };
  }
  if (!caps || !caps.available || !caps.limits) {
    return { mb: 0, source: 'none', explanation: 'No usable WebGPU adapter, so no GPU memory to budget.' };
  }
  const maxBuffer = caps.limits.maxBufferSize;
  let mb = clamp(Math.round((4 * maxBuffer) / MiB), 1024, 8192);
  const parts = [`4 × maxBufferSize (${Math.round(maxBuffer / MiB)} MiB), clamped to 1–8 GiB`];
  if (caps.adapter?.isFallbackAdapter) {
    mb = Math.min(mb, 2048);
    parts.push('capped at 2 GiB for a software adapter (it runs on the CPU)');
  }
  if (options.deviceMemoryGB !== undefined && Number.isFinite(options.deviceMemoryGB) && options.deviceMemoryGB > 0) {
    const half = Math.round((options.deviceMemoryGB * 1024) / 2);
    if (half < mb) {
      mb = half;
      parts.push(`capped at half the device memory (${options.deviceMemoryGB} GB)`);
    }
  }
  return {
    mb,
    source: 'adapter-limits',
    explanation: `≈ ${mb} MB: ${parts.join('; ')}. Give your GPU's VRAM to override.`,
  };
}

/** One record → WebLlmModelInfo (no filtering). */
export function describeModel(record: ModelRecordLike): WebLlmModelInfo {
  const id = record.model_id;
  const quantization = quantizationOf(id);
  const kind: ModelKind = record.model_type === 1 ? 'embedding' : record.model_type === 2 ? 'vision' : 'chat';
  const paramsB = parameterCountB(id);
  const bits = BITS_PER_WEIGHT[quantization];
  const info: WebLlmModelInfo = {
    id,
    kind,
    family: quantization ? id.replace(new RegExp(`-${quantization}(-MLC)?`), '') : id.replace(/-MLC$/, ''),
    quantization,
    lowResource: record.low_resource_required === true,
    requiredFeatures: [...(record.required_features ?? [])],
  };
  if (record.vram_required_MB !== undefined) info.vramMB = record.vram_required_MB;
  if (record.overrides?.context_window_size !== undefined) info.contextWindow = record.overrides.context_window_size;
  if (paramsB !== undefined) {
    info.paramsB = paramsB;
    if (bits !== undefined) info.downloadMBEstimate = Math.round((paramsB * 1e9 * bits) / 8 / 1e6);
  }
  return info;
}

/** The models that fit these capabilities (see the file comment). Pure. */
export function listWebLlmModels(
  config: AppConfigLike,
  caps: CapsLike | null,
  options: ModelFilterOptions = {},
): WebLlmModelList {
  const available = Boolean(caps?.available);
  const picked = pickQuantization({
    available,
    features: caps?.features ?? { shaderF16: false, subgroups: false },
    adapter: caps?.adapter ?? null,
  });
  const quantization: QuantizationChoice =
    options.quantization === undefined || options.quantization === picked.quantization
      ? picked
      : {
          quantization: options.quantization,
          suffix: options.quantization === 'q4f16' ? 'q4f16_1' : 'q4f32_1',
          reason: 'Chosen by the user.',
        };
  const budget = estimateVramBudget(caps, options);
  const lowLimits = caps?.limits ? caps.limits.maxStorageBufferBindingSize < GiB : false;

  const chat: WebLlmModelInfo[] = [];
  const tooLarge: WebLlmModelInfo[] = [];
  const embedding: WebLlmModelInfo[] = [];
  for (const record of config.model_list) {
    const info = describeModel(record);
    if (info.kind === 'vision') continue;
    if (info.kind === 'chat' && (info.quantization !== quantization.suffix || /-Base-/i.test(info.id))) continue;
    const why = exclusionReason(record, info, { available, budget, lowLimits, caps });
    if (why) info.excludedBecause = why;
    if (info.kind === 'embedding') embedding.push(info);
    else if (why) tooLarge.push(info);
    else chat.push(info);
  }
  return {
    quantization,
    budget,
    chat: sortBySize(chat),
    tooLarge: sortBySize(tooLarge),
    embedding: sortBySize(embedding),
  };
}

/**
 * A sensible default among the fitting chat models: the first of a preference list of instruct
 * models that follow JSON instructions well, else the largest that fits under half the budget,
 * else the smallest. undefined when nothing fits.
 */
export function pickDefaultModel(list: Pick<WebLlmModelList, 'chat' | 'budget'>): WebLlmModelInfo | undefined {
  const preferred = [
    'Qwen2.5-1.5B-Instruct',
    'Llama-3.2-1B-Instruct',
    'Qwen2.5-0.5B-Instruct',
    'SmolLM2-360M-Instruct',
  ];
  for (const family of preferred) {
    const hit = list.chat.find((m) => m.family === family);
    if (hit) return hit;
  }
  const roomy = list.chat.filter((m) => (m.vramMB ?? Infinity) <= list.budget.mb / 2);
  return roomy.at(-1) ?? list.chat[0];
}

/** web-llm's quantization code in an id ('q4f16_1', 'q4f32_1', 'q0f32', 'q3f16_1'); '' when none. */
export function quantizationOf(modelId: string): string {
  return /-(q\d+f\d+(?:_\d+)?)(?:-|$)/.exec(modelId)?.[1] ?? '';
}

/** The same model in the other float width (q4f16_1 ↔ q4f32_1, q0f16 ↔ q0f32), or undefined. */
export function twinModelId(modelId: string, to: 'f16' | 'f32'): string | undefined {
  const q = quantizationOf(modelId);
  if (!q) return undefined;
  const swapped = q.replace(/f(16|32)/, `f${to.slice(1)}`);
  return swapped === q ? undefined : modelId.replace(`-${q}`, `-${swapped}`);
}

/** Parameters in billions from an id: '…-1.5B-…' → 1.5, '…-360M-…' → 0.36, '…-1_6b' → 1.6. */
export function parameterCountB(modelId: string): number | undefined {
  const match = /(?:^|[-_])(\d+(?:[._]\d+)?)([BbMm])(?=$|[-_])/.exec(modelId);
  if (!match) return undefined;
  const value = Number(match[1].replace('_', '.'));
  if (!Number.isFinite(value) || value <= 0) return undefined;
  return match[2].toLowerCase() === 'm' ? value / 1000 : value;
}

// -------------------------------------------------------------------------------------------------
// Helpers
// -------------------------------------------------------------------------------------------------

const BITS_PER_WEIGHT: Record<string, number | undefined> = {
  q4f16_1: 4.5,
  q4f16_0: 4.5,
  q4f32_1: 5,
  q4f32_0: 5,
  q3f16_1: 3.5,
  q0f16: 16,
  q0f32: 32,
};

function exclusionReason(
  record: ModelRecordLike,
  info: WebLlmModelInfo,
  ctx: { available: boolean; budget: VramBudget; lowLimits: boolean; caps: CapsLike | null },
): string | undefined {
  if (!ctx.available) return 'WebGPU is not available here.';
  if (info.requiredFeatures.includes('shader-f16') && !ctx.caps?.features.shaderF16)
    return 'Needs shader-f16, which this adapter lacks.';
  if (info.vramMB !== undefined && info.vramMB > ctx.budget.mb) {
    return `Needs ≈ ${Math.round(info.vramMB)} MB of GPU memory; the budget here is ≈ ${ctx.budget.mb} MB.`;
  }
  const maxBinding = ctx.caps?.limits?.maxStorageBufferBindingSize ?? 0;
  if (record.buffer_size_required_bytes !== undefined && record.buffer_size_required_bytes > maxBinding) {
    return `Needs GPU buffers of ${Math.round(record.buffer_size_required_bytes / MiB)} MiB; this adapter binds at most ${Math.round(maxBinding / MiB)} MiB.`;
  }
  if (ctx.lowLimits && info.kind === 'chat' && !info.lowResource) {
    return `This adapter binds at most ${Math.round(maxBinding / MiB)} MiB per buffer (< 1 GiB): only models marked for limited devices load.`;
  }
  return undefined;
}

function sortBySize(list: WebLlmModelInfo[]): WebLlmModelInfo[] {
  return list.sort((a, b) => (a.vramMB ?? Infinity) - (b.vramMB ?? Infinity) || a.id.localeCompare(b.id));
}

function clamp(value: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, value));
}
