/**
 * NODE ONLY (src/node/): a worker thread that decodes batches for a learned experience model
 * (decode-pool.ts starts it). It holds its own copy of the network on its own tfjs wasm backend.
 */
import { parentPort } from 'node:worker_threads';
import { serveDecoding, type DecodeRequest } from '../../core/experience/learned/decode-service';
import { initBackend } from '../../core/tfjs/backend';

const serve = serveDecoding(async () => {
  await initBackend('wasm');
});

parentPort!.on('message', (request: DecodeRequest) => {
  void serve(request).then((reply) => parentPort!.postMessage(reply));
});
