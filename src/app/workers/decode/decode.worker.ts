/**
 * A decode worker (docs/architecture.md §9.2: thin): decodes a learned experience model's batches for the
 * trainer or Experience-model worker that started it (decode-workers.ts). The
 * fused decoder runs on its own WebAssembly kernel; tfjs only holds the weights (cpu backend).
 */
import * as tf from '@tensorflow/tfjs';
import { serveDecoding, type DecodeRequest } from '../../../core/experience/learned/decode-service';

const serve = serveDecoding(async () => {
  if (tf.getBackend() !== 'cpu') await tf.setBackend('cpu');
  await tf.ready();
});
self.onmessage = (event: MessageEvent<DecodeRequest>) => {
  void serve(event.data).then((reply) => self.postMessage(reply));
};
