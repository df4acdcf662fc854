/**
 * Exact top-k cosine retrieval over the replay buffer (paper §3: {d_j} = Top_k cos(φ(s_t, a_t),
 * φ(s_i, a_i))). A buffer of 10⁴–10⁵ transitions is small enough that an exact scan beats any
 * approximate index on both simplicity and recall: one contiguous Float32Array holds the
 * L2-normalised rows, so a query is one pass of dot products at close to memory speed
 * (src/bench/buffer-retrieval.ts), with a bounded min-heap keeping the best k.
 *
 * Layout: `matrix[row * stride + d]`, `stride` = dims rounded up to a multiple of 4 (zero
 * padding); per-row metadata in typed arrays (env code, episode code, flags = alive | valid |
 * source bit); ids in a plain array. Capacity doubles as rows are added; `add` never rebuilds.
 * `remove` leaves tombstones and compacts (in place, keeping row order) once they exceed a
 * quarter of the rows. Row numbers in results are valid until the next add/remove/compact. Env
 * and episode ids are interned to integer codes, never recycled before `clear()` (4 bytes of
 * search scratch per episode ever added).
 *
 * Kernels. The JS scan is compute-bound (scalar multiply-adds). The default 'wasm' kernel keeps
 * the matrix in the memory of a small WebAssembly SIMD module (simd/scan.wat), together with an
 * int8 sketch of every row (its values rounded to 127 steps of the row's largest |value|: a
 * quarter of the bytes, +25% memory). A query runs a block of rows at a time:
 *   1. JS lists the rows that pass the filters;
 *   2. wasm scores their sketch rows against an int16 copy of the query (exact integer dot
 *      products, i32x4.dot_i16x8_s); with the rounding errors of both sides bounded per row,
 *      a row whose upper bound is below the heap's worst cannot enter the top k and is dropped;
 *   3. wasm scores the survivors' f32 rows (f32x4 multiply-adds, within `slack` of the exact
 *      score), dropping again;
 *   4. JS scores what is left exactly as the JS kernel does (double precision) and offers it
 *      to the heap.
 * A row is only ever dropped when its exact score is below the heap's worst, where the JS kernel
 * drops it too, so results (ids, order and scores) are bit for bit the JS kernel's; most rows
 * cost a quarter of their f32 bytes. The memory grows in place as capacity doubles (the sketch,
 * after the matrix, moves up). Without WebAssembly SIMD (or with `kernel: 'js'`) the matrix is a
 * plain Float32Array and the JS loop scores every row.
 */
import { MAX_WASM_MEMORY_BYTES, ScanMemory, scanKernelUnavailable, type ScanExports } from './simd/kernel';
import type { TransitionSource } from './types';
import { DreamGymError } from '../errors';

/** What the index needs of a transition; a `BufferTransition` with an embedding fits as is. */
export interface IndexEntry {
  id: string;
  env: string;
  source: TransitionSource;
  episodeId: string;
  valid: boolean;
  /** L2-normalised (normalised here otherwise); required. */
  embedding?: Float32Array;
  /** Id of the embedder that made `embedding`; checked against the index's when both are set. */
  embedder?: string;
}

export interface SearchOptions {
  env?: string;
  source?: TransitionSource | TransitionSource[];
  /** Only valid transitions (default true: invalid dreamed steps are never shown as examples). */
  validOnly?: boolean;
  /** At most one result per episode (its best-scoring row): k examples from k episodes. */
  diverse?: boolean;
  /** Ids never returned (e.g. the query's own transition). */
  excludeIds?: ReadonlySet<string>;
}

export interface SearchHit {
  id: string;
  /** Cosine similarity (dot product of unit vectors). */
  score: number;
  /** Row in the matrix (valid until the next add/remove/compact). */
  row: number;
}

export interface RetrievalIndexOptions {
  /** Embedder id of every vector (entries naming another embedder are refused). */
  embedder?: string;
  /** Rows allocated up front (default 1024); capacity doubles beyond. */
  initialCapacity?: number;
  /** Compact when tombstones exceed this share of the rows (default 0.25). */
  compactRatio?: number;
  /**
   * Scoring kernel: 'wasm' (WebAssembly SIMD; an error where unavailable), 'js' (the plain
   * loop) or 'auto' (default: wasm where WebAssembly SIMD validates and compiles, else js).
   */
  kernel?: RetrievalKernel | 'auto';
}

