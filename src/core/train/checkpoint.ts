/**
 * Checkpoints: a trainer's state as a small JSON manifest plus one binary blob of float32
 * weights (policy, then optimizer slots). The same pair is stored as two files in Node
 * (src/node/checkpoint-folder.ts) and as one record in IndexedDB in the browser (below).
 *
 * A checkpoint is checked before it is used: the manifest's fields (iteration, step counts, every
 * tensor's shape, offset and length), the blob's length and CRC-32 (the manifest's `weights`), and
 * every value (no NaN or infinity). A mismatch is a CheckpointFormatError naming the file and the
 * fix, never a run that silently trains on from damaged or mixed state.
 */
import { openDB, type IDBPDatabase } from 'idb';
import { crc32 } from '../experience/learned/model-file';
import { featureSchemaProblem, type FeatureSchema } from '../policy/feature-schema';
import type { TrainerState } from './loop';
import { DreamGymError } from '../errors';

export interface TensorEntry {
  name: string;
  shape: number[];
  offset: number;
  length: number;
}

/** Which run a checkpoint belongs to: a run folder's run.json (src/node/run-identity.ts), saved in each checkpoint. */
export interface RunIdentity {
  /** Made when the run starts; absent for runs started before runs had one (their seed and preset still count). */
  id?: string;
  seed: number;
  preset: string;
}

export interface CheckpointManifest {
  format: 'dreamgym-checkpoint/2';
  /** The run that saved it (a folder store's; absent in older checkpoints: then config's seed and preset). */
  run?: RunIdentity;
  config: TrainerState['config'];
  iteration: number;
  realSteps: number;
  dreamSteps?: number;
  /** S2R correction rounds (dream-correction.ts): what each replayed, so a resumed run rebuilds its model. */
  corrections?: TrainerState['corrections'];
  curriculum?: TrainerState['curriculum'];
  /** The policy's feature schema (its features depend on it, and so its weights). */
  featureSchema: FeatureSchema;
  policySignature: string;
  policy: TensorEntry[];
  optimizer: TensorEntry[];
  /** Float32 values in the blob. */
  totalValues: number;
  /**
   * The blob as bytes (float32, little-endian): length and CRC-32, and in a folder the file that
   * holds it. Absent in checkpoints written before checks (they load with the other checks only).
   */
  weights?: { bytes: number; crc32: string; file?: string };
}

export class CheckpointFormatError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'checkpoint-damaged',
      fix: 'Resume from an intact checkpoint, or start the run again in a new folder.',
    });
    this.name = 'CheckpointFormatError';
  }
}

/** Where a checkpoint's two parts live, and what to do when they do not check out (for messages). */
export interface CheckpointPlace {
  manifest: string;
  weights: string;
  fix: string;
}

const UNNAMED_PLACE: CheckpointPlace = {
  manifest: 'the checkpoint manifest',
  weights: 'the checkpoint weights',
  fix: 'Start the run over.',
};

/** The blob's bytes (little-endian float32: every platform tfjs runs on). */
export function blobBytes(blob: Float32Array): Uint8Array {
  return new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength);
}

export function serializeCheckpoint(state: TrainerState): { manifest: CheckpointManifest; blob: Float32Array } {
  let offset = 0;
  const place = (t: { name: string; shape: number[]; data: Float32Array }): TensorEntry => {
    const entry = { name: t.name, shape: t.shape, offset, length: t.data.length };
    offset += t.data.length;
    return entry;
  };
  const policy = state.policy.tensors.map(place);
  const optimizer = state.optimizer.map(place);
  const blob = new Float32Array(offset);
  for (const [entries, tensors] of [
    [policy, state.policy.tensors],
    [optimizer, state.optimizer],
  ] as const) {
    entries.forEach((e, i) => blob.set(tensors[i].data, e.offset));
  }
  const bytes = blobBytes(blob);
  return {
    manifest: {
      format: 'dreamgym-checkpoint/2',
      config: state.config,
      iteration: state.iteration,
      realSteps: state.realSteps,
      ...(state.dreamSteps !== undefined ? { dreamSteps: state.dreamSteps } : {}),
      ...(state.corrections ? { corrections: state.corrections } : {}),
      ...(state.curriculum ? { curriculum: state.curriculum } : {}),
      featureSchema: state.featureSchema,
      policySignature: state.policy.signature,
      policy,
      optimizer,
      totalValues: offset,
      weights: { bytes: bytes.length, crc32: crc32(bytes) },
    },
    blob,
  };
}

