/**
 * Learned experience models trained in this browser (`learned:local/<name>`), and their training
 * checkpoints, in IndexedDB. The page lists them; the workers write (the Experience model worker)
 * and read them (it and the trainer worker).
 *
 *   models        name → { manifest text (model.json), a summary for lists, and the model's last
 *                 audit where one was made (saveAudit: kept with the model, dropped when it is retrained) }
 *   weights       name → weights.bin's bytes
 *   checkpoints   name → the training in progress: its settings, the LearnedCheckpoint's plain
 *                 part, and its tensors in one blob (model-file.ts encodeTensorGroups)
 *
 * A model's two files are written in ONE transaction (with the removal of its checkpoint), so a
 * crash leaves the old model or the new one, never a manifest with foreign weights; reading takes
 * both in one transaction too, and checks them with decodeModelFiles (checksum, shapes, NaN). A
 * checkpoint is one record replaced every epoch.
 */
import type { IDBPDatabase } from 'idb';
import { IdbConnection } from './idb-connection';
import {
  CHECKPOINT_FORMAT,
  decodeModelFiles,
  decodeTensorGroups,
  encodeTensorGroups,
  ModelFileError,
  type ModelManifest,
} from '../../core/experience/learned/model-file';
import type { NamedWeight } from '../../core/experience/learned/network';
import type { LearnedCheckpoint } from '../../core/experience/learned/train-model';

export const LEARNED_DB_NAME = 'dreamgym-learned-models';

/** What the lists show of a stored model (from its manifest, so listing never reads weights). */
export interface StoredModelSummary {
  /** The store's key: `learned:local/<name>`. */
  name: string;
  env: string;
  /** The manifest's own name (shown in run labels). */
  modelName: string;
  savedAt: number;
  weightsBytes: number;
  parameters: number;
  trainEpisodes: number;
  trainPairs: number;
  epochs: number;
  bestEpoch: number;
  bestValidationLoss: number;
  seconds: number;
  backend: string;
  /** A stopped training's model (`keep`): the most epochs it was started with; its checkpoint resumes it. */
  epochsPlanned?: number;
}

/** How saveModel stores: a stopped training's model keeps its checkpoint and says how many epochs were planned. */
export interface SaveModelOptions {
  keepCheckpoint?: boolean;
  epochsPlanned?: number;
}

/** An unfinished training, for the page's resume offer. */
export interface CheckpointSummary<S = unknown> {
  name: string;
  env: string;
  /** The page's settings the training was started with (expmodel-settings.ts). */
  settings: S;
  epochsDone: number;
  epochs: number;
  savedAt: number;
  history: LearnedCheckpoint['fit']['history'];
}

type CheckpointState = Omit<LearnedCheckpoint, 'weights' | 'optimizer' | 'bestWeights'>;
interface ModelRow {
  name: string;
  manifest: string;
  summary: StoredModelSummary;
  /** The last audit of this model (the Domains page's), as saveAudit stored it. */
  audit?: unknown;
}
interface WeightsRow {
  name: string;
  bytes: Uint8Array;
}
interface CheckpointRow {
  name: string;
  settings: unknown;
  savedAt: number;
  state: CheckpointState;
  index: Record<string, ModelManifest['weights']>;
  crc32: string;
  bytes: Uint8Array;
}

export class NoStoredModelError extends ModelFileError {
  constructor(name: string) {
    super(
      `No learned model named '${name}' is stored in this browser: train one on the Experience model page (#/model), ` +
        'or dream with the shipped one (learned:models/ENV).',
      {
        code: 'no-stored-model',
        fix: 'Train one on the Experience model page (#/model), or dream with the shipped one (learned:models/ENV).',
      },
    );
    this.name = 'NoStoredModelError';
  }
}

