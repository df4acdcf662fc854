/**
 * NODE ONLY (src/node/): uses node:fs. Nothing under src/core or the page may import this file.
 *
 * FolderBufferStore: the replay buffer as a folder, for the CLI.
 *
 *   meta.json          format + version, and the commit point: committed bytes of each append-only file
 *   transitions.jsonl  one transition a line, without its embedding (a later line for an id replaces earlier ones)
 *   embeddings.bin     float32 rows, little-endian, one after another
 *   embeddings.json    dims, embedder ids, and row → transition id (a later row for an id supersedes;
 *                      a 0-length row says the transition has no embedding any more)
 *   episodes.jsonl  tasks.jsonl  runs.jsonl   one record a line, later lines replace earlier ones
 *
 * Writes are batched, one call = one commit. A batch appends to the data files, writes the new
 * embeddings.json to a temp file and renames it, then does the same for meta.json: that rename is
 * the commit. If anything fails before it, the appended bytes are cut off again and embeddings.json
 * restored, so the folder is as it was; after a crash, opening cuts whatever lies beyond the
 * committed lengths. Evict, clear and compaction rewrite files under temp names and rename them.
 * Everything is loaded into memory on open (CLI-sized data: hundreds of thousands of transitions).
 * One process at a time may write a folder.
 */
import {
  closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync,
  truncateSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  BufferSchemaError,
  type BufferEpisode, type BufferStats, type BufferStore, type BufferTransition, type EvictionPolicy,
  type RunRecord, type TaskBankEntry, type TransitionFilter, type TransitionSource,
} from '../core/buffer/types';
import { closedError, type BufferStoreTestHooks } from '../core/buffer/stores/common';
import { MemoryBufferStore } from '../core/buffer/stores/memory';

export const FOLDER_FORMAT = 'dreamgym-buffer-folder';
export const FOLDER_FORMAT_VERSION = 1;
export const EMBEDDINGS_FORMAT = 'dreamgym-buffer-embeddings/1';

const LOG_FILES = ['transitions.jsonl', 'embeddings.bin', 'episodes.jsonl', 'tasks.jsonl', 'runs.jsonl'] as const;
type LogFile = (typeof LOG_FILES)[number];

export interface FolderMeta {
  format: typeof FOLDER_FORMAT;
  version: number;
  /** Bytes of each append-only file that belong to committed batches; anything after is cut on open. */
  committedBytes: Record<LogFile, number>;
  /** Rows of embeddings.json that are committed (it is renamed before meta.json, so it may list more). */
  embeddingRows: number;
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
  testHooks?: BufferStoreTestHooks;
}

type WriteOperation = Parameters<NonNullable<BufferStoreTestHooks['beforeCommit']>>[0];
interface RewriteParts { transitions?: BufferTransition[]; episodes?: BufferEpisode[]; tasks?: TaskBankEntry[]; runs?: RunRecord[] }