const isCount = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;

/** A correction round as the trainer saves it: its iteration, its plans (task, start, actions) and real steps. */
function isCorrectionRecord(r: unknown): boolean {
  const record = r as { iteration?: unknown; steps?: unknown; plans?: unknown } | null;
  const plan = (p: { task?: unknown; start?: unknown; actions?: unknown } | null) =>
    typeof p?.task === 'object' &&
    p.task !== null &&
    typeof p.start === 'string' &&
    Array.isArray(p.actions) &&
    p.actions.every((a) => typeof a === 'string');
  return (
    isCount(record?.iteration) && isCount(record?.steps) && Array.isArray(record?.plans) && record.plans.every(plan)
  );
}

/** What is wrong with the manifest's own fields (null: nothing). */
function manifestProblem(m: CheckpointManifest): string | null {
  if (m?.format !== 'dreamgym-checkpoint/2')
    return (
      `it is not a DreamGym checkpoint of this version: format is '${String(m?.format)}', expected ` +
      "'dreamgym-checkpoint/2' (a policy saved with its feature schema)"
    );
  for (const key of ['iteration', 'realSteps', 'totalValues'] as const) {
    if (!isCount(m[key])) return `'${key}' must be a whole number ≥ 0, got ${JSON.stringify(m[key])}`;
  }
  if (m.dreamSteps !== undefined && !isCount(m.dreamSteps))
    return `'dreamSteps' must be a whole number ≥ 0, got ${JSON.stringify(m.dreamSteps)}`;
  if (m.corrections !== undefined && !(Array.isArray(m.corrections) && m.corrections.every(isCorrectionRecord)))
    return "'corrections' must be a list of correction rounds ({ iteration, plans, steps })";
  if (typeof m.config !== 'object' || m.config === null || Array.isArray(m.config)) return "'config' must be an object";
  const schema = featureSchemaProblem(m.featureSchema);
  if (schema) return schema;
  if (typeof m.policySignature !== 'string') return "'policySignature' must be a string";
  if (!Array.isArray(m.policy) || !Array.isArray(m.optimizer))
    return "'policy' and 'optimizer' must be lists of tensors";
  for (const e of [...m.policy, ...m.optimizer]) {
    const shapeOk = Array.isArray(e?.shape) && e.shape.every(isCount);
    const size = shapeOk ? e.shape.reduce((a, b) => a * b, 1) : -1;
    if (
      typeof e?.name !== 'string' ||
      !shapeOk ||
      !isCount(e.offset) ||
      e.length !== size ||
      e.offset + e.length > m.totalValues
    ) {
      return `tensor '${String(e?.name)}' (shape ${JSON.stringify(e?.shape)}, ${String(e?.length)} values at ${String(e?.offset)}) does not fit its ${m.totalValues} values`;
    }
  }
  return null;
}

/** What is wrong with the blob against the manifest (null: nothing). */
function blobProblem(m: CheckpointManifest, blob: Float32Array): string | null {
  if (!(blob instanceof Float32Array)) return 'the weights are not float32 values';
  if (blob.length !== m.totalValues) {
    return `the weights are truncated or from another checkpoint: ${blob.length} values, the manifest lists ${m.totalValues}`;
  }
  if (m.weights !== undefined) {
    const sum = crc32(blobBytes(blob));
    if (blob.byteLength !== m.weights.bytes || sum !== m.weights.crc32) {
      return (
        `the weights do not match the manifest (${blob.byteLength} bytes, CRC ${sum}; the manifest says ${m.weights.bytes} bytes, CRC ${m.weights.crc32}): ` +
        'they are damaged, or from another save (a mix of two iterations)'
      );
    }
  }
  for (const e of [...m.policy, ...m.optimizer]) {
    for (let i = e.offset; i < e.offset + e.length; i++) {
      if (!Number.isFinite(blob[i]))
        return `tensor '${e.name}' holds ${blob[i]} at index ${i - e.offset}: the weights are damaged or the run diverged`;
    }
  }
  return null;
}

