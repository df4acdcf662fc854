/**
 * Checkpoints: a trainer's state as a small JSON manifest plus one binary blob of float32
 * weights (policy, then optimizer slots). The same pair is stored as two files in Node
 * (src/node/checkpoint-folder.ts) and as one record in IndexedDB in the browser (below).
 */
import { openDB, type IDBPDatabase } from 'idb';
import type { TrainerState } from './loop';

export interface TensorEntry { name: string; shape: number[]; offset: number; length: number }

export interface CheckpointManifest {
  format: 'dreamgym-checkpoint/1';
  config: TrainerState['config'];
  iteration: number;
  realSteps: number;
  dreamSteps?: number;
  curriculum?: TrainerState['curriculum'];
  policySignature: string;
  policy: TensorEntry[];
  optimizer: TensorEntry[];
  /** Float32 values in the blob. */
  totalValues: number;
}

export class CheckpointFormatError extends Error {
  constructor(message: string) { super(message); this.name = 'CheckpointFormatError'; }
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
  for (const [entries, tensors] of [[policy, state.policy.tensors], [optimizer, state.optimizer]] as const) {
    entries.forEach((e, i) => blob.set(tensors[i].data, e.offset));
  }
  return {
    manifest: { format: 'dreamgym-checkpoint/1', config: state.config, iteration: state.iteration, realSteps: state.realSteps,
      ...(state.dreamSteps !== undefined ? { dreamSteps: state.dreamSteps } : {}),
      ...(state.curriculum ? { curriculum: state.curriculum } : {}),
      policySignature: state.policy.signature, policy, optimizer, totalValues: offset },
    blob,
  };
}

export function deserializeCheckpoint(manifest: CheckpointManifest, blob: Float32Array): TrainerState {
  if (manifest?.format !== 'dreamgym-checkpoint/1') {
    throw new CheckpointFormatError(`Not a DreamGym checkpoint: format is '${String(manifest?.format)}', expected 'dreamgym-checkpoint/1'.`);
  }
  if (blob.length !== manifest.totalValues) {
    throw new CheckpointFormatError(`Checkpoint weights are truncated or from another checkpoint: ${blob.length} values, the manifest lists ${manifest.totalValues}.`);
  }
  const read = (e: TensorEntry) => ({ name: e.name, shape: e.shape, data: blob.slice(e.offset, e.offset + e.length) });
  return {
    format: 'dreamgym-checkpoint/1', config: manifest.config, iteration: manifest.iteration, realSteps: manifest.realSteps,
    ...(manifest.dreamSteps !== undefined ? { dreamSteps: manifest.dreamSteps } : {}),
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
      upgrade(db) { db.createObjectStore('checkpoints'); },
    });
    return this.db;
  }

  async save(state: TrainerState): Promise<void> {
    const { manifest, blob } = serializeCheckpoint(state);
    const db = await this.open();
    await db.put('checkpoints', { manifest, blob }, this.runId);
  }

  async load(): Promise<TrainerState | null> {
    const db = await this.open();
    const record = (await db.get('checkpoints', this.runId)) as { manifest: CheckpointManifest; blob: Float32Array } | undefined;
    return record ? deserializeCheckpoint(record.manifest, record.blob) : null;
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
