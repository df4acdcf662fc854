/**
 * NODE ONLY (src/node/): uses node:fs. Nothing under src/core or the page may import this file.
 *
 * FolderBufferStore: the replay buffer as a folder, for the CLI.
 *
 *   meta.json          format + version, and the commit point: the current name of each file below,
 *                      the committed bytes of each append-only file, and a generation (one per rewrite)
 *   transitions.jsonl  one transition a line, without its embedding (a later line for an id replaces earlier ones)
 *   embeddings.bin     float32 rows, little-endian, one after another
 *   embeddings.json    dims, embedder ids, and row → transition id (a later row for an id supersedes;
 *                      a 0-length row says the transition has no embedding any more)
 *   episodes.jsonl  tasks.jsonl  runs.jsonl   one record a line, later lines replace earlier ones
 *   writer.lock        while a writer has the folder open (folder-lock.ts)
 *
 * One writer at a time: opening for writing takes the folder's lock (a second writer waits up to
 * `lockWaitMs`, then fails naming the holder; a dead holder's lock is taken over). Readers
 * (`readOnly`: stats, query, export) take no lock, create nothing and change nothing.
 *
 * Writes are batched, one call = one commit; `putImport` writes a whole import (transitions,
 * episodes and tasks) as one call. A batch appends to the data files, writes the new embeddings.json
 * to a temp file and renames it, then does the same for meta.json: that rename is the commit. If
 * anything fails before it, the appended bytes are cut off again and embeddings.json restored, so the
 * folder is as it was; after a crash, the next writer cuts whatever lies beyond the committed lengths
 * (the journal is meta.json: what it does not cover was never committed). Evict, clear and
 * compaction write the rewritten files under new names (`transitions.G.jsonl`, G the new
 * generation), commit meta.json naming them, then delete the old ones: a crash leaves the old set
 * or the new one, never a mix. A reader reads meta.json, the files it names up to their committed
 * bytes, and meta.json again, and reads anew if a rewrite came between: it never sees half a batch.
 * Everything is loaded into memory on open (CLI-sized data: hundreds of thousands of transitions);
 * `buffer stats` and `buffer query` read the folder as a stream instead (readStats,
 * scanTransitions), a chunk of a log at a time, so they answer for a folder of any size.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import {
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
} from '../core/buffer/types';
import { closedError, type BufferStoreTestHooks } from '../core/buffer/stores/common';
import { MemoryBufferStore, sortStats, type StagedTransitions } from '../core/buffer/stores/memory';
import { acquireFolderLock, LOCK_FILE, type FolderLock } from './folder-lock';
import { DreamGymError } from '../core/errors';

export const FOLDER_FORMAT = 'dreamgym-buffer-folder';
/** 2: meta.json names the files (rewrites use new names) and counts rewrites; version-1 folders load as they are. */
export const FOLDER_FORMAT_VERSION = 2;
export const EMBEDDINGS_FORMAT = 'dreamgym-buffer-embeddings/1';

const LOG_FILES = ['transitions.jsonl', 'embeddings.bin', 'episodes.jsonl', 'tasks.jsonl', 'runs.jsonl'] as const;
type LogFile = (typeof LOG_FILES)[number];
/** Every data file of the folder by its role (its name on disk is in meta.files). */
const FOLDER_FILES = [...LOG_FILES, 'embeddings.json'] as const;
type FolderFile = (typeof FOLDER_FILES)[number];

export interface FolderMeta {
  format: typeof FOLDER_FORMAT;
  version: number;
  /** Bytes of each append-only file that belong to committed batches; anything after is cut on open. */
  committedBytes: Record<LogFile, number>;
  /** Rows of embeddings.json that are committed (it is renamed before meta.json, so it may list more). */
  embeddingRows: number;
  /** Rewrites so far; a reader that sees it change while reading reads again. Absent in version 1. */
  generation?: number;
  /** The current name of each file (a rewrite writes new names). Absent in version 1: the roles' own names. */
  files?: Record<FolderFile, string>;
}

export interface EmbeddingsIndex {
  format: typeof EMBEDDINGS_FORMAT;
  dtype: 'float32-le';
  /** Floats per row when all rows have the same length; null when they differ (then `rowDims` lists them). */
  dims: number | null;
  /** Embedder ids of the stored embeddings, in order of first use. */
  embedders: string[];
  /** Row → transition id. */
  rows: string[];
  rowDims?: number[];
}

export interface FolderBufferStoreOptions {
  /** fsync data and meta before each commit (default true; benchmarks on slow disks may turn it off). */
  durable?: boolean;
  /** Open as a reader: no lock, nothing created or changed, writes refused (default false). */
  readOnly?: boolean;
  /** How long a writer waits for another writer's lock before failing (default 30 s). */
  lockWaitMs?: number;
  testHooks?: BufferStoreTestHooks;
}

/** What `FolderBufferStore.scanTransitions` hands the live transitions to (StreamedRetrieval is one). */
export interface TransitionScan {
  /** Called before each read of the folder: a rewrite during a read starts it over. */
  begin(): void;
  /** A block of transitions, each id once in a read. */
  add(block: BufferTransition[]): Promise<void>;
}

/** Raised when a reader (or a command that only reads) is pointed at a folder that holds no buffer. */
export class BufferFolderMissingError extends DreamGymError {
  constructor(readonly dir: string) {
    super(
      `There is no buffer folder at ${dir} (no ${join(dir, 'meta.json')}): check the path (--dir), ` +
        'or create the buffer by importing into it first (dreamgym buffer import FILE --dir DIR).',
      {
        code: 'buffer-folder-missing',
        fix: 'Check the path (--dir), or create the buffer by importing into it first (dreamgym buffer import FILE --dir DIR).',
      },
    );
    this.name = 'BufferFolderMissingError';
  }
}

/**
 * Raised before loading a folder that would not fit in this process's heap (a V8 abort with a
 * native stack otherwise): names the folder's size, what loading it needs, and the fix.
 */
