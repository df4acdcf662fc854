/**
 * NODE ONLY (src/node/): worker threads that decode a learned experience model's batches side by
 * side (tfjs's wasm backend is single-threaded in Node, so one thread uses one core). A batch is
 * split among them by rows; rows are independent, so the answers are the same as one thread's.
 */
import { cpus } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { AnswerKind, Decoded, Sampling } from '../core/experience/learned/decode';
import type { Sequence } from '../core/experience/learned/format';
import type { BatchDecoder } from '../core/experience/learned/learned-model';
import type { DecoderKind } from '../core/experience/learned/decoder';
import type { Tokens } from '../core/experience/learned/tokenizer';

export type DecodePoolMessage =
  | ({ id: number; kind: 'load'; manifest: string; weights: Uint8Array; where: string } & DecodeEngine)
  | { id: number; kind: 'decode'; contexts: Sequence[]; prompts: Tokens[]; kinds: AnswerKind[]; sampling: Sampling };

/** The decoding engine of every thread, and the rows each keeps in flight. */
export interface DecodeEngine {
  decoder: DecoderKind;
  capacity: number;
}

export type DecodePoolReply =
  | { id: number; kind: 'loaded' }
  | { id: number; kind: 'decoded'; decoded: Decoded[] }
  | { id: number; kind: 'error'; message: string };

export interface DecodePool {
  decoders: BatchDecoder[];
  close(): Promise<void>;
}

/** Decoder threads by default: one per core, at most two (the main thread's work waits for them). */
export function defaultDecodeThreads(): number {
  return Math.min(2, cpus().length);
}

/** Starts `threads` decoder threads, each loading the model from its two files. */
export async function startDecodePool(
  files: { manifest: string; weights: Uint8Array },
  threads: number,
  where: string,
  engine: DecodeEngine = { decoder: 'fused', capacity: 64 },
): Promise<DecodePool> {
  // The CLI runs TypeScript through tsx; the threads register it themselves (decode-worker-boot.mjs).
  const workers = Array.from(
    { length: threads },
    () => new Worker(new URL('./decode-worker-boot.mjs', import.meta.url)),
  );
  let nextId = 0;
  type Request =
    | ({ kind: 'load'; manifest: string; weights: Uint8Array; where: string } & DecodeEngine)
    | { kind: 'decode'; contexts: Sequence[]; prompts: Tokens[]; kinds: AnswerKind[]; sampling: Sampling };
  const call = (worker: Worker, message: Request): Promise<DecodePoolReply> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const onMessage = (reply: DecodePoolReply) => {
        if (reply.id !== id) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        if (reply.kind === 'error') reject(new Error(`decode thread: ${reply.message}`));
        else resolve(reply);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
      worker.postMessage({ ...message, id } as DecodePoolMessage);
    });
  try {
    await Promise.all(
      workers.map((w) => call(w, { kind: 'load', manifest: files.manifest, weights: files.weights, where, ...engine })),
    );
  } catch (error) {
    await Promise.all(workers.map((w) => w.terminate()));
    throw error;
  }
  for (const w of workers) w.unref();
  return {
    decoders: workers.map((w) => async (batch) => {
      const reply = await call(w, { kind: 'decode', ...batch });
      return (reply as Extract<DecodePoolReply, { kind: 'decoded' }>).decoded;
    }),
    close: async () => {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
