/**
 * The browser-safe buffer stores. FolderBufferStore (Node only, node:fs) is deliberately not here:
 * the CLI imports it from './folder' directly.
 */
export {
  IndexedDbBufferStore, DEFAULT_BUFFER_DB_NAME, INDEXEDDB_MIGRATIONS, INDEXEDDB_SCHEMA_VERSION, UNKNOWN_V1_EMBEDDER,
  type IndexedDbBufferStoreOptions, type IndexedDbMigration, type StorageLike,
} from './indexeddb';
export { MemoryBufferStore, type MemoryBufferStoreOptions } from './memory';
export type { BufferStoreTestHooks } from './common';