export class BufferTooLargeError extends DreamGymError {
  constructor(
    readonly dir: string,
    readonly bytes: number,
    readonly neededBytes: number,
    readonly freeBytes: number,
  ) {
    const mb = (x: number) => `${Math.ceil(x / 2 ** 20).toLocaleString('en-US')} MB`;
    const heapMb = Math.ceil((getHeapStatistics().heap_size_limit + neededBytes - freeBytes) / 2 ** 20 / 256) * 256;
    super(
      `The buffer folder ${dir} holds ${mb(bytes)}; loading it needs about ${mb(neededBytes)} of memory, and this ` +
        `Node process has ${mb(freeBytes)} of heap left. Give Node more: NODE_OPTIONS=--max-old-space-size=${heapMb} ` +
        `(in MB) before the command, on a machine with that much memory, or use a smaller buffer (\`buffer stats\` ` +
        'and `buffer query` read any size).',
      {
        code: 'buffer-too-large',
        fix: `Give Node more heap (NODE_OPTIONS=--max-old-space-size=${heapMb}) on a machine with that much memory, or use a smaller buffer.`,
      },
    );
    this.name = 'BufferTooLargeError';
  }
}

/** Heap a load takes per byte of the folder's files (measured about 3×: the text, the records, the vectors). */
const LOAD_MEMORY_FACTOR = 3;

type WriteOperation = Parameters<NonNullable<BufferStoreTestHooks['beforeCommit']>>[0];
interface RewriteParts {
  transitions?: BufferTransition[];
  episodes?: BufferEpisode[];
  tasks?: TaskBankEntry[];
  runs?: RunRecord[];
}
type Appends = Partial<Record<LogFile, Iterable<Uint8Array>>>;
interface NewRows {
  ids: string[];
  dims: number[];
  embedders: string[];
}

/** What one consistent read of the folder found (nothing changed on disk by reading it). */
interface Snapshot {
  state: MemoryBufferStore;
  meta: FolderMeta;
  /** Committed bytes of each log that are whole (a torn last line is not), and the bytes on disk. */
  whole: Record<LogFile, number>;
  onDisk: Record<LogFile, number>;
  rowIds: string[];
  rowDims: number[];
  embedders: string[];
  lines: { transitions: number; episodes: number; tasks: number; runs: number };
}

/** Lines per log beyond this many more than the live records trigger a rewrite (replaced records pile up). */
const COMPACT_SLACK = 1000;
/** Bytes of a log decoded at once when loading (keeps strings far below V8's length limit). */
const LOAD_CHUNK_BYTES = 32 << 20;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Transitions a scan hands over at once, at most (and lines of an eighth of a chunk: 4 MB). */
const SCAN_BLOCK_ROWS = 4096;
/** Reads a reader retries when writers keep rewriting the folder under it. */
const READ_ATTEMPTS = 20;

export class FolderBufferStore implements BufferStore {
  readonly kind = 'folder' as const;
  private state: MemoryBufferStore | null = null;
  private meta!: FolderMeta;
  /** Committed embeddings.json rows (row → id, and floats per row). */
  private rowIds: string[] = [];
  private rowDims: number[] = [];
  private embedders: string[] = [];
  /** Lines in each JSONL log (committed), to know when replaced records should be compacted away. */
  private lines = { transitions: 0, episodes: 0, tasks: 0, runs: 0 };
  private closed = false;
  private lock: FolderLock | null = null;
  private readonly durable: boolean;
  private readonly readOnly: boolean;
  private readonly lockWaitMs: number;
  private readonly hooks: BufferStoreTestHooks;

  /** Use `FolderBufferStore.open`: it takes the writer lock (or reads consistently) and loads the folder. */
  constructor(
    readonly dir: string,
    options: FolderBufferStoreOptions = {},
  ) {
    this.durable = options.durable ?? true;
    this.readOnly = options.readOnly ?? false;
    this.lockWaitMs = options.lockWaitMs ?? 30_000;
    this.hooks = options.testHooks ?? {};
  }

  static async open(dir: string, options: FolderBufferStoreOptions = {}): Promise<FolderBufferStore> {
    const store = new FolderBufferStore(dir, options);
    await store.start();
    return store;
  }

  // ---------------------------------------------------------------------------------------------
  // Opening: a writer locks, repairs and loads; a reader loads a consistent snapshot
  // ---------------------------------------------------------------------------------------------

  private async start(): Promise<void> {
    if (this.readOnly) {
      this.adopt(this.readConsistently());
      return;
    }
    mkdirSync(this.dir, { recursive: true });
    this.lock = await acquireFolderLock(this.dir, { waitMs: this.lockWaitMs });
    try {
      this.openForWriting();
    } catch (error) {
      this.lock.release();
      this.lock = null;
      throw error;
    }
  }

  private loaded(): MemoryBufferStore {
    if (this.closed) throw closedError(this.kind);
    if (!this.state)
      throw new Error('FolderBufferStore: open it with FolderBufferStore.open(dir) (it locks and loads the folder).');
    return this.state;
  }

  private writable(): MemoryBufferStore {
    const state = this.loaded();
    if (this.readOnly) {
      throw new Error(
        `The buffer folder ${this.dir} was opened read-only (a reader: stats, query, export); nothing was written. ` +
          'Open it for writing (readOnly: false) to change it.',
      );
    }
    return state;
  }

  private path(name: string): string {
    return join(this.dir, name);
  }

  /** The current name on disk of a file role. */
  private fileOf(file: FolderFile): string {
    return this.meta.files![file];
  }