/** Checks a checkpoint (see the file comment) and returns its state; CheckpointFormatError names the part and the fix. */
export function deserializeCheckpoint(
  manifest: CheckpointManifest,
  blob: Float32Array,
  place: CheckpointPlace = UNNAMED_PLACE,
): TrainerState {
  const inManifest = manifestProblem(manifest);
  if (inManifest) throw new CheckpointFormatError(`${place.manifest}: ${inManifest}. ${place.fix}`);
  const inBlob = blobProblem(manifest, blob);
  if (inBlob) throw new CheckpointFormatError(`${place.weights}: ${inBlob}. ${place.fix}`);
  const read = (e: TensorEntry) => ({ name: e.name, shape: e.shape, data: blob.slice(e.offset, e.offset + e.length) });
  return {
    format: 'dreamgym-checkpoint/2',
    config: manifest.config,
    featureSchema: manifest.featureSchema,
    iteration: manifest.iteration,
    realSteps: manifest.realSteps,
    ...(manifest.dreamSteps !== undefined ? { dreamSteps: manifest.dreamSteps } : {}),
    ...(manifest.corrections ? { corrections: manifest.corrections } : {}),
    ...(manifest.curriculum ? { curriculum: manifest.curriculum } : {}),
    policy: { signature: manifest.policySignature, tensors: manifest.policy.map(read) },
    optimizer: manifest.optimizer.map(read),
  };
}

export interface CheckpointStore {
  save(state: TrainerState): Promise<void>;
  /** The latest checkpoint, or null when there is none. */
  load(): Promise<TrainerState | null>;
}

/** IndexedDB store (browser; fake-indexeddb in Node tests): one record per run id. */
export class IndexedDbCheckpointStore implements CheckpointStore {
  static readonly DB_NAME = 'dreamgym-checkpoints';
  static readonly DB_VERSION = 1;
  private db: Promise<IDBPDatabase> | null = null;

  constructor(readonly runId: string) {}

  private open(): Promise<IDBPDatabase> {
    this.db ??= openDB(IndexedDbCheckpointStore.DB_NAME, IndexedDbCheckpointStore.DB_VERSION, {
      upgrade(db) {
        db.createObjectStore('checkpoints');
      },
    });
    return this.db;
  }

  /** Manifest and weights in one record, so one put swaps both in together (never a mix of two saves). */
  async save(state: TrainerState): Promise<void> {
    const { manifest, blob } = serializeCheckpoint(state);
    const db = await this.open();
    await db.put('checkpoints', { manifest, blob }, this.runId);
  }

  /** The run's checkpoint, checked (deserializeCheckpoint); null when there is none. */
  async load(): Promise<TrainerState | null> {
    const db = await this.open();
    const record = (await db.get('checkpoints', this.runId)) as
      { manifest: CheckpointManifest; blob: Float32Array } | undefined;
    if (!record) return null;
    const where = `The saved checkpoint of run '${this.runId}' (IndexedDB '${IndexedDbCheckpointStore.DB_NAME}')`;
    return deserializeCheckpoint(record.manifest, record.blob, {
      manifest: `${where}, its manifest`,
      weights: `${where}, its weights`,
      fix: 'It cannot be resumed: start the run again (Train → Start), which replaces it, or delete the run on the Compare page.',
    });
  }

  /** Deletes this run's checkpoint (the Compare page's delete). */
  async remove(): Promise<void> {
    const db = await this.open();
    await db.delete('checkpoints', this.runId);
  }

  async close(): Promise<void> {
    if (this.db) (await this.db).close();
    this.db = null;
  }
}