export type RetrievalKernel = 'wasm' | 'js';

/** Raised for a vector of the wrong length, a different embedder, or an unusable vector. */
export class RetrievalIndexError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'retrieval-index-invalid',
      fix: 'Build the index with the embedder and dimensions of the vectors it holds.',
    });
    this.name = 'RetrievalIndexError';
  }
}

const FLAG_ALIVE = 1;
const FLAG_VALID = 2;
const SOURCE_SHIFT = 2; // source bits: offline 4, real 8, dream 16
const SOURCE_BIT: Record<TransitionSource, number> = {
  offline: 1 << SOURCE_SHIFT,
  real: 2 << SOURCE_SHIFT,
  dream: 4 << SOURCE_SHIFT,
};
const ALL_SOURCES = SOURCE_BIT.offline | SOURCE_BIT.real | SOURCE_BIT.dream;

/** Rows listed and scored per wasm call (16 KB of row numbers and 16 KB of scores: they stay in cache). */
const SCORE_BLOCK = 4096;
/** Rows per block while the heap is not full yet (nothing can be dropped before it is). */
const FIRST_BLOCK = 256;
/** Sketch values: round(x / scale), scale = max |x| of the row / SKETCH_MAX. */
const SKETCH_MAX = 127;

/**
 * The wasm kernel's memory, in 64-byte aligned regions: [query: stride f32] [query16: stride8
 * i16] [scores: SCORE_BLOCK f32 or i32] [list: SCORE_BLOCK i32 row numbers] [matrix: capacity ×
 * stride f32] [sketch: capacity × stride8 i8]. The sketch moves up when the matrix grows.
 */
interface WasmStore {
  memory: ScanMemory;
  kernels: ScanExports;
  queryPtr: number;
  query16Ptr: number;
  scoresPtr: number;
  listPtr: number;
  matrixPtr: number;
  sketchPtr: number;
  query16: Int16Array;
  scores: Float32Array;
  intScores: Int32Array;
  list: Int32Array;
  sketch: Int8Array;
}

export class RetrievalIndex {
  readonly dims: number;
  readonly embedder: string | undefined;
  private readonly initialCapacity: number;
  private readonly compactRatio: number;
  /** Floats per row in the matrix: dims rounded up to a multiple of 4 (zero padding). */
  private readonly stride: number;
  /** Bytes per sketch row: dims rounded up to a multiple of 16 (zero padding). */
  private readonly stride8: number;
  /** Bound on |f32 SIMD score − double score| for unit vectors (the wasm pruning slack). */
  private readonly slack: number;
  /** Largest |value| of the int16 query: 127 · qMax · stride8 < 2³¹ (no i32 overflow). */
  private readonly qMax: number;
  /** Sketch scale of each row (wasm kernel only). */
  private rowScale = new Float64Array(0);
  /** The wasm kernel's memory and views; null with the JS kernel. */
  private wasm: WasmStore | null = null;
  /** `kernel: 'wasm'`: never fall back to JS. */
  private readonly forcedWasm: boolean;

  private capacity = 0;
  /** Rows in use, tombstones included. */
  private rows = 0;
  private tombstones = 0;
  private matrix = new Float32Array(0);
  private flags = new Uint8Array(0);
  private envCodes = new Int32Array(0);
  private episodeCodes = new Int32Array(0);
  private ids: string[] = [];
  private readonly rowOfId = new Map<string, number>();
  private readonly envCodeOf = new Map<string, number>();
  private readonly episodeCodeOf = new Map<string, number>();

  // Search scratch (reused; grown on demand).
  private query = new Float32Array(0);
  private heapScore = new Float64Array(0);
  private heapRow = new Int32Array(0);
  /** Heap slot of each episode code during a diverse search (−1 = not in the heap). */
  private episodeSlot = new Int32Array(0);
  private excluded = new Uint8Array(0);

