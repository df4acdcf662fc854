/**
 * NODE ONLY (src/node/): the buffer folder's format on disk (the layout is described in
 * buffer-folder.ts): meta.json and the file roles it names, embeddings.json, how records and
 * vectors are encoded, and the reader's protocol (meta.json, its files, meta.json again).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BufferSchemaError, type BufferTransition } from '../core/buffer/types';
import { DreamGymError } from '../core/errors';

export const FOLDER_FORMAT = 'dreamgym-buffer-folder';
/** 2: meta.json names the files (rewrites use new names) and counts rewrites; version-1 folders load as they are. */
export const FOLDER_FORMAT_VERSION = 2;
export const EMBEDDINGS_FORMAT = 'dreamgym-buffer-embeddings/1';

export const LOG_FILES = [
  'transitions.jsonl',
  'embeddings.bin',
  'episodes.jsonl',
  'tasks.jsonl',
  'runs.jsonl',
] as const;
export type LogFile = (typeof LOG_FILES)[number];
/** Every data file of the folder by its role (its name on disk is in meta.files). */
export const FOLDER_FILES = [...LOG_FILES, 'embeddings.json'] as const;
export type FolderFile = (typeof FOLDER_FILES)[number];

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

// ---------------------------------------------------------------------------------------------
// meta.json and the files it names
// ---------------------------------------------------------------------------------------------

export function emptyMeta(): FolderMeta {
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
export function defaultFiles(): Record<FolderFile, string> {
  return Object.fromEntries(FOLDER_FILES.map((file) => [file, file])) as Record<FolderFile, string>;
}

/** A role's name in a generation: transitions.jsonl → transitions.3.jsonl. */
export function generationName(file: FolderFile, generation: number): string {
  const dot = file.indexOf('.');
  return `${file.slice(0, dot)}.${generation}${file.slice(dot)}`;
}

/** A data file of some generation (what an interrupted rewrite may leave behind). */
export function isDataFileName(name: string): boolean {
  return /^(transitions|embeddings|episodes|tasks|runs)(\.\d+)?\.(jsonl|bin|json)$/.test(name);
}

/** Whether a read's error only says a log under its role's own name was never written (it is empty). */
export function neverWritten(error: unknown, name: string): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT' && name === defaultFiles()[name as FolderFile];
}

/** The folder holds data files but no meta.json: not a folder this code wrote. */
function strayFilesError(dir: string, what: string): BufferSchemaError {
  return new BufferSchemaError(
    `${dir} holds ${what} but no meta.json, so it is not a buffer folder this code wrote ` +
      '(or its meta.json was deleted). Point the buffer at an empty or new folder.',
  );
}

/** Refuses to create a buffer in a folder that holds data files but no meta.json. */
export function checkNoStrayFiles(dir: string): void {
  const stray = readdirSync(dir).filter(isDataFileName);
  if (stray.length > 0) throw strayFilesError(dir, stray.join(', '));
}

/** meta.json, checked (format, version), with every file role named. */
export function readFolderMeta(dir: string): FolderMeta {
  const path = join(dir, 'meta.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (existsSync(dir) && readdirSync(dir).some(isDataFileName)) throw strayFilesError(dir, 'buffer files');
    throw new BufferFolderMissingError(dir);
  }
  let meta: FolderMeta;
  try {
    meta = JSON.parse(text) as FolderMeta;
  } catch (error) {
    throw new BufferSchemaError(
      `${path} is not JSON (${(error as Error).message}): the buffer folder is damaged. ` +
        'Restore it from a copy, or delete the folder to start over.',
    );
  }
  if (meta?.format !== FOLDER_FORMAT) {
    throw new BufferSchemaError(
      `${path} has format '${String(meta?.format)}', not '${FOLDER_FORMAT}': not a buffer folder. ` +
        'Point the buffer at an empty or new folder.',
    );
  }
  if (!(meta.version <= FOLDER_FORMAT_VERSION)) {
    throw new BufferSchemaError(
      `The buffer folder ${dir} has format version ${meta.version}, but this code understands versions up to ` +
        `${FOLDER_FORMAT_VERSION}. It was written by a newer DreamGym Playground: use that version, or point the buffer at another folder.`,
    );
  }
  return { ...meta, files: { ...defaultFiles(), ...meta.files } };
}

/** Reads made while writers keep rewriting the folder before a reader gives up. */
export const READ_ATTEMPTS = 20;

