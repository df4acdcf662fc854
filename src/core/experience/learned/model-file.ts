/**
 * A trained experience model on disk, in IndexedDB or on a web server: two files.
 *
 *   model.json   what it is (env, domain card, network and format settings, tokenizer), how it
 *                was trained (data, epochs, losses, seed), the weights' names, shapes and places
 *                in weights.bin, and the CRC-32 and byte length of weights.bin
 *   weights.bin  every weight as little-endian float32, in the manifest's order
 *
 * Loading checks the format, the checksum, the length and every shape, and names the file and
 * the fix when something is wrong. A reader hands in the bytes: a folder (Node), IndexedDB or
 * fetch (the page), so core touches no storage itself.
 */
import type { DomainCard } from '../domain-card';
import type { FormatOptions } from './format';
import type { EpochRecord } from './fit';
import type { NamedWeight, NetworkConfig } from './network';
import type { TokenizerJSON } from './tokenizer';
import { verdictHeadProblem, type VerdictHead } from './verdict';

export const MODEL_FORMAT = 'dreamgym-learned-model/2';
export const MANIFEST_FILE = 'model.json';
export const WEIGHTS_FILE = 'weights.bin';

export interface TrainingRecord {
  /** What the model learned from: episodes and pairs, split by task. */
  data: {
    source: string;
    episodes: number;
    trainEpisodes: number;
    validationEpisodes: number;
    trainPairs: number;
    validationPairs: number;
    heldOutDropped: number;
  };
  seed: number;
  epochs: EpochRecord[];
  bestEpoch: number;
  bestValidationLoss: number;
  /** Wall seconds of training, and context+answer tokens per second. */
  seconds: number;
  tokensPerSecond: number;
  backend: string;
}

export interface ModelManifest {
  format: typeof MODEL_FORMAT;
  /** Short name shown in labels, e.g. 'webshop-lite-v0 shipped'. */
  name: string;
  env: string;
  card: DomainCard;
  network: NetworkConfig;
  formatOptions: FormatOptions;
  tokenizer: TokenizerJSON;
  training: TrainingRecord;
  /** The reward at an episode's end, judged from comparison features (verdict.ts); absent: the generator's. */
  verdict?: VerdictHead;
  weights: { name: string; shape: number[]; offset: number; length: number }[];
  weightsFile: { bytes: number; crc32: string };
}

export class ModelFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelFileError';
  }
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE) of bytes, as 8 hex digits. */
export function crc32(bytes: Uint8Array): string {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ((c ^ 0xffffffff) >>> 0).toString(16).padStart(8, '0');
}

/** The two files of a model: the manifest text and the weight bytes. */
export function encodeModelFiles(
  base: Omit<ModelManifest, 'format' | 'weights' | 'weightsFile'>,
  weights: readonly NamedWeight[],
): { manifest: string; weights: Uint8Array } {
  const total = weights.reduce((s, w) => s + w.data.length, 0);
  const all = new Float32Array(total);
  const entries: ModelManifest['weights'] = [];
  let offset = 0;
  for (const w of weights) {
    all.set(w.data, offset);
    entries.push({ name: w.name, shape: w.shape.slice(), offset, length: w.data.length });
    offset += w.data.length;
  }
  const bytes = littleEndianBytes(all);
  const manifest: ModelManifest = {
    format: MODEL_FORMAT,
    ...base,
    weights: entries,
    weightsFile: { bytes: bytes.length, crc32: crc32(bytes) },
  };
  return { manifest: `${JSON.stringify(manifest, null, 1)}\n`, weights: bytes };
}

/** What reading a model may let pass: a stale verdict head, dropped (expmodel verdict fits a new one). */
export interface DecodeOptions {
  dropStaleVerdict?: boolean;
}

/** Parses and checks the two files; throws ModelFileError naming the file and the fix. */
export function decodeModelFiles(
  manifestText: string,
  weightBytes: Uint8Array,
  where = 'the model folder',
  options: DecodeOptions = {},
): { manifest: ModelManifest; weights: NamedWeight[] } {
  let manifest: ModelManifest;
  try {
    manifest = JSON.parse(manifestText.replace(/^\uFEFF/, '')) as ModelManifest;
  } catch (error) {
    throw new ModelFileError(
      `${MANIFEST_FILE} in ${where} is not JSON (${(error as Error).message}); the file is damaged: train the model again or copy it anew.`,
    );
  }
  if (manifest?.format !== MODEL_FORMAT) throw new ModelFileError(formatProblem(manifest?.format, where));
  const headProblem = manifest.verdict ? verdictHeadProblem(manifest.verdict) : null;
  if (headProblem && options.dropStaleVerdict) delete manifest.verdict;
  else if (headProblem)
    throw new ModelFileError(
      `${MANIFEST_FILE} in ${where}: ${headProblem}. Fit it again ('dreamgym expmodel verdict --model DIR --env ENV') or train the model again.`,
    );
  const expected = manifest.weightsFile;
  if (weightBytes.length !== expected?.bytes || crc32(weightBytes) !== expected.crc32) {
    throw new ModelFileError(
      `${WEIGHTS_FILE} in ${where} does not match ${MANIFEST_FILE} (${weightBytes.length} bytes, CRC ${crc32(weightBytes)}; ` +
        `the manifest says ${expected?.bytes} bytes, CRC ${expected?.crc32}): the two files come from different trainings or one is damaged. Train the model again or copy both files anew.`,
    );
  }
  const values = floatsFromLittleEndian(weightBytes);
  const weights = manifest.weights.map((w) => {
    const size = w.shape.reduce((a, b) => a * b, 1);
    if (size !== w.length || w.offset < 0 || w.offset + w.length > values.length) {
      throw new ModelFileError(
        `${MANIFEST_FILE} in ${where}: weight '${w.name}' (shape [${w.shape}], ${w.length} values at ${w.offset}) does not fit ${WEIGHTS_FILE}.`,
      );
    }
    return { name: w.name, shape: w.shape.slice(), data: values.slice(w.offset, w.offset + w.length) };
  });
  for (const w of weights) {
    for (let i = 0; i < w.data.length; i++) {
      if (!Number.isFinite(w.data[i]))
        throw new ModelFileError(
          `${WEIGHTS_FILE} in ${where}: weight '${w.name}' holds ${w.data[i]} at ${i}; the model diverged or the file is damaged. Train it again.`,
        );
    }
  }
  return { manifest, weights };
}