  constructor(dims: number, options: RetrievalIndexOptions = {}) {
    if (!Number.isInteger(dims) || dims < 1)
      throw new RetrievalIndexError(`RetrievalIndex: dims must be a positive integer, got ${dims}.`);
    this.dims = dims;
    this.embedder = options.embedder;
    this.initialCapacity = Math.max(1, Math.floor(options.initialCapacity ?? 1024));
    this.compactRatio = options.compactRatio ?? 0.25;
    this.stride = (dims + 3) & ~3;
    // Each product and each addition of the f32 dot product rounds once (relative 2⁻²⁴); a term
    // goes through at most stride / 4 + 3 of them, and Σ|m_d q_d| ≤ |m| |q| ≈ 1. Sixteen times
    // that (still only 6.5e-5 at 256 dims: few rows fall within it of the k-th best).
    this.slack = (this.stride + 16) * 2 ** -22;
    this.stride8 = (dims + 15) & ~15;
    this.qMax = Math.min(32767, Math.floor((2 ** 31 - 1) / (SKETCH_MAX * this.stride8)));
    const kernel = options.kernel ?? 'auto';
    if (kernel !== 'auto' && kernel !== 'wasm' && kernel !== 'js') {
      throw new RetrievalIndexError(`RetrievalIndex: kernel must be 'auto', 'wasm' or 'js', got '${String(kernel)}'.`);
    }
    if (kernel !== 'js') {
      this.wasm = this.createWasmStore(this.initialCapacity);
      if (this.wasm === null && kernel === 'wasm') {
        throw new RetrievalIndexError(
          `RetrievalIndex: the 'wasm' kernel is unavailable here: ${scanKernelUnavailable() ?? 'its memory could not be allocated'}; use kernel 'auto' or 'js'.`,
        );
      }
    }
    this.forcedWasm = kernel === 'wasm';
    this.allocate(this.initialCapacity);
  }

  /** The kernel scoring searches: 'wasm' (SIMD) or 'js'. */
  get kernel(): RetrievalKernel {
    return this.wasm === null ? 'js' : 'wasm';
  }

  /** Live rows (tombstones excluded). */
  get size(): number {
    return this.rows - this.tombstones;
  }

  /** Bytes held by the matrix (capacity, not just the rows in use). */
  get matrixBytes(): number {
    return this.matrix.byteLength;
  }

  has(id: string): boolean {
    return this.rowOfId.has(id);
  }

  /**
   * A read-only view of an entry's stored (normalised) vector, or undefined. Valid until the
   * next add/remove/compact/clear (with the wasm kernel a growing add detaches it: copy it to keep it).
   */
  vectorOf(id: string): Float32Array | undefined {
    const row = this.rowOfId.get(id);
    if (row === undefined) return undefined;
    const base = row * this.stride;
    return this.matrix.subarray(base, base + this.dims);
  }

  // =============================================================================================
  // add / remove
  // =============================================================================================

  /**
   * Adds entries; an id already present is replaced in place (keeping its row, so its
   * insertion order). Returns how many ids were new. Checks every entry before writing any.
   */
  add(entries: IndexEntry | readonly IndexEntry[]): number {
    const list: readonly IndexEntry[] = Array.isArray(entries) ? entries : [entries as IndexEntry];
    for (const entry of list) this.check(entry);
    let added = 0;
    for (const entry of list) {
      let row = this.rowOfId.get(entry.id);
      if (row === undefined) {
        if (this.rows === this.capacity) this.allocate(this.capacity * 2);
        row = this.rows++;
        this.ids[row] = entry.id;
        this.rowOfId.set(entry.id, row);
        added++;
      }
      this.writeRow(row, entry);
    }
    return added;
  }

  /** Removes ids (unknown ids are ignored); returns how many were removed. */
  remove(ids: Iterable<string>): number {
    let removed = 0;
    for (const id of ids) {
      const row = this.rowOfId.get(id);
      if (row === undefined) continue;
      this.rowOfId.delete(id);
      this.flags[row] = 0;
      this.tombstones++;
      removed++;
    }
    if (this.tombstones > 0 && this.tombstones > this.compactRatio * this.rows) this.compact();
    return removed;
  }

  /** Drops tombstones: live rows move down in order (no reallocation). */
  compact(): void {
    if (this.tombstones === 0) return;
    const stride = this.stride;
    let write = 0;
    for (let read = 0; read < this.rows; read++) {
      if ((this.flags[read] & FLAG_ALIVE) === 0) continue;
      if (write !== read) {
        this.matrix.copyWithin(write * stride, read * stride, (read + 1) * stride);
        if (this.wasm !== null) {
          const stride8 = this.stride8;
          this.wasm.sketch.copyWithin(write * stride8, read * stride8, (read + 1) * stride8);
          this.rowScale[write] = this.rowScale[read];
        }
        this.flags[write] = this.flags[read];
        this.envCodes[write] = this.envCodes[read];
        this.episodeCodes[write] = this.episodeCodes[read];
        this.ids[write] = this.ids[read];
        this.rowOfId.set(this.ids[write], write);
      }
      write++;
    }
    this.flags.fill(0, write, this.rows);
    this.ids.length = write;
    this.rows = write;
    this.tombstones = 0;
  }

