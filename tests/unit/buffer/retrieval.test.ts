import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng';
import {
  RetrievalIndex,
  RetrievalIndexError,
  type IndexEntry,
  type RetrievalKernel,
  type SearchOptions,
} from '../../../src/core/buffer/retrieval';
import { scanKernelUnavailable } from '../../../src/core/buffer/simd/kernel';
import { SCAN_WASM_SIZE } from '../../../src/core/buffer/simd/scan-wasm';
import { TRANSITION_SOURCES } from '../../../src/core/buffer/types';
import { transition } from '../support/transition';

const DIMS = 256;
/** Every suite below runs once per kernel: the wasm SIMD kernel must match the reference exactly, as the JS one does. */
const KERNELS: RetrievalKernel[] = ['js', 'wasm'];
const ENVS = ['webshop-lite-v0', 'household-v0', 'imported-v0'];

function unitVector(rng: Rng, dims = DIMS): Float32Array {
  const v = new Float32Array(dims);
  let n2 = 0;
  for (let d = 0; d < dims; d++) {
    v[d] = rng.normal();
    n2 += v[d] * v[d];
  }
  const inv = 1 / Math.sqrt(n2);
  for (let d = 0; d < dims; d++) v[d] *= inv;
  return v;
}

/** `v` scaled to unit length (a new array). */
function unit(v: Float32Array): Float32Array {
  let n2 = 0;
  for (let d = 0; d < v.length; d++) n2 += v[d] * v[d];
  return Float32Array.from(v, (x) => x / Math.sqrt(n2));
}

function randomEntries(rng: Rng, n: number, offset = 0): Entry[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `t${offset + i}`,
    env: ENVS[rng.int(0, ENVS.length - 1)],
    source: rng.pick(TRANSITION_SOURCES),
    episodeId: `e${Math.floor((offset + i) / 6)}`,
    valid: rng.bool(0.9),
    embedding: unitVector(rng),
  }));
}

type Entry = IndexEntry & { embedding: Float32Array };
type Ranked = { e: Entry; order: number; score: number }[];
const rankings = new WeakMap<readonly Entry[], WeakMap<Float32Array, { length: number; ranked: Ranked }>>();

/** Every entry scored against the query (double precision), by score desc then insertion order; memoised. */
function rank(entries: readonly Entry[], query: Float32Array): Ranked {
  let byQuery = rankings.get(entries);
  if (!byQuery) {
    byQuery = new WeakMap();
    rankings.set(entries, byQuery);
  }
  const cached = byQuery.get(query);
  if (cached && cached.length === entries.length) return cached.ranked;
  const dotWithQuery = (v: Float32Array): number => {
    let s = 0;
    for (let d = 0; d < v.length; d++) s += v[d] * query[d];
    return s;
  };
  const ranked = entries
    .map((e, order) => ({ e, order, score: dotWithQuery(e.embedding) }))
    .sort((a, b) => b.score - a.score || a.order - b.order);
  byQuery.set(query, { length: entries.length, ranked });
  return ranked;
}

/** The reference: the ranking, filtered, first k (one per episode when diverse). */
function bruteForce(
  entries: readonly Entry[],
  query: Float32Array,
  k: number,
  options: SearchOptions = {},
): { id: string; score: number }[] {
  const sources =
    options.source === undefined ? null : new Set(Array.isArray(options.source) ? options.source : [options.source]);
  const out: { id: string; score: number }[] = [];
  const episodes = new Set<string>();
  for (const { e, score } of rank(entries, query)) {
    if (out.length >= k) break;
    if ((options.validOnly ?? true) && !e.valid) continue;
    if (options.env !== undefined && e.env !== options.env) continue;
    if (sources !== null && !sources.has(e.source)) continue;
    if (options.excludeIds?.has(e.id)) continue;
    if (options.diverse) {
      if (episodes.has(e.episodeId)) continue;
      episodes.add(e.episodeId);
    }
    out.push({ id: e.id, score });
  }
  return out;
}

