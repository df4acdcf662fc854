/**
 * NODE ONLY (src/node/): worker threads that decode a learned experience model's batches side by
 * side (tfjs's wasm backend is single-threaded in Node, so one thread uses one core). A batch is
 * split among them by rows; rows are independent, so the answers are the same as one thread's.
 * Both sides of the conversation are core's decode-service.ts; this file is Node's transport.
 */
import { cpus } from 'node:os';
import { Worker } from 'node:worker_threads';
import {
  threadDecoders,
  type DecodeEngine,
  type DecodeModel,
  type DecodePort,
  type DecodeReply,
  type ThreadDecoders,
} from '../../core/experience/learned/decode-service';

export type { DecodeEngine } from '../../core/experience/learned/decode-service';

/** Decoder threads by default: one per core, at most two (the main thread's work waits for them). */
export function defaultDecodeThreads(): number {
  return Math.min(2, cpus().length);
}

/** One thread as a port. It keeps the process alive only while a request waits (an idle pool never holds the CLI open). */
function workerPort(worker: Worker): DecodePort {
  let waiting = 0;
  return {
    post: (request) => {
      if (waiting++ === 0) worker.ref();
      worker.postMessage(request);
    },
    listen: (onReply, onError) => {
      worker.on('message', (reply: DecodeReply) => {
        if (--waiting === 0) worker.unref();
        onReply(reply);
      });
      worker.on('error', onError);
    },
    terminate: () => worker.terminate(),
  };
}

/** Starts `threads` decoder threads, each loading the model's checked files. */
export async function startDecodePool(
  model: DecodeModel,
  threads: number,
  engine: DecodeEngine = { decoder: 'fused', capacity: 64 },
): Promise<ThreadDecoders> {
  // The CLI runs TypeScript through tsx; the threads register it themselves (decode-worker-boot.mjs).
  const workers = Array.from(
    { length: threads },
    () => new Worker(new URL('./decode-worker-boot.mjs', import.meta.url)),
  );
  return threadDecoders(workers.map(workerPort), model, engine);
}
