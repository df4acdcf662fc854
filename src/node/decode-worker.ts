/**
 * NODE ONLY (src/node/): a worker thread that decodes batches for a learned experience model
 * (decode-pool.ts starts it). It holds its own copy of the network on its own tfjs wasm backend.
 */
import { parentPort } from 'node:worker_threads';
import { decodeLimits } from '../core/experience/learned/decode';
import { Decoder } from '../core/experience/learned/decoder';
import { DEFAULT_FORMAT_OPTIONS } from '../core/experience/learned/format';
import { decodeModelFiles } from '../core/experience/learned/model-file';
import { ExperienceNetwork } from '../core/experience/learned/network';
import { Tokenizer } from '../core/experience/learned/tokenizer';
import { initBackend } from '../core/policy/backend';
import type { DecodePoolMessage, DecodePoolReply } from './decode-pool';

let decoder: Decoder | null = null;

async function handle(message: DecodePoolMessage): Promise<DecodePoolReply> {
  if (message.kind === 'load') {
    await initBackend('wasm');
    const { manifest, weights } = decodeModelFiles(message.manifest, message.weights, message.where);
    const net = ExperienceNetwork.fromWeights(manifest.network, weights);
    const tokenizer = Tokenizer.fromJSON(manifest.tokenizer);
    const f = { ...DEFAULT_FORMAT_OPTIONS, ...manifest.formatOptions };
    decoder = new Decoder(net, tokenizer, decodeLimits(f), message.decoder, message.capacity);
    return { id: message.id, kind: 'loaded' };
  }
  if (!decoder) throw new Error('decode worker: load a model first');
  const { contexts, prompts, kinds, sampling } = message;
  return { id: message.id, kind: 'decoded', decoded: await decoder.decode(contexts, prompts, kinds, sampling) };
}

parentPort!.on('message', (message: DecodePoolMessage) => {
  handle(message).then(
    (reply) => parentPort!.postMessage(reply),
    (error: Error) => parentPort!.postMessage({ id: message.id, kind: 'error', message: error.message }),
  );
});
