/** `benchPolicy` (the policy suite of `npm run bench`) on the wasm backend, at a size a test can afford. */
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../src/core/tfjs/backend';
import { benchPolicy } from '../../../src/bench/policy';
import { SMALL_POLICY } from '../policy/fixtures';

beforeAll(async () => {
  expect((await initBackend()).backend).toBe('wasm');
});

describe('benchPolicy', () => {
  it('reports throughput figures', async () => {
    const r = await benchPolicy({
      rows: 240,
      actionsPerState: 12,
      iterations: 1,
      policy: SMALL_POLICY,
      matmul: { m: 64, k: 128, n: 64 },
    });
    expect(r.backend).toBe('wasm');
    expect(r.states).toBe(20);
    for (const k of [
      'encodeRowsPerSecond',
      'forwardRowsPerSecond',
      'updateRowsPerSecond',
      'updateWithEncodeRowsPerSecond',
      'matmulGflops',
    ] as const) {
      expect(r[k]).toBeGreaterThan(0);
    }
  });
});
