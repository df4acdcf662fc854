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
 * - The schema is versioned: INDEXEDDB_MIGRATIONS lists every step (v1 → v2 → v3 …); opening runs the
 *   steps the database has not seen yet, in order, inside the upgrade transaction.
 * - A QuotaExceededError surfaces as BufferQuotaError with the storage estimate.
 * - Several tabs: ONE TAB WRITES AT A TIME. A store loads the buffer when it opens and does not see
 *   another tab's later writes until it is opened again (a reload). Two tabs writing at once lose no
 *   batch (each adds chunks of its own), but each tab's counts, eviction and compaction only know the
 *   chunks it loaded or wrote itself, and `clear` removes everything. When another tab upgrades or
 *   deletes the database (a `versionchange`), or the browser closes the connection, this store closes
 *   it and forgets what it loaded; its next call opens (and loads) the database again.
 */
import { deleteDB, openDB, type IDBPDatabase, type IDBPTransaction } from 'idb';
import {
  BufferQuotaError,
  BufferSchemaError,
  type BufferEpisode,
  type BufferImport,
  type BufferStats,
  type BufferStore,
  type BufferTransition,
  type EvictionPolicy,
  type RunRecord,
  type TaskBankEntry,
  type TransitionFilter,
  type TransitionSource,
} from '../types';
import { checkBatch, closedError, compareInsertion, type BufferStoreTestHooks } from './common';
import { MemoryBufferStore, type EvictionPlan, type StagedTransitions } from './memory';

export const DEFAULT_BUFFER_DB_NAME = 'dreamgym-buffer';

// ---------------------------------------------------------------------------------------------
// Schema and migrations
// ---------------------------------------------------------------------------------------------

type UpgradeTransaction = IDBPTransaction<unknown, string[], 'versionchange'>;

export interface IndexedDbMigration {
  /** The schema version this step produces. */
  version: number;
  /** What the step changes, for people reading the code or a log. */
  summary: string;
  /** Runs inside the upgrade transaction; may only await IndexedDB requests (else the transaction ends). */
  migrate(db: IDBPDatabase, tx: UpgradeTransaction): Promise<void>;
}

/** Embedder id given to v1 embeddings whose database never recorded one. */
export const UNKNOWN_V1_EMBEDDER = 'unknown-v1';

/**
 * Every schema step, oldest first. Never edit a released step: add the next one.
 *
 * v1: transitions (keyPath id; indexes env, source, episodeId, createdAt), episodes (id; env, source),
 *     tasks (id; env), runs (id), meta (out-of-line keys). A transition had no `embedder` field: the
 *     database's one embedder id lived in meta under 'embedder'.
 * v2: per-transition embedder ids (vectors of different embedders never mix), ordered compound
 *     indexes for filtered reads and eviction, and an 'invalid' store so counts never scan.
 * v3: a batch log: 'chunks' (keyPath seq, autoIncrement; see ChunkRecord) holds transitions,
 *     embeddings and episodes, one record per write; 'transitions' (with its indexes), 'invalid' and
 *     'episodes' are gone. tasks, runs and meta stay.
 */
