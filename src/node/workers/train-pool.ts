/**
 * NODE ONLY (src/node/): helper threads for a learned model's training. tfjs's wasm backend runs
 * one thread, so a batch's shards (fit.ts FitOptions.shards) go to other threads: each holds its
 * own copy of the network, takes the weights with every shard and returns the shard's gradients;
 * the training thread sums the shards in shard order, so the weights do not depend on the threads.
 */
import { Worker } from 'node:worker_threads';
import type { GradientHelper, ShardGradients, ShardRequest } from '../../core/experience/learned/fit';

export type TrainHelperRequest = { id: number; kind: 'gradients' } & ShardRequest;

export type TrainHelperReply =
  { id: number; kind: 'gradients'; result: ShardGradients } | { id: number; kind: 'error'; message: string };

export interface TrainHelpers {
  helpers: GradientHelper[];
  close(): Promise<void>;
}

/** One thread as a helper: its shards are answered in the order sent (the thread works through its queue). */
function helperThread(worker: Worker): GradientHelper {
  let nextId = 0;
  const waiting = new Map<number, { resolve: (r: ShardGradients) => void; reject: (e: Error) => void }>();
  worker.on('message', (reply: TrainHelperReply) => {
    const wait = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (reply.kind === 'error') wait?.reject(new Error(`training thread: ${reply.message}`));
    else wait?.resolve(reply.result);
  });
  worker.on('error', (error) => {
    for (const wait of waiting.values()) wait.reject(error);
    waiting.clear();
  });
  return {
    gradients: (shard) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        worker.postMessage({ ...shard, id, kind: 'gradients' } satisfies TrainHelperRequest);
      }),
  };
}

/** Starts `count` helper threads (each builds its network from the first shard it gets). */
export function startTrainHelpers(count: number): TrainHelpers {
  // The CLI runs TypeScript through tsx; the threads register it themselves (train-worker-boot.mjs).
  const workers = Array.from({ length: count }, () => new Worker(new URL('./train-worker-boot.mjs', import.meta.url)));
  return {
    helpers: workers.map(helperThread),
    close: async () => {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