/** Why a manifest's format is not this build's, and the fix. */
function formatProblem(format: unknown, where: string): string {
  const older = typeof format === 'string' && /^dreamgym-learned-model\/\d+$/.test(format) && format !== MODEL_FORMAT;
  if (!older)
    return `${MANIFEST_FILE} in ${where} is not a learned experience model (format '${String(format)}', expected '${MODEL_FORMAT}').`;
  return (
    `${MANIFEST_FILE} in ${where} is a learned model of format '${format}'; this build reads '${MODEL_FORMAT}' ` +
    `(the recipe's switches are fixed and the segment table has one row per segment). Re-make the shipped models with ` +
    `'npm run models', and train your own again ('dreamgym expmodel train', or the Experience model page).`
  );
}

function littleEndianBytes(values: Float32Array): Uint8Array {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i], true);
  return bytes;
}

function floatsFromLittleEndian(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(Math.floor(bytes.length / 4));
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/** Reads a model's files by name (a folder, IndexedDB, or fetch from a URL). */
export type ModelFileReader = (file: typeof MANIFEST_FILE | typeof WEIGHTS_FILE) => Promise<string | Uint8Array>;

export async function readModelFiles(
  read: ModelFileReader,
  where: string,
  options: DecodeOptions = {},
): Promise<{ manifest: ModelManifest; weights: NamedWeight[] }> {
  const manifest = await read(MANIFEST_FILE);
  const weights = await read(WEIGHTS_FILE);
  const text = typeof manifest === 'string' ? manifest : new TextDecoder().decode(manifest);
  const bytes = typeof weights === 'string' ? new TextEncoder().encode(weights) : weights;
  return decodeModelFiles(text, bytes, where, options);
}

// ---- training checkpoints ----------------------------------------------------------------------

export const CHECKPOINT_FORMAT = 'dreamgym-learned-checkpoint/2';

/** Named groups of tensors in one blob (a checkpoint: weights, optimizer state, best weights). */
export function encodeTensorGroups(groups: Record<string, readonly NamedWeight[]>): {
  index: Record<string, ModelManifest['weights']>;
  bytes: Uint8Array;
  crc32: string;
} {
  const all: NamedWeight[] = [];
  const index: Record<string, ModelManifest['weights']> = {};
  let offset = 0;
  for (const [group, weights] of Object.entries(groups)) {
    index[group] = weights.map((w) => {
      const entry = { name: w.name, shape: w.shape.slice(), offset, length: w.data.length };
      offset += w.data.length;
      all.push(w);
      return entry;
    });
  }
  const values = new Float32Array(offset);
  let at = 0;
  for (const w of all) {
    values.set(w.data, at);
    at += w.data.length;
  }
  const bytes = littleEndianBytes(values);
  return { index, bytes, crc32: crc32(bytes) };
}

export function decodeTensorGroups(
  index: Record<string, ModelManifest['weights']>,
  bytes: Uint8Array,
  expectedCrc: string,
  where: string,
): Record<string, NamedWeight[]> {
  if (crc32(bytes) !== expectedCrc) {
    throw new ModelFileError(
      `The checkpoint data in ${where} does not match its manifest (CRC ${crc32(bytes)}, expected ${expectedCrc}): it is damaged. ` +
        'Delete the checkpoint and train again (or keep the last finished model).',
    );
  }
  const values = floatsFromLittleEndian(bytes);
  const out: Record<string, NamedWeight[]> = {};
  for (const [group, entries] of Object.entries(index)) {
    out[group] = entries.map((e) => {
      if (e.offset < 0 || e.offset + e.length > values.length)
        throw new ModelFileError(`The checkpoint in ${where}: tensor '${e.name}' lies outside its data file.`);
      return { name: e.name, shape: e.shape.slice(), data: values.slice(e.offset, e.offset + e.length) };
    });
  }
  return out;
}
