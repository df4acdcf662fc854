/**
 * A trained experience model on disk, in IndexedDB or on a web server: two files.
 *
 *   model.json   what it is (env, domain card, network and format settings, tokenizer), how it
 *                was trained (data, epochs, losses, seed), the weights' names, shapes and places
 *                in weights.bin, the CRC-32 and byte length of weights.bin, and last its own
 *                CRC-32 (manifestCrc32: of the compact JSON of every other field)
 *   weights.bin  every weight as little-endian float32, in the manifest's order
 *
 * Loading checks both files whole: the format, both checksums, every network and format field
 * against its range, the fields against each other and the tokenizer, every weight's name, shape
 * and place against the network's, and every value; it names the file, the field and the fix
 * when something is wrong. A reader hands in the bytes: a folder (Node), IndexedDB or fetch (the
 * page), so core touches no storage itself.
 */
import type { DomainCard } from '../domain-card';
import { answerTokensAtMost, SEGMENT_COUNT, type FormatOptions, type FreshIdShape } from './format';
import type { EpochRecord } from './fit';
import type { NamedWeight, NetworkConfig } from './network';
import { networkConfigProblem, shown, weightShapes, wholeFieldsProblem, type WholeRange } from './weights';
import type { TokenizerJSON } from './tokenizer';
import type { PairAccount } from './sft-data';
import { verdictHeadProblem, type VerdictHead } from './verdict';
import { DreamGymError, type ErrorFacts } from '../../errors';

export const MODEL_FORMAT = 'dreamgym-learned-model/3';
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
    /** Every recorded transition: the pairs made, and those left out by reason (absent in older files). */
    account?: PairAccount;
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
  /** Short name shown in labels, e.g. '<env id> shipped'. */
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
  /** CRC-32 of this manifest without this field, as compact JSON (sealManifest). */
  manifestCrc32: string;
}

export class ModelFileError extends DreamGymError {
  /** A subclass passes the facts of its own cause. */
  constructor(
    message: string,
    facts: ErrorFacts = {
      code: 'model-file-invalid',
      fix: "Give the folder of a learned model this build wrote, or train one ('dreamgym expmodel train').",
    },
  ) {
    super(message, facts);
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
  base: Omit<ModelManifest, 'format' | 'weights' | 'weightsFile' | 'manifestCrc32'>,
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
  const manifest: Omit<ModelManifest, 'manifestCrc32'> = {
    format: MODEL_FORMAT,
    ...base,
    weights: entries,
    weightsFile: { bytes: bytes.length, crc32: crc32(bytes) },
  };
  return { manifest: sealManifest(manifest), weights: bytes };
}

/** model.json's text: the manifest with its own checksum last (any manifestCrc32 it had is replaced). */
export function sealManifest(manifest: Omit<ModelManifest, 'manifestCrc32'> & { manifestCrc32?: string }): string {
  const { manifestCrc32: _old, ...fields } = manifest;
  return `${JSON.stringify({ ...fields, manifestCrc32: manifestChecksum(fields) }, null, 1)}\n`;
}

/** The CRC-32 of a manifest's fields as compact JSON: the same whatever the file's indentation or line ends. */
function manifestChecksum(fields: object): string {
  return crc32(new TextEncoder().encode(JSON.stringify(fields)));
}

/** What reading a model may let pass: a stale verdict head, dropped (expmodel verdict fits a new one). */
export interface DecodeOptions {
  dropStaleVerdict?: boolean;
}

/** Parses and checks the two files; throws ModelFileError naming the file, the field and the fix. */
export function decodeModelFiles(
  manifestText: string,
  weightBytes: Uint8Array,
  where = 'the model folder',
  options: DecodeOptions = {},
): { manifest: ModelManifest; weights: NamedWeight[] } {
  const manifest = sealedManifest(manifestText, where);
  const problem = manifestProblem(manifest);
  if (problem) throw new ModelFileError(`${MANIFEST_FILE} in ${where}: ${problem}. ${REWRITE_FIX}.`);
  const headProblem = manifest.verdict ? verdictHeadProblem(manifest.verdict, manifest.env) : null;
  if (headProblem && options.dropStaleVerdict) delete manifest.verdict;
  else if (headProblem)
    throw new ModelFileError(
      `${MANIFEST_FILE} in ${where}: ${headProblem}. Fit it again ('dreamgym expmodel verdict --model DIR --env ENV') or train the model again.`,
    );
  const expected = manifest.weightsFile;
  if (weightBytes.length !== expected.bytes || crc32(weightBytes) !== expected.crc32) {
    throw new ModelFileError(
      `${WEIGHTS_FILE} in ${where} does not match ${MANIFEST_FILE} (${weightBytes.length} bytes, CRC ${crc32(weightBytes)}; ` +
        `the manifest says ${expected.bytes} bytes, CRC ${expected.crc32}): the two files come from different trainings or one is damaged. Train the model again or copy both files anew.`,
    );
  }
  const values = floatsFromLittleEndian(weightBytes);
  // manifestProblem has checked every entry against the network's shapes and the file's length.
  const weights = manifest.weights.map((w) => ({
    name: w.name,
    shape: w.shape.slice(),
    data: values.slice(w.offset, w.offset + w.length),
  }));
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

/** What to do about a manifest whose fields are wrong though its checksum holds. */
const REWRITE_FIX =
  "The file was edited, or written by another program: train the model again ('dreamgym expmodel train'), " +
  "or copy it anew ('npm run models' re-makes the shipped ones)";

/** The manifest of `text`, of this format and unchanged since it was sealed (its own checksum). */
function sealedManifest(text: string, where: string): ModelManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ModelFileError(
      `${MANIFEST_FILE} in ${where} is not JSON (${(error as Error).message}); the file is damaged: train the model again or copy it anew.`,
    );
  }
  const manifest = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as ModelManifest;
  if (manifest.format !== MODEL_FORMAT) throw new ModelFileError(formatProblem(manifest.format, where));
  const { manifestCrc32: stated, ...fields } = manifest;
  if (typeof stated !== 'string')
    throw new ModelFileError(
      `${MANIFEST_FILE} in ${where} has no manifestCrc32 (its own checksum), so it cannot be checked whole. ` +
        `${REWRITE_FIX}.`,
    );
  const actual = manifestChecksum(fields);
  if (actual !== stated)
    throw new ModelFileError(
      `${MANIFEST_FILE} in ${where} was changed after it was written (CRC ${actual}; it says ${stated}): a trained ` +
        "model's settings cannot be edited. Copy the file anew, or train the model again with the settings you want.",
    );
  return manifest;
}