export function summarizeManifest(name: string, manifest: ModelManifest, savedAt: number): StoredModelSummary {
  const t = manifest.training;
  return {
    name,
    env: manifest.env,
    modelName: manifest.name,
    savedAt,
    weightsBytes: manifest.weightsFile.bytes,
    parameters: manifest.weights.reduce((n, w) => n + w.length, 0),
    trainEpisodes: t.data.trainEpisodes,
    trainPairs: t.data.trainPairs,
    epochs: t.epochs.length,
    bestEpoch: t.bestEpoch,
    bestValidationLoss: t.bestValidationLoss,
    seconds: t.seconds,
    backend: t.backend,
  };
}

const where = (name: string) => `this browser's storage (learned model '${name}')`;

export class LearnedModelStore {
  private readonly db: IdbConnection;

  constructor(readonly dbName = LEARNED_DB_NAME) {
    this.db = new IdbConnection(dbName, (db) => {
      for (const store of ['models', 'weights', 'checkpoints']) db.createObjectStore(store, { keyPath: 'name' });
    });
  }

  private open(): Promise<IDBPDatabase> {
    return this.db.open();
  }

  /**
   * Saves a trained model's two files under `name` (replacing a model of that name) and removes
   * its training checkpoint (unless `keepCheckpoint`: a stopped training's model), in one
   * transaction. The files are checked first: a damaged pair is never stored.
   */
  async saveModel(
    name: string,
    files: { manifest: string; weights: Uint8Array },
    savedAt: number,
    options: SaveModelOptions = {},
  ): Promise<StoredModelSummary> {
    const { manifest } = decodeModelFiles(files.manifest, files.weights, 'the model just trained');
    const summary: StoredModelSummary = {
      ...summarizeManifest(name, manifest, savedAt),
      ...(options.epochsPlanned !== undefined ? { epochsPlanned: options.epochsPlanned } : {}),
    };
    const db = await this.open();
    const tx = db.transaction(['models', 'weights', 'checkpoints'], 'readwrite');
    await Promise.all([
      tx.objectStore('models').put({ name, manifest: files.manifest, summary } satisfies ModelRow),
      tx.objectStore('weights').put({ name, bytes: files.weights } satisfies WeightsRow),
      options.keepCheckpoint ? Promise.resolve() : tx.objectStore('checkpoints').delete(name),
      tx.done,
    ]);
    return summary;
  }

  /** The raw files of a stored model (both read in one transaction), or null. */
  async readFiles(name: string): Promise<{ manifest: string; weights: Uint8Array } | null> {
    const db = await this.open();
    const tx = db.transaction(['models', 'weights'], 'readonly');
    const [model, weights] = await Promise.all([
      tx.objectStore('models').get(name) as Promise<ModelRow | undefined>,
      tx.objectStore('weights').get(name) as Promise<WeightsRow | undefined>,
      tx.done,
    ]);
    if (!model && !weights) return null;
    if (!model || !weights) {
      throw new ModelFileError(
        `${where(name)} holds ${model ? 'model.json but no weights.bin' : 'weights.bin but no model.json'}: ` +
          'the model is damaged. Delete it on the Experience model page and train it again.',
      );
    }
    return {
      manifest: model.manifest,
      weights: weights.bytes instanceof Uint8Array ? weights.bytes : new Uint8Array(weights.bytes),
    };
  }

  /** A stored model, checked (decodeModelFiles: format, checksum, shapes, NaN); NoStoredModelError when there is none. */
  async readModel(name: string): Promise<{ manifest: ModelManifest; weights: NamedWeight[] }> {
    const files = await this.readFiles(name);
    if (!files) throw new NoStoredModelError(name);
    return decodeModelFiles(files.manifest, files.weights, where(name));
  }

