/**
 * The fused decoder's memory and its matmul kernel (matmul.wat, embedded as matmul-wasm.ts): one
 * WebAssembly memory holds the weights, every row's caches and the scratch, all as f32 at 16-byte
 * aligned offsets, and `matmul` runs on it in place. JS reads and writes the same memory through
 * `f32` (the elementwise work: layer norms, softmax, gelu).
 */
import { matmulWasmBytes } from './matmul-wasm';

/** The kernel's operands: pointers (bytes for the export, floats for KernelArena.matmul), strides in floats, sizes. */
type MatmulArgs = [
  a: number,
  lda: number,
  b: number,
  ldb: number,
  bias: number,
  out: number,
  ldo: number,
  m: number,
  k: number,
  n: number,
];

interface MatmulExports {
  matmul(...args: MatmulArgs): void;
  expShift(x: number, mask: number, n: number, shift: number, out: number): number;
  gelu(x: number, n: number): void;
  scale(x: number, n: number, s: number, out: number): void;
}

const PAGE = 65536;
let compiled: WebAssembly.Module | undefined;

/** Columns rounded up to the kernel's block of eight. */
export const pad8 = (n: number): number => Math.ceil(n / 8) * 8;

/** Why the kernel cannot run here, or undefined when it can. */
export function matmulUnavailable(): string | undefined {
  if (typeof WebAssembly !== 'object') return 'WebAssembly is not available';
  return WebAssembly.validate(matmulWasmBytes()) ? undefined : 'this engine has no WebAssembly SIMD';
}

/** A fixed-size f32 memory with a bump allocator, and the matmul kernel over it. */
export class KernelArena {
  readonly f32: Float32Array;
  private readonly kernel: MatmulExports;
  private top = 4; // offset 0 stays unused: a bias of 0 means "none"
  /** Floating-point operations the kernel ran (2·m·k·n a call, the padded columns included). */
  flops = 0;

  constructor(floats: number) {
    const reason = matmulUnavailable();
    if (reason) throw new Error(`The fused decoder cannot run: ${reason}. Use the tfjs decoder (decoder: 'tfjs').`);
    compiled ??= new WebAssembly.Module(matmulWasmBytes());
    const memory = new WebAssembly.Memory({ initial: Math.ceil(((floats + 8) * 4) / PAGE) });
    this.kernel = new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as MatmulExports;
    this.f32 = new Float32Array(memory.buffer);
  }

  /** `floats` zeroed floats at a 16-byte boundary; returns their offset in `f32`. */
  alloc(floats: number): number {
    const at = this.top;
    this.top += Math.ceil(floats / 4) * 4;
    if (this.top > this.f32.length) throw new Error(`KernelArena: out of memory (${this.f32.length} floats).`);
    return at;
  }

  /** A matrix [rows, cols] copied in with its columns padded to eight (zeros); returns its offset. */
  matrix(values: Float32Array, rows: number, cols: number): number {
    const stride = pad8(cols);
    const at = this.alloc(rows * stride);
    for (let r = 0; r < rows; r++) this.f32.set(values.subarray(r * cols, (r + 1) * cols), at + r * stride);
    return at;
  }

  /**
   * out[m, n] = a[m, k] · b[k, n] (+ bias[n]), every pointer an offset in `f32` and every stride in
   * floats; b, bias and out 4-aligned with strides a multiple of 4, n a multiple of 8.
   */
  matmul(...[a, lda, b, ldb, bias, out, ldo, m, k, n]: MatmulArgs): void {
    if (m <= 0) return;
    this.kernel.matmul(a * 4, lda, b * 4, ldb, bias * 4, out * 4, ldo, m, k, n);
    this.flops += 2 * m * k * n;
  }

  /**
   * out[i] = mask[i] · exp(x[i] − shift) for i < n, n a multiple of 4 (mask 0: none), returning the
   * sum; x, mask and out 4-aligned offsets. Relative error about 1e-7 (Cephes' expf).
   */
  expShift(x: number, mask: number, n: number, shift: number, out: number): number {
    return this.kernel.expShift(x * 4, mask * 4, n, shift, out * 4);
  }

  /** gelu in place over n floats at a 4-aligned offset, n a multiple of 4: x · σ(1.702 x), as network.ts. */
  gelu(x: number, n: number): void {
    this.kernel.gelu(x * 4, n);
  }

  /** out[i] = x[i] · s for i < n (4-aligned offsets, n a multiple of 4). */
  scale(x: number, n: number, s: number, out: number): void {
    this.kernel.scale(x * 4, n, s, out * 4);
  }

  /**
   * Softmax of n floats at `at` in place (a 4-aligned offset with room for n rounded up to 4; the
   * floats past n are overwritten and hold nothing useful after).
   */
  softmax(at: number, n: number): void {
    const f = this.f32,
      n4 = Math.ceil(n / 4) * 4;
    let max = -Infinity;
    for (let j = 0; j < n; j++) if (f[at + j] > max) max = f[at + j];
    f.fill(-Infinity, at + n, at + n4);
    this.scale(at, n4, 1 / this.expShift(at, 0, n4, max, at), at);
  }
}

/**
 * The kernel's speed on this machine, in GFLOP/s: repeated out = a · b at the encoder's shape
 * (a context's rows × a convolution window, to the model width) for about `seconds`.
 */
export function kernelGflops(now: () => number, seconds = 0.5, m = 512, k = 320, n = 64): number {
  const arena = new KernelArena(m * k + k * n + m * n + 64);
  const a = arena.alloc(m * k),
    b = arena.alloc(k * n),
    out = arena.alloc(m * n);
  for (let i = 0; i < m * k; i++) arena.f32[a + i] = ((i * 7919) % 1000) / 1000 - 0.5;
  for (let i = 0; i < k * n; i++) arena.f32[b + i] = ((i * 104729) % 1000) / 1000 - 0.5;
  arena.matmul(a, k, b, n, 0, out, n, m, k, n); // warm-up (compilation)
  let runs = 0;
  const started = now();
  while (now() - started < seconds * 1000 || runs < 3) {
    arena.matmul(a, k, b, n, 0, out, n, m, k, n);
    runs++;
  }
  return (2 * m * k * n * runs) / ((now() - started) / 1000) / 1e9;
}
