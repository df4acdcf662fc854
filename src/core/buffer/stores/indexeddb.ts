/**
 * IndexedDbBufferStore: the replay buffer in the browser's IndexedDB (through `idb`).
 *
 * Schema v3 is a batch log, the model FolderBufferStore uses on files:
 *
 *   chunks  keyPath 'seq', autoIncrement. ONE record per write: the batch's transitions without
 *           their embeddings, the embeddings as one Float32Array (rows one after another, floats per
 *           row in `dims`, or per transition in `rowDims`), and the batch's episodes. A row in a later
 *           chunk (higher seq) replaces every earlier row with the same id.
 *   tasks (id; index env), runs (id), meta   one record each, as in v2.
 *
 * - Opening loads every chunk, in seq order, into memory (a MemoryBufferStore), and every read is
 *   served from there (records handed out are the store's own: treat them as read-only; embeddings
 *   are Float32Array views of their chunk's array). Chromium pays per request and per record, so one
 *   record per batch of 1,000 instead of one per transition is what makes inserting and cold-loading
 *   100k transitions fast. Memory holds the whole buffer (≈ 1.2 kB per 256-dim transition).
 * - One call = one transaction. `putTransitions` adds one chunk in one readwrite transaction; any
 *   error aborts it, so nothing of a failed batch is written, and memory only changes after the commit.
 *   `putImport` adds a whole import (its chunks and its task-bank entries) in one transaction: a page
 *   reload (or a crash) before the commit aborts it, so an import is stored whole or not at all.
 * - `evict` deletes every chunk that holds a row (of any version) of what it removes and adds chunks
 *   with those chunks' remaining live rows, in one transaction; `clear` empties the stores in one.
 *   The same rewrite compacts: once superseded rows outnumber live ones (plus some slack), the chunks
 *   that are mostly superseded are rewritten, and many small chunks (small batches) are merged.
 * - The schema is versioned: INDEXEDDB_MIGRATIONS (indexeddb-migrations.ts) lists every step (v1 → v2 →
 *   v3 …); opening runs the steps the database has not seen yet, in order, inside the upgrade transaction.
 * - The chunk records are indexeddb-chunks.ts; what a connection loaded (and which chunk holds which
 *   rows) is indexeddb-loaded.ts.
 * - A QuotaExceededError surfaces as BufferQuotaError with the storage estimate.
 * - Several tabs: ONE TAB WRITES AT A TIME. A store loads the buffer when it opens and does not see
 *   another tab's later writes until it is opened again (a reload). Two tabs writing at once lose no
 *   batch (each adds chunks of its own), but each tab's counts, eviction and compaction only know the
 *   chunks it loaded or wrote itself, and `clear` removes everything. When another tab upgrades or
 *   deletes the database (a `versionchange`), or the browser closes the connection, this store closes
 *   it and forgets what it loaded; its next call opens (and loads) the database again.
 */
import { deleteDB, openDB, type IDBPDatabase, type IDBPTransaction } from 'idb';
import { BufferQuotaError, BufferSchemaError } from '../types';
import type {
  BufferEpisode,
  BufferImport,
  BufferStore,
  BufferTransition,
  EvictionPolicy,
  RunRecord,
  TaskBankEntry,
} from '../types';
import { checkBatch, closedError, type BufferStoreTestHooks, type BufferWriteOperation } from './common';
import {
  decodeChunk,
  encodeChunk,
  lastOfEachId,
  packChunks,
  type ChunkPacker,
  type ChunkRecord,
} from './indexeddb-chunks';
import { loadBuffer, type LoadedBuffer } from './indexeddb-loaded';
import { INDEXEDDB_MIGRATIONS, INDEXEDDB_SCHEMA_VERSION, type UpgradeTransaction } from './indexeddb-migrations';
import type { EvictionPlan, MemoryBufferStore, StagedTransitions } from './memory';
import { MemoryServedStore } from './memory-served';

export const DEFAULT_BUFFER_DB_NAME = 'dreamgym-buffer';

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/** The parts of navigator.storage the store uses (injectable for tests and for Node). */
export interface StorageLike {
  estimate?(): Promise<{ usage?: number; quota?: number }>;
  persist?(): Promise<boolean>;
  persisted?(): Promise<boolean>;
}

