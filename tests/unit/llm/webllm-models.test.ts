import { describe, expect, it } from 'vitest';
import { prebuiltAppConfig } from '@mlc-ai/web-llm';
import {
  describeModel,
  estimateVramBudget,
  listWebLlmModels,
  parameterCountB,
  pickDefaultModel,
  quantizationOf,
  twinModelId,
  type AppConfigLike,
  type ModelRecordLike,
} from '../../../src/core/llm/webllm-models';
import type { WebGpuCapabilities } from '../../../src/core/llm/capabilities';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

function caps(
  options: { f16?: boolean; maxBuffer?: number; maxBinding?: number; fallback?: boolean; available?: boolean } = {},
): WebGpuCapabilities {
  return {
    available: options.available ?? true,
    adapter: {
      vendor: 'v',
      architecture: 'a',
      description: '',
      device: '',
      isFallbackAdapter: options.fallback ?? false,
    },
    features: { shaderF16: options.f16 ?? false, subgroups: true },
    limits: {
      maxBufferSize: options.maxBuffer ?? 2 * GiB,
      maxStorageBufferBindingSize: options.maxBinding ?? 2 * GiB,
      maxComputeWorkgroupStorageSize: 32768,
      maxComputeInvocationsPerWorkgroup: 256,
      maxStorageBuffersPerShaderStage: 10,
    },
  };
}
const swiftShader = caps({ maxBuffer: GiB, maxBinding: GiB, fallback: true });

const rec = (model_id: string, vram: number, extra: Partial<ModelRecordLike> = {}): ModelRecordLike => ({
  model: `https://huggingface.co/mlc-ai/${model_id}`,
  model_id,
  model_lib: `${model_id}.wasm`,
  vram_required_MB: vram,
  low_resource_required: true,
  overrides: { context_window_size: 4096 },
  ...extra,
});
const CONFIG: AppConfigLike = {
  model_list: [
    rec('Qwen2.5-1.5B-Instruct-q4f16_1-MLC', 1629.75),
    rec('Qwen2.5-1.5B-Instruct-q4f32_1-MLC', 1888.97),
    rec('SmolLM2-360M-Instruct-q4f16_1-MLC', 376.06, { required_features: ['shader-f16'] }),
    rec('SmolLM2-360M-Instruct-q4f32_1-MLC', 579.61),
    rec('SmolLM2-135M-Instruct-q0f32-MLC', 719.38),
    rec('Llama-3.1-8B-Instruct-q4f32_1-MLC', 6101.01, { low_resource_required: false }),
    rec('Phi-3.5-vision-instruct-q4f32_1-MLC', 7050.65, { model_type: 2 }),
    rec('Ministral-3-3B-Base-2512-q4f32_1-MLC', 3532.37),
    rec('gemma-2b-it-q4f32_1-MLC', 1750.66, { low_resource_required: false, buffer_size_required_bytes: 262144000 }),
    rec('snowflake-arctic-embed-m-q0f32-MLC-b4', 539.4, {
      model_type: 1,
      low_resource_required: undefined,
      overrides: undefined,
    }),
    rec('snowflake-arctic-embed-s-q0f32-MLC-b4', 238.71, {
      model_type: 1,
      low_resource_required: undefined,
      overrides: undefined,
    }),
  ],
};