function expectSameHits(
  index: RetrievalIndex,
  entries: readonly Entry[],
  query: Float32Array,
  k: number,
  options?: SearchOptions,
): void {
  const hits = index.search(query, k, options);
  const reference = bruteForce(entries, query, k, options);
  expect(hits.map((h) => h.id)).toEqual(reference.map((r) => r.id));
  hits.forEach((h, i) => expect(h.score).toBeCloseTo(reference[i].score, 9));
}

for (const kernel of KERNELS)
  describe(`RetrievalIndex [${kernel}] against a brute-force reference (10,000 × 256)`, () => {
    const rng = Rng.fromSeed(7, 'retrieval-test');
    const entries = randomEntries(rng.split('rows'), 10_000);
    const queries = Array.from({ length: 6 }, () => unitVector(rng));
    // Small initial capacity: the adds below go through several doublings.
    const index = new RetrievalIndex(DIMS, { initialCapacity: 16, kernel });
    index.add(entries);

    it('holds every row', () => {
      expect(index.kernel).toBe(kernel);
      expect(index.size).toBe(10_000);
      expect(index.dims).toBe(DIMS);
      expect(index.matrixBytes).toBeGreaterThanOrEqual(10_000 * DIMS * 4);
    });

    for (const k of [1, 8, 32]) {
      it(`returns the exact top-${k} (ids and scores)`, () => {
        for (const q of queries) expectSameHits(index, entries, q, k);
        for (const q of queries.slice(0, 2)) expectSameHits(index, entries, q, k, { validOnly: false });
      });
    }

    it('applies env, source and validity filters', () => {
      const filters: SearchOptions[] = [
        { env: 'household-v0' },
        { source: 'dream' },
        { source: ['offline', 'real'] },
        { env: 'webshop-lite-v0', source: 'real', validOnly: false },
        { source: [] },
        { env: 'unknown-env' },
      ];
      for (const options of filters) for (const k of [1, 8, 32]) expectSameHits(index, entries, queries[0], k, options);
      for (const hit of index.search(queries[1], 32, { env: 'household-v0', source: 'dream' })) {
        const entry = entries[Number(hit.id.slice(1))];
        expect([entry.env, entry.source, entry.valid]).toEqual(['household-v0', 'dream', true]);
      }
    });

    it('keeps at most one result per episode when diverse', () => {
      for (const q of queries) {
        for (const k of [1, 8, 32]) {
          expectSameHits(index, entries, q, k, { diverse: true });
          expectSameHits(index, entries, q, k, { diverse: true, source: ['dream', 'real'], validOnly: false });
        }
        const episodes = index.search(q, 32, { diverse: true }).map((h) => entries[Number(h.id.slice(1))].episodeId);
        expect(new Set(episodes).size).toBe(episodes.length);
      }
      // Queries equal to stored rows: the whole neighbourhood of that episode competes.
      for (const row of [0, 17, 9_999])
        expectSameHits(index, entries, entries[row].embedding, 32, { diverse: true, validOnly: false });
    });

    it('excludes ids', () => {
      const top = index.search(queries[2], 8);
      const excludeIds = new Set([top[0].id, top[3].id, 'not-there']);
      expectSameHits(index, entries, queries[2], 8, { excludeIds });
      expect(index.search(queries[2], 8).map((h) => h.id)).toEqual(top.map((h) => h.id)); // no state left behind
    });
  });

