/** `benchRetrieval` (the buffer suite of `npm run bench`): its figures are consistent with each other. */
import { describe, expect, it } from 'vitest';
import { benchRetrieval } from '../../../src/bench/buffer-retrieval';

describe('benchRetrieval', () => {
  it('reports both kernels next to the bandwidth bound (the faster of the JS and wasm scans)', () => {
    const result = benchRetrieval({ sizes: [500, 2000], dims: 64, k: 8, queries: 3, scans: 2 });
    expect(result.kernels).toEqual(['js', 'wasm']);
    expect(result.rows.map((r) => r.size)).toEqual([500, 2000]);
    for (const row of result.rows) {
      expect(row.matrixBytes).toBe(row.size * 64 * 4);
      expect(row.jsScanGBps).toBeGreaterThan(0);
      expect(row.wasmScanGBps).toBeGreaterThan(0);
      expect(row.scanGBps).toBe(Math.max(row.jsScanGBps, row.wasmScanGBps!));
      expect(row.boundMs).toBeCloseTo((row.matrixBytes / (row.scanGBps * 1e9)) * 1000, 6);
      for (const kernel of [row.js!, row.wasm!]) {
        expect(kernel.medianMs).toBeGreaterThan(0);
        expect(kernel.filteredMedianMs).toBeGreaterThan(0);
        expect(kernel.ratio).toBeCloseTo(kernel.medianMs / row.boundMs, 6);
      }
      expect([row.js!.kernel, row.wasm!.kernel]).toEqual(['js', 'wasm']);
      // The top-level figures are the default (wasm) kernel's.
      expect(row.kernel).toBe('wasm');
      expect(row.medianMs).toBe(row.wasm!.medianMs);
      expect(row.ratio).toBeCloseTo(row.medianMs / row.boundMs, 6);
    }
    const jsOnly = benchRetrieval({ sizes: [300], dims: 16, queries: 2, scans: 1, kernels: ['js'] });
    expect(jsOnly.kernels).toEqual(['js']);
    expect(jsOnly.rows[0].wasm).toBeUndefined();
    expect(jsOnly.rows[0].kernel).toBe('js');
  });
});
