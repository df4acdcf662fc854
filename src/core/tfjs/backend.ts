/**
 * TensorFlow.js backend selection for the whole project, and the few ops the policy and the learned
 * experience model need to train fast on wasm.
 *
 * - Node: wasm (SIMD, one thread) by default, cpu as the fallback or when asked. webgl/webgpu do
 *   not exist in Node; asking for them falls back with the reason reported.
 * - Browser / worker: webgpu → webgl → wasm → cpu (a preferred backend is tried first), each
 *   reported with the reason the earlier ones were skipped. The wasm and webgpu backends are
 *   loaded with dynamic `import()` so Node and the main chunk stay small.
 *
 * Why the custom ops (docs/architecture.md §11.1): on tfjs-backend-wasm a matMul with `transposeA/B` is
 * ~35× slower than an explicit `tf.transpose` followed by a plain matMul, and autodiff of matMul
 * uses the transposed forms; and the wasm backend has no `UnsortedSegmentSum`, which the
 * gradient of `tf.gather` needs. `matMulFast`, `gatherRows` and `embeddingBag` are customGrads
 * whose backward passes use only kernels that wasm has and runs fast (Transpose, ScatterNd).
 */
import * as tf from '@tensorflow/tfjs';

export type BackendName = 'wasm' | 'cpu' | 'webgl' | 'webgpu';

export interface BackendInfo {
  /** The backend now active in tf. */
  backend: BackendName;
  /** Why this one: what was asked, what was tried and why the others were skipped. */
  reason: string;
}

/** Where the browser finds the wasm binaries: a path prefix, or one URL per file name
 * (`tfjs-backend-wasm.wasm`, `tfjs-backend-wasm-simd.wasm`, `tfjs-backend-wasm-threaded-simd.wasm`). */
export type WasmPaths = string | Record<string, string>;

export interface InitBackendOptions {
  /** Browser only: given to `setWasmPaths` before the wasm backend starts (Vite `?url` imports). */
  wasmPaths?: WasmPaths;
}

/** True in Node (not in a browser page or a web worker). */
export function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return (
    typeof p?.versions?.node === 'string' &&
    typeof (globalThis as { window?: unknown }).window === 'undefined' &&
    typeof (globalThis as { importScripts?: unknown }).importScripts === 'undefined'
  );
}

let wasmLoaded: Promise<typeof import('@tensorflow/tfjs-backend-wasm')> | null = null;
let webgpuLoaded: Promise<unknown> | null = null;

async function tryBackend(name: BackendName, options: InitBackendOptions): Promise<string | null> {
  try {
    if (name === 'wasm') {
      wasmLoaded ??= import('@tensorflow/tfjs-backend-wasm');
      const wasm = await wasmLoaded;
      // The threaded build breaks in bundled module workers (and in Node); one thread is what we
      // get anyway. The flag exists once the wasm module is imported, before the backend starts.
      tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
      fixWasmKernels();
      if (options.wasmPaths !== undefined && !isNode()) {
        wasm.setWasmPaths(options.wasmPaths as Parameters<typeof wasm.setWasmPaths>[0]);
      }
    } else if (name === 'webgpu') {
      const gpu = (globalThis as { navigator?: { gpu?: { requestAdapter(): Promise<unknown> } } }).navigator?.gpu;
      if (!gpu) return 'navigator.gpu is missing (no WebGPU in this browser/context)';
      const adapter = await gpu.requestAdapter();
      if (!adapter) return 'navigator.gpu.requestAdapter() returned null (no usable adapter)';
      webgpuLoaded ??= import('@tensorflow/tfjs-backend-webgpu');
      await webgpuLoaded;
    }
    if (tf.getBackend() === name) return null;
    const ok = await tf.setBackend(name);
    if (!ok) return `tf.setBackend('${name}') failed to initialise`;
    await tf.ready();
    return null;
  } catch (error) {
    return `${name} failed: ${(error as Error).message ?? String(error)}`;
  }
}

/** What these kernels use of the wasm backend (its own kernels use the same). */
interface WasmHeap {
  incRef(dataId: object): void;
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  typedArrayFromHeap(t: tf.TensorInfo): Float32Array | Int32Array | Uint8Array;
}