for (const kernel of KERNELS)
  describe(`RetrievalIndex [${kernel}]: growth, removal and edge cases`, () => {
    it('matches the reference after incremental adds', () => {
      const rng = Rng.fromSeed(11, 'incremental');
      const index = new RetrievalIndex(DIMS, { initialCapacity: 1, kernel });
      const all: ReturnType<typeof randomEntries> = [];
      for (const [i, n] of [1, 2, 5, 100, 900, 3000].entries()) {
        const batch = randomEntries(rng, n, all.length);
        if (i % 2 === 0) index.add(batch);
        else for (const e of batch) index.add(e);
        all.push(...batch);
        const q = unitVector(rng);
        for (const k of [1, 8, 32]) {
          expectSameHits(index, all, q, k);
          expectSameHits(index, all, q, k, { diverse: true, env: 'webshop-lite-v0', validOnly: false });
        }
      }
      expect(index.size).toBe(all.length);
    });

    it('matches the reference after removes (tombstones and compaction)', () => {
      const rng = Rng.fromSeed(12, 'remove');
      let all = randomEntries(rng, 4000);
      const index = new RetrievalIndex(DIMS, { initialCapacity: 64, kernel });
      index.add(all);
      const queries = Array.from({ length: 3 }, () => unitVector(rng));
      // A few removals (tombstones only), then many (compaction), then adds after compaction.
      for (const share of [0.01, 0.2, 0.5]) {
        const doomed = new Set(all.filter(() => rng.bool(share)).map((e) => e.id));
        expect(index.remove([...doomed, 'never-added'])).toBe(doomed.size);
        all = all.filter((e) => !doomed.has(e.id));
        expect(index.size).toBe(all.length);
        for (const id of doomed) expect(index.has(id)).toBe(false);
        for (const q of queries)
          for (const k of [1, 8, 32]) {
            expectSameHits(index, all, q, k);
            expectSameHits(index, all, q, k, { diverse: true, source: 'offline' });
          }
      }
      index.compact();
      const more = randomEntries(rng, 500, 10_000);
      index.add(more);
      all = [...all, ...more];
      for (const q of queries) for (const k of [1, 8, 32]) expectSameHits(index, all, q, k, { validOnly: false });
      // Rows reported by search point at the vectors stored for their ids.
      for (const hit of index.search(queries[0], 8))
        expect(index.vectorOf(hit.id)).toEqual(all.find((e) => e.id === hit.id)!.embedding);
    });

    it('replaces an id in place, keeping its insertion order', () => {
      const rng = Rng.fromSeed(13, 'replace');
      const index = new RetrievalIndex(DIMS, { kernel });
      const v = unitVector(rng);
      index.add([
        { id: 'a', env: 'x', source: 'real', episodeId: 'e1', valid: true, embedding: unitVector(rng) },
        { id: 'b', env: 'x', source: 'real', episodeId: 'e2', valid: true, embedding: v },
      ]);
      expect(index.add({ id: 'a', env: 'x', source: 'dream', episodeId: 'e1', valid: true, embedding: v })).toBe(0);
      expect(index.size).toBe(2);
      const hits = index.search(v, 2);
      expect(hits.map((h) => h.id)).toEqual(['a', 'b']); // equal scores: earlier row first
      expect(hits[0].score).toBe(hits[1].score);
      expect(index.search(v, 2, { source: 'real' }).map((h) => h.id)).toEqual(['b']);
    });

    it('breaks ties by insertion order, also for diversity', () => {
      const rng = Rng.fromSeed(14, 'ties');
      const v = unitVector(rng);
      const index = new RetrievalIndex(DIMS, { kernel });
      const ids = ['p', 'q', 'r', 's', 't', 'u'];
      index.add(
        ids.map((id, i) => ({
          id,
          env: 'x',
          source: 'offline' as const,
          episodeId: `e${i % 3}`,
          valid: true,
          embedding: v,
        })),
      );
      expect(index.search(v, 4).map((h) => h.id)).toEqual(['p', 'q', 'r', 's']);
      expect(index.search(v, 6, { diverse: true }).map((h) => h.id)).toEqual(['p', 'q', 'r']);
    });

    it('handles an empty index, k ≤ 0 and k larger than the size', () => {
      const rng = Rng.fromSeed(15, 'edges');
      const index = new RetrievalIndex(DIMS, { kernel });
      const q = unitVector(rng);
      expect(index.size).toBe(0);
      expect(index.search(q, 8)).toEqual([]);
      const entries = randomEntries(rng, 5);
      index.add(entries);
      expect(index.search(q, 0)).toEqual([]);
      expect(index.search(q, -3)).toEqual([]);
      expectSameHits(index, entries, q, 50, { validOnly: false });
      expect(index.search(q, 50, { validOnly: false })).toHaveLength(5);
      index.clear();
      expect(index.size).toBe(0);
      expect(index.search(q, 8)).toEqual([]);
      expect(index.has('t0')).toBe(false);
      index.add(entries);
      expectSameHits(index, entries, q, 3);
    });

    it('normalises vectors that are not unit length (cosine, not dot product)', () => {
      const index = new RetrievalIndex(2, { kernel });
      index.add([
        { id: 'long', env: 'x', source: 'real', episodeId: 'e1', valid: true, embedding: Float32Array.from([10, 1]) },
        {
          id: 'aligned',
          env: 'x',
          source: 'real',
          episodeId: 'e2',
          valid: true,
          embedding: Float32Array.from([0.1, 0.1]),
        },
      ]);
      const hits = index.search(Float32Array.from([3, 3]), 2);
      expect(hits.map((h) => h.id)).toEqual(['aligned', 'long']);
      expect(hits[0].score).toBeCloseTo(1, 6);
      expect(index.vectorOf('long')![0]).toBeCloseTo(10 / Math.hypot(10, 1), 6);
    });

    it('accepts buffer transitions and refuses mismatched vectors with clear errors', () => {
      const rng = Rng.fromSeed(16, 'errors');
      const index = new RetrievalIndex(DIMS, { embedder: 'hashed-ngram-256', kernel });
      const stored = transition({ id: 'ep#0', embedding: unitVector(rng), embedder: 'hashed-ngram-256' });
      expect(index.add([stored])).toBe(1);
      const base = { id: 'x', env: 'e', source: 'real' as const, episodeId: 'e', valid: true };
      expect(() => index.add({ ...base, embedding: new Float32Array(384).fill(1) })).toThrow(
        /384-dim vector but the index holds 256-dim vectors \(embedder 'hashed-ngram-256'\)/,
      );
      expect(() => index.add({ ...base })).toThrow(/has no embedding; embed it first/);
      expect(() => index.add({ ...base, embedding: unitVector(rng), embedder: 'llm:other' })).toThrow(
        /embedded by 'llm:other'/,
      );
      expect(() => index.add({ ...base, embedding: new Float32Array(DIMS) })).toThrow(/zero vector/);
      expect(() => index.add({ ...base, embedding: unitVector(rng).fill(NaN) })).toThrow(/non-finite/);
      expect(() => index.add({ ...base, source: 'bogus' as 'real', embedding: unitVector(rng) })).toThrow(
        /unknown source/,
      );
      // A failing batch writes nothing.
      expect(() =>
        index.add([
          { ...base, embedding: unitVector(rng) },
          { ...base, id: 'y', embedding: new Float32Array(3) },
        ]),
      ).toThrow(RetrievalIndexError);
      expect(index.size).toBe(1);
      expect(() => index.search(new Float32Array(128), 8)).toThrow(
        /query has 128 dims but the index holds 256-dim vectors/,
      );
      expect(() => index.search(new Float32Array(DIMS), 8)).toThrow(/all zeros/);
      expect(() => new RetrievalIndex(0, { kernel })).toThrow(/dims must be a positive integer/);
    });

    it('handles dims that are not a multiple of 4 or 16 (padded rows)', () => {
      const rng = Rng.fromSeed(17, 'odd-dims');
      for (const dims of [1, 3, 5, 13, 17, 100]) {
        const entries = randomEntries(rng, 700).map((e) => ({ ...e, embedding: unitVector(rng, dims) }));
        const index = new RetrievalIndex(dims, { initialCapacity: 32, kernel });
        index.add(entries);
        for (let i = 0; i < 3; i++) {
          const q = unitVector(rng, dims);
          for (const k of [1, 8, 32]) {
            expectSameHits(index, entries, q, k);
            expectSameHits(index, entries, q, k, { diverse: true, validOnly: false });
          }
        }
        expect(index.vectorOf('t5')).toEqual(entries[5].embedding);
      }
    });

    it('is exact on near-duplicates, where scores differ in the 7th digit or less', () => {
      // Rows are tiny perturbations of a few base vectors, so many scores lie within the wasm
      // kernel's f32 slack and int8 bound of the k-th best: every such row must be scored exactly.
      const rng = Rng.fromSeed(18, 'near-duplicates');
      const bases = Array.from({ length: 4 }, () => unitVector(rng));
      const entries: Entry[] = randomEntries(rng, 6000).map((e, i) => {
        const base = bases[i % bases.length];
        const eps = [1e-2, 1e-4, 1e-6, 1e-7, 0][Math.floor(i / 4) % 5];
        const v = new Float32Array(DIMS);
        let n2 = 0;
        for (let d = 0; d < DIMS; d++) {
          v[d] = base[d] + eps * rng.normal();
          n2 += v[d] * v[d];
        }
        const inv = 1 / Math.sqrt(n2);
        for (let d = 0; d < DIMS; d++) v[d] *= inv;
        return { ...e, embedding: v };
      });
      const index = new RetrievalIndex(DIMS, { initialCapacity: 8, kernel });
      index.add(entries);
      const queries = [
        ...bases,
        ...bases.map((b) => unit(b.map((x) => x + 0.01 * rng.normal()))),
        entries[123].embedding,
      ];
      for (const q of queries) {
        for (const k of [1, 8, 32]) {
          expectSameHits(index, entries, q, k, { validOnly: false });
          expectSameHits(index, entries, q, k, { diverse: true });
          expectSameHits(index, entries, q, k, { env: 'household-v0', source: ['dream', 'offline'] });
        }
      }
    });

    it('is exact when every value rounds the same way in the int8 sketch (its error at the worst-case bound)', () => {
      // Rows whose values sit just below a half step of 1/127 of the row's largest value: each
      // rounds down, by almost half a step, so against a query positive in those dimensions the
      // sketch under-estimates every score by close to (step / 2) · |q|₁, the bound the wasm
      // kernel allows for. A smaller allowance would drop rows that belong in the top k.
      const rng = Rng.fromSeed(21, 'adversarial-sketch');
      const entries: Entry[] = randomEntries(rng, 4000).map((e) => {
        const w = new Float64Array(DIMS);
        w[0] = 1;
        for (let d = 1; d < DIMS; d++) w[d] = (rng.int(0, 30) + 0.5 - 1e-3) / 127;
        const norm = Math.hypot(...w);
        return { ...e, embedding: Float32Array.from(w, (x) => x / norm) };
      });
      const index = new RetrievalIndex(DIMS, { kernel });
      index.add(entries);
      for (const t of [0, 1, 4]) {
        const q = unit(Float32Array.from({ length: DIMS }, (_, d) => (d === 0 ? t : 1)));
        for (const k of [1, 8, 32]) {
          expectSameHits(index, entries, q, k, { validOnly: false });
          expectSameHits(index, entries, q, k, { diverse: true });
        }
      }
    });

    it('is exact on peaked vectors (one large value: a coarse int8 sketch) and on all-negative scores', () => {
      const rng = Rng.fromSeed(19, 'peaked');
      const entries: Entry[] = randomEntries(rng, 3000).map((e) => {
        const v = new Float32Array(DIMS);
        for (let d = 0; d < DIMS; d++) v[d] = 0.02 * rng.normal();
        v[rng.int(0, 7)] += rng.bool(0.5) ? 1 : -1;
        let n2 = 0;
        for (let d = 0; d < DIMS; d++) n2 += v[d] * v[d];
        for (let d = 0; d < DIMS; d++) v[d] /= Math.sqrt(n2);
        return { ...e, embedding: v };
      });
      const index = new RetrievalIndex(DIMS, { kernel });
      index.add(entries);
      // A query anti-aligned with every row: all scores are negative.
      const allNegative = new Float32Array(DIMS);
      for (const e of entries) for (let d = 0; d < DIMS; d++) allNegative[d] -= e.embedding[d] > 0 ? 1 : -1;
      const queries = [
        unitVector(rng),
        entries[7].embedding,
        Float32Array.from(entries[9].embedding, (x) => -x),
        unit(allNegative),
      ];
      for (const q of queries)
        for (const k of [1, 8, 32]) {
          expectSameHits(index, entries, q, k, { validOnly: false });
          expectSameHits(index, entries, q, k, { diverse: true, source: 'real' });
        }
    });
  });

