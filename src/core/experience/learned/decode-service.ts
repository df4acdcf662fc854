/**
 * Decoding in other threads: Node's worker threads (src/node/workers/decode-pool.ts) and the page's web
 * workers (src/app/workers/decode/decode-workers.ts) run the same two halves over their own message API.
 *
 *   serveDecoding     the thread's side: loads the model's checked files into its own network and
 *                     decoder, then answers each batch it is sent
 *   threadDecoders    the caller's side: each thread as a BatchDecoder for LearnedExperienceModel,
 *                     which splits a batch among them by rows (rows are independent, so the answers
 *                     are the same as decoding in one thread)
 *
 * Messages are structured-cloneable (the weights travel as Float32Arrays), so both hosts can carry them.
 */
import { Decoder, type Decoded, type DecoderKind } from './decode';
import { decodeLimits, DEFAULT_FORMAT_OPTIONS } from './format';
import type { BatchDecoder } from './learned-model';
import type { ModelManifest } from './model-file';
import { ExperienceNetwork, type NamedWeight } from './network';
import { Tokenizer } from './tokenizer';

/** The decoding engine of every thread, and the rows each keeps in flight. */
export interface DecodeEngine {
  decoder: DecoderKind;
  capacity: number;
}

export type DecodeBatch = Parameters<BatchDecoder>[0];

/** A model's checked files (model-file.ts readModelFiles has verified checksum, shapes and values). */
export interface DecodeModel {
  manifest: ModelManifest;
  weights: NamedWeight[];
}

export type DecodeRequest =
  ({ id: number; kind: 'load' } & DecodeModel & DecodeEngine) | ({ id: number; kind: 'decode' } & DecodeBatch);

export type DecodeReply =
  | { id: number; kind: 'loaded' }
  | { id: number; kind: 'decoded'; decoded: Decoded[] }
  | { id: number; kind: 'error'; message: string };

/**
 * The thread's side: a handler answering one request at a time. `prepare` readies tfjs in the
 * thread (the network's weights live in tfjs variables; the fused decoder copies them out once).
 */
export function serveDecoding(prepare: () => Promise<void>): (request: DecodeRequest) => Promise<DecodeReply> {
  let decoder: Decoder | null = null;
  const handle = async (request: DecodeRequest): Promise<DecodeReply> => {
    if (request.kind === 'load') {
      await prepare();
      const { manifest, weights } = request;
      decoder?.net.dispose();
      decoder?.dispose();
      const net = ExperienceNetwork.fromWeights(manifest.network, weights);
      const limits = decodeLimits({ ...DEFAULT_FORMAT_OPTIONS, ...manifest.formatOptions });
      decoder = new Decoder(net, Tokenizer.fromJSON(manifest.tokenizer), limits, request.decoder, request.capacity);
      return { id: request.id, kind: 'loaded' };
    }
    if (!decoder) throw new Error('decode thread: load a model first');
    const { contexts, prompts, kinds, sampling } = request;
    return { id: request.id, kind: 'decoded', decoded: await decoder.decode(contexts, prompts, kinds, sampling) };
  };
  return (request) =>
    handle(request).catch((error: Error) => ({ id: request.id, kind: 'error', message: error.message }) as const);
}

/** How the caller talks to one thread (Node's Worker and the web's Worker differ only here). */
export interface DecodePort {
  post(request: DecodeRequest): void;
  /** Calls `onReply` with every reply, `onError` when the thread itself fails. */
  listen(onReply: (reply: DecodeReply) => void, onError: (error: Error) => void): void;
  terminate(): Promise<unknown> | void;
}

export interface ThreadDecoders {
  decoders: BatchDecoder[];
  close(): Promise<void>;
}

/** Loads `model` into every port's thread and returns them as decoders (the threads are stopped if one fails to load). */
export async function threadDecoders(
  ports: readonly DecodePort[],
  model: DecodeModel,
  engine: DecodeEngine,
): Promise<ThreadDecoders> {
  const calls = ports.map(portCaller);
  const close = async () => {
    await Promise.all(ports.map((p) => p.terminate()));
  };
  try {
    await Promise.all(calls.map((call) => call({ kind: 'load', ...model, ...engine })));
  } catch (error) {
    await close();
    throw error;
  }
  return {
    decoders: calls.map((call) => async (batch) => {
      const reply = await call({ kind: 'decode', ...batch });
      return (reply as Extract<DecodeReply, { kind: 'decoded' }>).decoded;
    }),
    close,
  };
}

type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never;

/** Requests to one thread, each answered by the reply with its id. */
function portCaller(port: DecodePort): (request: Unnumbered<DecodeRequest>) => Promise<DecodeReply> {
  const waiting = new Map<number, { resolve: (r: DecodeReply) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  port.listen(
    (reply) => {
      const call = waiting.get(reply.id);
      if (!call) return;
      waiting.delete(reply.id);
      if (reply.kind === 'error') call.reject(new Error(`decode thread: ${reply.message}`));
      else call.resolve(reply);
    },
    (error) => {
      for (const call of waiting.values()) call.reject(error);
      waiting.clear();
    },
  );
  return (request) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      port.post({ ...request, id } as DecodeRequest);
    });
}
