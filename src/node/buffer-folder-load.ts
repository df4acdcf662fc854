/**
 * NODE ONLY (src/node/): loading a buffer folder into memory (a MemoryBufferStore): the committed
 * bytes meta.json names, without a torn last line, checked against the heap first. Reading changes
 * nothing on disk; the writer cuts what lies beyond the committed bytes itself (buffer-folder.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import type { BufferEpisode, BufferTransition, RunRecord, TaskBankEntry } from '../core/buffer/types';
import type { BufferStoreTestHooks } from '../core/buffer/stores/common';
import { MemoryBufferStore } from '../core/buffer/stores/memory';
import { DreamGymError } from '../core/errors';
import {
  LOG_FILES,
  damagedLineError,
  floatsOf,
  forEachEmbeddingRow,
  neverWritten,
  readEmbeddingsIndex,
  rowDimsOf,
  type EmbeddingsIndex,
  type FolderMeta,
  type LogFile,
} from './buffer-folder-format';

/** Bytes of a log decoded at once when loading (keeps strings far below V8's length limit). */
export const LOAD_CHUNK_BYTES = 32 << 20;
/** Heap a load takes per byte of the folder's files (measured about 3×: the text, the records, the vectors). */
const LOAD_MEMORY_FACTOR = 3;

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

/** Lines in each JSONL log, to know when replaced records should be compacted away. */
export interface LogLines {
  transitions: number;
  episodes: number;
  tasks: number;
  runs: number;
}

/** What one consistent read of the folder found (nothing changed on disk by reading it). */
export interface Snapshot {
  state: MemoryBufferStore;
  meta: FolderMeta;
  /** Committed bytes of each log that are whole (a torn last line is not), and the bytes on disk. */
  whole: Record<LogFile, number>;
  onDisk: Record<LogFile, number>;
  rowIds: string[];
  rowDims: number[];
  embedders: string[];
  lines: LogLines;
}

/** Reads the committed contents meta names into memory, changing nothing on disk. */
export function readSnapshot(dir: string, meta: FolderMeta, hooks: BufferStoreTestHooks): Snapshot {
  checkFitsHeap(dir, meta);
  const logs = {} as Record<LogFile, Buffer>;
  const whole = {} as Record<LogFile, number>;
  const onDisk = {} as Record<LogFile, number>;
  for (const file of LOG_FILES) {
    const bytes = readLog(dir, meta.files![file]);
    onDisk[file] = bytes.length;
    let keep = Math.min(meta.committedBytes[file] ?? 0, bytes.length);
    // No torn last line (and mind lastIndexOf: a negative start counts from the end).
    if (file !== 'embeddings.bin') keep = keep === 0 ? 0 : bytes.lastIndexOf(0x0a, keep - 1) + 1;
    logs[file] = bytes.subarray(0, keep);
    whole[file] = keep;
  }
  const transitions = parseJsonl<BufferTransition>(logs['transitions.jsonl'], 'transitions.jsonl');
  const index = readEmbeddingsIndex(dir, meta);
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
  const state = new MemoryBufferStore({ testHooks: hooks });
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
function checkFitsHeap(dir: string, meta: FolderMeta): void {
  const bytes = LOG_FILES.reduce((sum, file) => sum + (meta.committedBytes[file] ?? 0), 0);
  const heap = getHeapStatistics();
  const free = heap.heap_size_limit - heap.used_heap_size;
  if (bytes * LOAD_MEMORY_FACTOR > free) throw new BufferTooLargeError(dir, bytes, bytes * LOAD_MEMORY_FACTOR, free);
}

function readLog(dir: string, name: string): Buffer {
  try {
    return readFileSync(join(dir, name));
  } catch (error) {
    if (neverWritten(error, name)) return Buffer.alloc(0);
    throw error;
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
        throw damagedLineError(file, lineNumber, error);
      }
    }
    lineNumber--; // the chunk's trailing '' after its last newline is not a line
    start = end;
  }
  return records;
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