  /** Removes everything and returns to the initial capacity. */
  clear(): void {
    this.rows = 0;
    this.tombstones = 0;
    this.ids = [];
    this.rowOfId.clear();
    this.envCodeOf.clear();
    this.episodeCodeOf.clear();
    this.capacity = 0;
    this.matrix = new Float32Array(0);
    // A fresh wasm memory (memories never shrink): back to the initial capacity.
    if (this.wasm !== null) {
      this.wasm = this.createWasmStore(this.initialCapacity);
      if (this.wasm === null) {
        this.failWasm(this.initialCapacity);
        this.query = new Float32Array(this.dims);
      }
    }
    this.allocate(this.initialCapacity);
    this.episodeSlot = new Int32Array(0);
  }

  private check(entry: IndexEntry): void {
    const v = entry.embedding;
    if (!(v instanceof Float32Array)) {
      throw new RetrievalIndexError(
        `RetrievalIndex: transition '${entry.id}' has no embedding; embed it first (Embedder.embed(transitionText(t))).`,
      );
    }
    if (v.length !== this.dims) {
      throw new RetrievalIndexError(
        `RetrievalIndex: transition '${entry.id}' has a ${v.length}-dim vector but the index holds ${this.dims}-dim vectors` +
          `${this.embedder ? ` (embedder '${this.embedder}')` : ''}. Vectors of different embedders never mix: re-embed with one embedder or use a separate index.`,
      );
    }
    if (this.embedder !== undefined && entry.embedder !== undefined && entry.embedder !== this.embedder) {
      throw new RetrievalIndexError(
        `RetrievalIndex: transition '${entry.id}' was embedded by '${entry.embedder}' but this index holds '${this.embedder}' vectors; ` +
          "re-embed it with the index's embedder or use a separate index.",
      );
    }
    if (!(entry.source in SOURCE_BIT)) {
      throw new RetrievalIndexError(
        `RetrievalIndex: transition '${entry.id}' has unknown source '${String(entry.source)}' (expected offline, real or dream).`,
      );
    }
    const norm = vectorNorm(v);
    if (!Number.isFinite(norm) || norm === 0) {
      throw new RetrievalIndexError(
        `RetrievalIndex: transition '${entry.id}' has a ${norm === 0 ? 'zero' : 'non-finite'} vector; re-embed it.`,
      );
    }
  }

  private writeRow(row: number, entry: IndexEntry): void {
    const dims = this.dims;
    const v = entry.embedding as Float32Array;
    const norm = vectorNorm(v);
    const matrix = this.matrix;
    const base = row * this.stride;
    // Unit vectors (every Embedder's output) are stored bit for bit; others are normalised.
    if (Math.abs(norm - 1) <= 1e-5) matrix.set(v, base);
    else for (let d = 0; d < dims; d++) matrix[base + d] = v[d] / norm;
    matrix.fill(0, base + dims, base + this.stride);
    if (this.wasm !== null) {
      // The int8 sketch: round(x / scale) with scale = max |x| / 127 (|x − scale · c| ≤ scale / 2).
      // (x · (1 / scale) instead of x / scale moves x/scale by 2⁻⁵² relative: the search's bound allows for it.)
      let maxAbs = 0;
      for (let d = 0; d < dims; d++) {
        const a = Math.abs(matrix[base + d]);
        if (a > maxAbs) maxAbs = a;
      }
      const scale = maxAbs / SKETCH_MAX,
        inverse = SKETCH_MAX / maxAbs;
      const sketch = this.wasm.sketch,
        base8 = row * this.stride8;
      for (let d = 0; d < dims; d++) {
        const c = Math.round(matrix[base + d] * inverse);
        sketch[base8 + d] = c > SKETCH_MAX ? SKETCH_MAX : c < -SKETCH_MAX ? -SKETCH_MAX : c;
      }
      sketch.fill(0, base8 + dims, base8 + this.stride8);
      this.rowScale[row] = scale;
    }
    this.flags[row] = FLAG_ALIVE | (entry.valid ? FLAG_VALID : 0) | SOURCE_BIT[entry.source];
    this.envCodes[row] = intern(this.envCodeOf, entry.env);
    this.episodeCodes[row] = intern(this.episodeCodeOf, entry.episodeId);
  }