/** What each whole-number format field of a model file may be (k and history may be 0: the ablations). */
const FORMAT_RANGES: Readonly<Record<Exclude<keyof FormatOptions, 'freshIds'>, WholeRange>> = {
  k: { min: 0, max: 64 },
  historyLength: { min: 0, max: 64 },
  instructionTokens: { min: 1, max: 8192 },
  stateTokens: { min: 1, max: 8192 },
  actionTokens: { min: 1, max: 1024 },
  exampleStateTokens: { min: 1, max: 8192 },
  exampleNextTokens: { min: 1, max: 8192 },
  firstExampleNextTokens: { min: 1, max: 8192 },
  maxAdmissible: { min: 1, max: 4096 },
  admissibleActionTokens: { min: 1, max: 1024 },
  admissibleListTokens: { min: 1, max: 8192 },
  contextTokens: { min: 1, max: 65_536 },
  answerStateTokens: { min: 1, max: 8192 },
  answerAdmissibleTokens: { min: 1, max: 8192 },
};

const FRESH_ID_RANGES: Readonly<Record<Exclude<keyof FreshIdShape, 'prefix'>, WholeRange>> = {
  count: { min: 1, max: 1024 },
  length: { min: 1, max: 64 },
};

/** Why `options` (a model file's `formatOptions`) are not format options this code reads, or null. */
export function formatOptionsProblem(options: unknown): string | null {
  const problem = wholeFieldsProblem(options, 'formatOptions', FORMAT_RANGES, ['freshIds']);
  if (problem) return problem;
  const fresh = (options as FormatOptions).freshIds;
  if (fresh === null) return null;
  const freshProblem = wholeFieldsProblem(fresh, 'formatOptions.freshIds', FRESH_ID_RANGES, ['prefix']);
  if (freshProblem) return freshProblem;
  if (typeof fresh.prefix !== 'string' || fresh.prefix.length > fresh.length)
    return `formatOptions.freshIds.prefix is ${shown(fresh.prefix)}; it must be text no longer than freshIds.length`;
  return null;
}