export interface IndexedDbBufferStoreOptions {
  /** Database name (default 'dreamgym-buffer'). */
  name?: string;
  /** Defaults to navigator.storage where it exists. */
  storage?: StorageLike | null;
  testHooks?: BufferStoreTestHooks;
}

type Db = IDBPDatabase<unknown>;
type WriteTransaction = IDBPTransaction<unknown, string[], 'readwrite'>;

// ---------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------

export class IndexedDbBufferStore extends MemoryServedStore implements BufferStore {
  readonly kind = 'indexeddb' as const;
  readonly name: string;
  private readonly storage: StorageLike | null;
  private readonly hooks: BufferStoreTestHooks;
  /** The open connection and what it loaded; null until the first call, and after a versionchange. */
  private current: Promise<LoadedBuffer> | null = null;
  private closed = false;

  /** Opens lazily on the first call; use `IndexedDbBufferStore.open` to surface schema errors at once. */
  constructor(options: IndexedDbBufferStoreOptions = {}) {
    super();
    this.name = options.name ?? DEFAULT_BUFFER_DB_NAME;
    this.storage = options.storage !== undefined ? options.storage : (globalThis.navigator?.storage ?? null);
    this.hooks = options.testHooks ?? {};
  }

  /** Creates the store and opens (and if needed upgrades) and loads the database now. */
  static async open(options: IndexedDbBufferStoreOptions = {}): Promise<IndexedDbBufferStore> {
    const store = new IndexedDbBufferStore(options);
    await store.loaded();
    return store;
  }

  /** Deletes the whole database (tests, and "start over" in the UI). Close stores on it first. */
  static async deleteDatabase(name = DEFAULT_BUFFER_DB_NAME): Promise<void> {
    await deleteDB(name);
  }

  private loaded(): Promise<LoadedBuffer> {
    if (this.closed) return Promise.reject(closedError(this.kind));
    if (!this.current) {
      const opening = this.openAndLoad();
      this.current = opening;
      opening.catch(() => {
        if (this.current === opening) this.current = null;
      }); // the next call tries again
    }
    return this.current;
  }

  private async openAndLoad(): Promise<LoadedBuffer> {
    const db = await this.openDatabase();
    let loaded: LoadedBuffer;
    try {
      loaded = await loadBuffer(db, this.hooks);
    } catch (error) {
      db.close();
      throw error;
    }
    if (this.closed) {
      db.close();
      throw closedError(this.kind);
    }
    return loaded;
  }

  /** Another tab's versionchange, or the browser, closed the connection: forget it and what it loaded. */
  private forget(db: IDBDatabase | null): void {
    db?.close();
    this.current = null;
  }

  private async openDatabase(): Promise<Db> {
    let migrationError: unknown = null;
    let db: Db;
    try {
      db = await openDB(this.name, INDEXEDDB_SCHEMA_VERSION, {
        upgrade: (database, oldVersion, _newVersion, tx) => {
          const steps = INDEXEDDB_MIGRATIONS.filter((m) => m.version > oldVersion);
          void (async () => {
            for (const step of steps) await step.migrate(database, tx as unknown as UpgradeTransaction);
          })().catch((error: unknown) => {
            migrationError = error;
            try {
              tx.abort();
            } catch {
              /* already over */
            }
          });
        },
        // Another tab wants a newer schema (or deletes the database): let it; this store reopens and reloads on its next call.
        blocking: (_current, _blocked, event) => this.forget(event.target as IDBDatabase),
        terminated: () => this.forget(null),
      });
    } catch (error) {
      if (migrationError !== null) {
        throw new BufferSchemaError(
          `Upgrading the buffer database '${this.name}' to schema version ${INDEXEDDB_SCHEMA_VERSION} failed ` +
            `(${describeError(migrationError)}); nothing was changed. Reload to retry, or export and clear the buffer.`,
        );
      }
      if (isNamed(error, 'VersionError')) {
        const found = await this.storedVersion();
        throw new BufferSchemaError(
          `The buffer database '${this.name}' has schema version ${found ?? '(newer)'}, but this code ` +
            `understands versions up to ${INDEXEDDB_SCHEMA_VERSION}. It was written by a newer DreamGym Playground: load that newer ` +
            "version (reload the page, or update your checkout), or delete this site's data to start with an empty buffer.",
        );
      }
      throw error;
    }
    return db;
  }