/**
 * Two of wasm's JS kernels copy more than they must, and a learned model's training and decoding
 * run them thousands of times a step; these replacements give the same values:
 * - Identity copies its input; the other backends share the data and count a reference, as wasm's
 *   own Reshape does. Every tensor a gradient saves is cloned through it (≈ 6 % of a training
 *   step). Tensors are immutable (a variable's assign swaps its data), so sharing is safe.
 * - Slice first copies the whole input out of the heap, then the slice (a concat's gradient slices
 *   its input once per part, so a k-way concat copies it k times); this one reads the input in place.
 */
function fixWasmKernels(): void {
  const identity = tf.getKernel('Identity', 'wasm');
  const slice = tf.getKernel('Slice', 'wasm');
  if (!identity || !slice || identity.kernelFunc.name === 'sharedIdentity') return;
  tf.unregisterKernel('Identity', 'wasm');
  tf.registerKernel({
    kernelName: 'Identity',
    backendName: 'wasm',
    kernelFunc: function sharedIdentity(args) {
      const x = args.inputs.x as tf.TensorInfo;
      if (x.dtype === 'string') return identity.kernelFunc(args); // strings live outside the heap
      (args.backend as unknown as WasmHeap).incRef(x.dataId);
      return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
    },
  });
  tf.unregisterKernel('Slice', 'wasm');
  tf.registerKernel({
    kernelName: 'Slice',
    backendName: 'wasm',
    kernelFunc: function sliceInPlace(args) {
      const x = args.inputs.x as tf.TensorInfo;
      if (x.dtype === 'string' || x.shape.length === 0 || x.shape.length > 4) return slice.kernelFunc(args);
      const attrs = args.attrs as unknown as { begin: number[]; size: number[] };
      const [begin, size] = tf.slice_util.parseSliceParams(x as tf.Tensor, attrs.begin, attrs.size);
      const heap = args.backend as unknown as WasmHeap;
      const out = heap.makeOutput(size, x.dtype);
      // Views only after the output exists (making it can grow the heap and detach older views).
      const from = heap.typedArrayFromHeap(x),
        to = heap.typedArrayFromHeap(out);
      const strides = tf.util.computeStrides(x.shape);
      if (tf.slice_util.isSliceContinous(x.shape, begin, size)) {
        const offset = tf.slice_util.computeFlatOffset(begin, strides);
        to.set(from.subarray(offset, offset + to.length));
      } else copySlice(from, strides, to, begin, size);
      return out;
    },
  });
}

/** Copies the block at `begin` of `size` out of a row-major array with `strides`, one innermost run at a time. */
function copySlice(
  from: ArrayLike<number> & { subarray(a: number, b: number): ArrayLike<number> },
  strides: number[],
  to: { set(values: ArrayLike<number>, offset: number): void },
  begin: number[],
  size: number[],
): void {
  const rank = size.length;
  const run = size[rank - 1];
  const outer = size.slice(0, -1);
  const count = outer.reduce((a, b) => a * b, 1);
  const index = outer.map(() => 0);
  for (let n = 0; n < count; n++) {
    let offset = begin[rank - 1];
    for (let i = 0; i < rank - 1; i++) offset += (begin[i] + index[i]) * strides[i];
    to.set(from.subarray(offset, offset + run), n * run);
    for (let i = rank - 2; i >= 0; i--) {
      if (++index[i] < outer[i]) break;
      index[i] = 0;
    }
  }
}

/**
 * Select and initialise a backend. Create tensors only after this resolves (importing the webgpu
 * backend makes it tf's default, and a tensor made before init would try to use it).
 */
export async function initBackend(preferred?: BackendName, options: InitBackendOptions = {}): Promise<BackendInfo> {
  const node = isNode();
  const skipped: string[] = [];
  let order: BackendName[];
  if (node) {
    order = ['wasm', 'cpu'];
    if (preferred === 'cpu') order = ['cpu'];
    if (preferred === 'webgl' || preferred === 'webgpu') skipped.push(`${preferred} is not available in Node`);
  } else {
    order = ['webgpu', 'webgl', 'wasm', 'cpu'];
    if (preferred) order = [preferred, ...order.filter((b) => b !== preferred)];
  }
  for (const name of order) {
    const failure = await tryBackend(name, options);
    if (failure === null) {
      const asked = preferred ? `asked for ${preferred}` : 'no preference';
      const env = node ? 'Node' : 'browser';
      let why = `${name} (${env}, ${asked})`;
      if (name === 'wasm') {
        const simd = await tf
          .env()
          .getAsync('WASM_HAS_SIMD_SUPPORT')
          .catch(() => false);
        why += `, SIMD ${simd ? 'on' : 'off'}, 1 thread`;
      }
      if (skipped.length) why += `; skipped: ${skipped.join('; ')}`;
      return { backend: name, reason: why };
    }
    skipped.push(failure);
  }
  throw new Error(
    `No tfjs backend could be initialised: ${skipped.join('; ')}. Check that @tensorflow/tfjs-backend-wasm is installed, or call initBackend('cpu').`,
  );
}

