/**
 * The browser-safe buffer stores. The folder store (Node only, node:fs) lives in src/node/buffer-folder.ts.
 */
export {
  IndexedDbBufferStore,
  DEFAULT_BUFFER_DB_NAME,
  type IndexedDbBufferStoreOptions,
  type StorageLike,
} from './indexeddb';
export {
  INDEXEDDB_MIGRATIONS,
  INDEXEDDB_SCHEMA_VERSION,
  UNKNOWN_V1_EMBEDDER,
  type IndexedDbMigration,
} from './indexeddb-migrations';
export { MemoryBufferStore, type MemoryBufferStoreOptions } from './memory';
export type { BufferStoreTestHooks } from './common';
