/**
 * What this browser's WebGPU can do for WebLLM, checked before choosing an engine:
 * `navigator.gpu` → `requestAdapter()` (null = no usable GPU) → adapter info, features and
 * limits → optionally a real `requestDevice()` to catch adapters that exist but cannot create a
 * device (or lose it at once).
 *
 * Pure over a navigator-like object, so Node tests feed fake adapters; in the browser the default
 * is the real `navigator` (page or worker). Every "not available" carries a reason that names the
 * way out (another browser, or the wllama CPU engine, or an OpenAI-compatible server).
 *
 * Quantization: q4f16 models need the WebGPU feature `shader-f16` (often missing on Chrome/Linux,
 * Firefox, Safari and SwiftShader); q4f32 runs everywhere at ~20–50 % more VRAM. Several q4f16
 * records in web-llm's list do not declare `required_features`, so on a no-f16 adapter they fail
 * with a shader compile error instead of a clear one — hence pickQuantization().
 */
import { errorText, finiteOr } from './helpers';

/** WebGPU limits that decide which models load (web-llm's detectGPUDevice checks these). */
export interface WebGpuLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  maxComputeWorkgroupStorageSize: number;
  maxComputeInvocationsPerWorkgroup: number;
  maxStorageBuffersPerShaderStage: number;
}

export interface WebGpuAdapterSummary {
  vendor: string;
  architecture: string;
  description: string;
  device: string;
  /** A software adapter (SwiftShader, WARP): correct but far too slow for real models. */
  isFallbackAdapter: boolean;
}

export interface WebGpuCapabilities {
  /** WebLLM can run here: an adapter exists, meets web-llm's minimum limits and (if probed) gives a device. */
  available: boolean;
  /** Why not (when !available), naming what to do instead. */
  reason?: string;
  /** null when no adapter was found. */
  adapter: WebGpuAdapterSummary | null;
  features: { shaderF16: boolean; subgroups: boolean };
  /** null when no adapter was found. */
  limits: WebGpuLimits | null;
  /** Whether requestDevice() was tried and succeeded (undefined: not probed). */
  deviceOk?: boolean;
}

// -------------------------------------------------------------------------------------------------
// Navigator-like shapes (structural, so tests can pass plain objects)
// -------------------------------------------------------------------------------------------------

export interface GpuDeviceLike {
  readonly lost: Promise<{ reason?: string; message?: string }>;
  destroy(): void;
}

export interface GpuAdapterLike {
  readonly features: { has(name: string): boolean };
  readonly limits: Partial<Record<keyof WebGpuLimits, number>> & object;
  readonly info?: Partial<WebGpuAdapterSummary>;
  /** Older Chromium put it on the adapter itself. */
  readonly isFallbackAdapter?: boolean;
  /** Deprecated before `info` existed; used only as a fallback. */
  requestAdapterInfo?(): Promise<Partial<WebGpuAdapterSummary>>;
  requestDevice?(descriptor?: unknown): Promise<GpuDeviceLike>;
}

export interface GpuLike {
  requestAdapter(options?: { powerPreference?: 'low-power' | 'high-performance' }): Promise<GpuAdapterLike | null>;
}

export interface NavigatorLike {
  gpu?: GpuLike;
}

export interface CheckWebGpuOptions {
  /** Passed to requestAdapter; web-llm asks for 'high-performance'. */
  powerPreference?: 'low-power' | 'high-performance';
  /** Also create (and destroy) a device to catch adapters that cannot give one. Default true. */
  probeDevice?: boolean;
  /** requestAdapter/requestDevice can hang in some in-app browsers. Default 5000 ms. */
  timeoutMs?: number;
}