describe('RetrievalIndex kernels', () => {
  it('uses wasm by default where WebAssembly SIMD is available (Node 20 has it), js on request', () => {
    expect(scanKernelUnavailable()).toBeUndefined();
    expect(SCAN_WASM_SIZE).toBeLessThan(4096); // Chromium's main thread compiles synchronously only below 4 KB
    expect(new RetrievalIndex(8).kernel).toBe('wasm');
    expect(new RetrievalIndex(8, { kernel: 'auto' }).kernel).toBe('wasm');
    expect(new RetrievalIndex(8, { kernel: 'wasm' }).kernel).toBe('wasm');
    expect(new RetrievalIndex(8, { kernel: 'js' }).kernel).toBe('js');
    expect(() => new RetrievalIndex(8, { kernel: 'gpu' as RetrievalKernel })).toThrow(
      /kernel must be 'auto', 'wasm' or 'js'/,
    );
  });

  it('give bit-for-bit equal results (ids, order, scores, rows), through growth, removal, compaction and clear', () => {
    const rng = Rng.fromSeed(20, 'kernels-agree');
    const indexes = KERNELS.map(
      (kernel) => new RetrievalIndex(DIMS, { initialCapacity: 2, kernel, compactRatio: 0.1 }),
    );
    const compare = (q: Float32Array, k: number, options?: SearchOptions): void => {
      const [js, wasm] = indexes.map((index) => index.search(q, k, options));
      expect(wasm).toEqual(js);
    };
    let all = randomEntries(rng, 5000);
    for (const index of indexes) index.add(all);
    for (let round = 0; round < 3; round++) {
      const q = unitVector(rng);
      for (const k of [1, 8, 100]) {
        compare(q, k);
        compare(q, k, { diverse: true, env: 'imported-v0', validOnly: false });
        compare(all[round * 7].embedding, k, { source: 'dream', excludeIds: new Set([all[round * 7].id]) });
      }
      const doomed = all.filter(() => rng.bool(0.15)).map((e) => e.id);
      for (const index of indexes) index.remove(doomed);
      const doomedSet = new Set(doomed);
      all = all.filter((e) => !doomedSet.has(e.id));
      const more = randomEntries(rng, 2000, 100_000 * (round + 1));
      for (const index of indexes) index.add(more);
      all.push(...more);
      expect(indexes.map((index) => index.size)).toEqual([all.length, all.length]);
    }
    expect(indexes[1].matrixBytes).toBe(indexes[0].matrixBytes);
    for (const index of indexes) index.clear();
    expect(indexes.map((index) => index.matrixBytes)).toEqual([2 * DIMS * 4, 2 * DIMS * 4]);
    const fresh = randomEntries(rng, 300);
    for (const index of indexes) index.add(fresh);
    compare(unitVector(rng), 8);
    expectSameHits(indexes[1], fresh, unitVector(rng), 8);
  });
});