/**
 * `read(meta)` of a consistent state: meta.json, then its files, then meta.json again; read anew
 * while a rewrite comes between (the generation changed, or a file read was deleted).
 */
export function readConsistently<T>(dir: string, read: (meta: FolderMeta) => T): T {
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    const before = readFolderMeta(dir);
    let result: T;
    try {
      result = read(before);
    } catch (error) {
      if (deletedByRewrite(error)) continue;
      throw error;
    }
    if (sameGeneration(dir, before)) return result;
  }
  throw rewrittenWhileReading(dir);
}

/** `readConsistently` for a read that awaits; `begin` runs before each attempt (a retry starts over). */
export async function readConsistentlyAsync(
  dir: string,
  begin: () => void,
  read: (meta: FolderMeta) => Promise<void>,
): Promise<void> {
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    const before = readFolderMeta(dir);
    begin();
    try {
      await read(before);
    } catch (error) {
      if (deletedByRewrite(error)) continue;
      throw error;
    }
    if (sameGeneration(dir, before)) return;
  }
  throw rewrittenWhileReading(dir);
}

/** A rewrite deleted a file the read was about to read. */
function deletedByRewrite(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

function sameGeneration(dir: string, before: FolderMeta): boolean {
  return (readFolderMeta(dir).generation ?? 0) === (before.generation ?? 0);
}

function rewrittenWhileReading(dir: string): Error {
  return new Error(
    `The buffer folder ${dir} was rewritten ${READ_ATTEMPTS} times while being read (a writer is evicting or ` +
      'compacting); run the command again once that writer is done.',
  );
}

// ---------------------------------------------------------------------------------------------
// embeddings.json
// ---------------------------------------------------------------------------------------------

/** The embeddings.json of these transitions (rows in their order). */
export function embeddingIndexOf(transitions: readonly BufferTransition[]): EmbeddingsIndex {
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

export function indexOf(rows: string[], rowDims: number[], embedders: string[]): EmbeddingsIndex {
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

export function rowDimsOf(index: EmbeddingsIndex): number[] {
  return index.rowDims ?? index.rows.map(() => index.dims ?? 0);
}

/** The embeddings.json meta names (an empty index while none was written). */
export function readEmbeddingsIndex(dir: string, meta: FolderMeta): EmbeddingsIndex {
  const path = join(dir, meta.files!['embeddings.json']);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as EmbeddingsIndex) : indexOf([], [], []);
}

/**
 * Calls `visit` with each committed row of embeddings.json (its id, offset and length in floats),
 * stopping at a row that `floats` does not hold whole (a crash cut it); returns the rows and
 * floats visited.
 */
export function forEachEmbeddingRow(
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

// ---------------------------------------------------------------------------------------------
// Records and vectors
// ---------------------------------------------------------------------------------------------

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function jsonLine(record: object): string {
  return JSON.stringify(record) + '\n';
}

/** One JSONL line of a transition, without its embedding (that goes to embeddings.bin). */
export function transitionLine(t: BufferTransition): string {
  if (t.embedding === undefined) return JSON.stringify(t) + '\n';
  const { embedding: _embedding, ...rest } = t;
  return JSON.stringify(rest) + '\n';
}

/** A record of a damaged folder's log could not be parsed. */
export function damagedLineError(file: string, lineNumber: number, error: unknown): BufferSchemaError {
  return new BufferSchemaError(
    `${file} line ${lineNumber} is not valid JSON (${(error as Error).message}): the buffer folder is damaged. ` +
      'Restore it from a copy, or delete the folder to start over.',
  );
}

/** Records as JSONL bytes, 1,000 lines a chunk. */
export function* textChunks<T>(records: Iterable<T>, line: (record: T) => string): Generator<Uint8Array> {
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

/** The transitions' embeddings as embeddings.bin bytes, 1,000 rows a chunk. */
export function* embeddingChunks(transitions: BufferTransition[]): Generator<Uint8Array> {
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

/** Little-endian float32 bytes as floats (a view where the platform and alignment allow, else a copy). */
export function floatsOf(bytes: Uint8Array): Float32Array {
  const count = Math.floor(bytes.length / 4);
  if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, count);
  const floats = new Float32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 4);
  for (let i = 0; i < count; i++) floats[i] = view.getFloat32(i * 4, true);
  return floats;
}