/** web-llm's minimum limits (detectGPUDevice in 0.2.86): below these it refuses to start. */
export const WEBLLM_MIN_LIMITS: Readonly<WebGpuLimits> = {
  maxBufferSize: 256 * 2 ** 20,
  maxStorageBufferBindingSize: 128 * 2 ** 20,
  maxComputeWorkgroupStorageSize: 32 * 2 ** 10,
  maxComputeInvocationsPerWorkgroup: 256,
  maxStorageBuffersPerShaderStage: 10,
};

const FALLBACK_ENGINES =
  'use the wllama engine (CPU) or an OpenAI-compatible server (Ollama, vLLM, llama-server) instead';

const NO_ADAPTER = { adapter: null, features: { shaderF16: false, subgroups: false }, limits: null } as const;

/**
 * Checks WebGPU for WebLLM. Never throws: failures come back as `available: false` with a reason.
 * @param navigatorLike default: the global `navigator` (page or worker)
 */
export async function checkWebGpu(
  navigatorLike?: NavigatorLike | null,
  options: CheckWebGpuOptions = {},
): Promise<WebGpuCapabilities> {
  const nav = navigatorLike === undefined ? (globalThis as { navigator?: NavigatorLike }).navigator : navigatorLike;
  const timeoutMs = options.timeoutMs ?? 5000;
  const gpu = nav?.gpu;
  if (!gpu || typeof gpu.requestAdapter !== 'function') {
    return {
      available: false,
      ...NO_ADAPTER,
      reason:
        'This browser has no WebGPU (navigator.gpu is missing). WebGPU needs Chrome/Edge 113+, Safari 26+ or a ' +
        'recent Firefox, and a secure page (https:// or http://localhost); on Linux Chrome may need ' +
        `--enable-unsafe-webgpu. Otherwise ${FALLBACK_ENGINES}.`,
    };
  }

  let adapter: GpuAdapterLike | null;
  try {
    adapter = await withTimeout(
      gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' }),
      timeoutMs,
      'requestAdapter()',
    );
  } catch (error) {
    return {
      available: false,
      ...NO_ADAPTER,
      reason: `navigator.gpu.requestAdapter() failed (${errorText(error)}). Update the browser or GPU driver, or ${FALLBACK_ENGINES}.`,
    };
  }
  if (!adapter) {
    return {
      available: false,
      ...NO_ADAPTER,
      reason:
        'WebGPU exists but requestAdapter() returned null: no usable GPU (blocklisted driver, disabled hardware ' +
        'acceleration, or a headless browser without --enable-unsafe-webgpu). Enable hardware acceleration or update ' +
        `the driver, or ${FALLBACK_ENGINES}.`,
    };
  }

  const info = await adapterInfo(adapter);
  const summary: WebGpuAdapterSummary = {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    description: info.description ?? '',
    device: info.device ?? '',
    isFallbackAdapter: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false),
  };
  const features = { shaderF16: hasFeature(adapter, 'shader-f16'), subgroups: hasFeature(adapter, 'subgroups') };
  const limits = readLimits(adapter.limits);
  const caps: WebGpuCapabilities = { available: true, adapter: summary, features, limits };

  const tooLow = (Object.keys(WEBLLM_MIN_LIMITS) as (keyof WebGpuLimits)[])
    .filter((key) => limits[key] < WEBLLM_MIN_LIMITS[key])
    .map((key) => `${key} ${formatLimit(limits[key])} < ${formatLimit(WEBLLM_MIN_LIMITS[key])}`);
  if (tooLow.length > 0) {
    return {
      ...caps,
      available: false,
      reason: `This GPU's WebGPU limits are below what WebLLM needs (${tooLow.join(', ')}); ${FALLBACK_ENGINES}.`,
    };
  }

  if (options.probeDevice !== false && typeof adapter.requestDevice === 'function') {
    let device: GpuDeviceLike;
    try {
      device = await withTimeout(adapter.requestDevice(), timeoutMs, 'requestDevice()');
    } catch (error) {
      return {
        ...caps,
        available: false,
        deviceOk: false,
        reason: `The GPU adapter could not create a device (${errorText(error)}). Close other GPU-heavy tabs, restart the browser or update the driver, or ${FALLBACK_ENGINES}.`,
      };
    }
    // A device that is lost straight away (driver reset, GPU process crash) is as good as none.
    const lost = await Promise.race([device.lost, new Promise<null>((resolve) => setTimeout(() => resolve(null), 0))]);
    try {
      device.destroy();
    } catch {
      /* already gone */
    }
    if (lost) {
      return {
        ...caps,
        available: false,
        deviceOk: false,
        reason:
          `The WebGPU device was lost right after creation (${lost.reason ?? 'unknown'}${lost.message ? `: ${lost.message}` : ''}). ` +
          `Restart the browser (the GPU process may have crashed) or ${FALLBACK_ENGINES}.`,
      };
    }
    caps.deviceOk = true;
  }
  return caps;
}

