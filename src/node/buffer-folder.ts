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
 * Everything is loaded into memory on open (CLI-sized data: hundreds of thousands of transitions;
 * buffer-folder-load.ts); `buffer stats` and `buffer query` read the folder as a stream instead
 * (buffer-folder-stream.ts), a chunk of a log at a time, so they answer for a folder of any size.
 * The format itself (meta.json, embeddings.json, the encodings) is buffer-folder-format.ts.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import type {
  BufferEpisode,
  BufferImport,
  BufferStore,
  BufferTransition,
  EvictionPolicy,
  RunRecord,
  TaskBankEntry,
} from '../core/buffer/types';
import { closedError, type BufferStoreTestHooks, type BufferWriteOperation } from '../core/buffer/stores/common';
import { MemoryBufferStore, type StagedTransitions } from '../core/buffer/stores/memory';
import { MemoryServedStore } from '../core/buffer/stores/memory-served';
import {
  FOLDER_FORMAT_VERSION,
  LOG_FILES,
  checkNoStrayFiles,
  embeddingChunks,
  embeddingIndexOf,
  emptyMeta,
  generationName,
  indexOf,
  isDataFileName,
  jsonLine,
  readConsistently,
  readFolderMeta,
  rowDimsOf,
  textChunks,
  transitionLine,
  type EmbeddingsIndex,
  type FolderFile,
  type FolderMeta,
  type LogFile,
} from './buffer-folder-format';
import { readSnapshot, type LogLines, type Snapshot } from './buffer-folder-load';
import { appendToFile, removeTempFiles, replaceFileAtomically, writeWholeFile } from './durable-files';
import { acquireFolderLock, LOCK_FILE, type FolderLock } from './folder-lock';

export interface FolderBufferStoreOptions {
  /** fsync data and meta before each commit (default true; benchmarks on slow disks may turn it off). */
  durable?: boolean;
  /** Open as a reader: no lock, nothing created or changed, writes refused (default false). */
  readOnly?: boolean;
  /** How long a writer waits for another writer's lock before failing (default 30 s). */
  lockWaitMs?: number;
  testHooks?: BufferStoreTestHooks;
}

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

/** Lines per log beyond this many more than the live records trigger a rewrite (replaced records pile up). */
const COMPACT_SLACK = 1000;

export class FolderBufferStore extends MemoryServedStore implements BufferStore {
  readonly kind = 'folder' as const;
  private state: MemoryBufferStore | null = null;
  private meta!: FolderMeta;
  /** Committed embeddings.json rows (row → id, and floats per row). */
  private rowIds: string[] = [];
  private rowDims: number[] = [];
  private embedders: string[] = [];
  /** Lines in each JSONL log (committed), to know when replaced records should be compacted away. */
  private lines: LogLines = { transitions: 0, episodes: 0, tasks: 0, runs: 0 };
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
    super();
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
      this.adopt(readConsistently(this.dir, (meta) => readSnapshot(this.dir, meta, this.hooks)));
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

  protected loadedState(): MemoryBufferStore {
    if (this.closed) throw closedError(this.kind);
    if (!this.state)
      throw new Error('FolderBufferStore: open it with FolderBufferStore.open(dir) (it locks and loads the folder).');
    return this.state;
  }

  private writable(): MemoryBufferStore {
    const state = this.loadedState();
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
    removeTempFiles(this.dir);
    if (!existsSync(this.path('meta.json'))) {
      checkNoStrayFiles(this.dir);
      this.meta = emptyMeta();
      this.writeAtomic('meta.json', JSON.stringify(this.meta));
      this.state = new MemoryBufferStore({ testHooks: this.hooks });
      return;
    }
    const snapshot = readSnapshot(this.dir, readFolderMeta(this.dir), this.hooks);
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
  private append(appends: Appends, rows: NewRows | null, operation: BufferWriteOperation): void {
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
    removeTempFiles(this.dir);
  }

  /**
   * Writes whole files under the next generation's names, commits meta.json naming them, then
   * deletes the files they replace. Used by evict, clear and compaction; a failure (or a crash)
   * before the commit leaves the folder as it was, one after it the new files whole.
   */
  private rewrite(parts: RewriteParts, operation: BufferWriteOperation | 'compact'): void {
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

  private appendFile(name: string, chunks: Iterable<Uint8Array>): number {
    return appendToFile(this.path(name), chunks, { fsync: this.durable });
  }

  private writeAtomic(name: string, text: string): void {
    replaceFileAtomically(this.path(name), text, { fsync: this.durable });
  }

  private writeChunks(name: string, chunks: Iterable<Uint8Array>): number {
    return writeWholeFile(this.path(name), chunks, { fsync: this.durable });
  }

  /** Releases the writer lock (at once, so another writer can open the folder right after). */
  async close(): Promise<void> {
    this.closed = true;
    this.state = null;
    this.lock?.release();
    this.lock = null;
  }
}