  private allocate(capacity: number): void {
    const grow = <T extends Float32Array | Float64Array | Uint8Array | Int32Array>(
      old: T,
      make: (n: number) => T,
      width: number,
    ): T => {
      const next = make(capacity * width);
      next.set(old.subarray(0, this.rows * width));
      return next;
    };
    const wasm = this.wasm;
    const sketchPtr = wasm === null ? 0 : wasm.matrixPtr + capacity * this.stride * 4;
    if (wasm !== null && wasm.memory.ensure(sketchPtr + capacity * this.stride8)) {
      // Grown in place: the matrix rows stay where they are; the sketch moves up past them.
      if (sketchPtr !== wasm.sketchPtr && this.rows > 0) {
        new Uint8Array(wasm.memory.memory.buffer).copyWithin(
          sketchPtr,
          wasm.sketchPtr,
          wasm.sketchPtr + this.rows * this.stride8,
        );
      }
      wasm.sketchPtr = sketchPtr;
      this.setWasmViews(wasm, capacity);
      this.rowScale = grow(this.rowScale, (n) => new Float64Array(n), 1);
    } else {
      if (wasm !== null) {
        // The memory cannot grow (4 GiB of wasm32, or the engine refused): move to the JS kernel.
        this.failWasm(capacity);
        this.wasm = null;
        this.query = new Float32Array(this.dims);
        this.rowScale = new Float64Array(0);
      } else if (this.query.length !== this.dims) {
        this.query = new Float32Array(this.dims);
      }
      this.matrix = grow(this.matrix, (n) => new Float32Array(n), this.stride);
    }
    this.flags = grow(this.flags, (n) => new Uint8Array(n), 1);
    this.envCodes = grow(this.envCodes, (n) => new Int32Array(n), 1);
    this.episodeCodes = grow(this.episodeCodes, (n) => new Int32Array(n), 1);
    this.capacity = capacity;
  }

  /** A wasm memory laid out for `capacity` rows, or null where the kernel is unavailable. */
  private createWasmStore(capacity: number): WasmStore | null {
    const queryPtr = 0;
    const query16Ptr = align64(queryPtr + this.stride * 4);
    const scoresPtr = align64(query16Ptr + this.stride8 * 2);
    const listPtr = align64(scoresPtr + SCORE_BLOCK * 4);
    const matrixPtr = align64(listPtr + SCORE_BLOCK * 4);
    const bytes = matrixPtr + capacity * (this.stride * 4 + this.stride8);
    if (bytes > MAX_WASM_MEMORY_BYTES) return null;
    const memory = ScanMemory.create(bytes);
    if (memory === null) return null;
    const none = new Int32Array(0);
    return {
      memory,
      kernels: memory.kernels,
      queryPtr,
      query16Ptr,
      scoresPtr,
      listPtr,
      matrixPtr,
      sketchPtr: matrixPtr,
      query16: new Int16Array(0),
      scores: new Float32Array(0),
      intScores: none,
      list: none,
      sketch: new Int8Array(0),
    };
  }

  private setWasmViews(wasm: WasmStore, capacity: number): void {
    const buffer = wasm.memory.memory.buffer;
    this.matrix = new Float32Array(buffer, wasm.matrixPtr, capacity * this.stride);
    this.query = new Float32Array(buffer, wasm.queryPtr, this.dims);
    wasm.query16 = new Int16Array(buffer, wasm.query16Ptr, this.dims);
    wasm.scores = new Float32Array(buffer, wasm.scoresPtr, SCORE_BLOCK);
    wasm.intScores = new Int32Array(buffer, wasm.scoresPtr, SCORE_BLOCK);
    wasm.list = new Int32Array(buffer, wasm.listPtr, SCORE_BLOCK);
    wasm.sketch = new Int8Array(buffer, wasm.sketchPtr, capacity * this.stride8);
  }

  /** With `kernel: 'wasm'`, losing the wasm memory is an error; with 'auto' the JS kernel takes over. */
  private failWasm(capacity: number): void {
    if (this.forcedWasm) {
      throw new RetrievalIndexError(
        `RetrievalIndex: the wasm kernel's memory cannot hold ${capacity} rows of ${this.dims} dims ` +
          `(wasm32 allows 4 GiB and the engine may refuse less); use kernel 'auto' or 'js' for an index this large.`,
      );
    }
  }

