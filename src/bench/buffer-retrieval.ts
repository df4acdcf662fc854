/**
 * Benchmarks of the buffer's retrieval path, as pure functions (Node or a browser page; `dreamgym bench
 * buffer` and its page, src/bench/page/, format the results):
 *
 * - `benchRetrieval`: exact top-k query latency of `RetrievalIndex` at growing sizes, for each
 *   kernel (js: the plain loop; wasm: WebAssembly SIMD scoring, where available), next to the
 *   memory-bandwidth bound measured in the same run — a scan (sum) of an array as large as the
 *   index's matrix, both as a plain JS Float32Array loop and with f32x4 in wasm memory. The bound,
 *   bytes / the faster scan's bandwidth, is the least time a scan of the f32 rows can take here;
 *   the ratio says how far each kernel is from it. The wasm kernel reads mostly its int8 sketch
 *   (a quarter of those bytes) and the f32 rows of the few candidates left, so its ratio can
 *   fall below 1.
 * - `benchEmbedder`: embeddings per second of any `Embedder` on synthetic WebShop-style
 *   transitions (`transitionText` of a search page, a results page or an item page).
 *
 * Vectors and texts come from the seeded Rng; timing uses performance.now() (benchmarks only).
 */
import { Rng } from '../core/rng';
import { transitionText, type Embedder } from '../core/buffer/embedders';
import { RetrievalIndex, type IndexEntry, type RetrievalKernel } from '../core/buffer/retrieval';
import { ScanMemory, scanKernelUnavailable } from '../core/buffer/simd/kernel';
import { TRANSITION_SOURCES, type TransitionSource } from '../core/buffer/types';

// =============================================================================================
// Retrieval
// =============================================================================================

export interface BenchRetrievalOptions {
  /** Index sizes, ascending (default [1000, 10000, 100000, 300000]). */
  sizes?: number[];
  /** Vector length (default 256). */
  dims?: number;
  /** Results per query (default 8). */
  k?: number;
  /** Timed queries per size and kernel (default 20; the median is reported). */
  queries?: number;
  /** Timed repetitions of each bandwidth scan per size (default 5; the fastest is used). */
  scans?: number;
  /** Kernels to time (default both; wasm is skipped where WebAssembly SIMD is unavailable). */
  kernels?: RetrievalKernel[];
  seed?: number;
}

/** One kernel's figures at one size. */
export interface RetrievalKernelBench {
  kernel: RetrievalKernel;
  /** Median / fastest query latency, ms (top-k over all rows, no filters). */
  medianMs: number;
  minMs: number;
  /** Median latency with filters (env, source, validOnly) and diversity on, ms. */
  filteredMedianMs: number;
  /** medianMs / boundMs (1 = a full scan of the f32 rows at memory speed; wasm can go below). */
  ratio: number;
  /** Rows added per second while growing the index to this size. */
  addRowsPerSecond: number;
}

/** One size: the bandwidth reference, each kernel timed, and the default kernel's figures (its `kernel` says which: wasm when timed, else js). */
export interface RetrievalBenchRow extends RetrievalKernelBench {
  size: number;
  /** Bytes of the rows scanned (size × dims × 4). */
  matrixBytes: number;
  /** Plain JS Float32Array scan (sum) speed in this run, GB/s (10⁹ bytes/s). */
  jsScanGBps: number;
  /** f32x4 wasm scan (sum) speed in this run, GB/s; undefined without WebAssembly SIMD. */
  wasmScanGBps?: number;
  /** The faster of the two scans, GB/s: the bandwidth reference. */
  scanGBps: number;
  /** matrixBytes / scanGBps: the least time a scan of the f32 rows can take, ms. */
  boundMs: number;
  /** The JS kernel (when timed). */
  js?: RetrievalKernelBench;
  /** The wasm SIMD kernel (when timed and available). */
  wasm?: RetrievalKernelBench;
}

export interface RetrievalBenchResult {
  dims: number;
  k: number;
  queries: number;
  /** Kernels timed (wasm only where WebAssembly SIMD is available). */
  kernels: RetrievalKernel[];
  /** Why the wasm kernel was not timed, when it was asked for but is unavailable. */
  wasmUnavailable?: string;
  rows: RetrievalBenchRow[];
}