/** The first field of a (sealed) manifest that is missing, out of range or at odds with another; null: none. */
function manifestProblem(m: ModelManifest): string | null {
  if (typeof m.name !== 'string' || typeof m.env !== 'string') return 'its name or env is missing';
  if (typeof m.card !== 'object' || m.card === null) return 'its domain card is missing';
  if (typeof m.training !== 'object' || m.training === null) return 'its training record is missing';
  const pieces = m.tokenizer?.pieces;
  if (
    m.tokenizer?.format !== 'dreamgym-tokenizer/1' ||
    !Array.isArray(pieces) ||
    pieces.some((p) => typeof p !== 'string')
  )
    return "tokenizer is not a DreamGym tokenizer (format 'dreamgym-tokenizer/1' and its pieces)";
  return (
    networkConfigProblem(m.network) ??
    formatOptionsProblem(m.formatOptions) ??
    settingsAgreementProblem(m) ??
    weightsListProblem(m)
  );
}

/** The network, the format options and the tokenizer against each other. */
function settingsAgreementProblem({ network: n, formatOptions: f, tokenizer }: ModelManifest): string | null {
  if (n.segments !== SEGMENT_COUNT)
    return `network.segments is ${n.segments}; this build's format has ${SEGMENT_COUNT} segments`;
  if (n.vocabSize !== tokenizer.pieces.length)
    return `network.vocabSize (${n.vocabSize}) does not match the tokenizer (${tokenizer.pieces.length} pieces)`;
  if (f.contextTokens > n.maxContext)
    return `formatOptions.contextTokens (${f.contextTokens}) exceeds network.maxContext (${n.maxContext})`;
  const answer = answerTokensAtMost(f);
  if (answer > n.maxAnswer)
    return (
      `an answer of up to ${answer} tokens (prompt, marks, formatOptions.answerStateTokens and ` +
      `answerAdmissibleTokens) exceeds network.maxAnswer (${n.maxAnswer})`
    );
  const pieces = new Set(tokenizer.pieces);
  let placeholders = 0;
  while (pieces.has(`<id${placeholders + 1}>`)) placeholders++;
  if (f.freshIds && f.freshIds.count > placeholders)
    return (
      `formatOptions.freshIds.count (${f.freshIds.count}) exceeds the tokenizer's ` +
      `${placeholders} fresh-id placeholders`
    );
  return null;
}

/** The weights list against the network's shapes, in order, each starting where the one before ends. */
function weightsListProblem(m: ModelManifest): string | null {
  if (!Array.isArray(m.weights)) return "its 'weights' list is missing";
  const file = m.weightsFile;
  if (typeof file !== 'object' || file === null || !Number.isInteger(file.bytes) || typeof file.crc32 !== 'string')
    return 'weightsFile (the byte length and CRC-32 of weights.bin) is missing';
  const shapes = weightShapes(m.network);
  let offset = 0;
  for (let i = 0; i < shapes.length; i++) {
    const [name, shape] = shapes[i];
    const entry = m.weights[i];
    if (entry?.name !== name)
      return `the 'weights' list has no weight '${name}' at place ${i}${entry ? ` (it has ${shown(entry.name)})` : ''}`;
    if (shown(entry.shape) !== shown(shape))
      return `weight '${name}' has shape ${shown(entry.shape)}; network needs [${shape}]`;
    const size = shape.reduce((a, b) => a * b, 1);
    if (entry.length !== size) return `weight '${name}' says ${shown(entry.length)} values; its shape holds ${size}`;
    if (entry.offset !== offset)
      return (
        `weight '${name}' starts at ${shown(entry.offset)}; ` + `it must start where the one before it ends (${offset})`
      );
    offset += size;
  }
  if (m.weights.length > shapes.length)
    return `the 'weights' list has a weight ${shown(m.weights[shapes.length]?.name)} the network does not have`;
  if (offset * 4 !== file.bytes) return `the weights take ${offset * 4} bytes; weightsFile.bytes says ${file.bytes}`;
  return null;
}

/** Why a manifest's format is not this build's, and the fix. */
function formatProblem(format: unknown, where: string): string {
  const older = typeof format === 'string' && /^dreamgym-learned-model\/\d+$/.test(format) && format !== MODEL_FORMAT;
  if (!older)
    return `${MANIFEST_FILE} in ${where} is not a learned experience model (format '${String(format)}', expected '${MODEL_FORMAT}').`;
  return (
    `${MANIFEST_FILE} in ${where} is a learned model of format '${format}'; this build reads '${MODEL_FORMAT}' ` +
    '(model.json carries its own checksum, and every setting is checked against the weights). ' +
    "Re-make the shipped models with 'npm run models', and train your own again " +
    "('dreamgym expmodel train', or the Experience model page)."
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
