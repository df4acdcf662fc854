/**
 * The 'wasm' kernel of the retrieval index (retrieval.ts). The JS scan is compute-bound (scalar
 * multiply-adds). This kernel keeps the matrix in the memory of a small WebAssembly SIMD module
 * (simd/scan.wat), together with an int8 sketch of every row (its values rounded to 127 steps of the
 * row's largest |value|: a quarter of the bytes, +25% memory). A query runs a block of rows at a time:
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
 * after the matrix, moves up).
 */
import { listRows, dot, SCORE_BLOCK, type RowScan } from './retrieval-scan';
import { MAX_WASM_MEMORY_BYTES, ScanMemory, type ScanExports } from './simd/kernel';

/** Rows per block while the heap is not full yet (nothing can be dropped before it is). */
const FIRST_BLOCK = 256;
/** Sketch values: round(x / scale), scale = max |x| of the row / SKETCH_MAX. */
const SKETCH_MAX = 127;

/**
 * The kernel's memory, in 64-byte aligned regions: [query: stride f32] [query16: stride8 i16]
 * [scores: SCORE_BLOCK f32 or i32] [list: SCORE_BLOCK i32 row numbers] [matrix: capacity × stride
 * f32] [sketch: capacity × stride8 i8]. The sketch moves up when the matrix grows.
 */
export class WasmKernel {
  /** The matrix and the normalised query, as views of the memory (re-made when it grows). */
  matrix = new Float32Array(0);
  query = new Float32Array(0);
  /** Bytes per sketch row: dims rounded up to a multiple of 16 (zero padding). */
  private readonly stride8: number;
  /** Bound on |f32 SIMD score − double score| for unit vectors (the pruning slack). */
  private readonly slack: number;
  /** Largest |value| of the int16 query: 127 · qMax · stride8 < 2³¹ (no i32 overflow). */
  private readonly qMax: number;
  private readonly kernels: ScanExports;
  private readonly queryPtr: number;
  private readonly query16Ptr: number;
  private readonly scoresPtr: number;
  private readonly listPtr: number;
  private readonly matrixPtr: number;
  private sketchPtr: number;
  private query16 = new Int16Array(0);
  private scores = new Float32Array(0);
  private intScores = new Int32Array(0);
  private list = new Int32Array(0);
  private sketch = new Int8Array(0);
  /** Sketch scale of each row. */
  private rowScale = new Float64Array(0);

  private constructor(
    private readonly memory: ScanMemory,
    private readonly dims: number,
    /** Floats per matrix row (the index's). */
    private readonly stride: number,
    stride8: number,
    layout: MemoryLayout,
  ) {
    this.kernels = memory.kernels;
    this.stride8 = stride8;
    this.queryPtr = layout.queryPtr;
    this.query16Ptr = layout.query16Ptr;
    this.scoresPtr = layout.scoresPtr;
    this.listPtr = layout.listPtr;
    this.matrixPtr = layout.matrixPtr;
    this.sketchPtr = this.matrixPtr;
    // Each product and each addition of the f32 dot product rounds once (relative 2⁻²⁴); a term
    // goes through at most stride / 4 + 3 of them, and Σ|m_d q_d| ≤ |m| |q| ≈ 1. Sixteen times
    // that (still only 6.5e-5 at 256 dims: few rows fall within it of the k-th best).
    this.slack = (stride + 16) * 2 ** -22;
    this.qMax = Math.min(32767, Math.floor((2 ** 31 - 1) / (SKETCH_MAX * stride8)));
  }

  /** A kernel laid out for `capacity` rows (grow it to make its views), or null where it is unavailable. */
  static create(dims: number, stride: number, capacity: number): WasmKernel | null {
    const stride8 = (dims + 15) & ~15;
    const layout = memoryLayout(stride, stride8);
    const bytes = layout.matrixPtr + capacity * (stride * 4 + stride8);
    if (bytes > MAX_WASM_MEMORY_BYTES) return null;
    const memory = ScanMemory.create(bytes);
    if (memory === null) return null;
    return new WasmKernel(memory, dims, stride, stride8, layout);
  }

  /**
   * Makes room for `capacity` rows, keeping the first `rows` (the matrix rows stay where they are;
   * the sketch moves up past them); false when the memory cannot grow (4 GiB of wasm32, or the
   * engine refused).
   */
  grow(capacity: number, rows: number): boolean {
    const sketchPtr = this.matrixPtr + capacity * this.stride * 4;
    if (!this.memory.ensure(sketchPtr + capacity * this.stride8)) return false;
    if (sketchPtr !== this.sketchPtr && rows > 0) {
      new Uint8Array(this.memory.memory.buffer).copyWithin(
        sketchPtr,
        this.sketchPtr,
        this.sketchPtr + rows * this.stride8,
      );
    }
    this.sketchPtr = sketchPtr;
    const buffer = this.memory.memory.buffer;
    this.matrix = new Float32Array(buffer, this.matrixPtr, capacity * this.stride);
    this.query = new Float32Array(buffer, this.queryPtr, this.dims);
    this.query16 = new Int16Array(buffer, this.query16Ptr, this.dims);
    this.scores = new Float32Array(buffer, this.scoresPtr, SCORE_BLOCK);
    this.intScores = new Int32Array(buffer, this.scoresPtr, SCORE_BLOCK);
    this.list = new Int32Array(buffer, this.listPtr, SCORE_BLOCK);
    this.sketch = new Int8Array(buffer, this.sketchPtr, capacity * this.stride8);
    const rowScale = new Float64Array(capacity);
    rowScale.set(this.rowScale.subarray(0, rows));
    this.rowScale = rowScale;
    return true;
  }