/** Query latency of RetrievalIndex per kernel at each size, with the bandwidth bounds of the same run. */
export function benchRetrieval(options: BenchRetrievalOptions = {}): RetrievalBenchResult {
  const sizes = [...(options.sizes ?? [1000, 10000, 100000, 300000])].sort((a, b) => a - b);
  const dims = options.dims ?? 256;
  const k = options.k ?? 8;
  const queries = Math.max(1, options.queries ?? 20);
  const scans = Math.max(1, options.scans ?? 5);
  const rng = Rng.fromSeed(options.seed ?? 1, 'bench-retrieval');
  const largest = sizes[sizes.length - 1] ?? 0;
  const wanted = options.kernels ?? ['js', 'wasm'];
  const wasmUnavailable = wanted.includes('wasm') ? scanKernelUnavailable() : undefined;
  const kernels = (['js', 'wasm'] as const).filter(
    (kernel) => wanted.includes(kernel) && !(kernel === 'wasm' && wasmUnavailable),
  );

  // One source matrix for all sizes (rows are added incrementally); also the JS scan's array.
  const source = randomUnitRows(rng.split('rows'), largest, dims);
  const queryVectors = randomUnitRows(rng.split('queries'), queries, dims);
  const envs = ['webshop-lite-v0', 'household-v0'];
  const indexes = kernels.map((kernel) => new RetrievalIndex(dims, { kernel }));
  // The wasm scan's copy of the source, in a kernel instance's memory.
  const scanMemory = wasmUnavailable === undefined ? ScanMemory.create(largest * dims * 4) : null;
  if (scanMemory) new Float32Array(scanMemory.memory.buffer, 0, largest * dims).set(source);
  const results: RetrievalBenchRow[] = [];
  let added = 0;
  for (const size of sizes) {
    // --- grow the indexes to `size` ----------------------------------------------------------
    const batch: IndexEntry[] = [];
    for (let row = added; row < size; row++) {
      batch.push({
        id: `t${row}`,
        env: envs[row % envs.length],
        source: TRANSITION_SOURCES[row % 3],
        episodeId: `e${Math.floor(row / 8)}`,
        valid: row % 17 !== 0,
        embedding: source.subarray(row * dims, (row + 1) * dims),
      });
    }
    const addMs = indexes.map((index) => {
      const addStart = performance.now();
      index.add(batch);
      return performance.now() - addStart;
    });
    const addedNow = size - added;
    added = size;

    // --- queries: one warm-up each, then the kernels take turns on every query ---------------
    const query = (i: number): Float32Array => queryVectors.subarray(i * dims, (i + 1) * dims);
    const filterOptions = { env: envs[0], source: ['offline', 'real'] as TransitionSource[], diverse: true };
    const times = indexes.map(() => [] as number[]);
    const filtered = indexes.map(() => [] as number[]);
    for (const index of indexes) {
      index.search(query(0), k);
      index.search(query(0), k, filterOptions);
    }
    for (let i = 0; i < queries; i++) {
      indexes.forEach((index, j) => {
        const t0 = performance.now();
        index.search(query(i), k);
        times[j].push(performance.now() - t0);
      });
    }
    for (let i = 0; i < Math.min(queries, 10); i++) {
      indexes.forEach((index, j) => {
        const t0 = performance.now();
        index.search(query(i), k, filterOptions);
        filtered[j].push(performance.now() - t0);
      });
    }

    // --- the bandwidth references: sum every value of an array of the same size ---------------
    const scanned = source.subarray(0, size * dims);
    const fastest = (scan: () => number): number => {
      let sink = scan();
      let best = Infinity;
      for (let i = 0; i < scans; i++) {
        const t0 = performance.now();
        sink += scan();
        best = Math.min(best, performance.now() - t0);
      }
      if (Number.isNaN(sink)) throw new Error('benchRetrieval: scan produced NaN'); // keeps the sum alive
      return best;
    };
    const matrixBytes = size * dims * 4;
    const gbps = (ms: number): number => matrixBytes / (ms / 1000) / 1e9;
    const jsScanGBps = gbps(fastest(() => scanSum(scanned)));
    const wasmScanGBps = scanMemory ? gbps(fastest(() => scanMemory.kernels.sum(0, size * dims))) : undefined;
    const scanGBps = Math.max(jsScanGBps, wasmScanGBps ?? 0);
    const boundMs = (matrixBytes / (scanGBps * 1e9)) * 1000;

    const perKernel = indexes.map((index, j): RetrievalKernelBench => {
      const medianMs = median(times[j]);
      return {
        kernel: index.kernel,
        medianMs,
        minMs: Math.min(...times[j]),
        filteredMedianMs: median(filtered[j]),
        ratio: medianMs / boundMs,
        addRowsPerSecond: addMs[j] > 0 ? addedNow / (addMs[j] / 1000) : Infinity,
      };
    });
    const js = perKernel.find((r) => r.kernel === 'js');
    const wasm = perKernel.find((r) => r.kernel === 'wasm');
    const main = wasm ?? js;
    results.push({
      size,
      matrixBytes,
      jsScanGBps,
      wasmScanGBps,
      scanGBps,
      boundMs,
      js,
      wasm,
      kernel: main?.kernel ?? 'js',
      medianMs: main?.medianMs ?? NaN,
      minMs: main?.minMs ?? NaN,
      filteredMedianMs: main?.filteredMedianMs ?? NaN,
      ratio: main?.ratio ?? NaN,
      addRowsPerSecond: main?.addRowsPerSecond ?? NaN,
    });
  }
  return { dims, k, queries, kernels: indexes.map((index) => index.kernel), wasmUnavailable, rows: results };
}