  /** With the lock held: creates the folder's meta, or loads it and cuts what an interrupted write left. */
  private openForWriting(): void {
    for (const name of readdirSync(this.dir)) if (name.endsWith('.tmp')) rmSync(this.path(name), { force: true });
    if (!existsSync(this.path('meta.json'))) {
      const stray = readdirSync(this.dir).filter(isDataFileName);
      if (stray.length > 0) {
        throw new BufferSchemaError(
          `${this.dir} holds ${stray.join(', ')} but no meta.json, so it is not a buffer folder this code ` +
            'wrote (or its meta.json was deleted). Point the buffer at an empty or new folder.',
        );
      }
      this.meta = emptyMeta();
      this.writeAtomic('meta.json', JSON.stringify(this.meta));
      this.state = new MemoryBufferStore({ testHooks: this.hooks });
      return;
    }
    const snapshot = this.readSnapshot(this.readMeta());
    this.adopt(snapshot);
    // Cut what an interrupted batch left beyond the committed bytes (and any torn last line), and
    // delete files of an interrupted rewrite that meta.json does not name.
    for (const file of LOG_FILES) {
      if (snapshot.onDisk[file] > snapshot.whole[file])
        truncateSync(this.path(this.fileOf(file)), snapshot.whole[file]);
    }
    const named = new Set([...Object.values(this.meta.files!), 'meta.json', LOCK_FILE]);
    for (const name of readdirSync(this.dir))
      if (isDataFileName(name) && !named.has(name)) rmSync(this.path(name), { force: true });
  }

  private adopt(snapshot: Snapshot): void {
    this.meta = { ...snapshot.meta, committedBytes: { ...snapshot.whole } };
    this.state = snapshot.state;
    this.rowIds = snapshot.rowIds;
    this.rowDims = snapshot.rowDims;
    this.embedders = snapshot.embedders;
    this.lines = snapshot.lines;
  }

