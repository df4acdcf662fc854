/**
 * NODE ONLY (src/node/): reading a buffer folder as a stream, for `buffer stats` and `buffer query`
 * on a folder of any size: a chunk of a log at a time, nothing loaded, nothing locked, nothing
 * changed. A rewrite by a writer during the read starts it over (readConsistently).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BufferStats, BufferTransition, TransitionSource } from '../core/buffer/types';
import { sortStats } from '../core/buffer/stores/memory';
import {
  damagedLineError,
  floatsOf,
  forEachEmbeddingRow,
  neverWritten,
  readConsistently,
  readConsistentlyAsync,
  readEmbeddingsIndex,
  type FolderMeta,
  type LogFile,
} from './buffer-folder-format';
import { LOAD_CHUNK_BYTES } from './buffer-folder-load';

/** What `scanFolderTransitions` hands the live transitions to (StreamedRetrieval is one). */
export interface TransitionScan {
  /** Called before each read of the folder: a rewrite during a read starts it over. */
  begin(): void;
  /** A block of transitions, each id once in a read. */
  add(block: BufferTransition[]): Promise<void>;
}

/** Transitions a scan hands over at once, at most (and lines of an eighth of a chunk: 4 MB). */
const SCAN_BLOCK_ROWS = 4096;

/**
 * The buffer's statistics (`buffer stats`) read as a stream: one chunk of a log at a time, and of
 * each record only what the counts need. Memory: two chunks (LOAD_CHUNK_BYTES) and the ids,
 * whatever the folder's size.
 */
export function readFolderStats(dir: string, chunkBytes = LOAD_CHUNK_BYTES): BufferStats {
  return readConsistently(dir, (meta) => statsOf(dir, meta, chunkBytes));
}

/**
 * The folder's live transitions handed to `scan` a block at a time (`buffer query`): each id's
 * last record with its last vector, as a full load holds them, in file order. Memory: a chunk of
 * the log (two while a line crosses chunks), a block, and per transition its id and where its
 * vector lies, whatever the folder's size.
 */
export async function scanFolderTransitions(
  dir: string,
  scan: TransitionScan,
  chunkBytes = LOAD_CHUNK_BYTES,
): Promise<void> {
  await readConsistentlyAsync(
    dir,
    () => scan.begin(),
    (meta) => scanOf(dir, meta, scan, chunkBytes),
  );
}

function statsOf(dir: string, meta: FolderMeta, chunkBytes: number): BufferStats {
  // A replaced record is a later line with the same id: the last one counts.
  const kinds = new Map<string, string>(); // each distinct (env, source, valid, task), shared by its transitions
  const transitions = new Map<string, string>();
  for (const { record: t } of logLines(dir, meta, 'transitions.jsonl', chunkBytes)) {
    const kind = JSON.stringify([t.env, t.source, t.valid, t.taskId]);
    if (!kinds.has(kind)) kinds.set(kind, kind);
    transitions.set(String(t.id), kinds.get(kind)!);
  }
  const ids = (file: LogFile) => {
    const seen = new Set<string>();
    for (const { record } of logLines(dir, meta, file, chunkBytes)) seen.add(String(record.id));
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

async function scanOf(dir: string, meta: FolderMeta, scan: TransitionScan, chunkBytes: number): Promise<void> {
  // A later line for an id replaces the earlier ones: first find each id's last line.
  const lastLine = new Map<string, number>();
  let line = 0;
  for (const { record } of logLines(dir, meta, 'transitions.jsonl', chunkBytes))
    lastLine.set(String(record.id), line++);
  const vectors = vectorRows(dir, meta);
  const rows = new RowReader(join(dir, meta.files!['embeddings.bin']), vectors.floats, chunkBytes / 8);
  try {
    let block: BufferTransition[] = [];
    let chars = 0;
    line = 0;
    for (const { record, chars: lineChars } of logLines(dir, meta, 'transitions.jsonl', chunkBytes)) {
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
function logLines(dir: string, meta: FolderMeta, file: LogFile, chunkBytes: number) {
  return jsonLines(join(dir, meta.files![file]), meta.committedBytes[file] ?? 0, file, chunkBytes);
}

/**
 * Where each transition's committed vector lies in embeddings.bin (in floats): its last row, or
 * none when that row is empty; `floats` is how much of the file is committed.
 */
function vectorRows(
  dir: string,
  meta: FolderMeta,
): { rowOf: Map<string, number>; offsets: Float64Array; floats: number } {
  const index = readEmbeddingsIndex(dir, meta);
  const onDisk = logSize(dir, meta.files!['embeddings.bin']);
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
function logSize(dir: string, name: string): number {
  try {
    return statSync(join(dir, name)).size;
  } catch (error) {
    if (neverWritten(error, name)) return 0;
    throw error;
  }
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
    throw damagedLineError(file, lineNumber, error);
  }
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
