import { describe, expect, it } from 'vitest';
import {
  checkWebGpu,
  pickQuantization,
  WEBLLM_MIN_LIMITS,
  type GpuAdapterLike,
  type GpuDeviceLike,
} from '../../../src/core/llm/capabilities';

const GiB = 2 ** 30;

/** The adapter headless Chromium gets from SwiftShader (docs/architecture.md §11.2), optionally with shader-f16. */
function fakeAdapter(
  options: {
    f16?: boolean;
    limits?: Partial<typeof WEBLLM_MIN_LIMITS>;
    device?: () => Promise<GpuDeviceLike>;
    legacyInfo?: boolean;
  } = {},
): GpuAdapterLike {
  const features = new Set(['subgroups', 'timestamp-query', ...(options.f16 ? ['shader-f16'] : [])]);
  const info = { vendor: 'google', architecture: 'swiftshader', device: '', description: '', isFallbackAdapter: true };
  return {
    features,
    limits: {
      maxBufferSize: GiB,
      maxStorageBufferBindingSize: GiB,
      maxComputeWorkgroupStorageSize: 32768,
      maxComputeInvocationsPerWorkgroup: 256,
      maxStorageBuffersPerShaderStage: 10,
      ...options.limits,
    },
    ...(options.legacyInfo ? { requestAdapterInfo: async () => info } : { info }),
    requestDevice: options.device ?? (async () => ({ lost: new Promise(() => {}), destroy() {} })),
  };
}

const nav = (adapter: GpuAdapterLike | null) => ({ gpu: { requestAdapter: async () => adapter } });

describe('checkWebGpu', () => {
  it('SwiftShader-like adapter without shader-f16: available, fallback, q4f32', async () => {
    const caps = await checkWebGpu(nav(fakeAdapter()));
    expect(caps).toMatchObject({
      available: true,
      deviceOk: true,
      adapter: { vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: true },
      features: { shaderF16: false, subgroups: true },
      limits: { maxBufferSize: GiB, maxStorageBufferBindingSize: GiB, maxStorageBuffersPerShaderStage: 10 },
    });
    expect(caps.reason).toBeUndefined();
    const choice = pickQuantization(caps);
    expect(choice).toMatchObject({ quantization: 'q4f32', suffix: 'q4f32_1' });
    expect(choice.reason).toMatch(/software adapter.*shader-f16/);
  });

  it('with shader-f16: q4f16', async () => {
    const caps = await checkWebGpu(nav(fakeAdapter({ f16: true })));
    expect(caps.features.shaderF16).toBe(true);
    expect(pickQuantization(caps)).toMatchObject({ quantization: 'q4f16', suffix: 'q4f16_1' });
  });

  it('reads adapter info through the old requestAdapterInfo() too', async () => {
    const caps = await checkWebGpu(nav(fakeAdapter({ legacyInfo: true })));
    expect(caps.adapter?.architecture).toBe('swiftshader');
  });

  it('no navigator.gpu, or no navigator at all → not available, naming the fallbacks', async () => {
    for (const navigatorLike of [{}, null]) {
      const caps = await checkWebGpu(navigatorLike);
      expect(caps).toMatchObject({ available: false, adapter: null, limits: null, features: { shaderF16: false } });
      expect(caps.reason).toMatch(/navigator\.gpu is missing/);
      expect(caps.reason).toMatch(/wllama/);
      expect(caps.reason).toMatch(/OpenAI-compatible server/);
      expect(pickQuantization(caps).quantization).toBe('q4f32');
    }
  });

  it('requestAdapter() null, throwing, or hanging → not available with the reason', async () => {
    expect((await checkWebGpu(nav(null))).reason).toMatch(/returned null/);
    const throwing = {
      gpu: {
        requestAdapter: async () => {
          throw new Error('GPU process crashed');
        },
      },
    };
    expect((await checkWebGpu(throwing)).reason).toMatch(/GPU process crashed/);
    const hanging = { gpu: { requestAdapter: () => new Promise<null>(() => {}) } };
    const caps = await checkWebGpu(hanging, { timeoutMs: 20 });
    expect(caps.available).toBe(false);
    expect(caps.reason).toMatch(/did not answer within 20 ms/);
  });

  it("limits below web-llm's minimum → not available, listing them", async () => {
    const caps = await checkWebGpu(
      nav(fakeAdapter({ limits: { maxStorageBuffersPerShaderStage: 8, maxBufferSize: 128 * 2 ** 20 } })),
    );
    expect(caps.available).toBe(false);
    expect(caps.reason).toMatch(/maxStorageBuffersPerShaderStage 8 < 10/);
    expect(caps.reason).toMatch(/maxBufferSize 128 MiB < 256 MiB/);
    expect(caps.limits?.maxStorageBuffersPerShaderStage).toBe(8);
  });

  it('a device that cannot be created or is lost at once → not available', async () => {
    const failing = await checkWebGpu(
      nav(
        fakeAdapter({
          device: async () => {
            throw new Error('OperationError: out of memory');
          },
        }),
      ),
    );
    expect(failing).toMatchObject({ available: false, deviceOk: false });
    expect(failing.reason).toMatch(/could not create a device.*out of memory/);

    let destroyed = false;
    const lost = await checkWebGpu(
      nav(
        fakeAdapter({
          device: async () => ({
            lost: Promise.resolve({ reason: 'unknown', message: 'device reset' }),
            destroy() {
              destroyed = true;
            },
          }),
        }),
      ),
    );
    expect(lost).toMatchObject({ available: false, deviceOk: false });
    expect(lost.reason).toMatch(/device was lost.*device reset/);
    expect(destroyed).toBe(true);

    const unprobed = await checkWebGpu(
      nav(
        fakeAdapter({
          device: async () => {
            throw new Error('never called');
          },
        }),
      ),
      { probeDevice: false },
    );
    expect(unprobed.available).toBe(true);
    expect(unprobed.deviceOk).toBeUndefined();
  });
});