describe('model ids', () => {
  it('parse quantization, parameter count and the f16/f32 twin', () => {
    expect(quantizationOf('Qwen2.5-1.5B-Instruct-q4f16_1-MLC')).toBe('q4f16_1');
    expect(quantizationOf('TinyLlama-1.1B-Chat-v1.0-q4f32_1-MLC-1k')).toBe('q4f32_1');
    expect(quantizationOf('SmolLM2-135M-Instruct-q0f32-MLC')).toBe('q0f32');
    expect(quantizationOf('custom-model')).toBe('');
    expect(parameterCountB('Qwen2.5-1.5B-Instruct-q4f16_1-MLC')).toBe(1.5);
    expect(parameterCountB('SmolLM2-360M-Instruct-q4f32_1-MLC')).toBeCloseTo(0.36);
    expect(parameterCountB('Llama-3.2-1B-Instruct-q4f32_1-MLC')).toBe(1);
    expect(parameterCountB('stablelm-2-zephyr-1_6b-q4f16_1-MLC')).toBe(1.6);
    expect(parameterCountB('Phi-3.5-mini-instruct-q4f16_1-MLC')).toBeUndefined();
    expect(parameterCountB('gemma-4-E2B-it-q4f16_1-MLC')).toBeUndefined();
    expect(twinModelId('Qwen2.5-1.5B-Instruct-q4f16_1-MLC', 'f32')).toBe('Qwen2.5-1.5B-Instruct-q4f32_1-MLC');
    expect(twinModelId('SmolLM2-135M-Instruct-q0f16-MLC', 'f32')).toBe('SmolLM2-135M-Instruct-q0f32-MLC');
    expect(twinModelId('Qwen2.5-1.5B-Instruct-q4f32_1-MLC', 'f32')).toBeUndefined();
  });

  it('describe a record with a download estimate where the id gives the size', () => {
    const info = describeModel(rec('Qwen2.5-1.5B-Instruct-q4f16_1-MLC', 1629.75));
    expect(info).toMatchObject({
      kind: 'chat',
      family: 'Qwen2.5-1.5B-Instruct',
      quantization: 'q4f16_1',
      vramMB: 1629.75,
      lowResource: true,
      contextWindow: 4096,
      paramsB: 1.5,
      downloadMBEstimate: 844,
    });
    expect(describeModel(rec('Phi-3.5-mini-instruct-q4f32_1-MLC', 5483)).downloadMBEstimate).toBeUndefined();
    expect(describeModel(CONFIG.model_list[9]).kind).toBe('embedding');
  });
});

describe('estimateVramBudget', () => {
  it('user VRAM wins; otherwise 4 × maxBufferSize clamped to 1–8 GiB, capped for software adapters and by device memory', () => {
    expect(estimateVramBudget(caps(), { userVramMB: 12000 })).toMatchObject({ mb: 12000, source: 'user' });
    expect(estimateVramBudget(caps({ maxBuffer: 2 * GiB }))).toMatchObject({ mb: 8192, source: 'adapter-limits' });
    expect(estimateVramBudget(caps({ maxBuffer: GiB })).mb).toBe(4096);
    expect(estimateVramBudget(caps({ maxBuffer: 256 * MiB })).mb).toBe(1024);
    expect(estimateVramBudget(caps({ maxBuffer: 128 * MiB })).mb).toBe(1024);
    expect(estimateVramBudget(swiftShader).mb).toBe(2048);
    const shared = estimateVramBudget(caps({ maxBuffer: 4 * GiB }), { deviceMemoryGB: 4 });
    expect(shared.mb).toBe(2048);
    expect(shared.explanation).toMatch(/device memory/);
    expect(estimateVramBudget(caps({ available: false })).mb).toBe(0);
    expect(estimateVramBudget(null).source).toBe('none');
  });
});