export const INDEXEDDB_MIGRATIONS: readonly IndexedDbMigration[] = [
  {
    version: 1,
    summary: 'create transitions, episodes, tasks, runs and meta',
    async migrate(db) {
      const transitions = db.createObjectStore('transitions', { keyPath: 'id' });
      transitions.createIndex('env', 'env');
      transitions.createIndex('source', 'source');
      transitions.createIndex('episodeId', 'episodeId');
      transitions.createIndex('createdAt', 'createdAt');
      const episodes = db.createObjectStore('episodes', { keyPath: 'id' });
      episodes.createIndex('env', 'env');
      episodes.createIndex('source', 'source');
      db.createObjectStore('tasks', { keyPath: 'id' }).createIndex('env', 'env');
      db.createObjectStore('runs', { keyPath: 'id' });
      db.createObjectStore('meta');
    },
  },
  {
    version: 2,
    summary:
      'replace the env/source/createdAt indexes by [source, createdAt, id] and [env, source, createdAt, id]; ' +
      "add the invalid store; backfill each embedded transition's embedder from meta.embedder and drop that key",
    async migrate(db, tx) {
      const transitions = tx.objectStore('transitions');
      for (const name of ['env', 'source', 'createdAt']) transitions.deleteIndex(name);
      // Compound keys ordered by (createdAt, id): a prefix range is one (env, source) group in insertion order.
      transitions.createIndex('source_order', ['source', 'createdAt', 'id']);
      transitions.createIndex('env_source', ['env', 'source', 'createdAt', 'id']);
      const invalid = db.createObjectStore('invalid', { keyPath: 'id' });
      const meta = tx.objectStore('meta');
      const embedder = ((await meta.get('embedder')) as string | undefined) ?? UNKNOWN_V1_EMBEDDER;
      let cursor = await transitions.openCursor();
      while (cursor) {
        const t = cursor.value as BufferTransition;
        if (t.valid === false) await invalid.put(invalidEntry(t));
        if (t.embedding !== undefined && t.embedder === undefined) await cursor.update({ ...t, embedder });
        cursor = await cursor.continue();
      }
      await meta.delete('embedder');
    },
  },
  {
    version: 3,
    summary:
      'move every transition (with its embedding) and every episode into chunks, a batch log (keyPath seq, autoIncrement), ' +
      'in insertion order (createdAt, then id), 1,000 rows a chunk; delete the transitions store (and its indexes), invalid and episodes',
    async migrate(db, tx) {
      const chunks = db.createObjectStore('chunks', { keyPath: 'seq', autoIncrement: true });
      const transitions = await readAllById<BufferTransition>(tx.objectStore('transitions'));
      const episodes = await readAllById<BufferEpisode>(tx.objectStore('episodes'));
      transitions.sort(compareInsertion);
      episodes.sort(compareInsertion);
      // Added in order, so the seqs follow insertion order too.
      await Promise.all(packChunks(transitions, episodes).map((chunk) => chunks.add(chunk)));
      for (const name of ['transitions', 'invalid', 'episodes']) db.deleteObjectStore(name);
    },
  },
];

export const INDEXEDDB_SCHEMA_VERSION = INDEXEDDB_MIGRATIONS[INDEXEDDB_MIGRATIONS.length - 1].version;

/** v2's entries of transitions with valid === false (only the v2 step writes them now). */
interface InvalidEntry {
  id: string;
  env: string;
  source: TransitionSource;
}
const invalidEntry = (t: BufferTransition): InvalidEntry => ({ id: t.id, env: t.env, source: t.source });

/** Records per getAll page when a migration reads a per-record store. */
const MIGRATION_PAGE = 2000;

