/**
 * The IndexedDB buffer's schema, versioned: every step from v1 to the current one (the layout of
 * v3, the batch log, is in indexeddb-chunks.ts). IndexedDbBufferStore runs the steps a database has
 * not seen yet, in order, inside the upgrade transaction.
 */
import type { IDBPDatabase, IDBPTransaction } from 'idb';
import type { BufferEpisode, BufferTransition, TransitionSource } from '../types';
import { compareInsertion } from './common';
import { packChunks } from './indexeddb-chunks';

export type UpgradeTransaction = IDBPTransaction<unknown, string[], 'versionchange'>;

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