/** Lines per log beyond this many more than the live records trigger a rewrite (replaced records pile up). */
const COMPACT_SLACK = 1000;
/** Bytes of a log decoded at once when loading (keeps strings far below V8's length limit). */
const LOAD_CHUNK_BYTES = 32 << 20;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

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
  private readonly durable: boolean;
  private readonly hooks: BufferStoreTestHooks;

  /** Loads lazily on the first call; use `FolderBufferStore.open` to load (and see format errors) at once. */
  constructor(readonly dir: string, options: FolderBufferStoreOptions = {}) {
    this.durable = options.durable ?? true;
    this.hooks = options.testHooks ?? {};
  }

  static async open(dir: string, options: FolderBufferStoreOptions = {}): Promise<FolderBufferStore> {
    const store = new FolderBufferStore(dir, options);
    store.loaded();
    return store;
  }

  // ---------------------------------------------------------------------------------------------
  // Loading
  // ---------------------------------------------------------------------------------------------

  private loaded(): MemoryBufferStore {
    if (this.closed) throw closedError(this.kind);
    if (!this.state) this.load();
    return this.state!;
  }

  private path(name: string): string {
    return join(this.dir, name);
  }

  private load(): void {
    mkdirSync(this.dir, { recursive: true });
    for (const name of readdirSync(this.dir)) if (name.endsWith('.tmp')) rmSync(this.path(name), { force: true });
    const state = new MemoryBufferStore({ testHooks: this.hooks });
    if (!existsSync(this.path('meta.json'))) {
      const stray = LOG_FILES.filter((file) => existsSync(this.path(file)));
      if (stray.length > 0) {
        throw new BufferSchemaError(`${this.dir} holds ${stray.join(', ')} but no meta.json, so it is not a buffer folder this code ` +
          'wrote (or its meta.json was deleted). Point the buffer at an empty or new folder.');
      }
      this.meta = emptyMeta();
      this.writeAtomic('meta.json', JSON.stringify(this.meta));
      this.state = state;
      return;
    }
    const meta = JSON.parse(readFileSync(this.path('meta.json'), 'utf8')) as FolderMeta;
    if (meta.format !== FOLDER_FORMAT) {
      throw new BufferSchemaError(`${this.path('meta.json')} has format '${String(meta.format)}', not '${FOLDER_FORMAT}': not a buffer folder. ` +
        'Point the buffer at an empty or new folder.');
    }
    if (!(meta.version <= FOLDER_FORMAT_VERSION)) {
      throw new BufferSchemaError(`The buffer folder ${this.dir} has format version ${meta.version}, but this code understands versions up to ` +
        `${FOLDER_FORMAT_VERSION}. It was written by a newer DreamGym Playground: use that version, or point the buffer at another folder.`);
    }
    // Cut what an interrupted batch left beyond the committed bytes (and any torn last line).
    const logs = {} as Record<LogFile, Buffer>;
    for (const file of LOG_FILES) logs[file] = this.readCommitted(file, meta.committedBytes[file] ?? 0, file !== 'embeddings.bin');

    const transitions = parseJsonl<BufferTransition>(logs['transitions.jsonl'], 'transitions.jsonl');
    const index = existsSync(this.path('embeddings.json'))
      ? JSON.parse(readFileSync(this.path('embeddings.json'), 'utf8')) as EmbeddingsIndex
      : emptyIndex();
    const { vectors, rows, usedBytes } = readEmbeddings(index, logs['embeddings.bin'], meta.embeddingRows);
    if (usedBytes < logs['embeddings.bin'].length) truncateSync(this.path('embeddings.bin'), usedBytes);
    const byId = new Map<string, BufferTransition>();
    for (const t of transitions) byId.set(t.id, t);
    for (const t of byId.values()) {
      const embedding = vectors.get(t.id);
      if (embedding) t.embedding = embedding;
    }
    const episodes = parseJsonl<BufferEpisode>(logs['episodes.jsonl'], 'episodes.jsonl');
    const tasks = parseJsonl<TaskBankEntry>(logs['tasks.jsonl'], 'tasks.jsonl');
    const runs = parseJsonl<RunRecord>(logs['runs.jsonl'], 'runs.jsonl');
    state.load({ transitions: byId.values(), episodes, tasks, runs });

    this.meta = {
      format: FOLDER_FORMAT, version: FOLDER_FORMAT_VERSION, embeddingRows: rows,
      committedBytes: { ...Object.fromEntries(LOG_FILES.map((file) => [file, logs[file].length])) } as Record<LogFile, number>,
    };
    this.meta.committedBytes['embeddings.bin'] = usedBytes;
    this.rowIds = index.rows.slice(0, rows);
    this.rowDims = rowDimsOf(index).slice(0, rows);
    this.embedders = index.embedders ?? [];
    this.lines = { transitions: transitions.length, episodes: episodes.length, tasks: tasks.length, runs: runs.length };
    this.state = state;
  }

  /** The committed bytes of a log, truncating the file to them (and, for text, to its last full line). */
  private readCommitted(file: LogFile, committed: number, text: boolean): Buffer {
    const path = this.path(file);
    if (!existsSync(path)) return Buffer.alloc(0);
    let bytes = readFileSync(path);
    let keep = Math.min(committed, bytes.length);
    if (text) keep = bytes.lastIndexOf(0x0a, keep - 1) + 1;
    if (keep < bytes.length) {
      truncateSync(path, keep);
      bytes = bytes.subarray(0, keep);
    }
    return bytes;
  }

  // ---------------------------------------------------------------------------------------------
  // Writes
  // ---------------------------------------------------------------------------------------------

  async putTransitions(transitions: BufferTransition[], episodes: BufferEpisode[] = []): Promise<{ added: number; replaced: number }> {
    const state = this.loaded();
    const staged = state.stageTransitions(transitions, episodes);
    if (staged.transitions.length === 0 && staged.episodes.length === 0) return { added: 0, replaced: 0 };
    const lines: string[] = [];
    const newRowIds: string[] = [];
    const newRowDims: number[] = [];
    const vectors: Float32Array[] = [];
    const newEmbedders: string[] = [];
    const hasEmbedding = new Map<string, boolean>();
    for (const t of staged.transitions) {
      const had = hasEmbedding.get(t.id) ?? state.peekTransition(t.id)?.embedding !== undefined;
      lines.push(transitionLine(t));
      if (t.embedding !== undefined) {
        newRowIds.push(t.id);
        newRowDims.push(t.embedding.length);
        vectors.push(t.embedding);
        if (t.embedder !== undefined && !this.embedders.includes(t.embedder) && !newEmbedders.includes(t.embedder)) newEmbedders.push(t.embedder);
      } else if (had) {
        newRowIds.push(t.id);
        newRowDims.push(0);
      }
      hasEmbedding.set(t.id, t.embedding !== undefined);
    }
    this.append({
      'transitions.jsonl': Buffer.from(lines.join(''), 'utf8'),
      'embeddings.bin': floatsToBytes(vectors),
      'episodes.jsonl': Buffer.from(staged.episodes.map((e) => JSON.stringify(e) + '\n').join(''), 'utf8'),
    }, { ids: newRowIds, dims: newRowDims, embedders: newEmbedders }, 'putTransitions');
    state.applyTransitions(staged);
    this.lines.transitions += staged.transitions.length;
    this.lines.episodes += staged.episodes.length;
    this.compactIfWasteful();
    return { added: staged.added, replaced: staged.replaced };
  }

  async putTasks(tasks: TaskBankEntry[]): Promise<void> {
    const state = this.loaded();
    const copies = state.stageTasks(tasks);
    if (copies.length === 0) return;
    this.append({ 'tasks.jsonl': Buffer.from(copies.map((t) => JSON.stringify(t) + '\n').join(''), 'utf8') }, null, 'putTasks');
    state.applyTasks(copies);
    this.lines.tasks += copies.length;
    this.compactIfWasteful();
  }

  async putRun(run: RunRecord): Promise<void> {
    const state = this.loaded();
    const copy = state.stageRun(run);
    this.append({ 'runs.jsonl': Buffer.from(JSON.stringify(copy) + '\n', 'utf8') }, null, 'putRun');
    state.applyRun(copy);
    this.lines.runs += 1;
    this.compactIfWasteful();
  }

  async evict(policy: EvictionPolicy): Promise<string[]> {
    const state = this.loaded();
    const plan = state.planEviction(policy);
    if (plan.transitionIds.length === 0) return [];
    const removed = new Set(plan.transitionIds);
    const removedEpisodes = new Set(plan.episodeIds);
    this.rewrite({
      transitions: state.orderedTransitions().filter((t) => !removed.has(t.id)),
      episodes: state.allEpisodes().filter((e) => !removedEpisodes.has(e.id)),
    }, 'evict');
    state.applyEviction(plan);
    return plan.transitionIds;
  }

  async clear(): Promise<void> {
    const state = this.loaded();
    this.rewrite({ transitions: [], episodes: [], tasks: [], runs: [] }, 'clear');
    state.applyClear();
  }

  /**
   * Appends to the logs and commits (embeddings.json, then meta.json, each via temp + rename).
   * On any failure before the commit, cuts the appended bytes off and restores embeddings.json.
   */
  private append(appends: Partial<Record<LogFile, Uint8Array>>, rows: { ids: string[]; dims: number[]; embedders: string[] } | null,
    operation: WriteOperation): void {
    const meta: FolderMeta = { ...this.meta, committedBytes: { ...this.meta.committedBytes } };
    let indexWritten = false;
    try {
      for (const file of LOG_FILES) {
        const bytes = appends[file];
        if (!bytes || bytes.length === 0) continue;
        this.appendFile(file, bytes);
        meta.committedBytes[file] += bytes.length;
      }
      if (rows && rows.ids.length > 0) {
        indexWritten = true;
        this.writeAtomic('embeddings.json', JSON.stringify(indexOf(
          this.rowIds.concat(rows.ids), this.rowDims.concat(rows.dims), this.embedders.concat(rows.embedders))));
        meta.embeddingRows += rows.ids.length;
      }
      this.hooks.beforeCommit?.(operation);
      this.writeAtomic('meta.json', JSON.stringify(meta));
    } catch (error) {
      this.rollBack(indexWritten);
      throw error;
    }
    this.meta = meta;
    if (rows) {
      for (let i = 0; i < rows.ids.length; i++) { this.rowIds.push(rows.ids[i]); this.rowDims.push(rows.dims[i]); }
      this.embedders.push(...rows.embedders);
    }
  }

  private rollBack(indexWritten: boolean): void {
    for (const file of LOG_FILES) {
      const path = this.path(file);
      if (existsSync(path) && statSync(path).size > this.meta.committedBytes[file]) truncateSync(path, this.meta.committedBytes[file]);
    }
    if (indexWritten) this.writeAtomic('embeddings.json', JSON.stringify(indexOf(this.rowIds, this.rowDims, this.embedders)));
    for (const name of ['embeddings.json.tmp', 'meta.json.tmp']) rmSync(this.path(name), { force: true });
  }

  /**
   * Writes whole files under temp names, then renames them and meta.json into place. Used by
   * evict, clear and compaction; a failure before the renames leaves the folder untouched.
   */
  private rewrite(parts: RewriteParts, operation: WriteOperation | 'compact'): void {
    const written: string[] = [];
    const meta: FolderMeta = { ...this.meta, committedBytes: { ...this.meta.committedBytes } };
    let index: EmbeddingsIndex | null = null;
    const writeTemp = (file: string, chunks: Iterable<Uint8Array>): number => {
      written.push(file);
      return this.writeChunks(`${file}.tmp`, chunks);
    };
    try {
      if (parts.transitions) {
        const ids: string[] = [];
        const dims: number[] = [];
        const embedders: string[] = [];
        for (const t of parts.transitions) {
          if (t.embedding === undefined) continue;
          ids.push(t.id);
          dims.push(t.embedding.length);
          if (t.embedder !== undefined && !embedders.includes(t.embedder)) embedders.push(t.embedder);
        }
        meta.committedBytes['transitions.jsonl'] = writeTemp('transitions.jsonl', textChunks(parts.transitions, transitionLine));
        meta.committedBytes['embeddings.bin'] = writeTemp('embeddings.bin', embeddingChunks(parts.transitions));
        index = indexOf(ids, dims, embedders);
        writeTemp('embeddings.json', [Buffer.from(JSON.stringify(index), 'utf8')]);
        meta.embeddingRows = ids.length;
      }
      for (const [file, records] of [['episodes.jsonl', parts.episodes], ['tasks.jsonl', parts.tasks], ['runs.jsonl', parts.runs]] as const) {
        if (records) meta.committedBytes[file] = writeTemp(file, textChunks<object>(records, (r) => JSON.stringify(r) + '\n'));
      }
      if (operation !== 'compact') this.hooks.beforeCommit?.(operation);
    } catch (error) {
      for (const file of written) rmSync(this.path(`${file}.tmp`), { force: true });
      throw error;
    }
    // Each rewritten file only shrinks, so meta.json's old lengths still cover it should we stop here.
    for (const file of written) renameSync(this.path(`${file}.tmp`), this.path(file));
    this.writeAtomic('meta.json', JSON.stringify(meta));
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
    if (wasteful(this.lines.transitions, live.transitions) || wasteful(this.rowIds.length, live.transitions)) parts.transitions = state.orderedTransitions();
    if (wasteful(this.lines.episodes, live.episodes)) parts.episodes = state.allEpisodes();
    if (wasteful(this.lines.tasks, live.tasks)) parts.tasks = state.allTasks();
    if (wasteful(this.lines.runs, live.runs)) parts.runs = state.allRuns();
    if (Object.keys(parts).length > 0) this.rewrite(parts, 'compact');
  }

  // ---------------------------------------------------------------------------------------------
  // Files
  // ---------------------------------------------------------------------------------------------

  private appendFile(file: string, bytes: Uint8Array): void {
    const fd = openSync(this.path(file), 'a');
    try {
      writeAll(fd, bytes);
      if (this.durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
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
      for (const chunk of chunks) { writeAll(fd, chunk); total += chunk.length; }
      if (this.durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return total;
  }

  // ---------------------------------------------------------------------------------------------
  // Reads (from memory)
  // ---------------------------------------------------------------------------------------------

  async getTransition(id: string): Promise<BufferTransition | undefined> { return this.loaded().getTransition(id); }
  async listTransitions(filter?: TransitionFilter): Promise<BufferTransition[]> { return this.loaded().listTransitions(filter); }
  async forEachTransition(visit: (t: BufferTransition) => void, filter?: TransitionFilter): Promise<void> {
    return this.loaded().forEachTransition(visit, filter);
  }
  async countTransitions(filter?: TransitionFilter): Promise<number> { return this.loaded().countTransitions(filter); }
  async hasEpisode(id: string): Promise<boolean> { return this.loaded().hasEpisode(id); }
  async listEpisodes(filter?: { env?: string; source?: TransitionSource }): Promise<BufferEpisode[]> { return this.loaded().listEpisodes(filter); }
  async listTasks(env?: string): Promise<TaskBankEntry[]> { return this.loaded().listTasks(env); }
  async listRuns(): Promise<RunRecord[]> { return this.loaded().listRuns(); }
  async stats(): Promise<BufferStats> { return this.loaded().stats(); }

  async close(): Promise<void> {
    this.closed = true;
    this.state = null;
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

function emptyMeta(): FolderMeta {
  return {
    format: FOLDER_FORMAT, version: FOLDER_FORMAT_VERSION, embeddingRows: 0,
    committedBytes: Object.fromEntries(LOG_FILES.map((file) => [file, 0])) as Record<LogFile, number>,
  };
}

function emptyIndex(): EmbeddingsIndex {
  return indexOf([], [], []);
}

function indexOf(rows: string[], rowDims: number[], embedders: string[]): EmbeddingsIndex {
  const first = rowDims[0] ?? null;
  const uniform = first !== null && first > 0 && rowDims.every((d) => d === first);
  return {
    format: EMBEDDINGS_FORMAT, dtype: 'float32-le', dims: uniform ? first : null, embedders, rows,
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
  for (const v of vectors) { floats.set(v, offset); offset += v.length; }
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
    if (batch.length === 1000) { yield Buffer.from(batch.join(''), 'utf8'); batch = []; }
  }
  if (batch.length > 0) yield Buffer.from(batch.join(''), 'utf8');
}

function* embeddingChunks(transitions: BufferTransition[]): Generator<Uint8Array> {
  let batch: Float32Array[] = [];
  for (const t of transitions) {
    if (t.embedding === undefined) continue;
    batch.push(t.embedding);
    if (batch.length === 1000) { yield floatsToBytes(batch); batch = []; }
  }
  if (batch.length > 0) yield floatsToBytes(batch);
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
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
      end = newline >= start ? newline + 1 : (bytes.indexOf(0x0a, end) + 1 || bytes.length);
    }
    const text = bytes.toString('utf8', start, end);
    for (const line of text.split('\n')) {
      lineNumber++;
      if (line === '') continue;
      try {
        records.push(JSON.parse(line) as T);
      } catch (error) {
        throw new BufferSchemaError(`${file} line ${lineNumber} is not valid JSON (${(error as Error).message}): the buffer folder is damaged. ` +
          'Restore it from a copy, or delete the folder to start over.');
      }
    }
    lineNumber--; // the chunk's trailing '' after its last newline is not a line
    start = end;
  }
  return records;
}

/** Vectors by transition id from the committed rows; also how many rows and bytes are valid. */
function readEmbeddings(index: EmbeddingsIndex, bytes: Buffer, committedRows: number): { vectors: Map<string, Float32Array>; rows: number; usedBytes: number } {
  if (index.format !== EMBEDDINGS_FORMAT) {
    throw new BufferSchemaError(`embeddings.json has format '${String(index.format)}', expected '${EMBEDDINGS_FORMAT}'.`);
  }
  let floats: Float32Array;
  const count = Math.floor(bytes.length / 4);
  if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) {
    floats = new Float32Array(bytes.buffer, bytes.byteOffset, count);
  } else {
    floats = new Float32Array(count);
    const view = new DataView(bytes.buffer, bytes.byteOffset, count * 4);
    for (let i = 0; i < count; i++) floats[i] = view.getFloat32(i * 4, true);
  }
  const dims = rowDimsOf(index);
  const vectors = new Map<string, Float32Array>();
  let offset = 0;
  let rows = 0;
  for (; rows < Math.min(committedRows, index.rows.length); rows++) {
    const length = dims[rows];
    if (offset + length > count) break; // a row the crash cut short
    const id = index.rows[rows];
    if (length === 0) vectors.delete(id);
    else vectors.set(id, floats.subarray(offset, offset + length));
    offset += length;
  }
  return { vectors, rows, usedBytes: offset * 4 };
}
