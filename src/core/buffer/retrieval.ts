/**
 * Exact top-k cosine retrieval over the replay buffer (paper §3: {d_j} = Top_k cos(φ(s_t, a_t),
 * φ(s_i, a_i))). A buffer of 10⁴–10⁵ transitions is small enough that an exact scan beats any
 * approximate index on both simplicity and recall: one contiguous Float32Array holds the
 * L2-normalised rows, so a query is one pass of dot products at close to memory speed
 * (src/bench/buffer-retrieval.ts), with a bounded min-heap keeping the best k (retrieval-heap.ts).
 *
 * Layout: `matrix[row * stride + d]`, `stride` = dims rounded up to a multiple of 4 (zero
 * padding); per-row metadata in typed arrays (env code, episode code, flags = alive | valid |
 * source bit); ids in a plain array. Capacity doubles as rows are added; `add` never rebuilds.
 * `remove` leaves tombstones and compacts (in place, keeping row order) once they exceed a
 * quarter of the rows. Row numbers in results are valid until the next add/remove/compact. Env
 * and episode ids are interned to integer codes, never recycled before `clear()` (4 bytes of
 * search scratch per episode ever added).
 *
 * Kernels. The default 'wasm' kernel (retrieval-wasm.ts) keeps the matrix in WebAssembly memory
 * with an int8 sketch of every row, and drops rows that cannot enter the top k before scoring
 * them exactly: its results (ids, order and scores) are bit for bit the JS kernel's. Without
 * WebAssembly SIMD (or with `kernel: 'js'`) the matrix is a plain Float32Array and the JS loop
 * (retrieval-scan.ts) scores every row that passes the filters.
 */
import { TopKHeap } from './retrieval-heap';
import { FLAG_ALIVE, SCORE_BLOCK, SOURCE_BIT, rowFilter, rowFlags, scanRowsJs, type RowScan } from './retrieval-scan';
import { WasmKernel } from './retrieval-wasm';
import { scanKernelUnavailable } from './simd/kernel';
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

export class RetrievalIndex {
  readonly dims: number;
  readonly embedder: string | undefined;
  private readonly initialCapacity: number;
  private readonly compactRatio: number;
  /** Floats per row in the matrix: dims rounded up to a multiple of 4 (zero padding). */
  private readonly stride: number;
  /** The wasm kernel (its memory holds the matrix and the query); null with the JS kernel. */
  private wasm: WasmKernel | null = null;
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
  private heap = new TopKHeap();
  private excluded = new Uint8Array(0);
  /** The JS kernel's list of rows that pass the filters (the wasm kernel's is in its memory). */
  private readonly list = new Int32Array(SCORE_BLOCK);

  constructor(dims: number, options: RetrievalIndexOptions = {}) {
    if (!Number.isInteger(dims) || dims < 1)
      throw new RetrievalIndexError(`RetrievalIndex: dims must be a positive integer, got ${dims}.`);
    this.dims = dims;
    this.embedder = options.embedder;
    this.initialCapacity = Math.max(1, Math.floor(options.initialCapacity ?? 1024));
    this.compactRatio = options.compactRatio ?? 0.25;
    this.stride = (dims + 3) & ~3;
    const kernel = options.kernel ?? 'auto';
    if (kernel !== 'auto' && kernel !== 'wasm' && kernel !== 'js') {
      throw new RetrievalIndexError(`RetrievalIndex: kernel must be 'auto', 'wasm' or 'js', got '${String(kernel)}'.`);
    }
    if (kernel !== 'js') {
      this.wasm = WasmKernel.create(dims, this.stride, this.initialCapacity);
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
        this.wasm?.moveSketch(write, read);
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
      this.wasm = WasmKernel.create(this.dims, this.stride, this.initialCapacity);
      if (this.wasm === null) {
        this.failWasm(this.initialCapacity);
        this.query = new Float32Array(this.dims);
      }
    }
    this.allocate(this.initialCapacity);
    this.heap = new TopKHeap();
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
    this.wasm?.writeSketch(row);
    this.flags[row] = rowFlags(entry.valid, entry.source);
    this.envCodes[row] = intern(this.envCodeOf, entry.env);
    this.episodeCodes[row] = intern(this.episodeCodeOf, entry.episodeId);
  }

  private allocate(capacity: number): void {
    const grow = <T extends Float32Array | Uint8Array | Int32Array>(
      old: T,
      make: (n: number) => T,
      width: number,
    ): T => {
      const next = make(capacity * width);
      next.set(old.subarray(0, this.rows * width));
      return next;
    };
    if (this.wasm !== null && this.wasm.grow(capacity, this.rows)) {
      // Grown in place: the matrix and the query are views of the kernel's memory.
      this.matrix = this.wasm.matrix;
      this.query = this.wasm.query;
    } else {
      if (this.wasm !== null) {
        // The memory cannot grow (4 GiB of wasm32, or the engine refused): move to the JS kernel.
        this.failWasm(capacity);
        this.wasm = null;
        this.query = new Float32Array(this.dims);
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
    const filter = rowFilter(options, this.envCodeOf);
    if (filter === null) return [];

    const q = this.query;
    if (Math.abs(norm - 1) <= 1e-5) q.set(query);
    else for (let d = 0; d < dims; d++) q[d] = query[d] / norm;
    const heap = this.heap;
    heap.begin(k, options.diverse === true, this.episodeCodes, this.episodeCodeOf.size);
    const excludedRows = this.markExcluded(options.excludeIds);
    const scan: RowScan = {
      ...filter,
      rows: this.rows,
      dims,
      stride: this.stride,
      matrix: this.matrix,
      flags: this.flags,
      envCodes: this.envCodes,
      excluded: this.excluded,
      hasExclusions: excludedRows.length > 0,
      query: q,
      heap,
    };
    try {
      if (this.wasm === null) scanRowsJs(scan, this.list);
      else this.wasm.scan(scan);
    } finally {
      for (const row of excludedRows) this.excluded[row] = 0;
      heap.end();
    }

    const hits: SearchHit[] = [];
    for (let i = 0; i < heap.size; i++)
      hits.push({ id: this.ids[heap.row[i]], score: heap.score[i], row: heap.row[i] });
    hits.sort((a, b) => b.score - a.score || a.row - b.row);
    return hits;
  }

  /** Marks the rows of `ids` excluded (the search unmarks them); returns them. */
  private markExcluded(ids: ReadonlySet<string> | undefined): number[] {
    const rows: number[] = [];
    if (!ids || ids.size === 0) return rows;
    if (this.excluded.length < this.capacity) this.excluded = new Uint8Array(this.capacity);
    for (const id of ids) {
      const row = this.rowOfId.get(id);
      if (row !== undefined) {
        this.excluded[row] = 1;
        rows.push(row);
      }
    }
    return rows;
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

function vectorNorm(v: Float32Array): number {
  let s = 0;
  for (let d = 0; d < v.length; d++) s += v[d] * v[d];
  return Math.sqrt(s);
}
