/**
 * Loads the WebAssembly SIMD scan kernels (scan.wat, embedded as scan-wasm.ts) synchronously:
 * the module is under 4 KB, so `new WebAssembly.Module` is allowed on Chromium's main thread
 * as well as in workers and Node. Compiled once per realm; each `ScanMemory` is one instance
 * with its own (imported) memory.
 *
 * `scanKernelUnavailable()` says why the kernels cannot be used here (no WebAssembly, no SIMD,
 * a CSP without 'wasm-unsafe-eval', ...), or undefined when they can.
 */
import { scanWasmBytes } from './scan-wasm';

export interface ScanExports {
  /**
   * out[i] = dot(q, row list[i]) (f32) for i < n: rows `stride` floats apart from `matrix`, row
   * numbers (i32) at `list`. Byte pointers; q, matrix and out 16-byte aligned, list 4.
   */
  score(q: number, matrix: number, list: number, n: number, stride: number, out: number): void;
  /**
   * out[i] = dot(q16, sketch row list[i]) (exact, i32) for i < n: int8 rows `stride` bytes apart
   * (a multiple of 16) from `sketch`, q16 `stride` int16 with 127 · max|q16| · stride < 2³¹.
   */
  score8(q16: number, sketch: number, list: number, n: number, stride: number, out: number): void;
  /** Sum of `n` floats from `pointer` (f32x4, four accumulators). */
  sum(pointer: number, n: number): number;
}

const PAGE = 65536;
/** wasm32 addresses: at most 4 GiB of memory. */
export const MAX_WASM_MEMORY_BYTES = 65536 * PAGE;

let compiled: WebAssembly.Module | null | undefined;
let unavailable: string | undefined;

function scanModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  compiled = null;
  try {
    if (typeof WebAssembly !== 'object' || typeof WebAssembly.Module !== 'function') {
      unavailable = 'WebAssembly is not available';
    } else {
      const bytes = scanWasmBytes();
      if (!WebAssembly.validate(bytes))
        unavailable = 'WebAssembly SIMD is not supported (the kernel does not validate)';
      else compiled = new WebAssembly.Module(bytes);
    }
  } catch (error) {
    unavailable = `the WebAssembly kernel failed to compile: ${(error as Error)?.message ?? String(error)}`;
  }
  return compiled;
}

/** Why the SIMD kernels cannot run here, or undefined when they can. */
export function scanKernelUnavailable(): string | undefined {
  scanModule();
  return unavailable;
}

/** One kernel instance and its memory; views of the memory must be re-made after `ensure` grows it. */
export class ScanMemory {
  readonly memory: WebAssembly.Memory;
  readonly kernels: ScanExports;

  private constructor(memory: WebAssembly.Memory, kernels: ScanExports) {
    this.memory = memory;
    this.kernels = kernels;
  }

  /** A fresh instance with at least `bytes` of memory, or null where the kernels are unavailable. */
  static create(bytes: number): ScanMemory | null {
    const module = scanModule();
    if (module === null) return null;
    try {
      const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
      const instance = new WebAssembly.Instance(module, { env: { memory } });
      return new ScanMemory(memory, instance.exports as unknown as ScanExports);
    } catch (error) {
      if (unavailable === undefined)
        unavailable = `the WebAssembly kernel failed to instantiate: ${(error as Error)?.message ?? String(error)}`;
      return null;
    }
  }

  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  /**
   * Grows the memory to at least `bytes` (contents kept; earlier views of it are detached).
   * Returns false when it cannot (beyond 4 GiB, or the engine refuses).
   */
  ensure(bytes: number): boolean {
    const have = this.memory.buffer.byteLength;
    if (bytes <= have) return true;
    if (bytes > MAX_WASM_MEMORY_BYTES) return false;
    try {
      this.memory.grow(Math.ceil((bytes - have) / PAGE));
      return true;
    } catch {
      return false;
    }
  }
}