  // =============================================================================================
  // search
  // =============================================================================================

  /**
   * The k rows most similar to `query` (cosine) that pass the filters, best first; equal
   * scores keep insertion order. Fewer than k when fewer rows qualify.
   */
  search(query: Float32Array, k: number, options: SearchOptions = {}): SearchHit[] {
    const dims = this.dims;
    if (!(query instanceof Float32Array) || query.length !== dims) {
      throw new RetrievalIndexError(
        `RetrievalIndex.search: the query has ${query?.length ?? 'no'} dims but the index holds ${dims}-dim vectors` +
          `${this.embedder ? ` (embedder '${this.embedder}')` : ''}; embed the query with the same embedder as the index.`,
      );
    }
    const norm = vectorNorm(query);
    if (!Number.isFinite(norm) || norm === 0) {
      throw new RetrievalIndexError(
        `RetrievalIndex.search: the query vector is ${norm === 0 ? 'all zeros' : 'not finite'}; embed a non-empty text.`,
      );
    }
    k = Math.min(Math.floor(k), this.size);
    if (!(k > 0)) return [];

    // --- filters as flag masks -------------------------------------------------------------
    let envCode = -1;
    if (options.env !== undefined) {
      const code = this.envCodeOf.get(options.env);
      if (code === undefined) return [];
      envCode = code;
    }
    let sourceMask = ALL_SOURCES;
    if (options.source !== undefined) {
      sourceMask = 0;
      for (const s of Array.isArray(options.source) ? options.source : [options.source])
        sourceMask |= SOURCE_BIT[s] ?? 0;
      if (sourceMask === 0) return [];
    }
    const required = FLAG_ALIVE | ((options.validOnly ?? true) ? FLAG_VALID : 0);
    const diverse = options.diverse === true;

    // --- scratch -----------------------------------------------------------------------------
    const q = this.query;
    if (Math.abs(norm - 1) <= 1e-5) q.set(query);
    else for (let d = 0; d < dims; d++) q[d] = query[d] / norm;
    if (this.heapScore.length < k) {
      this.heapScore = new Float64Array(k);
      this.heapRow = new Int32Array(k);
    }
    if (diverse && this.episodeSlot.length < this.episodeCodeOf.size) {
      this.episodeSlot = new Int32Array(Math.max(this.episodeCodeOf.size, 2 * this.episodeSlot.length)).fill(-1);
    }
    const excludedRows: number[] = [];
    if (options.excludeIds && options.excludeIds.size > 0) {
      if (this.excluded.length < this.capacity) this.excluded = new Uint8Array(this.capacity);
      for (const id of options.excludeIds) {
        const row = this.rowOfId.get(id);
        if (row !== undefined) {
          this.excluded[row] = 1;
          excludedRows.push(row);
        }
      }
    }
    const hasExclusions = excludedRows.length > 0;

    // --- scan ------------------------------------------------------------------------------
    const flags = this.flags,
      envCodes = this.envCodes,
      episodeCodes = this.episodeCodes;
    const heapScore = this.heapScore,
      heapRow = this.heapRow,
      episodeSlot = this.episodeSlot,
      excluded = this.excluded;
    const rows = this.rows;
    let heapSize = 0;
    try {
      const wasm = this.wasm;
      if (wasm === null) {
        // JS kernel: every row that passes the filters is scored here.
        const matrix = this.matrix,
          stride = this.stride;
        for (let row = 0, base = 0; row < rows; row++, base += stride) {
          const flag = flags[row];
          if ((flag & required) !== required || (flag & sourceMask) === 0) continue;
          if (envCode >= 0 && envCodes[row] !== envCode) continue;
          if (hasExclusions && excluded[row] === 1) continue;
          const score = dot(matrix, base, q, dims);
          // Rows arrive in order, so a candidate equal to the heap's worst is later, hence worse.
          if (heapSize === k && score <= heapScore[0]) continue;
          heapSize = this.offer(row, score, heapSize, k, diverse);
        }
      } else {
        heapSize = this.scanWasm(wasm, k, diverse, required, sourceMask, envCode, hasExclusions);
      }
    } finally {
      for (const row of excludedRows) excluded[row] = 0;
      // Every slot is −1 between searches; clearing all k (not just heapSize, which an exception
      // in scanWasm would leave at 0) also covers stale entries, harmlessly.
      if (diverse) for (let i = 0; i < k; i++) episodeSlot[episodeCodes[heapRow[i]]] = -1;
    }

    const hits: SearchHit[] = [];
    for (let i = 0; i < heapSize; i++) hits.push({ id: this.ids[heapRow[i]], score: heapScore[i], row: heapRow[i] });
    hits.sort((a, b) => b.score - a.score || a.row - b.row);
    return hits;
  }

