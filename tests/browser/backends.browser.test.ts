/**
 * The same loss on a fixed batch on every tfjs backend this browser has — cpu, wasm, webgl and
 * webgpu (SwiftShader here: correct but slow, so the batch is small).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import wasmUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url';
import wasmSimdUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url';
import wasmThreadedUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url';
import { initBackend, type BackendName } from '../../src/core/tfjs/backend';
import { CandidatePolicy } from '../../src/core/policy/policy';
import { syntheticStates } from '../../src/bench/policy';
import { reinforceLoss } from '../../src/core/rl/reinforce';

const wasmPaths = {
  'tfjs-backend-wasm.wasm': wasmUrl,
  'tfjs-backend-wasm-simd.wasm': wasmSimdUrl,
  'tfjs-backend-wasm-threaded-simd.wasm': wasmThreadedUrl,
};
const SMALL = {
  features: {
    buckets: 1 << 10,
    maxInstructionTokens: 32,
    obsHeadTokens: 8,
    obsTailTokens: 24,
    maxActionTokens: 8,
    maxTitleTokens: 12,
  },
  embeddingDim: 8,
  hidden: 16,
  valueHidden: 8,
  seed: 5,
};

async function lossOn(backend: BackendName): Promise<{ backend: string; loss: number; gradNorm: number } | null> {
  const info = await initBackend(backend, { wasmPaths }).catch((e) => {
    console.log(`${backend}: ${e.message}`);
    return null;
  });
  if (!info || info.backend !== backend) {
    console.log(`${backend} unavailable: ${info?.reason}`);
    return null;
  }
  const policy = new CandidatePolicy(SMALL);
  const states = syntheticStates(6, 5, 3);
  const enc = policy.encode(states);
  const actions = [0, 1, 2, 3, 4, 1];
  const advantages = tf.tensor1d([1, -0.5, 0.25, 2, -1, 0.75]);
  const { value, grads } = tf.variableGrads(
    () => reinforceLoss(policy.evaluate(enc, actions).logProbs, advantages),
    policy.policyVariables,
  );
  const loss = (await value.data())[0];
  // Read with data(), never dataSync(): on webgpu dataSync returns zeros.
  let squares = 0;
  for (const g of Object.values(grads)) squares += (await tf.tidy(() => g.square().sum()).data())[0];
  const gradNorm = Math.sqrt(squares);
  value.dispose();
  advantages.dispose();
  for (const g of Object.values(grads)) g.dispose();
  policy.dispose();
  return { backend, loss, gradNorm };
}

describe('tfjs backends in the browser', () => {
  it('give the same loss and gradient norm on a fixed batch (within 1e-4), webgpu included', async () => {
    const adapter = await (navigator as Navigator & { gpu?: GPU }).gpu?.requestAdapter();
    expect(adapter, 'WebGPU adapter (Chromium with --enable-unsafe-webgpu)').toBeTruthy();
    const results = [];
    for (const backend of ['cpu', 'wasm', 'webgl', 'webgpu'] as const) {
      const r = await lossOn(backend);
      if (r) results.push(r);
    }
    const names = results.map((r) => r.backend);
    expect(names).toContain('cpu');
    expect(names).toContain('wasm');
    expect(names).toContain('webgpu');
    const reference = results[0];
    for (const r of results) {
      expect(Math.abs(r.loss - reference.loss), `${r.backend} loss ${r.loss} vs cpu ${reference.loss}`).toBeLessThan(
        1e-4,
      );
      expect(
        Math.abs(r.gradNorm - reference.gradNorm) / Math.max(1, reference.gradNorm),
        `${r.backend} grad norm`,
      ).toBeLessThan(1e-3);
    }
    console.log(`backends tested: ${names.join(', ')}; loss ${reference.loss}`);
  });
});
