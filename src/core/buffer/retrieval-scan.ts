/**
 * What one retrieval search scans (retrieval.ts): the index's rows, the search's filters as flag
 * masks, and the heap it fills; which rows pass the filters, and the exact score both kernels use.
 * The JS kernel is here; the WebAssembly SIMD one is retrieval-wasm.ts.
 */
import type { TopKHeap } from './retrieval-heap';
import type { TransitionSource } from './types';

/** Row flags: alive | valid | source bit. */
export const FLAG_ALIVE = 1;
const FLAG_VALID = 2;
const SOURCE_SHIFT = 2; // source bits: offline 4, real 8, dream 16
export const SOURCE_BIT: Record<TransitionSource, number> = {
  offline: 1 << SOURCE_SHIFT,
  real: 2 << SOURCE_SHIFT,
  dream: 4 << SOURCE_SHIFT,
};
const ALL_SOURCES = SOURCE_BIT.offline | SOURCE_BIT.real | SOURCE_BIT.dream;

/** Rows listed, then scored, per block (16 KB of row numbers, and the wasm kernel's 16 KB of scores: in cache). */
export const SCORE_BLOCK = 4096;

/** The flags of a live row. */
export function rowFlags(valid: boolean, source: TransitionSource): number {
  return FLAG_ALIVE | (valid ? FLAG_VALID : 0) | SOURCE_BIT[source];
}

/** A search's filters as masks: a row passes when it has every `required` flag and a `sourceMask` bit. */
export interface RowFilter {
  required: number;
  sourceMask: number;
  /** The env's code, or −1 for any env. */
  envCode: number;
}

/**
 * The filter of a search's options; null when no row can pass (an env the index never saw, or no
 * known source).
 */
export function rowFilter(
  options: { env?: string; source?: TransitionSource | TransitionSource[]; validOnly?: boolean },
  envCodeOf: ReadonlyMap<string, number>,
): RowFilter | null {
  let envCode = -1;
  if (options.env !== undefined) {
    const code = envCodeOf.get(options.env);
    if (code === undefined) return null;
    envCode = code;
  }
  let sourceMask = ALL_SOURCES;
  if (options.source !== undefined) {
    sourceMask = 0;
    for (const s of Array.isArray(options.source) ? options.source : [options.source]) sourceMask |= SOURCE_BIT[s] ?? 0;
    if (sourceMask === 0) return null;
  }
  return { required: FLAG_ALIVE | ((options.validOnly ?? true) ? FLAG_VALID : 0), sourceMask, envCode };
}

/** One search over the index's rows (the arrays are the index's own, valid for this search only). */
export interface RowScan extends RowFilter {
  /** Rows in use, tombstones included. */
  rows: number;
  dims: number;
  /** Floats per matrix row. */
  stride: number;
  matrix: Float32Array;
  flags: Uint8Array;
  envCodes: Int32Array;
  /** 1 for a row the search excludes (read only when `hasExclusions`). */
  excluded: Uint8Array;
  hasExclusions: boolean;
  /** The query, L2-normalised. */
  query: Float32Array;
  heap: TopKHeap;
}

/** Lists the rows of [start, end) that pass the filters into `list`; returns how many. */
export function listRows(scan: RowScan, start: number, end: number, list: Int32Array): number {
  const { flags, envCodes, excluded, required, sourceMask, envCode, hasExclusions } = scan;
  let n = 0;
  for (let row = start; row < end; row++) {
    const flag = flags[row];
    if ((flag & required) !== required || (flag & sourceMask) === 0) continue;
    if (envCode >= 0 && envCodes[row] !== envCode) continue;
    if (hasExclusions && excluded[row] === 1) continue;
    list[n++] = row;
  }
  return n;
}

/** The JS kernel: every row that passes the filters is scored exactly and offered to the heap. */
export function scanRowsJs(scan: RowScan, list: Int32Array): void {
  const { rows, dims, stride, matrix, query, heap } = scan;
  for (let start = 0; start < rows; start += list.length) {
    const n = listRows(scan, start, Math.min(rows, start + list.length), list);
    for (let i = 0; i < n; i++) {
      const row = list[i];
      const score = dot(matrix, row * stride, query, dims);
      if (heap.admits(score)) heap.offer(row, score);
    }
  }
}

/**
 * Dot product of the row at `base` with `q` in double precision, four accumulators (independent
 * add chains run in parallel). Both kernels' scores come from here, so they are bit for bit equal.
 */
export function dot(matrix: Float32Array, base: number, q: Float32Array, dims: number): number {
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