  /**
   * Writes the int8 sketch of matrix row `row`: round(x / scale), scale = max |x| / 127
   * (|x − scale · c| ≤ scale / 2).
   */
  writeSketch(row: number): void {
    const dims = this.dims,
      matrix = this.matrix,
      base = row * this.stride;
    // (x · (1 / scale) instead of x / scale moves x/scale by 2⁻⁵² relative: the search's bound allows for it.)
    let maxAbs = 0;
    for (let d = 0; d < dims; d++) {
      const a = Math.abs(matrix[base + d]);
      if (a > maxAbs) maxAbs = a;
    }
    const scale = maxAbs / SKETCH_MAX,
      inverse = SKETCH_MAX / maxAbs;
    const sketch = this.sketch,
      base8 = row * this.stride8;
    for (let d = 0; d < dims; d++) {
      const c = Math.round(matrix[base + d] * inverse);
      sketch[base8 + d] = c > SKETCH_MAX ? SKETCH_MAX : c < -SKETCH_MAX ? -SKETCH_MAX : c;
    }
    sketch.fill(0, base8 + dims, base8 + this.stride8);
    this.rowScale[row] = scale;
  }

  /** Moves a row's sketch down to row `to` (compaction; the index moves the matrix row). */
  moveSketch(to: number, from: number): void {
    const stride8 = this.stride8;
    this.sketch.copyWithin(to * stride8, from * stride8, (from + 1) * stride8);
    this.rowScale[to] = this.rowScale[from];
  }

  /**
   * The scan (see the file header): a block of rows at a time, the rows passing the filters are
   * listed; the int8 sketch, then the f32 rows, drop those that certainly score below the heap's
   * worst; the rest are scored exactly (`dot`) and offered. `cut` is the heap's worst once it is
   * full; it only rises, so dropping against an earlier value is safe. `scan.query` must be this
   * kernel's `query` view.
   */
  scan(scan: RowScan): void {
    const { dims, stride, rows, matrix, query: q, heap } = scan;
    const { kernels, list, scores, intScores, rowScale, slack } = this;
    const { qScale, boundA, boundB } = this.quantizeQuery(q);
    let cut = -Infinity;
    for (let start = 0; start < rows;) {
      const end = Math.min(rows, start + (heap.full ? SCORE_BLOCK : FIRST_BLOCK));
      // 1. the rows that pass the filters
      let n = listRows(scan, start, end, list);
      start = end;
      if (n === 0) continue;
      // 2. int8 sketch scores (useless until the heap is full: nothing can be dropped)
      if (heap.full) {
        kernels.score8(this.query16Ptr, this.sketchPtr, this.listPtr, n, this.stride8, this.scoresPtr);
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
      kernels.score(this.queryPtr, this.matrixPtr, this.listPtr, n, stride, this.scoresPtr);
      for (let i = 0; i < n; i++) {
        if (scores[i] + slack < cut) continue;
        const row = list[i];
        const score = dot(matrix, row * stride, q, dims);
        if (!heap.admits(score)) continue;
        heap.offer(row, score);
        if (heap.full) cut = heap.score[0];
      }
    }
  }

  /**
   * Writes the int16 query (q ≈ qScale · q16, |q − qScale · q16| ≤ fMax per value) and returns
   * the bounds of a sketch score's error.
   */
  private quantizeQuery(q: Float32Array): { qScale: number; boundA: number; boundB: number } {
    const dims = this.dims,
      qMax = this.qMax,
      q16 = this.query16;
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
    return { qScale, boundA, boundB };
  }
}

interface MemoryLayout {
  queryPtr: number;
  query16Ptr: number;
  scoresPtr: number;
  listPtr: number;
  matrixPtr: number;
}

/** Where each region starts (the sketch starts at the matrix and moves up as it grows). */
function memoryLayout(stride: number, stride8: number): MemoryLayout {
  const queryPtr = 0;
  const query16Ptr = align64(queryPtr + stride * 4);
  const scoresPtr = align64(query16Ptr + stride8 * 2);
  const listPtr = align64(scoresPtr + SCORE_BLOCK * 4);
  const matrixPtr = align64(listPtr + SCORE_BLOCK * 4);
  return { queryPtr, query16Ptr, scoresPtr, listPtr, matrixPtr };
}

function align64(bytes: number): number {
  return Math.ceil(bytes / 64) * 64;
}