export type Quantization = 'q4f16' | 'q4f32';

export interface QuantizationChoice {
  quantization: Quantization;
  /** web-llm's suffix for this choice ('q4f16_1' | 'q4f32_1'). */
  suffix: 'q4f16_1' | 'q4f32_1';
  reason: string;
}

/** q4f16 when the adapter has shader-f16 (smaller and faster), else q4f32 (runs everywhere). */
export function pickQuantization(
  caps: Pick<WebGpuCapabilities, 'available' | 'features'> & { adapter?: WebGpuAdapterSummary | null },
): QuantizationChoice {
  if (!caps.available) {
    return {
      quantization: 'q4f32',
      suffix: 'q4f32_1',
      reason: 'WebGPU is not available; q4f32 is the safe default should it become available (it needs no shader-f16).',
    };
  }
  if (caps.features.shaderF16) {
    return {
      quantization: 'q4f16',
      suffix: 'q4f16_1',
      reason: 'The adapter supports shader-f16: q4f16 models are smaller and faster.',
    };
  }
  const who = caps.adapter?.isFallbackAdapter ? 'This software adapter (e.g. SwiftShader)' : 'This adapter';
  return {
    quantization: 'q4f32',
    suffix: 'q4f32_1',
    reason: `${who} has no shader-f16, so q4f16 models would fail to compile their shaders; q4f32 models run everywhere (at more VRAM).`,
  };
}

// -------------------------------------------------------------------------------------------------
// Helpers
// -------------------------------------------------------------------------------------------------

async function adapterInfo(adapter: GpuAdapterLike): Promise<Partial<WebGpuAdapterSummary>> {
  if (adapter.info) return adapter.info;
  if (typeof adapter.requestAdapterInfo === 'function') {
    try {
      return await adapter.requestAdapterInfo();
    } catch {
      /* old API gone */
    }
  }
  return {};
}

function hasFeature(adapter: GpuAdapterLike, name: string): boolean {
  try {
    return Boolean(adapter.features?.has(name));
  } catch {
    return false;
  }
}

function readLimits(raw: GpuAdapterLike['limits']): WebGpuLimits {
  // GPUSupportedLimits exposes getters on its prototype: read them one by one, never spread.
  const get = (key: keyof WebGpuLimits) => finiteOr((raw as Record<string, unknown>)[key], 0);
  return {
    maxBufferSize: get('maxBufferSize'),
    maxStorageBufferBindingSize: get('maxStorageBufferBindingSize'),
    maxComputeWorkgroupStorageSize: get('maxComputeWorkgroupStorageSize'),
    maxComputeInvocationsPerWorkgroup: get('maxComputeInvocationsPerWorkgroup'),
    maxStorageBuffersPerShaderStage: get('maxStorageBuffersPerShaderStage'),
  };
}

function formatLimit(value: number): string {
  if (value >= 2 ** 20) return `${Math.round(value / 2 ** 20)} MiB`;
  if (value >= 2 ** 10 && value % 2 ** 10 === 0) return `${value / 2 ** 10} KiB`;
  return String(value);
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