describe('listWebLlmModels', () => {
  it('SwiftShader-like (no shader-f16, software): q4f32 chat models within 2 GiB, small → large; embeddings apart', () => {
    const list = listWebLlmModels(CONFIG, swiftShader);
    expect(list.quantization.quantization).toBe('q4f32');
    expect(list.budget.mb).toBe(2048);
    expect(list.chat.map((m) => m.id)).toEqual([
      'SmolLM2-360M-Instruct-q4f32_1-MLC',
      'gemma-2b-it-q4f32_1-MLC',
      'Qwen2.5-1.5B-Instruct-q4f32_1-MLC',
    ]);
    expect(list.tooLarge.map((m) => m.id)).toEqual(['Llama-3.1-8B-Instruct-q4f32_1-MLC']);
    expect(list.tooLarge[0].excludedBecause).toMatch(/6101 MB.*2048 MB/);
    // No q0, no vision, no base models, no f16 builds.
    const all = [...list.chat, ...list.tooLarge].map((m) => m.id).join(' ');
    expect(all).not.toMatch(/q0f32|vision|-Base-|q4f16/);
    expect(list.embedding.map((m) => m.id)).toEqual([
      'snowflake-arctic-embed-s-q0f32-MLC-b4',
      'snowflake-arctic-embed-m-q0f32-MLC-b4',
    ]);
    expect(list.embedding.every((m) => m.excludedBecause === undefined)).toBe(true);
  });

  it('with shader-f16: q4f16 builds only', () => {
    const list = listWebLlmModels(CONFIG, caps({ f16: true }));
    expect(list.quantization.quantization).toBe('q4f16');
    expect(list.chat.map((m) => m.id)).toEqual([
      'SmolLM2-360M-Instruct-q4f16_1-MLC',
      'Qwen2.5-1.5B-Instruct-q4f16_1-MLC',
    ]);
    // A user may force q4f32 anyway.
    expect(
      listWebLlmModels(CONFIG, caps({ f16: true }), { quantization: 'q4f32' }).chat.every(
        (m) => m.quantization === 'q4f32_1',
      ),
    ).toBe(true);
  });

  it('low binding limits: only low-resource models, and buffer_size_required_bytes is checked', () => {
    const list = listWebLlmModels(CONFIG, caps({ maxBuffer: GiB, maxBinding: 128 * MiB }), { userVramMB: 16000 });
    expect(list.chat.map((m) => m.id)).toEqual([
      'SmolLM2-360M-Instruct-q4f32_1-MLC',
      'Qwen2.5-1.5B-Instruct-q4f32_1-MLC',
    ]);
    const gemma = list.tooLarge.find((m) => m.id.startsWith('gemma'));
    expect(gemma?.excludedBecause).toMatch(/250 MiB.*128 MiB/);
    expect(list.tooLarge.find((m) => m.id.startsWith('Llama'))?.excludedBecause).toMatch(/limited devices/);
  });

  it('without WebGPU nothing fits, each with the reason', () => {
    const list = listWebLlmModels(CONFIG, caps({ available: false }));
    expect(list.chat).toEqual([]);
    expect(list.tooLarge.every((m) => m.excludedBecause === 'WebGPU is not available here.')).toBe(true);
  });

  it("over web-llm's real prebuiltAppConfig", () => {
    const list = listWebLlmModels(prebuiltAppConfig, swiftShader);
    expect(list.chat.length).toBeGreaterThan(5);
    const vram = list.chat.map((m) => m.vramMB ?? Infinity);
    expect(vram).toEqual([...vram].sort((a, b) => a - b));
    for (const m of list.chat) {
      expect(m.quantization).toBe('q4f32_1');
      expect(m.vramMB).toBeLessThanOrEqual(2048);
    }
    expect(list.chat.map((m) => m.id)).toContain('Qwen2.5-0.5B-Instruct-q4f32_1-MLC');
    expect(list.embedding.map((m) => m.id).sort()).toEqual([
      'snowflake-arctic-embed-m-q0f32-MLC-b32',
      'snowflake-arctic-embed-m-q0f32-MLC-b4',
      'snowflake-arctic-embed-s-q0f32-MLC-b32',
      'snowflake-arctic-embed-s-q0f32-MLC-b4',
    ]);
    expect(pickDefaultModel(list)?.id).toBe('Qwen2.5-1.5B-Instruct-q4f32_1-MLC');

    const f16 = listWebLlmModels(prebuiltAppConfig, caps({ f16: true, maxBuffer: 2 * GiB }));
    expect(f16.chat.every((m) => m.quantization === 'q4f16_1')).toBe(true);
    expect(f16.budget.mb).toBe(8192);
    expect(f16.chat.map((m) => m.id)).toContain('Llama-3.1-8B-Instruct-q4f16_1-MLC');
  });

  it('pickDefaultModel falls back to the largest model within half the budget', () => {
    const list = listWebLlmModels(
      { model_list: [rec('A-1B-q4f32_1-MLC', 900), rec('B-3B-q4f32_1-MLC', 1900), rec('C-7B-q4f32_1-MLC', 3900)] },
      caps({ maxBuffer: GiB }),
    );
    expect(pickDefaultModel(list)?.id).toBe('B-3B-q4f32_1-MLC');
    expect(pickDefaultModel({ chat: [], budget: list.budget })).toBeUndefined();
  });
});