// ---------------------------------------------------------------------------------------------
// Ops with wasm-friendly gradients
// ---------------------------------------------------------------------------------------------

type CustomGradFn = Parameters<typeof tf.customGrad>[0];

/** x [n, k] @ w [k, m] → [n, m]; the gradient uses explicit transposes (docs/architecture.md §11.1). */
export const matMulFast = tf.customGrad(((x: tf.Tensor2D, w: tf.Tensor2D, save: tf.GradSaveFunc) => {
  save([x, w]);
  return {
    value: tf.matMul(x, w),
    gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => {
      const [xs, ws] = saved as [tf.Tensor2D, tf.Tensor2D];
      return [tf.matMul(dy, tf.transpose(ws)), tf.matMul(tf.transpose(xs), dy)];
    },
  };
}) as unknown as CustomGradFn) as unknown as (x: tf.Tensor, w: tf.Tensor) => tf.Tensor2D;

export type GatherPath = 'auto' | 'segment' | 'gather';
let gatherPath: GatherPath = 'auto';

/**
 * Which implementation `gatherRows` and `embeddingBag` use: 'segment' (SparseSegmentSum forward,
 * ScatterNd backward: fast on wasm, which lacks a fast GatherV2 and any UnsortedSegmentSum),
 * 'gather' (tf.gather / unsortedSegmentSum with tf's own gradients: the GPU backends), or 'auto'
 * (segment on wasm and cpu, gather on webgl and webgpu). For tests and benchmarks.
 */
export function setGatherPath(path: GatherPath): void {
  gatherPath = path;
}

function useSegmentPaths(): boolean {
  if (gatherPath !== 'auto') return gatherPath === 'segment';
  const b = tf.getBackend();
  return b === 'wasm' || b === 'cpu';
}

/**
 * Rows of x picked by `indices` (int32 [m]) → [m, ...]; same as tf.gather on axis 0.
 *
 * On wasm, GatherV2 costs ~1 µs per element (120 ms for a 120k × 32 gather) and its gradient
 * needs UnsortedSegmentSum, which wasm lacks; there the gather is a SparseSegmentSum with one
 * index per segment (10× faster) and the gradient a ScatterNd (which sums duplicate indices).
 * webgl/webgpu use tf.gather and its own gradient.
 */
export function gatherRows<T extends tf.Tensor>(x: T, indices: tf.Tensor1D): T {
  if (!useSegmentPaths()) return tf.gather(x, indices) as T;
  // The indices go through `save`: tensors only captured by the closure would be disposed by
  // the forward pass's tidy before the backward pass runs.
  const op = tf.customGrad(((xIn: tf.Tensor, save: tf.GradSaveFunc) => {
    save([indices]);
    const shape = xIn.shape;
    return {
      value: tf.sparse.sparseSegmentSum(xIn, indices, tf.range(0, indices.shape[0], 1, 'int32')),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.scatterND(tf.expandDims(saved[0], 1), dy, shape),
    };
  }) as unknown as CustomGradFn) as unknown as (xIn: tf.Tensor) => tf.Tensor;
  return op(x) as T;
}

/**
 * The positions of `ids` sorted by id (stable counting sort, O(m + buckets)), each position's
 * rank among the distinct ids, and the distinct ids: the index the embedding-bag gradient
 * needs to sum rows per table row without a [m, d] intermediate.
 */