  /** A reader's load: meta.json, its files, meta.json again — read anew while a rewrite comes between. */
  private readConsistently(): Snapshot {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const before = this.readMeta();
      let snapshot: Snapshot;
      try {
        snapshot = this.readSnapshot(before);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // a rewrite deleted a file we were about to read
        throw error;
      }
      if ((this.readMeta().generation ?? 0) === (before.generation ?? 0)) return snapshot;
    }
    throw rewrittenWhileReading(this.dir);
  }

  private readMeta(): FolderMeta {
    let text: string;
    try {
      text = readFileSync(this.path('meta.json'), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        const stray = existsSync(this.dir) && readdirSync(this.dir).some(isDataFileName);
        if (stray) {
          throw new BufferSchemaError(
            `${this.dir} holds buffer files but no meta.json, so it is not a buffer folder this code wrote ` +
              '(or its meta.json was deleted). Point the buffer at an empty or new folder.',
          );
        }
        throw new BufferFolderMissingError(this.dir);
      }
      throw error;
    }
    let meta: FolderMeta;
    try {
      meta = JSON.parse(text) as FolderMeta;
    } catch (error) {
      throw new BufferSchemaError(
        `${this.path('meta.json')} is not JSON (${(error as Error).message}): the buffer folder is damaged. ` +
          'Restore it from a copy, or delete the folder to start over.',
      );
    }
    if (meta?.format !== FOLDER_FORMAT) {
      throw new BufferSchemaError(
        `${this.path('meta.json')} has format '${String(meta?.format)}', not '${FOLDER_FORMAT}': not a buffer folder. ` +
          'Point the buffer at an empty or new folder.',
      );
    }
    if (!(meta.version <= FOLDER_FORMAT_VERSION)) {
      throw new BufferSchemaError(
        `The buffer folder ${this.dir} has format version ${meta.version}, but this code understands versions up to ` +
          `${FOLDER_FORMAT_VERSION}. It was written by a newer DreamGym Playground: use that version, or point the buffer at another folder.`,
      );
    }
    return { ...meta, files: { ...defaultFiles(), ...meta.files } };
  }

  /** Reads the committed contents meta names, changing nothing on disk. */
  private readSnapshot(meta: FolderMeta): Snapshot {
    this.checkFitsHeap(meta);
    const logs = {} as Record<LogFile, Buffer>;
    const whole = {} as Record<LogFile, number>;
    const onDisk = {} as Record<LogFile, number>;
    for (const file of LOG_FILES) {
      const bytes = this.readLog(meta.files![file]);
      onDisk[file] = bytes.length;
      let keep = Math.min(meta.committedBytes[file] ?? 0, bytes.length);
      // No torn last line (and mind lastIndexOf: a negative start counts from the end).
      if (file !== 'embeddings.bin') keep = keep === 0 ? 0 : bytes.lastIndexOf(0x0a, keep - 1) + 1;
      logs[file] = bytes.subarray(0, keep);
      whole[file] = keep;
    }
    const transitions = parseJsonl<BufferTransition>(logs['transitions.jsonl'], 'transitions.jsonl');
    const indexPath = this.path(meta.files!['embeddings.json']);
    const index = existsSync(indexPath)
      ? (JSON.parse(readFileSync(indexPath, 'utf8')) as EmbeddingsIndex)
      : emptyIndex();
    const { vectors, rows, usedBytes } = readEmbeddings(index, logs['embeddings.bin'], meta.embeddingRows);
    whole['embeddings.bin'] = usedBytes;
    const byId = new Map<string, BufferTransition>();
    for (const t of transitions) byId.set(t.id, t);
    for (const t of byId.values()) {
      const embedding = vectors.get(t.id);
      if (embedding) t.embedding = embedding;
    }
    const episodes = parseJsonl<BufferEpisode>(logs['episodes.jsonl'], 'episodes.jsonl');
    const tasks = parseJsonl<TaskBankEntry>(logs['tasks.jsonl'], 'tasks.jsonl');
    const runs = parseJsonl<RunRecord>(logs['runs.jsonl'], 'runs.jsonl');
    const state = new MemoryBufferStore({ testHooks: this.hooks });
    state.load({ transitions: byId.values(), episodes, tasks, runs });
    return {
      state,
      meta: { ...meta, embeddingRows: rows },
      whole,
      onDisk,
      rowIds: index.rows.slice(0, rows),
      rowDims: rowDimsOf(index).slice(0, rows),
      embedders: index.embedders ?? [],
      lines: { transitions: transitions.length, episodes: episodes.length, tasks: tasks.length, runs: runs.length },
    };
  }

  /** Refuses (BufferTooLargeError) a load that would exhaust the heap, before it starts. */
  private checkFitsHeap(meta: FolderMeta): void {
    const bytes = LOG_FILES.reduce((sum, file) => sum + (meta.committedBytes[file] ?? 0), 0);
    const heap = getHeapStatistics();
    const free = heap.heap_size_limit - heap.used_heap_size;
    if (bytes * LOAD_MEMORY_FACTOR > free)
      throw new BufferTooLargeError(this.dir, bytes, bytes * LOAD_MEMORY_FACTOR, free);
  }

  /**
   * The buffer's statistics (`buffer stats`) read as a stream: one chunk of a log at a time, and of
   * each record only what the counts need. Memory: two chunks (LOAD_CHUNK_BYTES) and the ids,
   * whatever the folder's size; nothing is loaded, nothing locked, nothing changed.
   */
  static readStats(dir: string, chunkBytes = LOAD_CHUNK_BYTES): BufferStats {
    const reader = new FolderBufferStore(dir, { readOnly: true });
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const before = reader.readMeta();
      let stats: BufferStats;
      try {
        stats = reader.statsOf(before, chunkBytes);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // a rewrite deleted a file
        throw error;
      }
      if ((reader.readMeta().generation ?? 0) === (before.generation ?? 0)) return stats;
    }
    throw rewrittenWhileReading(dir);
  }

  private statsOf(meta: FolderMeta, chunkBytes: number): BufferStats {
    // A replaced record is a later line with the same id: the last one counts.
    const kinds = new Map<string, string>(); // each distinct (env, source, valid, task), shared by its transitions
    const transitions = new Map<string, string>();
    for (const { record: t } of this.logLines(meta, 'transitions.jsonl', chunkBytes)) {
      const kind = JSON.stringify([t.env, t.source, t.valid, t.taskId]);
      if (!kinds.has(kind)) kinds.set(kind, kind);
      transitions.set(String(t.id), kinds.get(kind)!);
    }
    const ids = (file: LogFile) => {
      const seen = new Set<string>();
      for (const { record } of this.logLines(meta, file, chunkBytes)) seen.add(String(record.id));
      return seen.size;
    };
    const byEnvAndSource: BufferStats['byEnvAndSource'] = {};
    const taskIds = new Set<string>();
    let invalid = 0;
    for (const kind of transitions.values()) {
      const [env, source, valid, taskId] = JSON.parse(kind) as [string, TransitionSource, boolean, string];
      const perSource = (byEnvAndSource[env] ??= {});
      perSource[source] = (perSource[source] ?? 0) + 1;
      if (!valid) invalid++;
      taskIds.add(`${env}\n${taskId}`);
    }
    return {
      transitions: transitions.size,
      episodes: ids('episodes.jsonl'),
      tasks: ids('tasks.jsonl'),
      transitionTasks: taskIds.size,
      runs: ids('runs.jsonl'),
      byEnvAndSource: sortStats(byEnvAndSource),
      invalid,
    };
  }

  /**
   * The folder's live transitions handed to `scan` a block at a time (`buffer query`): each id's
   * last record with its last vector, as a full load holds them, in file order. Memory: a chunk of
   * the log (two while a line crosses chunks), a block, and per transition its id and where its
   * vector lies, whatever the folder's size. A rewrite during the read starts it over (scan.begin).
   */
  static async scanTransitions(dir: string, scan: TransitionScan, chunkBytes = LOAD_CHUNK_BYTES): Promise<void> {
    const reader = new FolderBufferStore(dir, { readOnly: true });
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const before = reader.readMeta();
      scan.begin();
      try {
        await reader.scanOf(before, scan, chunkBytes);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // a rewrite deleted a file
        throw error;
      }
      if ((reader.readMeta().generation ?? 0) === (before.generation ?? 0)) return;
    }
    throw rewrittenWhileReading(dir);
  }

  private async scanOf(meta: FolderMeta, scan: TransitionScan, chunkBytes: number): Promise<void> {
    // A later line for an id replaces the earlier ones: first find each id's last line.
    const lastLine = new Map<string, number>();
    let line = 0;
    for (const { record } of this.logLines(meta, 'transitions.jsonl', chunkBytes))
      lastLine.set(String(record.id), line++);
    const vectors = this.vectorRows(meta);
    const rows = new RowReader(this.path(meta.files!['embeddings.bin']), vectors.floats, chunkBytes / 8);
    try {
      let block: BufferTransition[] = [];
      let chars = 0;
      line = 0;
      for (const { record, chars: lineChars } of this.logLines(meta, 'transitions.jsonl', chunkBytes)) {
        if (lastLine.get(String(record.id)) !== line++) continue;
        const t = record as unknown as BufferTransition;
        const row = vectors.rowOf.get(t.id);
        if (row !== undefined) t.embedding = rows.floats(vectors.offsets[row], vectors.offsets[row + 1]);
        block.push(t);
        chars += lineChars;
        if (block.length < SCAN_BLOCK_ROWS && chars < chunkBytes / 8) continue;
        await scan.add(block);
        block = [];
        chars = 0;
      }
      if (block.length > 0) await scan.add(block);
    } finally {
      rows.close();
    }
  }

  /** The committed lines of a log, a chunk at a time. */
  private logLines(meta: FolderMeta, file: LogFile, chunkBytes: number) {
    return jsonLines(this.path(meta.files![file]), meta.committedBytes[file] ?? 0, file, chunkBytes);
  }

  /**
   * Where each transition's committed vector lies in embeddings.bin (in floats): its last row, or
   * none when that row is empty; `floats` is how much of the file is committed.
   */
  private vectorRows(meta: FolderMeta): { rowOf: Map<string, number>; offsets: Float64Array; floats: number } {
    const indexPath = this.path(meta.files!['embeddings.json']);
    const index = existsSync(indexPath)
      ? (JSON.parse(readFileSync(indexPath, 'utf8')) as EmbeddingsIndex)
      : emptyIndex();
    const name = meta.files!['embeddings.bin'];
    const onDisk = this.logSize(name);
    const floats = Math.floor(Math.min(meta.committedBytes['embeddings.bin'] ?? 0, onDisk) / 4);
    const rowOf = new Map<string, number>();
    const offsets: number[] = [0];
    forEachEmbeddingRow(index, floats, meta.embeddingRows, (id, offset, length) => {
      if (length === 0) rowOf.delete(id);
      else rowOf.set(id, offsets.length - 1);
      offsets.push(offset + length);
    });
    return { rowOf, offsets: Float64Array.from(offsets), floats };
  }

  /** Bytes of a log on disk (0 for one never written). */
  private logSize(name: string): number {
    try {
      return statSync(this.path(name)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && name === defaultFiles()[name as FolderFile]) return 0;
      throw error;
    }
  }

  private readLog(name: string): Buffer {
    try {
      return readFileSync(this.path(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && name === defaultFiles()[name as FolderFile])
        return Buffer.alloc(0); // never written yet
      throw error;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Writes
  // ---------------------------------------------------------------------------------------------

  async putTransitions(
    transitions: BufferTransition[],
    episodes: BufferEpisode[] = [],
  ): Promise<{ added: number; replaced: number }> {
    const state = this.writable();
    const staged = state.stageTransitions(transitions, episodes);
    if (staged.transitions.length === 0 && staged.episodes.length === 0) return { added: 0, replaced: 0 };
    const { appends, rows } = this.transitionAppends(state, staged);
    this.append(appends, rows, 'putTransitions');
    this.applyStaged(state, staged);
    this.compactIfWasteful();
    return { added: staged.added, replaced: staged.replaced };
  }

  /** One import whole: transitions, episodes and tasks appended together, one commit. */
  async putImport(batch: BufferImport): Promise<{ added: number; replaced: number }> {
    const state = this.writable();
    const staged = state.stageTransitions(batch.transitions, batch.episodes, batch.embeddingsHandedOver);
    const tasks = state.stageTasks(batch.tasks);
    if (staged.transitions.length === 0 && staged.episodes.length === 0 && tasks.length === 0)
      return { added: 0, replaced: 0 };
    const { appends, rows } = this.transitionAppends(state, staged);
    this.append({ ...appends, 'tasks.jsonl': textChunks<object>(tasks, jsonLine) }, rows, 'putImport');
    this.applyStaged(state, staged);
    state.applyTasks(tasks);
    this.lines.tasks += tasks.length;
    this.compactIfWasteful();
    return { added: staged.added, replaced: staged.replaced };
  }

  /** The log bytes and embedding rows of a staged batch. */
  private transitionAppends(state: MemoryBufferStore, staged: StagedTransitions): { appends: Appends; rows: NewRows } {
    const rows: NewRows = { ids: [], dims: [], embedders: [] };
    const hasEmbedding = new Map<string, boolean>();
    for (const t of staged.transitions) {
      const had = hasEmbedding.get(t.id) ?? state.peekTransition(t.id)?.embedding !== undefined;
      if (t.embedding !== undefined) {
        rows.ids.push(t.id);
        rows.dims.push(t.embedding.length);
        if (t.embedder !== undefined && !this.embedders.includes(t.embedder) && !rows.embedders.includes(t.embedder))
          rows.embedders.push(t.embedder);
      } else if (had) {
        rows.ids.push(t.id);
        rows.dims.push(0);
      }
      hasEmbedding.set(t.id, t.embedding !== undefined);
    }
    return {
      appends: {
        'transitions.jsonl': textChunks(staged.transitions, transitionLine),
        'embeddings.bin': embeddingChunks(staged.transitions),
        'episodes.jsonl': textChunks<object>(staged.episodes, jsonLine),
      },
      rows,
    };
  }

  private applyStaged(state: MemoryBufferStore, staged: StagedTransitions): void {
    state.applyTransitions(staged);
    this.lines.transitions += staged.transitions.length;
    this.lines.episodes += staged.episodes.length;
  }

  async putTasks(tasks: TaskBankEntry[]): Promise<void> {
    const state = this.writable();
    const copies = state.stageTasks(tasks);
    if (copies.length === 0) return;
    this.append({ 'tasks.jsonl': textChunks<object>(copies, jsonLine) }, null, 'putTasks');
    state.applyTasks(copies);
    this.lines.tasks += copies.length;
    this.compactIfWasteful();
  }

  async putRun(run: RunRecord): Promise<void> {
    const state = this.writable();
    const copy = state.stageRun(run);
    this.append({ 'runs.jsonl': [Buffer.from(jsonLine(copy), 'utf8')] }, null, 'putRun');
    state.applyRun(copy);
    this.lines.runs += 1;
    this.compactIfWasteful();
  }

  async evict(policy: EvictionPolicy): Promise<string[]> {
    const state = this.writable();
    const plan = state.planEviction(policy);
    if (plan.transitionIds.length === 0) return [];
    const removed = new Set(plan.transitionIds);
    const removedEpisodes = new Set(plan.episodeIds);
    this.rewrite(
      {
        transitions: state.orderedTransitions().filter((t) => !removed.has(t.id)),
        episodes: state.allEpisodes().filter((e) => !removedEpisodes.has(e.id)),
      },
      'evict',
    );
    state.applyEviction(plan);
    return plan.transitionIds;
  }

  async clear(): Promise<void> {
    const state = this.writable();
    this.rewrite({ transitions: [], episodes: [], tasks: [], runs: [] }, 'clear');
    state.applyClear();
  }

  /**
   * Appends to the logs and commits (embeddings.json, then meta.json, each via temp + rename).
   * On any failure before the commit, cuts the appended bytes off and restores embeddings.json.
   */
  private append(appends: Appends, rows: NewRows | null, operation: WriteOperation): void {
    const meta: FolderMeta = {
      ...this.meta,
      version: FOLDER_FORMAT_VERSION,
      committedBytes: { ...this.meta.committedBytes },
    };
    const existed = LOG_FILES.filter((file) => existsSync(this.path(this.fileOf(file))));
    let indexWritten = false;
    try {
      for (const file of LOG_FILES) {
        const chunks = appends[file];
        if (chunks) meta.committedBytes[file] += this.appendFile(this.fileOf(file), chunks);
      }
      if (rows && rows.ids.length > 0) {
        indexWritten = true;
        this.writeAtomic(
          this.fileOf('embeddings.json'),
          JSON.stringify(
            indexOf(
              this.rowIds.concat(rows.ids),
              this.rowDims.concat(rows.dims),
              this.embedders.concat(rows.embedders),
            ),
          ),
        );
        meta.embeddingRows += rows.ids.length;
      }
      this.hooks.beforeCommit?.(operation);
      this.writeAtomic('meta.json', JSON.stringify(meta));
    } catch (error) {
      this.rollBack(indexWritten, existed);
      throw error;
    }
    this.meta = meta;
    if (rows) {
      for (let i = 0; i < rows.ids.length; i++) {
        this.rowIds.push(rows.ids[i]);
        this.rowDims.push(rows.dims[i]);
      }
      this.embedders.push(...rows.embedders);
    }
  }

  /** Cuts the appended bytes off (and deletes the logs the failed batch created), restores embeddings.json. */
  private rollBack(indexWritten: boolean, existed: readonly LogFile[]): void {
    for (const file of LOG_FILES) {
      const path = this.path(this.fileOf(file));
      if (!existsSync(path)) continue;
      if (!existed.includes(file)) rmSync(path, { force: true });
      else if (statSync(path).size > this.meta.committedBytes[file]) truncateSync(path, this.meta.committedBytes[file]);
    }
    if (indexWritten)
      this.writeAtomic(
        this.fileOf('embeddings.json'),
        JSON.stringify(indexOf(this.rowIds, this.rowDims, this.embedders)),
      );
    for (const name of readdirSync(this.dir)) if (name.endsWith('.tmp')) rmSync(this.path(name), { force: true });
  }

  /**
   * Writes whole files under the next generation's names, commits meta.json naming them, then
   * deletes the files they replace. Used by evict, clear and compaction; a failure (or a crash)
   * before the commit leaves the folder as it was, one after it the new files whole.
   */
  private rewrite(parts: RewriteParts, operation: WriteOperation | 'compact'): void {
    const generation = (this.meta.generation ?? 0) + 1;
    const meta: FolderMeta = {
      ...this.meta,
      version: FOLDER_FORMAT_VERSION,
      generation,
      committedBytes: { ...this.meta.committedBytes },
      files: { ...this.meta.files! },
    };
    const written: FolderFile[] = [];
    let index: EmbeddingsIndex | null = null;
    const writeNew = (file: FolderFile, chunks: Iterable<Uint8Array>): number => {
      written.push(file);
      meta.files![file] = generationName(file, generation);
      return this.writeChunks(meta.files![file], chunks);
    };
    try {
      if (parts.transitions) {
        index = embeddingIndexOf(parts.transitions);
        meta.committedBytes['transitions.jsonl'] = writeNew(
          'transitions.jsonl',
          textChunks(parts.transitions, transitionLine),
        );
        meta.committedBytes['embeddings.bin'] = writeNew('embeddings.bin', embeddingChunks(parts.transitions));
        writeNew('embeddings.json', [Buffer.from(JSON.stringify(index), 'utf8')]);
        meta.embeddingRows = index.rows.length;
      }
      for (const [file, records] of [
        ['episodes.jsonl', parts.episodes],
        ['tasks.jsonl', parts.tasks],
        ['runs.jsonl', parts.runs],
      ] as const) {
        if (records) meta.committedBytes[file] = writeNew(file, textChunks<object>(records, jsonLine));
      }
      if (operation !== 'compact') this.hooks.beforeCommit?.(operation);
      this.writeAtomic('meta.json', JSON.stringify(meta));
    } catch (error) {
      for (const file of written) rmSync(this.path(meta.files![file]), { force: true });
      throw error;
    }
    for (const file of written)
      if (this.fileOf(file) !== meta.files![file]) rmSync(this.path(this.fileOf(file)), { force: true });
    this.meta = meta;
    if (index) {
      this.rowIds = index.rows;
      this.rowDims = rowDimsOf(index);
      this.embedders = index.embedders;
    }
    if (parts.transitions) this.lines.transitions = parts.transitions.length;
    if (parts.episodes) this.lines.episodes = parts.episodes.length;
    if (parts.tasks) this.lines.tasks = parts.tasks.length;
    if (parts.runs) this.lines.runs = parts.runs.length;
  }

  /** Rewrites a log once replaced records outnumber live ones (plus some slack). */
  private compactIfWasteful(): void {
    const state = this.state!;
    const live = state.sizes();
    const wasteful = (lines: number, records: number) => lines > 2 * records + COMPACT_SLACK;
    const parts: RewriteParts = {};
    if (wasteful(this.lines.transitions, live.transitions) || wasteful(this.rowIds.length, live.transitions))
      parts.transitions = state.orderedTransitions();
    if (wasteful(this.lines.episodes, live.episodes)) parts.episodes = state.allEpisodes();
    if (wasteful(this.lines.tasks, live.tasks)) parts.tasks = state.allTasks();
    if (wasteful(this.lines.runs, live.runs)) parts.runs = state.allRuns();
    if (Object.keys(parts).length > 0) this.rewrite(parts, 'compact');
  }

  // ---------------------------------------------------------------------------------------------
  // Files
  // ---------------------------------------------------------------------------------------------

  /** Appends chunks to a file (opened at the first non-empty chunk: nothing to append creates nothing); returns the bytes written. */
  private appendFile(name: string, chunks: Iterable<Uint8Array>): number {
    let fd: number | null = null;
    let total = 0;
    try {
      for (const chunk of chunks) {
        if (chunk.length === 0) continue;
        fd ??= openSync(this.path(name), 'a');
        writeAll(fd, chunk);
        total += chunk.length;
      }
      if (this.durable && fd !== null) fsyncSync(fd);
    } finally {
      if (fd !== null) closeSync(fd);
    }
    return total;
  }

  /** Writes `name.tmp`, then renames it over `name`. */
  private writeAtomic(name: string, text: string): void {
    this.writeChunks(`${name}.tmp`, [Buffer.from(text, 'utf8')]);
    renameSync(this.path(`${name}.tmp`), this.path(name));
  }

  private writeChunks(name: string, chunks: Iterable<Uint8Array>): number {
    const fd = openSync(this.path(name), 'w');
    let total = 0;
    try {
      for (const chunk of chunks) {
        writeAll(fd, chunk);
        total += chunk.length;
      }
      if (this.durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return total;
  }

  // ---------------------------------------------------------------------------------------------
  // Reads (from memory)
  // ---------------------------------------------------------------------------------------------

  async getTransition(id: string): Promise<BufferTransition | undefined> {
    return this.loaded().getTransition(id);
  }
  async listTransitions(filter?: TransitionFilter): Promise<BufferTransition[]> {
    return this.loaded().listTransitions(filter);
  }
  async forEachTransition(visit: (t: BufferTransition) => void, filter?: TransitionFilter): Promise<void> {
    return this.loaded().forEachTransition(visit, filter);
  }
  async countTransitions(filter?: TransitionFilter): Promise<number> {
    return this.loaded().countTransitions(filter);
  }
  async hasEpisode(id: string): Promise<boolean> {
    return this.loaded().hasEpisode(id);
  }
  async listEpisodes(filter?: { env?: string; source?: TransitionSource }): Promise<BufferEpisode[]> {
    return this.loaded().listEpisodes(filter);
  }
  async listTasks(env?: string): Promise<TaskBankEntry[]> {
    return this.loaded().listTasks(env);
  }
  async listRuns(): Promise<RunRecord[]> {
    return this.loaded().listRuns();
  }
  async stats(): Promise<BufferStats> {
    return this.loaded().stats();
  }

  /** Releases the writer lock (at once, so another writer can open the folder right after). */
  async close(): Promise<void> {
    this.closed = true;
    this.state = null;
    this.lock?.release();
    this.lock = null;
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

function emptyMeta(): FolderMeta {
  return {
    format: FOLDER_FORMAT,
    version: FOLDER_FORMAT_VERSION,
    embeddingRows: 0,
    generation: 0,
    files: defaultFiles(),
    committedBytes: Object.fromEntries(LOG_FILES.map((file) => [file, 0])) as Record<LogFile, number>,
  };
}

/** Each file role under its own name (a new folder, and every version-1 folder). */
function defaultFiles(): Record<FolderFile, string> {
  return Object.fromEntries(FOLDER_FILES.map((file) => [file, file])) as Record<FolderFile, string>;
}

/** A role's name in a generation: transitions.jsonl → transitions.3.jsonl. */
function generationName(file: FolderFile, generation: number): string {
  const dot = file.indexOf('.');
  return `${file.slice(0, dot)}.${generation}${file.slice(dot)}`;
}

/** A data file of some generation (what an interrupted rewrite may leave behind). */
function isDataFileName(name: string): boolean {
  return /^(transitions|embeddings|episodes|tasks|runs)(\.\d+)?\.(jsonl|bin|json)$/.test(name);
}

function jsonLine(record: object): string {
  return JSON.stringify(record) + '\n';
}

/** The embeddings.json of these transitions (rows in their order). */
function embeddingIndexOf(transitions: readonly BufferTransition[]): EmbeddingsIndex {
  const ids: string[] = [];
  const dims: number[] = [];
  const embedders: string[] = [];
  for (const t of transitions) {
    if (t.embedding === undefined) continue;
    ids.push(t.id);
    dims.push(t.embedding.length);
    if (t.embedder !== undefined && !embedders.includes(t.embedder)) embedders.push(t.embedder);
  }
  return indexOf(ids, dims, embedders);
}

function emptyIndex(): EmbeddingsIndex {
  return indexOf([], [], []);
}

function indexOf(rows: string[], rowDims: number[], embedders: string[]): EmbeddingsIndex {
  const first = rowDims[0] ?? null;
  const uniform = first !== null && first > 0 && rowDims.every((d) => d === first);
  return {
    format: EMBEDDINGS_FORMAT,
    dtype: 'float32-le',
    dims: uniform ? first : null,
    embedders,
    rows,
    ...(uniform || rows.length === 0 ? {} : { rowDims }),
  };
}

function rowDimsOf(index: EmbeddingsIndex): number[] {
  return index.rowDims ?? index.rows.map(() => index.dims ?? 0);
}

/** One JSONL line of a transition, without its embedding (that goes to embeddings.bin). */
function transitionLine(t: BufferTransition): string {
  if (t.embedding === undefined) return JSON.stringify(t) + '\n';
  const { embedding: _embedding, ...rest } = t;
  return JSON.stringify(rest) + '\n';
}

/** Rows as little-endian float32 bytes. */
function floatsToBytes(vectors: Float32Array[]): Uint8Array {
  let total = 0;
  for (const v of vectors) total += v.length;
  const floats = new Float32Array(total);
  let offset = 0;
  for (const v of vectors) {
    floats.set(v, offset);
    offset += v.length;
  }
  if (!LITTLE_ENDIAN) {
    const view = new DataView(floats.buffer);
    for (let i = 0; i < total; i++) view.setFloat32(i * 4, floats[i], true);
  }
  return new Uint8Array(floats.buffer);
}

function* textChunks<T>(records: Iterable<T>, line: (record: T) => string): Generator<Uint8Array> {
  let batch: string[] = [];
  for (const record of records) {
    batch.push(line(record));
    if (batch.length === 1000) {
      yield Buffer.from(batch.join(''), 'utf8');
      batch = [];
    }
  }
  if (batch.length > 0) yield Buffer.from(batch.join(''), 'utf8');
}

function* embeddingChunks(transitions: BufferTransition[]): Generator<Uint8Array> {
  let batch: Float32Array[] = [];
  for (const t of transitions) {
    if (t.embedding === undefined) continue;
    batch.push(t.embedding);
    if (batch.length === 1000) {
      yield floatsToBytes(batch);
      batch = [];
    }
  }
  if (batch.length > 0) yield floatsToBytes(batch);
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/**
 * Every whole JSON line of the first `committed` bytes of `path` (a torn last line is not read),
 * with its length in characters, reading `chunkBytes` at a time: a line longer than a chunk is
 * read whole. The file stays open until the loop ends (a rewrite may delete it meanwhile).
 */
function* jsonLines(
  path: string,
  committed: number,
  file: string,
  chunkBytes: number,
): Generator<{ record: Record<string, unknown>; chars: number }> {
  if (committed === 0) return;
  const fd = openSync(path, 'r');
  try {
    let carry = Buffer.alloc(0); // the start of a line the last chunk cut
    let lineNumber = 0;
    for (let position = 0; position < committed;) {
      const chunk = Buffer.alloc(Math.min(chunkBytes, committed - position));
      const read = readSync(fd, chunk, 0, chunk.length, position);
      if (read === 0) break; // shorter than meta says: what is there is read
      position += read;
      const bytes = carry.length ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      // Each line decoded on its own: no string of the whole chunk stays alive while its lines are used.
      let start = 0;
      for (let end = bytes.indexOf(0x0a); end >= 0; start = end + 1, end = bytes.indexOf(0x0a, start)) {
        lineNumber++;
        if (end === start) continue;
        const line = bytes.toString('utf8', start, end);
        yield { record: parseLine(line, file, lineNumber), chars: line.length };
      }
      carry = Buffer.from(bytes.subarray(start));
    }
  } finally {
    closeSync(fd);
  }
}

function parseLine(line: string, file: string, lineNumber: number): Record<string, unknown> {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch (error) {
    throw new BufferSchemaError(
      `${file} line ${lineNumber} is not valid JSON (${(error as Error).message}): the buffer folder is damaged. ` +
        'Restore it from a copy, or delete the folder to start over.',
    );
  }
}

/** Parses a JSONL buffer in chunks that end at a newline (never one giant string). */
function parseJsonl<T>(bytes: Buffer, file: string): T[] {
  const records: T[] = [];
  let start = 0;
  let lineNumber = 0;
  while (start < bytes.length) {
    let end = Math.min(start + LOAD_CHUNK_BYTES, bytes.length);
    if (end < bytes.length) {
      const newline = bytes.lastIndexOf(0x0a, end - 1);
      end = newline >= start ? newline + 1 : bytes.indexOf(0x0a, end) + 1 || bytes.length;
    }
    const text = bytes.toString('utf8', start, end);
    for (const line of text.split('\n')) {
      lineNumber++;
      if (line === '') continue;
      try {
        records.push(JSON.parse(line) as T);
      } catch (error) {
        throw new BufferSchemaError(
          `${file} line ${lineNumber} is not valid JSON (${(error as Error).message}): the buffer folder is damaged. ` +
            'Restore it from a copy, or delete the folder to start over.',
        );
      }
    }
    lineNumber--; // the chunk's trailing '' after its last newline is not a line
    start = end;
  }
  return records;
}

/**
 * Calls `visit` with each committed row of embeddings.json (its id, offset and length in floats),
 * stopping at a row that `floats` does not hold whole (a crash cut it); returns the rows and
 * floats visited.
 */
function forEachEmbeddingRow(
  index: EmbeddingsIndex,
  floats: number,
  committedRows: number,
  visit: (id: string, offset: number, length: number) => void,
): { rows: number; usedFloats: number } {
  if (index.format !== EMBEDDINGS_FORMAT) {
    throw new BufferSchemaError(
      `embeddings.json has format '${String(index.format)}', expected '${EMBEDDINGS_FORMAT}'.`,
    );
  }
  const dims = rowDimsOf(index);
  let offset = 0;
  let rows = 0;
  for (; rows < Math.min(committedRows, index.rows.length); rows++) {
    const length = dims[rows];
    if (offset + length > floats) break;
    visit(index.rows[rows], offset, length);
    offset += length;
  }
  return { rows, usedFloats: offset };
}

/** Vectors by transition id from the committed rows; also how many rows and bytes are valid. */
function readEmbeddings(
  index: EmbeddingsIndex,
  bytes: Buffer,
  committedRows: number,
): { vectors: Map<string, Float32Array>; rows: number; usedBytes: number } {
  const floats = floatsOf(bytes);
  const vectors = new Map<string, Float32Array>();
  const { rows, usedFloats } = forEachEmbeddingRow(index, floats.length, committedRows, (id, offset, length) => {
    if (length === 0) vectors.delete(id);
    else vectors.set(id, floats.subarray(offset, offset + length));
  });
  return { vectors, rows, usedBytes: usedFloats * 4 };
}

/** Little-endian float32 bytes as floats (a view where the platform and alignment allow, else a copy). */
function floatsOf(bytes: Uint8Array): Float32Array {
  const count = Math.floor(bytes.length / 4);
  if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, count);
  const floats = new Float32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 4);
  for (let i = 0; i < count; i++) floats[i] = view.getFloat32(i * 4, true);
  return floats;
}

/**
 * Rows of embeddings.bin read by offset through a window of the file: a scan asks for them mostly
 * in file order, so most rows come from the window already read.
 */
class RowReader {
  private fd: number | null = null;
  private window = Buffer.alloc(0);
  /** Float offset of the window's start. */
  private start = 0;

  constructor(
    private readonly path: string,
    /** Committed floats of the file: nothing beyond is read. */
    private readonly committedFloats: number,
    private readonly windowBytes: number,
  ) {}

  /** A copy of floats [from, to). */
  floats(from: number, to: number): Float32Array {
    if (from < this.start || to > this.start + this.window.length / 4) this.read(from, to);
    const bytes = this.window.subarray((from - this.start) * 4, (to - this.start) * 4);
    return new Float32Array(floatsOf(bytes));
  }

  private read(from: number, to: number): void {
    this.fd ??= openSync(this.path, 'r');
    const end = Math.min(this.committedFloats, Math.max(to, from + Math.floor(this.windowBytes / 4)));
    this.window = Buffer.alloc((end - from) * 4);
    readSync(this.fd, this.window, 0, this.window.length, from * 4);
    this.start = from;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

function rewrittenWhileReading(dir: string): Error {
  return new Error(
    `The buffer folder ${dir} was rewritten ${READ_ATTEMPTS} times while being read (a writer is evicting or ` +
      'compacting); run the command again once that writer is done.',
  );
}
