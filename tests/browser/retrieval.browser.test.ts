/**
 * RetrievalIndex's WebAssembly SIMD kernel in real Chromium, on the main thread (where only
 * modules under 4 KB may be compiled synchronously): it must load, be chosen by default, and
 * return exactly what the JS kernel returns.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng';
import { RetrievalIndex, type IndexEntry, type SearchOptions } from '../../src/core/buffer/retrieval';
import { scanKernelUnavailable } from '../../src/core/buffer/simd/kernel';
import { SCAN_WASM_SIZE } from '../../src/core/buffer/simd/scan-wasm';
import { TRANSITION_SOURCES } from '../../src/core/buffer/types';

const DIMS = 256;

function unitVector(rng: Rng): Float32Array {
  const v = new Float32Array(DIMS);
  let n2 = 0;
  for (let d = 0; d < DIMS; d++) {
    v[d] = rng.normal();
    n2 += v[d] * v[d];
  }
  for (let d = 0; d < DIMS; d++) v[d] /= Math.sqrt(n2);
  return v;
}

describe('RetrievalIndex in Chromium', () => {
  it('uses the wasm SIMD kernel on the main thread and matches the JS kernel exactly (5,000 × 256)', () => {
    expect(typeof window).toBe('object'); // the main thread, not a worker
    expect(SCAN_WASM_SIZE).toBeLessThan(4096);
    expect(scanKernelUnavailable()).toBeUndefined();

    const rng = Rng.fromSeed(3, 'browser-retrieval');
    const entries: IndexEntry[] = Array.from({ length: 5000 }, (_, i) => ({
      id: `t${i}`,
      env: i % 3 === 0 ? 'household-v0' : 'webshop-lite-v0',
      source: TRANSITION_SOURCES[i % 3],
      episodeId: `e${Math.floor(i / 6)}`,
      valid: i % 11 !== 0,
      embedding: unitVector(rng),
    }));
    const auto = new RetrievalIndex(DIMS, { initialCapacity: 64 });
    const wasm = new RetrievalIndex(DIMS, { initialCapacity: 64, kernel: 'wasm' });
    const js = new RetrievalIndex(DIMS, { initialCapacity: 64, kernel: 'js' });
    for (const index of [auto, wasm, js]) index.add(entries);
    expect([auto.kernel, wasm.kernel, js.kernel]).toEqual(['wasm', 'wasm', 'js']);

    const options: SearchOptions[] = [
      {},
      { validOnly: false },
      { diverse: true },
      { env: 'household-v0', source: ['dream', 'real'] },
      { excludeIds: new Set(['t1', 't2', 't3']), diverse: true },
    ];
    const queries = [...Array.from({ length: 6 }, () => unitVector(rng)), entries[42].embedding!];
    let compared = 0;
    for (const q of queries)
      for (const k of [1, 8, 32])
        for (const o of options) {
          const expected = js.search(q, k, o);
          expect(wasm.search(q, k, o)).toEqual(expected);
          expect(auto.search(q, k, o)).toEqual(expected);
          compared++;
        }
    // After removals (compaction) and more adds (growth), still equal.
    const doomed = entries.filter((_, i) => i % 4 === 1).map((e) => e.id);
    for (const index of [wasm, js]) {
      index.remove(doomed);
      index.add(entries.slice(0, 50).map((e) => ({ ...e, id: `again-${e.id}` })));
    }
    for (const q of queries) expect(wasm.search(q, 8, { diverse: true })).toEqual(js.search(q, 8, { diverse: true }));

    const time = (index: RetrievalIndex): number => {
      const t0 = performance.now();
      for (const q of queries) index.search(q, 8);
      return (performance.now() - t0) / queries.length;
    };
    time(wasm);
    time(js);
    console.log(
      `retrieval in Chromium: kernel ${auto.kernel} (${SCAN_WASM_SIZE}-byte module), ${compared} searches equal to the js kernel; ` +
        `top-8 over ${wasm.size} rows: wasm ${time(wasm).toFixed(2)} ms, js ${time(js).toFixed(2)} ms`,
    );
  });
});
