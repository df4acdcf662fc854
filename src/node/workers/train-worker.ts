/**
 * NODE ONLY (src/node/): a helper thread of a learned model's training (train-pool.ts starts it).
 * It computes shards' gradients on its own copy of the network, with the weights each shard brings.
 */
import * as tf from '@tensorflow/tfjs';
import { parentPort } from 'node:worker_threads';
import { shardGradients, type ShardGradients, type ShardRequest } from '../../core/experience/learned/fit';
import { ExperienceNetwork } from '../../core/experience/learned/network';
import { initBackend } from '../../core/tfjs/backend';
import type { TrainHelperReply, TrainHelperRequest } from './train-pool';

let net: ExperienceNetwork | null = null;
let netConfig = '';

async function gradients(shard: ShardRequest): Promise<ShardGradients> {
  const config = JSON.stringify(shard.config);
  if (!net || config !== netConfig) {
    await initBackend('wasm');
    net?.dispose();
    net = ExperienceNetwork.fromWeights(shard.config, shard.weights);
    netConfig = config;
  } else net.setWeights(shard.weights);
  const { loss, grads } = shardGradients(net, shard.batch, shard.normalizer);
  const result: ShardGradients = { loss: loss.dataSync()[0], grads: {} };
  // Copies: a backend may hand out its own storage, and these buffers move to the other thread.
  for (const [name, grad] of grads) result.grads[name] = (grad.dataSync() as Float32Array).slice();
  tf.dispose([loss, ...grads.values()]);
  return result;
}

parentPort!.on('message', (request: TrainHelperRequest) => {
  gradients(request).then(
    (result) => {
      const reply: TrainHelperReply = { id: request.id, kind: 'gradients', result };
      parentPort!.postMessage(
        reply,
        Object.values(result.grads).map((g) => g.buffer as ArrayBuffer),
      );
    },
    (error: Error) => parentPort!.postMessage({ id: request.id, kind: 'error', message: error.message }),
  );
});