/** Every record of a store keyed by `id`, a page at a time (inside the upgrade transaction). */
async function readAllById<T extends { id: string }>(store: {
  getAll(query?: IDBKeyRange | null, count?: number): Promise<unknown[]>;
}): Promise<T[]> {
  const all: T[] = [];
  let range: IDBKeyRange | null = null;
  for (;;) {
    const page = (await store.getAll(range, MIGRATION_PAGE)) as T[];
    for (const record of page) all.push(record);
    if (page.length < MIGRATION_PAGE) return all;
    range = IDBKeyRange.lowerBound(page[page.length - 1].id, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Chunks
// ---------------------------------------------------------------------------------------------

/** A transition as a chunk holds it: everything but the embedding (that is in `embeddings`). */
export type ChunkRow = Omit<BufferTransition, 'embedding'>;

/** One record of the 'chunks' store: what one write stored. */
export interface ChunkRecord {
  /** The key, given by the store (autoIncrement): a later chunk's row replaces earlier rows with its id. */
  seq?: number;
  /** Transitions without their embeddings (each keeps its `embedder`); one row per id. */
  transitions: ChunkRow[];
  /** Floats per row when every transition has an embedding of that length; `rowDims` is absent then. */
  dims?: number;
  /** Otherwise floats per transition, -1 for one without an embedding. */
  rowDims?: Int32Array;
  /** The embeddings, one row after another in `transitions` order. */
  embeddings: Float32Array;
  /** Episodes written with this batch; one row per id. */
  episodes: BufferEpisode[];
}

/** Transitions (and episodes) per chunk when rewriting and migrating: about the size of one usual batch. */
const CHUNK_ROWS = 1000;
/** Chunks per getAll page when loading (≈ 1.5 MB a chunk of 1,000 transitions with 256-dim embeddings). */
const LOAD_PAGE = 16;
/** Rows (live and superseded) beyond 2 × live + this trigger compaction. */
const COMPACT_SLACK = 1000;
/** A chunk of fewer rows is small; more than SMALL_CHUNKS_MAX small chunks are merged. */
const SMALL_CHUNK_ROWS = CHUNK_ROWS / 4;
const SMALL_CHUNKS_MAX = 32;

/** The chunk record of transitions and episodes (each id at most once). Copies the embeddings. */
function encodeChunk(transitions: readonly BufferTransition[], episodes: readonly BufferEpisode[]): ChunkRecord {
  const first = transitions[0]?.embedding?.length;
  let uniform = first !== undefined;
  let total = 0;
  for (const t of transitions) {
    const length = t.embedding?.length;
    if (length !== first) uniform = false;
    total += length ?? 0;
  }
  const embeddings = new Float32Array(total);
  const rowDims = uniform ? undefined : new Int32Array(transitions.length);
  const rows: ChunkRow[] = new Array<ChunkRow>(transitions.length);
  let offset = 0;
  for (let i = 0; i < transitions.length; i++) {
    const t = transitions[i];
    const embedding = t.embedding;
    if (embedding === undefined) {
      if (rowDims) rowDims[i] = -1;
      rows[i] = t;
      continue;
    }
    embeddings.set(embedding, offset);
    offset += embedding.length;
    if (rowDims) rowDims[i] = embedding.length;
    const { embedding: _embedding, ...row } = t;
    rows[i] = row;
  }
  return uniform
    ? { transitions: rows, dims: first, embeddings, episodes: [...episodes] }
    : { transitions: rows, rowDims, embeddings, episodes: [...episodes] };
}

/** The transitions of a loaded chunk, each with its embedding as a view of the chunk's Float32Array. */
function decodeChunk(chunk: ChunkRecord, dbName: string): BufferTransition[] {
  const { transitions, dims, rowDims, embeddings, episodes } = chunk ?? {};
  const damaged = (problem: string) =>
    new BufferSchemaError(
      `The buffer database '${dbName}' holds a damaged chunk ` +
        `(seq ${String(chunk?.seq)}: ${problem}). Export what you can and clear the buffer, or delete this site's data.`,
    );
  if (!Array.isArray(transitions) || !Array.isArray(episodes) || !(embeddings instanceof Float32Array)) {
    throw damaged('transitions, episodes or embeddings missing');
  }
  if (
    rowDims !== undefined
      ? !(rowDims instanceof Int32Array) || rowDims.length !== transitions.length
      : typeof dims !== 'number'
  ) {
    throw damaged('no dims and no rowDims that fit');
  }
  const rows = transitions as BufferTransition[];
  let offset = 0;
  for (let i = 0; i < rows.length; i++) {
    const length = rowDims ? rowDims[i] : dims!;
    if (length < 0) continue;
    if (offset + length > embeddings.length) throw damaged('fewer embedding floats than its rows need');
    rows[i].embedding = embeddings.subarray(offset, offset + length);
    offset += length;
  }
  if (offset !== embeddings.length) throw damaged('more embedding floats than its rows need');
  return rows;
}

/** Chunks of at most CHUNK_ROWS rows: the transitions in the given order, then the episodes. */
function packChunks(transitions: readonly BufferTransition[], episodes: readonly BufferEpisode[]): ChunkRecord[] {
  const chunks: ChunkRecord[] = [];
  let e = 0;
  for (let start = 0; start < transitions.length; start += CHUNK_ROWS) {
    const part = transitions.slice(start, start + CHUNK_ROWS);
    const room = CHUNK_ROWS - part.length;
    chunks.push(encodeChunk(part, episodes.slice(e, e + room)));
    e += room;
  }
  for (; e < episodes.length; e += CHUNK_ROWS) chunks.push(encodeChunk([], episodes.slice(e, e + CHUNK_ROWS)));
  return chunks;
}

/** The records without earlier duplicates (a later record for an id replaces an earlier one). */
function lastOfEachId<T extends { id: string }>(records: T[]): T[] {
  const ids = new Set<string>();
  for (const record of records) ids.add(record.id);
  if (ids.size === records.length) return records;
  ids.clear();
  const out: T[] = [];
  for (let i = records.length - 1; i >= 0; i--) {
    if (ids.has(records[i].id)) continue;
    ids.add(records[i].id);
    out.push(records[i]);
  }
  return out.reverse();
}

/** Ids of the rows (live or superseded) one chunk holds. */
interface ChunkInfo {
  transitionIds: string[];
  episodeIds: string[];
}

/**
 * What one open connection loaded: the contents (a MemoryBufferStore) and which chunk holds which
 * rows, so writes know what a re-put supersedes and which chunks an eviction must rewrite.
 */
class LoadedBuffer {
  readonly chunks = new Map<number, ChunkInfo>();
  /** Id → seq of the chunk with its latest row. */
  readonly transitionHome = new Map<string, number>();
  readonly episodeHome = new Map<string, number>();
  /** Rows in all chunks, live and superseded. */
  rows = 0;

  constructor(
    readonly db: IDBPDatabase,
    readonly state: MemoryBufferStore,
  ) {}

  addChunk(seq: number, transitionIds: string[], episodeIds: string[]): void {
    this.chunks.set(seq, { transitionIds, episodeIds });
    this.rows += transitionIds.length + episodeIds.length;
    for (const id of transitionIds) this.transitionHome.set(id, seq);
    for (const id of episodeIds) this.episodeHome.set(id, seq);
  }

  dropChunk(seq: number): void {
    const info = this.chunks.get(seq);
    if (!info) return;
    this.chunks.delete(seq);
    this.rows -= info.transitionIds.length + info.episodeIds.length;
    for (const id of info.transitionIds) if (this.transitionHome.get(id) === seq) this.transitionHome.delete(id);
    for (const id of info.episodeIds) if (this.episodeHome.get(id) === seq) this.episodeHome.delete(id);
  }

  clear(): void {
    this.chunks.clear();
    this.transitionHome.clear();
    this.episodeHome.clear();
    this.rows = 0;
  }

  private liveRows(seq: number, info: ChunkInfo): number {
    let live = 0;
    for (const id of info.transitionIds) if (this.transitionHome.get(id) === seq) live++;
    for (const id of info.episodeIds) if (this.episodeHome.get(id) === seq) live++;
    return live;
  }

  /** Chunks to rewrite: mostly superseded ones once superseded rows pile up, and small ones once there are many. */
  compactionVictims(): number[] {
    const victims: number[] = [];
    const live = this.transitionHome.size + this.episodeHome.size;
    const wasteful = this.rows > 2 * live + COMPACT_SLACK;
    const small: number[] = [];
    for (const [seq, info] of this.chunks) {
      const rows = info.transitionIds.length + info.episodeIds.length;
      if (wasteful && 2 * this.liveRows(seq, info) < rows) victims.push(seq);
      else if (rows < SMALL_CHUNK_ROWS) small.push(seq);
    }
    if (small.length > SMALL_CHUNKS_MAX) victims.push(...small);
    return victims;
  }

  /** Chunks holding any row (of any version) of these transitions or episodes. */
  chunksHolding(transitionIds: ReadonlySet<string>, episodeIds: ReadonlySet<string>): number[] {
    const victims: number[] = [];
    for (const [seq, info] of this.chunks) {
      if (info.transitionIds.some((id) => transitionIds.has(id)) || info.episodeIds.some((id) => episodeIds.has(id)))
        victims.push(seq);
    }
    return victims;
  }

  /** The live rows of these chunks, less the removed ones, in insertion order. */
  liveRowsOf(
    victims: number[],
    removed: EvictionPlan | null,
  ): { transitions: BufferTransition[]; episodes: BufferEpisode[] } {
    const removedTransitions = new Set(removed?.transitionIds);
    const removedEpisodes = new Set(removed?.episodeIds);
    const transitions: BufferTransition[] = [];
    const episodeIds: string[] = [];
    for (const seq of victims) {
      const info = this.chunks.get(seq)!;
      for (const id of info.transitionIds) {
        if (this.transitionHome.get(id) !== seq || removedTransitions.has(id)) continue;
        const t = this.state.peekTransition(id);
        if (t) transitions.push(t);
      }
      for (const id of info.episodeIds)
        if (this.episodeHome.get(id) === seq && !removedEpisodes.has(id)) episodeIds.push(id);
    }
    let episodes: BufferEpisode[] = [];
    if (episodeIds.length > 0) {
      const wanted = new Set(episodeIds);
      episodes = this.state.allEpisodes().filter((e) => wanted.has(e.id));
    }
    return { transitions: transitions.sort(compareInsertion), episodes: episodes.sort(compareInsertion) };
  }
}

/** Reads tasks, runs and every chunk (seq order, LOAD_PAGE at a time with the next page in flight) into memory. */
async function loadBuffer(db: IDBPDatabase, hooks: BufferStoreTestHooks): Promise<LoadedBuffer> {
  const tx = db.transaction(['chunks', 'tasks', 'runs'], 'readonly');
  const done = tx.done;
  const tasks = tx.objectStore('tasks').getAll() as Promise<TaskBankEntry[]>;
  const runs = tx.objectStore('runs').getAll() as Promise<RunRecord[]>;
  for (const request of [done, tasks, runs])
    request.catch(() => {
      /* awaited below */
    });
  const state = new MemoryBufferStore({ testHooks: hooks });
  const loaded = new LoadedBuffer(db, state);
  const transitions: BufferTransition[] = [];
  const episodes: BufferEpisode[] = [];
  const store = tx.objectStore('chunks');
  let next = store.getAll(null, LOAD_PAGE) as Promise<ChunkRecord[]>;
  for (;;) {
    const page = await next;
    const more = page.length === LOAD_PAGE;
    if (more) {
      next = store.getAll(IDBKeyRange.lowerBound(page[page.length - 1].seq!, true), LOAD_PAGE) as Promise<
        ChunkRecord[]
      >;
      next.catch(() => {
        /* awaited on the next round */
      });
    }
    for (const chunk of page) {
      const rows = decodeChunk(chunk, db.name);
      const transitionIds = new Array<string>(rows.length);
      for (let i = 0; i < rows.length; i++) {
        transitions.push(rows[i]);
        transitionIds[i] = rows[i].id;
      }
      for (const e of chunk.episodes) episodes.push(e);
      loaded.addChunk(
        chunk.seq!,
        transitionIds,
        chunk.episodes.map((e) => e.id),
      );
    }
    if (!more) break;
  }
  // In seq order, so a later row for an id replaces the earlier ones.
  state.load({ transitions, episodes, tasks: await tasks, runs: await runs });
  await done;
  return loaded;
}

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
type WriteOperation = Parameters<NonNullable<BufferStoreTestHooks['beforeCommit']>>[0];
type ChunkPacker = (transitions: readonly BufferTransition[], episodes: readonly BufferEpisode[]) => ChunkRecord[];

// ---------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------

export class IndexedDbBufferStore implements BufferStore {
  readonly kind = 'indexeddb' as const;
  readonly name: string;
  private readonly storage: StorageLike | null;
  private readonly hooks: BufferStoreTestHooks;
  /** The open connection and what it loaded; null until the first call, and after a versionchange. */
  private current: Promise<LoadedBuffer> | null = null;
  private closed = false;

  /** Opens lazily on the first call; use `IndexedDbBufferStore.open` to surface schema errors at once. */
  constructor(options: IndexedDbBufferStoreOptions = {}) {
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
    operation: WriteOperation | null,
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
    loaded.addChunk(
      seq as number,
      copy.transitions.map((t) => t.id),
      copy.episodes.map((e) => e.id),
    );
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
    chunks.forEach((chunk, i) =>
      loaded.addChunk(
        seqs[i] as number,
        chunk.transitions.map((t) => t.id),
        chunk.episodes.map((e) => e.id),
      ),
    );
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
    replacements.forEach((chunk, i) =>
      loaded.addChunk(
        seqs[i] as number,
        chunk.transitions.map((t) => t.id),
        chunk.episodes.map((e) => e.id),
      ),
    );
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

  // ---------------------------------------------------------------------------------------------
  // Reads: from memory
  // ---------------------------------------------------------------------------------------------

  async getTransition(id: string): Promise<BufferTransition | undefined> {
    return (await this.loaded()).state.getTransition(id);
  }

  async listTransitions(filter?: TransitionFilter): Promise<BufferTransition[]> {
    return (await this.loaded()).state.listTransitions(filter);
  }

  async forEachTransition(visit: (t: BufferTransition) => void, filter?: TransitionFilter): Promise<void> {
    return (await this.loaded()).state.forEachTransition(visit, filter);
  }

  async countTransitions(filter?: TransitionFilter): Promise<number> {
    return (await this.loaded()).state.countTransitions(filter);
  }

  async hasEpisode(id: string): Promise<boolean> {
    return (await this.loaded()).state.hasEpisode(id);
  }

  async listEpisodes(filter?: { env?: string; source?: TransitionSource }): Promise<BufferEpisode[]> {
    return (await this.loaded()).state.listEpisodes(filter);
  }

  async listTasks(env?: string): Promise<TaskBankEntry[]> {
    return (await this.loaded()).state.listTasks(env);
  }

  async listRuns(): Promise<RunRecord[]> {
    return (await this.loaded()).state.listRuns();
  }

  async stats(): Promise<BufferStats> {
    return (await this.loaded()).state.stats();
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