  /**
   * The wasm kernel's scan (see the file header): a block of rows at a time, the rows passing
   * the filters are listed; the int8 sketch, then the f32 rows, drop those that certainly score
   * below the heap's worst; the rest are scored exactly (`dot`) and offered. `cut` is the heap's
   * worst once it is full; it only rises, so dropping against an earlier value is safe. Returns
   * the heap size.
   */
  private scanWasm(
    wasm: WasmStore,
    k: number,
    diverse: boolean,
    required: number,
    sourceMask: number,
    envCode: number,
    hasExclusions: boolean,
  ): number {
    const dims = this.dims,
      stride = this.stride,
      rows = this.rows;
    const flags = this.flags,
      envCodes = this.envCodes,
      excluded = this.excluded;
    const matrix = this.matrix,
      q = this.query,
      rowScale = this.rowScale,
      heapScore = this.heapScore;
    const { kernels, list, scores, intScores } = wasm;

    // The int16 query: q ≈ qScale · q16, |q − qScale · q16| ≤ fMax per value.
    const qMax = this.qMax,
      q16 = wasm.query16;
    let qAbsMax = 0,
      qL1 = 0;
    for (let d = 0; d < dims; d++) {
      const a = Math.abs(q[d]);
      qL1 += a;
      if (a > qAbsMax) qAbsMax = a;
    }
    const qScale = qAbsMax / qMax;
    let fMax = 0;
    for (let d = 0; d < dims; d++) {
      const c = Math.max(-qMax, Math.min(qMax, Math.round(q[d] / qScale)));
      q16[d] = c;
      fMax = Math.max(fMax, Math.abs(q[d] - qScale * c));
    }
    // Row r's sketch score rowScale[r] · qScale · I (I the exact integer dot product) is within
    // rowScale[r] · boundA + boundB of the exact score. With m = row, c its sketch, e = m − s c
    // (|e| ≤ s/2), f = q − qScale · q16: m·q − s c · qScale q16 = e·q + s c·f, so the error is
    // at most (s/2) |q|₁ + fMax (|m|₁ + dims s/2), and |m|₁ ≤ √dims |m|₂ ≤ √dims · 1.0001.
    // The 1e-6 factors and the last terms cover rounding in this arithmetic and in `dot`.
    const half = 0.5 * (1 + 1e-6);
    const boundA = half * (qL1 + fMax * dims) * (1 + 1e-6);
    const boundB = (fMax * Math.sqrt(dims) * 1.0001 + 1e-12 + dims * 2 ** -50) * (1 + 1e-6);
    const slack = this.slack;

    let heapSize = 0;
    let cut = -Infinity;
    for (let start = 0; start < rows;) {
      const end = Math.min(rows, start + (heapSize < k ? FIRST_BLOCK : SCORE_BLOCK));
      // 1. the rows that pass the filters
      let n = 0;
      for (let row = start; row < end; row++) {
        const flag = flags[row];
        if ((flag & required) !== required || (flag & sourceMask) === 0) continue;
        if (envCode >= 0 && envCodes[row] !== envCode) continue;
        if (hasExclusions && excluded[row] === 1) continue;
        list[n++] = row;
      }
      start = end;
      if (n === 0) continue;
      // 2. int8 sketch scores (useless until the heap is full: nothing can be dropped)
      if (heapSize === k) {
        kernels.score8(wasm.query16Ptr, wasm.sketchPtr, wasm.listPtr, n, this.stride8, wasm.scoresPtr);
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const row = list[i];
          if (rowScale[row] * (qScale * intScores[i] + boundA) + boundB < cut) continue;
          list[kept++] = row;
        }
        n = kept;
        if (n === 0) continue;
      }
      // 3. f32 scores of the rows left, 4. exact scores of those that may still enter the heap
      kernels.score(wasm.queryPtr, wasm.matrixPtr, wasm.listPtr, n, stride, wasm.scoresPtr);
      for (let i = 0; i < n; i++) {
        if (scores[i] + slack < cut) continue;
        const row = list[i];
        const score = dot(matrix, row * stride, q, dims);
        // Rows arrive in order, so a candidate equal to the heap's worst is later, hence worse.
        if (heapSize === k && score <= heapScore[0]) continue;
        heapSize = this.offer(row, score, heapSize, k, diverse);
        if (heapSize === k) cut = heapScore[0];
      }
    }
    return heapSize;
  }

  /**
   * Puts a row that beats the heap's worst (or fills a free slot) into the heap; with `diverse`,
   * one row per episode (the better one). Returns the new heap size.
   */
  private offer(row: number, score: number, heapSize: number, k: number, diverse: boolean): number {
    const heapScore = this.heapScore,
      heapRow = this.heapRow;
    if (diverse) {
      const episodeCodes = this.episodeCodes,
        episodeSlot = this.episodeSlot;
      const episode = episodeCodes[row];
      const slot = episodeSlot[episode];
      if (slot >= 0) {
        // Same episode already kept: keep the better of the two rows.
        if (score > heapScore[slot]) {
          heapScore[slot] = score;
          heapRow[slot] = row;
          this.siftDown(slot, heapSize, true);
        }
        return heapSize;
      }
      if (heapSize === k) episodeSlot[episodeCodes[heapRow[0]]] = -1; // the worst leaves
    }
    if (heapSize < k) {
      heapScore[heapSize] = score;
      heapRow[heapSize] = row;
      if (diverse) this.episodeSlot[this.episodeCodes[row]] = heapSize;
      this.siftUp(heapSize, diverse);
      return heapSize + 1;
    }
    heapScore[0] = score;
    heapRow[0] = row;
    if (diverse) this.episodeSlot[this.episodeCodes[row]] = 0;
    this.siftDown(0, heapSize, diverse);
    return heapSize;
  }

  // Min-heap on (score, −row): slot 0 holds the worst kept row (lowest score, latest on ties).
  private worse(a: number, b: number): boolean {
    const sa = this.heapScore[a],
      sb = this.heapScore[b];
    return sa < sb || (sa === sb && this.heapRow[a] > this.heapRow[b]);
  }

  private swap(a: number, b: number, track: boolean): void {
    const s = this.heapScore[a];
    this.heapScore[a] = this.heapScore[b];
    this.heapScore[b] = s;
    const r = this.heapRow[a];
    this.heapRow[a] = this.heapRow[b];
    this.heapRow[b] = r;
    if (track) {
      this.episodeSlot[this.episodeCodes[this.heapRow[a]]] = a;
      this.episodeSlot[this.episodeCodes[this.heapRow[b]]] = b;
    }
  }

  private siftUp(i: number, track: boolean): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, parent)) return;
      this.swap(i, parent, track);
      i = parent;
    }
  }

  private siftDown(i: number, size: number, track: boolean): void {
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) return;
      const right = left + 1;
      const child = right < size && this.worse(right, left) ? right : left;
      if (!this.worse(child, i)) return;
      this.swap(i, child, track);
      i = child;
    }
  }
}

function intern(codes: Map<string, number>, key: string): number {
  let code = codes.get(key);
  if (code === undefined) {
    code = codes.size;
    codes.set(key, code);
  }
  return code;
}

/**
 * Dot product of the row at `base` with `q` in double precision, four accumulators (independent
 * add chains run in parallel). Both kernels' scores come from here, so they are bit for bit equal.
 */
function dot(matrix: Float32Array, base: number, q: Float32Array, dims: number): number {
  const body = dims & ~3;
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0;
  let j = base;
  for (let d = 0; d < body; d += 4, j += 4) {
    s0 += matrix[j] * q[d];
    s1 += matrix[j + 1] * q[d + 1];
    s2 += matrix[j + 2] * q[d + 2];
    s3 += matrix[j + 3] * q[d + 3];
  }
  for (let d = body; d < dims; d++, j++) s0 += matrix[j] * q[d];
  return s0 + s1 + (s2 + s3);
}

function vectorNorm(v: Float32Array): number {
  let s = 0;
  for (let d = 0; d < v.length; d++) s += v[d] * v[d];
  return Math.sqrt(s);
}

function align64(bytes: number): number {
  return Math.ceil(bytes / 64) * 64;
}
