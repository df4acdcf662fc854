/**
 * The browser-safe buffer stores. The folder store (Node only, node:fs) lives in src/node/buffer-folder.ts.
 */
export {
  IndexedDbBufferStore,
  DEFAULT_BUFFER_DB_NAME,
  INDEXEDDB_MIGRATIONS,
  INDEXEDDB_SCHEMA_VERSION,
  UNKNOWN_V1_EMBEDDER,
  type IndexedDbBufferStoreOptions,
  type IndexedDbMigration,
  type StorageLike,
} from './indexeddb';
export { MemoryBufferStore, type MemoryBufferStoreOptions } from './memory';
export type { BufferStoreTestHooks } from './common';