  private async storedVersion(): Promise<number | null> {
    try {
      const db = await openDB(this.name);
      const version = db.version;
      db.close();
      return version;
    } catch {
      return null;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Writes: one transaction each; memory changes only after the commit
  // ---------------------------------------------------------------------------------------------

  /**
   * Runs `body` in one readwrite transaction. Requests must be registered with `track` so that an
   * abort never leaves an unobserved rejection; any throw aborts the transaction. `operation` names
   * the write for the beforeCommit hook (null: compaction, which has no hook).
   */
  private async write<T>(
    loaded: LoadedBuffer,
    stores: string[],
    attempted: number,
    operation: BufferWriteOperation | null,
    body: (tx: WriteTransaction, track: <R>(request: Promise<R>) => Promise<R>) => T | Promise<T>,
  ): Promise<T> {
    let tx: WriteTransaction;
    try {
      tx = loaded.db.transaction(stores, 'readwrite', { durability: 'relaxed' }) as unknown as WriteTransaction;
    } catch (error) {
      if (!isNamed(error, 'InvalidStateError')) throw error;
      this.forget(null);
      throw new Error(
        `The buffer database '${this.name}' was closed (another tab upgraded or deleted it, or the browser closed it); ` +
          'nothing was written. Try again: the store opens it anew.',
        { cause: error },
      );
    }
    const done = tx.done;
    done.catch(() => {
      /* observed below */
    });
    const pending: Promise<unknown>[] = [];
    const track = <R>(request: Promise<R>): Promise<R> => {
      request.catch(() => {
        /* the transaction's error is reported */
      });
      pending.push(request);
      return request;
    };
    try {
      const result = await body(tx, track);
      await Promise.all(pending);
      if (operation !== null) this.hooks.beforeCommit?.(operation);
      await done;
      return result;
    } catch (error) {
      try {
        tx.abort();
      } catch {
        /* already aborted by the failed request */
      }
      await Promise.allSettled([done, ...pending]);
      throw await this.translate(error, tx.error, attempted);
    }
  }

  /** QuotaExceededError (from a request, a hook or the transaction) → BufferQuotaError with the estimate. */
  private async translate(error: unknown, txError: DOMException | null, attempted: number): Promise<unknown> {
    if (!isNamed(error, 'QuotaExceededError') && !isNamed(txError, 'QuotaExceededError')) return error;
    const { usage, quota } = await this.estimate();
    const quotaError = new BufferQuotaError(usage, quota, attempted);
    quotaError.cause = isNamed(txError, 'QuotaExceededError') ? txError : error;
    return quotaError;
  }

  /**
   * Adds ONE chunk holding the batch. The batch is checked whole, the afterPut hooks see each
   * transition, and the chunk is copied for memory with one structuredClone (cheaper than one per
   * transition, and it refuses an uncloneable value just as IndexedDB would) before anything is written.
   */
  async putTransitions(
    transitions: BufferTransition[],
    episodes: BufferEpisode[] = [],
  ): Promise<{ added: number; replaced: number }> {
    const loaded = await this.loaded();
    const { chunks, copy } = await this.staged(loaded, transitions, episodes, (t, e) => [encodeChunk(t, e)]);
    const [chunk] = chunks;
    if (chunk.transitions.length === 0 && chunk.episodes.length === 0) return { added: 0, replaced: 0 };
    const seq = await this.write(loaded, ['chunks'], transitions.length, 'putTransitions', (tx, track) =>
      track(tx.objectStore('chunks').add(chunk)),
    );
    loaded.state.applyTransitions(copy);
    loaded.addChunkRecord(seq as number, chunk);
    await this.compactIfWasteful(loaded);
    return { added: copy.added, replaced: copy.replaced };
  }

  /**
   * A whole import in ONE transaction: its transitions and episodes as chunks of CHUNK_ROWS rows,
   * and its task-bank entries. A reload before the commit aborts the transaction (nothing of the
   * import is stored); after it, all of it is.
   */
  async putImport(batch: BufferImport): Promise<{ added: number; replaced: number }> {
    const loaded = await this.loaded();
    const { chunks, copy } = await this.staged(loaded, batch.transitions, batch.episodes, packChunks);
    const tasks = loaded.state.stageTasks(batch.tasks);
    if (chunks.length === 0 && tasks.length === 0) return { added: 0, replaced: 0 };
    const seqs = await this.write(loaded, ['chunks', 'tasks'], batch.transitions.length, 'putImport', (tx, track) => {
      const taskStore = tx.objectStore('tasks');
      for (const task of tasks) track(taskStore.put(task));
      const chunkStore = tx.objectStore('chunks');
      return Promise.all(chunks.map((chunk) => track(chunkStore.add(chunk))));
    });
    loaded.state.applyTransitions(copy);
    loaded.state.applyTasks(tasks);
    chunks.forEach((chunk, i) => loaded.addChunkRecord(seqs[i] as number, chunk));
    await this.compactIfWasteful(loaded);
    return { added: copy.added, replaced: copy.replaced };
  }

  /** `stage`, with a refused batch's QuotaExceededError (an uncloneable value is refused as it is) translated. */
  private async staged(
    loaded: LoadedBuffer,
    transitions: BufferTransition[],
    episodes: BufferEpisode[],
    pack: ChunkPacker,
  ): Promise<{ chunks: ChunkRecord[]; copy: StagedTransitions }> {
    try {
      return this.stage(loaded, transitions, episodes, pack);
    } catch (error) {
      throw await this.translate(error, null, Array.isArray(transitions) ? transitions.length : 0);
    }
  }

  /** The chunks of a batch (each id once, the later record winning) and the copy of them that memory keeps. */
  private stage(
    loaded: LoadedBuffer,
    transitions: BufferTransition[],
    episodes: BufferEpisode[],
    pack: ChunkPacker,
  ): { chunks: ChunkRecord[]; copy: StagedTransitions } {
    checkBatch(transitions, episodes);
    const seen = new Set<string>();
    let added = 0;
    transitions.forEach((t, index) => {
      if (!seen.has(t.id) && loaded.state.peekTransition(t.id) === undefined) added++;
      seen.add(t.id);
      this.hooks.afterPut?.(index, t);
    });
    const chunks = pack(lastOfEachId(transitions), lastOfEachId(episodes));
    const cloned = structuredClone(chunks);
    return {
      chunks,
      copy: {
        transitions: cloned.flatMap((chunk) => decodeChunk(chunk, this.name)),
        episodes: cloned.flatMap((chunk) => chunk.episodes),
        added,
        replaced: transitions.length - added,
      },
    };
  }

  async putTasks(tasks: TaskBankEntry[]): Promise<void> {
    const loaded = await this.loaded();
    const copies = loaded.state.stageTasks(tasks);
    if (copies.length === 0) return;
    await this.write(loaded, ['tasks'], 0, 'putTasks', (tx, track) => {
      const store = tx.objectStore('tasks');
      for (const task of copies) track(store.put(task));
    });
    loaded.state.applyTasks(copies);
  }

  async putRun(run: RunRecord): Promise<void> {
    const loaded = await this.loaded();
    const copy = loaded.state.stageRun(run);
    await this.write(loaded, ['runs'], 0, 'putRun', (tx, track) => {
      track(tx.objectStore('runs').put(copy));
    });
    loaded.state.applyRun(copy);
  }

  /**
   * Sources in the policy's order, oldest first within each; offline only when the policy lists it.
   * Rewrites every chunk holding a row of a removed transition or episode (so no older row comes
   * back on the next load) in one transaction.
   */
  async evict(policy: EvictionPolicy): Promise<string[]> {
    const loaded = await this.loaded();
    const plan = loaded.state.planEviction(policy);
    if (plan.transitionIds.length === 0) return [];
    const victims = loaded.chunksHolding(new Set(plan.transitionIds), new Set(plan.episodeIds));
    await this.rewrite(loaded, victims, plan, 'evict');
    loaded.state.applyEviction(plan);
    await this.compactIfWasteful(loaded);
    return plan.transitionIds;
  }

  async clear(): Promise<void> {
    const loaded = await this.loaded();
    await this.write(loaded, ['chunks', 'tasks', 'runs'], 0, 'clear', (tx, track) => {
      for (const name of ['chunks', 'tasks', 'runs']) track(tx.objectStore(name).clear());
    });
    loaded.state.applyClear();
    loaded.clear();
  }

  /**
   * Deletes the `victims` chunks and adds chunks with their live rows (less what `removed` removes),
   * in one transaction. A live row is the latest of its id, so every other row of that id sits in a
   * chunk with a lower seq: moving it to a new (higher) seq keeps it the latest.
   */
  private async rewrite(
    loaded: LoadedBuffer,
    victims: number[],
    removed: EvictionPlan | null,
    operation: 'evict' | null,
  ): Promise<void> {
    if (victims.length === 0) return;
    const live = loaded.liveRowsOf(victims, removed);
    const replacements = packChunks(live.transitions, live.episodes);
    const seqs = await this.write(loaded, ['chunks'], 0, operation, (tx, track) => {
      const store = tx.objectStore('chunks');
      for (const seq of victims) track(store.delete(seq));
      return Promise.all(replacements.map((chunk) => track(store.add(chunk))));
    });
    for (const seq of victims) loaded.dropChunk(seq);
    replacements.forEach((chunk, i) => loaded.addChunkRecord(seqs[i] as number, chunk));
  }

  /**
   * Compacts once superseded rows outnumber live ones (plus slack) or small chunks pile up. A failure
   * changes nothing (one transaction) and is not the caller's: the write before it is committed, and
   * the next write tries again.
   */
  private async compactIfWasteful(loaded: LoadedBuffer): Promise<void> {
    const victims = loaded.compactionVictims();
    if (victims.length === 0) return;
    try {
      await this.rewrite(loaded, victims, null, null);
    } catch {
      /* unchanged; retried after the next write */
    }
  }

  // Reads: from memory (MemoryServedStore)
  protected async loadedState(): Promise<MemoryBufferStore> {
    return (await this.loaded()).state;
  }

  // ---------------------------------------------------------------------------------------------
  // Storage
  // ---------------------------------------------------------------------------------------------
  /** Asks the browser to keep the buffer under storage pressure (navigator.storage.persist()). */
  async requestPersistence(): Promise<{ persisted: boolean; reason: string }> {
    const storage = this.storage;
    if (!storage?.persist) {
      return {
        persisted: false,
        reason: 'navigator.storage.persist() is not available here (not a browser, or not a secure context).',
      };
    }
    try {
      if (await storage.persisted?.())
        return { persisted: true, reason: 'Storage for this site is already persistent.' };
      return (await storage.persist())
        ? {
            persisted: true,
            reason: 'The browser granted persistent storage: it will not evict the buffer under storage pressure.',
          }
        : {
            persisted: false,
            reason:
              'The browser declined persistent storage (Chromium grants it to installed, bookmarked or often-used sites); ' +
              'the buffer stays, but may be evicted when the disk runs low. Export runs you want to keep.',
          };
    } catch (error) {
      return { persisted: false, reason: `navigator.storage.persist() failed: ${describeError(error)}` };
    }
  }

  /** navigator.storage.estimate(), or nulls where it is missing or fails. */
  async estimate(): Promise<{ usage: number | null; quota: number | null }> {
    try {
      const estimate = await this.storage?.estimate?.();
      return { usage: estimate?.usage ?? null, quota: estimate?.quota ?? null };
    } catch {
      return { usage: null, quota: null };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const pending = this.current;
    this.current = null;
    const loaded = await pending?.catch(() => null);
    loaded?.db.close();
    await loaded?.state.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function isNamed(error: unknown, name: string): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === name;
}

function describeError(error: unknown): string {
  return error instanceof Error || isNamed(error, 'Error')
    ? `${(error as Error).name}: ${(error as Error).message}`
    : String(error);
}
