/**
 * The page's decode threads: web workers started by the worker that dreams (trainer or Experience
 * model), each decoding a share of every batch of the learned experience model (core's
 * decode-service.ts; the answers are the same as decoding in one thread).
 *
 * Why workers and not wasm threads: the app is served without cross-origin isolation (COOP/COEP),
 * so that it works from any static host and fetches from model hubs; without it there is no
 * SharedArrayBuffer and every wasm module runs on one thread. Several workers need neither.
 */
import {
  threadDecoders,
  type DecodeEngine,
  type DecodeModel,
  type DecodePort,
  type DecodeReply,
  type ThreadDecoders,
} from '../../../core/experience/learned/decode-service';

/** Most decode workers a page starts (a batch of 64 is split in chunks of about 3 per worker). */
export const MAX_DECODE_WORKERS = 4;

export interface DecodeThreads {
  /** Workers decoding (0: the dreaming worker decodes itself). */
  workers: number;
  /** Why this many, in words, for the page. */
  why: string;
}

/** How many decode workers for `cores` logical cores: one per core but the dreaming worker's, two at least. */
export function decodeThreadsFor(cores: number | undefined, workersAvailable: boolean): DecodeThreads {
  if (!workersAvailable) return { workers: 0, why: 'this browser cannot start a worker from a worker' };
  const n = Math.max(1, Math.floor(cores ?? 1));
  if (n < 2) return { workers: 0, why: `this device reports ${n} core` };
  const workers = Math.min(MAX_DECODE_WORKERS, Math.max(2, n - 1));
  return {
    workers,
    why:
      `this device reports ${n} cores` +
      (crossOriginIsolated() ? '' : '; the page is not cross-origin isolated, so each worker runs one wasm thread') +
      (workers === MAX_DECODE_WORKERS && n - 1 > MAX_DECODE_WORKERS ? `; at most ${MAX_DECODE_WORKERS}` : ''),
  };
}

function crossOriginIsolated(): boolean {
  return (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
}

/** One sentence for the page: where the learned model decodes, and why. */
export function decodeThreadsLine(threads: DecodeThreads): string {
  return threads.workers === 0
    ? `Decoding in the dreaming worker, one thread (${threads.why}).`
    : `Decoding on ${threads.workers} web workers (${threads.why}).`;
}

function webWorkerPort(): DecodePort {
  const worker = new Worker(new URL('./decode.worker.ts', import.meta.url), {
    type: 'module',
    name: 'dreamgym-decode',
  });
  return {
    post: (request) => worker.postMessage(request),
    listen: (onReply, onError) => {
      worker.onmessage = (event: MessageEvent<DecodeReply>) => onReply(event.data);
      worker.onerror = (event) => onError(new Error(event.message || 'the decode worker failed to start'));
    },
    terminate: () => worker.terminate(),
  };
}

/** Starts `count` decode workers with `model` loaded (null when they cannot start: the caller decodes). */
export async function startPageDecoders(
  model: DecodeModel,
  count: number,
  engine: DecodeEngine,
): Promise<ThreadDecoders | null> {
  if (count < 2 || typeof Worker === 'undefined') return null;
  try {
    return await threadDecoders(
      Array.from({ length: count }, () => webWorkerPort()),
      model,
      engine,
    );
  } catch {
    return null;
  }
}
