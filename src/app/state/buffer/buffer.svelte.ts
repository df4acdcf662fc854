/**
 * State of the Buffer page: the replay buffer in this browser's IndexedDB (counts, storage,
 * offline dataset import, file import/export, similarity search, clear). Everything shown is
 * plain text; records are never rendered as HTML.
 */
import { ReplayBuffer, transitionsToTrajectories, type RetrievedTransition } from '../../../core/buffer/buffer';
import { IndexedDbBufferStore } from '../../../core/buffer/stores/indexeddb';
import type { BufferStats } from '../../../core/buffer/types';
import {
  readTrajectoriesAs,
  writeTrajectories,
  type ReadFormat,
  type TrajectoryFormat,
} from '../../../core/data/formats';
import { SEED_DATASET_ENVS, loadSeedDataset, type PublicFileReader } from '../../../core/data/seed-datasets';
import { envIds } from '../../../core/envs/registry';
import type { Task } from '../../../core/types';
import { importSummary } from './buffer-view';

export interface StorageInfo {
  usage: number | null;
  quota: number | null;
}

/** The page's reader of public/ files: 404 means none; any other failure says what happened. */
const fetchPublicFile: PublicFileReader = async (path) => {
  const response = await fetch(new URL(path, document.baseURI));
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`Could not fetch ${path}: HTTP ${response.status}.`);
  return response.text();
};

export class BufferState {
  stats = $state.raw<BufferStats | null>(null);
  storage = $state.raw<StorageInfo | null>(null);
  /** When the counts and the storage estimate were read (they change while runs train). */
  readAt = $state<string | null>(null);
  persistAnswer = $state<string | null>(null);
  /** What the last action did, in words. */
  message = $state<string | null>(null);
  /** The last error, as text (a DatasetImportError lists lines and fields). */
  error = $state<string | null>(null);
  busy = $state(false);
  results = $state.raw<RetrievedTransition[] | null>(null);
  confirmingClear = $state(false);
  readonly envs = envIds();
  private buffer: Promise<ReplayBuffer> | null = null;
  private store: IndexedDbBufferStore | null = null;

  private open(): Promise<ReplayBuffer> {
    this.buffer ??= IndexedDbBufferStore.open().then((store) => {
      this.store = store;
      return new ReplayBuffer(store);
    });
    return this.buffer;
  }

  /** Runs one action with the busy flag, and its error shown as text. */
  private async run(action: () => Promise<void>): Promise<void> {
    this.busy = true;
    this.error = null;
    try {
      await action();
    } catch (e) {
      this.error = e instanceof Error ? e.message : String(e);
      // A store that failed to open is retried on the next action.
      if (!this.store) this.buffer = null;
    } finally {
      this.busy = false;
    }
  }

  /** Re-reads the counts (from the database: training workers write to it meanwhile) and the storage estimate. */
  async refresh(): Promise<void> {
    await this.run(async () => {
      if (this.store) {
        await this.store.close();
        this.store = null;
        this.buffer = null;
      }
      await this.update();
    });
  }

  private async update(): Promise<void> {
    const buffer = await this.open();
    const [stats, storage] = await Promise.all([buffer.stats(), this.store!.estimate()]);
    this.stats = stats;
    this.storage = storage;
    this.readAt = new Date().toLocaleTimeString();
  }

  async askPersistence(): Promise<void> {
    await this.run(async () => {
      await this.open();
      this.persistAnswer = (await this.store!.requestPersistence()).reason;
    });
  }

  /** Fetches the shipped offline datasets and imports them (idempotent: a second load adds nothing). */
  async loadShipped(): Promise<void> {
    await this.run(async () => {
      const buffer = await this.open();
      const parts: string[] = [];
      for (const env of SEED_DATASET_ENVS) {
        const trajectories = await loadSeedDataset(env, fetchPublicFile);
        const result = await buffer.importTrajectories(trajectories, { source: 'offline', createdAt: Date.now() });
        parts.push(importSummary(env, result));
      }
      this.message = `Shipped datasets loaded. ${parts.join('; ')}.`;
      await this.update();
    });
  }

  /**
   * Imports a file as offline data, in `format` or the one its records show ('auto'); a malformed
   * file imports nothing and shows every problem.
   */
  async importFile(file: File, requested: ReadFormat): Promise<void> {
    await this.run(async () => {
      this.message = null;
      const text = await file.text();
      const options = { knownEnvs: this.envs, sourceName: file.name };
      const { format, trajectories } = readTrajectoriesAs(text, requested, options);
      const buffer = await this.open();
      const result = await buffer.importTrajectories(trajectories, { source: 'offline', createdAt: Date.now() });
      const how = requested === 'auto' ? `read as ${format}, detected` : `read as ${format}`;
      this.message = `Imported ${importSummary(file.name, result)} (${how}).`;
      await this.update();
    });
  }

  /**
   * The k most similar transitions of `env` (one per episode). The text is matched as both the
   * instruction and the observation: the embedding marks its fields, so bare text matches poorly.
   */
  async search(text: string, k: number, env: string): Promise<void> {
    await this.run(async () => {
      const buffer = await this.open();
      const query = { instruction: text, observation: text, action: '' };
      this.results = await buffer.retrieve(query, Math.max(1, Math.floor(k) || 1), {
        env: env || undefined,
        diverse: true,
      });
    });
  }

  /** The whole buffer as a file in `format`; null when it is empty. */
  async exportText(format: TrajectoryFormat): Promise<string | null> {
    const buffer = await this.open();
    const transitions = await buffer.store.listTransitions();
    if (transitions.length === 0) return null;
    const tasks = new Map<string, Task>((await buffer.store.listTasks()).map((e) => [e.id, e.task]));
    return writeTrajectories(transitionsToTrajectories(transitions, tasks), format);
  }

  async download(format: TrajectoryFormat): Promise<void> {
    await this.run(async () => {
      const text = await this.exportText(format);
      if (text === null) {
        this.message = 'The buffer is empty: nothing to export.';
        return;
      }
      const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `dreamgym-buffer-${format}.jsonl`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      this.message = `Exported the buffer as ${format}.`;
    });
  }

  async clear(): Promise<void> {
    await this.run(async () => {
      const buffer = await this.open();
      await buffer.clear();
      this.confirmingClear = false;
      this.results = null;
      this.message = 'The buffer is empty.';
      await this.update();
    });
  }
}