/** `n` unit rows of uniform(−1, 1) values, flattened. */
function randomUnitRows(rng: Rng, n: number, dims: number): Float32Array {
  const out = new Float32Array(n * dims);
  for (let row = 0; row < n; row++) {
    const base = row * dims;
    let norm2 = 0;
    for (let d = 0; d < dims; d++) {
      const x = rng.next() * 2 - 1;
      out[base + d] = x;
      norm2 += x * x;
    }
    const inv = 1 / Math.sqrt(norm2);
    for (let d = 0; d < dims; d++) out[base + d] *= inv;
  }
  return out;
}

/** Sum of all values, four accumulators (the same loop shape as the JS kernel's dot product). */
function scanSum(values: Float32Array): number {
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0;
  const body = values.length & ~3;
  let i = 0;
  for (; i < body; i += 4) {
    s0 += values[i];
    s1 += values[i + 1];
    s2 += values[i + 2];
    s3 += values[i + 3];
  }
  for (; i < values.length; i++) s0 += values[i];
  return s0 + s1 + (s2 + s3);
}

function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// =============================================================================================
// Embedders
// =============================================================================================

export interface BenchEmbedderOptions {
  /** Texts per `embed` call (default 256). */
  batchSize?: number;
  seed?: number;
}

export interface EmbedderBenchResult {
  embedder: string;
  n: number;
  ms: number;
  embeddingsPerSecond: number;
  /** Mean characters of the embedded texts. */
  meanChars: number;
}

/** Embeddings per second of `embedder` on `n` synthetic WebShop transitions (after a warm-up). */
export async function benchEmbedder(
  embedder: Embedder,
  n: number,
  options: BenchEmbedderOptions = {},
): Promise<EmbedderBenchResult> {
  const batchSize = Math.max(1, options.batchSize ?? 256);
  const texts = syntheticTransitionTexts(n, options.seed ?? 1);
  await embedder.embed(syntheticTransitionTexts(Math.min(n, 64), (options.seed ?? 1) + 1));
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i += batchSize) await embedder.embed(texts.slice(i, i + batchSize));
  const ms = performance.now() - t0;
  const meanChars = texts.reduce((s, t) => s + t.length, 0) / Math.max(1, texts.length);
  return { embedder: embedder.id, n, ms, embeddingsPerSecond: ms > 0 ? n / (ms / 1000) : Infinity, meanChars };
}

const ADJECTIVES = (
  'red blue green black white grey navy wooden metal leather cotton linen velvet soft large small ' +
  'waterproof wireless portable organic gluten-free vegan easy-assemble mid-century pet-friendly slim heavy-duty'
).split(' ');
const NOUNS = (
  'sofa chair table lamp shirt shoes jacket phone case charger cable bottle shampoo lotion cream ' +
  'snack cakes coffee tea desk pillow kettle boots router headphones'
).split(' ');
const BRANDS = 'Mabry Everholt Stellan Lindell Nordhaven Caskett Alder Brookmere Larkspur Ashby'.split(' ');

/** WebShop-style transition texts: search, results and item pages with their actions. */
export function syntheticTransitionTexts(n: number, seed = 1): string[] {
  const rng = Rng.fromSeed(seed, 'bench-transitions');
  const asin = (): string =>
    'B0' + Array.from({ length: 8 }, () => '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'[rng.int(0, 35)]).join('');
  const title = (): string =>
    `${rng.pick(BRANDS)} ${Array.from({ length: rng.int(2, 6) }, () => rng.pick(ADJECTIVES)).join(' ')} ${rng.pick(NOUNS)}`;
  const price = (): string => `$${rng.int(5, 900)}.${String(rng.int(0, 99)).padStart(2, '0')}`;
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    const instruction = `i need ${rng.pick(ADJECTIVES)} ${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)} with color: ${rng.pick(ADJECTIVES)}, and price lower than ${rng.int(10, 900)}.00 dollars`;
    const page = rng.int(0, 9);
    let observation: string, action: string;
    if (page === 0) {
      observation = `WebShop [SEP] Instruction: [SEP] ${instruction} [SEP] Search`;
      action = `search[${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)}]`;
    } else if (page <= 6) {
      const items = Array.from({ length: 10 }, () => ({ id: asin(), title: title(), price: price() }));
      observation =
        `Instruction: [SEP] ${instruction} [SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > [SEP] ` +
        items.map((it) => `${it.id} [SEP] ${it.title} [SEP] ${it.price}`).join(' [SEP] ');
      action = `click[${rng.pick(items).id.toLowerCase()}]`;
    } else {
      const options = Array.from({ length: rng.int(2, 6) }, () => rng.pick(ADJECTIVES));
      observation =
        `Instruction: [SEP] ${instruction} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] ${options.join(' [SEP] ')} [SEP] ` +
        `${title()} [SEP] Price: ${price()} [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now`;
      action = rng.bool(0.3) ? 'click[buy now]' : `click[${rng.pick(options)}]`;
    }
    texts.push(transitionText({ instruction, observation, action }));
  }
  return texts;
}