  /**
   * Keeps an audit with the stored model `name`, saved at `savedAt` (its summary's): a model
   * retrained since (another savedAt) is not the one audited, and the audit is refused.
   */
  async saveAudit(name: string, savedAt: number, audit: unknown): Promise<void> {
    const tx = (await this.open()).transaction('models', 'readwrite');
    const row = (await tx.store.get(name)) as ModelRow | undefined;
    if (!row || row.summary.savedAt !== savedAt) {
      tx.abort();
      await tx.done.catch(() => {}); // the abort is ours
      throw new ModelFileError(
        `The learned model '${name}' was ${row ? 'trained again' : 'deleted'} while it was audited: audit it again.`,
      );
    }
    await Promise.all([tx.store.put({ ...row, audit } satisfies ModelRow), tx.done]);
  }

  /** The audit kept with the stored model `name` (saveAudit), or null: none, or no such model. */
  async readAudit<A = unknown>(name: string): Promise<A | null> {
    const row = (await (await this.open()).get('models', name)) as ModelRow | undefined;
    return (row?.audit as A | undefined) ?? null;
  }

  async listModels(): Promise<StoredModelSummary[]> {
    const rows = (await (await this.open()).getAll('models')) as ModelRow[];
    return rows.map((r) => r.summary).sort((a, b) => b.savedAt - a.savedAt || (a.name < b.name ? -1 : 1));
  }

  async deleteModel(name: string): Promise<void> {
    const db = await this.open();
    const tx = db.transaction(['models', 'weights'], 'readwrite');
    await Promise.all([tx.objectStore('models').delete(name), tx.objectStore('weights').delete(name), tx.done]);
  }

  // ---- checkpoints ------------------------------------------------------------------------------

  async saveCheckpoint(name: string, settings: unknown, checkpoint: LearnedCheckpoint, savedAt: number): Promise<void> {
    const { weights, optimizer, bestWeights, ...state } = checkpoint;
    const blob = encodeTensorGroups({ weights, optimizer, bestWeights });
    const row: CheckpointRow = {
      name,
      settings,
      savedAt,
      state,
      index: blob.index,
      crc32: blob.crc32,
      bytes: blob.bytes,
    };
    await (await this.open()).put('checkpoints', row);
  }

  /** The checkpoint of `name` and the settings it was started with, or null. */
  async readCheckpoint<S = unknown>(name: string): Promise<{ settings: S; checkpoint: LearnedCheckpoint } | null> {
    const row = (await (await this.open()).get('checkpoints', name)) as CheckpointRow | undefined;
    if (!row) return null;
    if (row.state.format !== CHECKPOINT_FORMAT) {
      throw new ModelFileError(
        `${where(name)}, its training checkpoint, is of format '${String(row.state.format)}'; this build ` +
          `resumes '${CHECKPOINT_FORMAT}'. Delete the checkpoint and train again.`,
      );
    }
    const bytes = row.bytes instanceof Uint8Array ? row.bytes : new Uint8Array(row.bytes);
    const groups = decodeTensorGroups(row.index, bytes, row.crc32, `${where(name)}, its training checkpoint`);
    return {
      settings: row.settings as S,
      checkpoint: {
        ...row.state,
        weights: groups.weights ?? [],
        optimizer: groups.optimizer ?? [],
        bestWeights: groups.bestWeights ?? [],
      },
    };
  }

  async listCheckpoints<S = unknown>(): Promise<CheckpointSummary<S>[]> {
    const rows = (await (await this.open()).getAll('checkpoints')) as CheckpointRow[];
    return rows
      .map((r) => ({
        name: r.name,
        env: r.state.env,
        settings: r.settings as S,
        epochsDone: r.state.fit.epochsDone,
        epochs: r.state.options.fit.epochs,
        savedAt: r.savedAt,
        history: r.state.fit.history,
      }))
      .sort((a, b) => b.savedAt - a.savedAt);
  }

  async deleteCheckpoint(name: string): Promise<void> {
    await (await this.open()).delete('checkpoints', name);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

let shared: LearnedModelStore | null = null;

/** This worker's (or page's) one connection to the learned-model database. */
export function defaultLearnedStore(): LearnedModelStore {
  shared ??= new LearnedModelStore();
  return shared;
}