export function sortedBagIndex(
  ids: Int32Array,
  segmentIds: Int32Array,
  buckets: number,
): {
  segmentsById: Int32Array;
  rank: Int32Array;
  unique: Int32Array;
} {
  const m = ids.length;
  const start = new Int32Array(buckets + 1);
  for (let j = 0; j < m; j++) start[ids[j] + 1]++;
  let nUnique = 0;
  for (let v = 0; v < buckets; v++) {
    if (start[v + 1] > 0) nUnique++;
    start[v + 1] += start[v];
  }
  const segmentsById = new Int32Array(m),
    rank = new Int32Array(m),
    unique = new Int32Array(nUnique);
  const cursor = start.slice(0, buckets);
  for (let j = 0; j < m; j++) segmentsById[cursor[ids[j]]++] = segmentIds[j];
  let r = -1;
  for (let v = 0; v < buckets; v++) {
    if (start[v + 1] === start[v]) continue;
    unique[++r] = v;
    rank.fill(r, start[v], start[v + 1]);
  }
  return { segmentsById, rank, unique };
}

/**
 * Embedding bag: out[s] = Σ_{j: segmentIds[j] = s} table[ids[j]]  → [numSegments, d].
 * `segmentIds` must be sorted and the last segment non-empty (the feature encoder adds a bias id
 * to every bag), because SparseSegmentSum sizes its output by the last segment id.
 *
 * wasm/cpu: forward SparseSegmentSum; backward sums dy rows per distinct id with another
 * SparseSegmentSum over the id-sorted positions, then one ScatterNd into the table's shape.
 * webgl/webgpu: gather + unsortedSegmentSum with their own gradients.
 */
export function embeddingBag(table: tf.Tensor2D, ids: Int32Array, segmentIds: Int32Array): tf.Tensor2D {
  const numSegments = segmentIds.length ? segmentIds[segmentIds.length - 1] + 1 : 0;
  const idsT = tf.tensor1d(ids, 'int32'),
    segT = tf.tensor1d(segmentIds, 'int32');
  if (!useSegmentPaths()) return tf.unsortedSegmentSum(tf.gather(table, idsT), segT, numSegments) as tf.Tensor2D;
  const op = tf.customGrad(((tableIn: tf.Tensor2D) => {
    const shape = tableIn.shape;
    return {
      value: tf.sparse.sparseSegmentSum(tableIn, idsT, segT),
      gradFunc: (dy: tf.Tensor2D) => {
        const index = sortedBagIndex(ids, segmentIds, shape[0]);
        const perId = tf.sparse.sparseSegmentSum(
          dy,
          tf.tensor1d(index.segmentsById, 'int32'),
          tf.tensor1d(index.rank, 'int32'),
        ); // [nUnique, d]
        return tf.scatterND(tf.tensor2d(index.unique, [index.unique.length, 1], 'int32'), perId, shape);
      },
    };
  }) as unknown as CustomGradFn) as unknown as (tableIn: tf.Tensor2D) => tf.Tensor2D;
  return op(table);
}

/**
 * A SplitV kernel for tfjs-wasm that slices in place. wasm's own SplitV calls its internal slice,
 * which first copies the whole input out of the heap, once per part: splitting a batch into its
 * 16 rows copied it 16 times, and the encoder's window gradient (a 5-way concat's) cost ~45 ms.
 * This one runs the registered Slice kernel per part (fixWasmKernels replaces it with one that reads
 * the input in place). The values are the same; tf.split's gradient is one Concat.
 */
let inPlaceSplitRegistered = false;

/** Registers the in-place SplitV on the wasm backend (once; nothing on other backends). */
export function useInPlaceSplit(): void {
  if (inPlaceSplitRegistered || tf.getBackend() !== 'wasm') return;
  inPlaceSplitRegistered = true;
  const slice = tf.getKernel('Slice', 'wasm');
  if (!slice || tf.getKernel('SplitV', 'wasm')?.kernelFunc.name === 'splitInPlace') return;
  tf.unregisterKernel('SplitV', 'wasm');
  tf.registerKernel({
    kernelName: 'SplitV',
    backendName: 'wasm',
    kernelFunc: function splitInPlace({ inputs, attrs, backend }) {
      const x = inputs.x as tf.TensorInfo;
      const { numOrSizeSplits, axis } = attrs as unknown as { numOrSizeSplits: number | number[]; axis: number };
      const along = tf.util.parseAxisParam(axis, x.shape)[0];
      const sizes = tf.backend_util.prepareSplitSize(x as tf.Tensor, numOrSizeSplits, along);
      const begin = x.shape.map(() => 0);
      return sizes.map((n) => {
        const size = x.shape.slice();
        size[along] = n;
        const part = slice.kernelFunc({ inputs: { x }, attrs: { begin: begin.slice(), size }, backend });
        begin[along] += n;
        return part as tf.TensorInfo;
      });
    },
  });
}
