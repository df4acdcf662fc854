/**
 * The chunks of the IndexedDB buffer's batch log (schema v3): one record per write, holding the
 * batch's transitions without their embeddings, the embeddings as one Float32Array, and its
 * episodes. A row in a later chunk (higher seq) replaces every earlier row with the same id.
 */
import { BufferSchemaError, type BufferEpisode, type BufferTransition } from '../types';

/** A transition as a chunk holds it: everything but the embedding (that is in `embeddings`). */
export type ChunkRow = Omit<BufferTransition, 'embedding'>;

/** One record of the 'chunks' store: what one write stored. */
export interface ChunkRecord {
  /** The key, given by the store (autoIncrement): a later chunk's row replaces earlier rows with its id. */
  seq?: number;
  /** Transitions without their embeddings (each keeps its `embedder`); one row per id. */
  transitions: ChunkRow[];
  /** Floats per row when every transition has an embedding of that length; `rowDims` is absent then. */
  dims?: number;
  /** Otherwise floats per transition, -1 for one without an embedding. */
  rowDims?: Int32Array;
  /** The embeddings, one row after another in `transitions` order. */
  embeddings: Float32Array;
  /** Episodes written with this batch; one row per id. */
  episodes: BufferEpisode[];
}

/** Transitions (and episodes) per chunk when rewriting and migrating: about the size of one usual batch. */
export const CHUNK_ROWS = 1000;

/** The chunk record of transitions and episodes (each id at most once). Copies the embeddings. */
export function encodeChunk(transitions: readonly BufferTransition[], episodes: readonly BufferEpisode[]): ChunkRecord {
  const first = transitions[0]?.embedding?.length;
  let uniform = first !== undefined;
  let total = 0;
  for (const t of transitions) {
    const length = t.embedding?.length;
    if (length !== first) uniform = false;
    total += length ?? 0;
  }
  const embeddings = new Float32Array(total);
  const rowDims = uniform ? undefined : new Int32Array(transitions.length);
  const rows: ChunkRow[] = new Array<ChunkRow>(transitions.length);
  let offset = 0;
  for (let i = 0; i < transitions.length; i++) {
    const t = transitions[i];
    const embedding = t.embedding;
    if (embedding === undefined) {
      if (rowDims) rowDims[i] = -1;
      rows[i] = t;
      continue;
    }
    embeddings.set(embedding, offset);
    offset += embedding.length;
    if (rowDims) rowDims[i] = embedding.length;
    const { embedding: _embedding, ...row } = t;
    rows[i] = row;
  }
  return uniform
    ? { transitions: rows, dims: first, embeddings, episodes: [...episodes] }
    : { transitions: rows, rowDims, embeddings, episodes: [...episodes] };
}

/** The transitions of a loaded chunk, each with its embedding as a view of the chunk's Float32Array. */
export function decodeChunk(chunk: ChunkRecord, dbName: string): BufferTransition[] {
  const { transitions, dims, rowDims, embeddings, episodes } = chunk ?? {};
  const damaged = (problem: string) =>
    new BufferSchemaError(
      `The buffer database '${dbName}' holds a damaged chunk ` +
        `(seq ${String(chunk?.seq)}: ${problem}). Export what you can and clear the buffer, or delete this site's data.`,
    );
  if (!Array.isArray(transitions) || !Array.isArray(episodes) || !(embeddings instanceof Float32Array)) {
    throw damaged('transitions, episodes or embeddings missing');
  }
  if (
    rowDims !== undefined
      ? !(rowDims instanceof Int32Array) || rowDims.length !== transitions.length
      : typeof dims !== 'number'
  ) {
    throw damaged('no dims and no rowDims that fit');
  }
  const rows = transitions as BufferTransition[];
  let offset = 0;
  for (let i = 0; i < rows.length; i++) {
    const length = rowDims ? rowDims[i] : dims!;
    if (length < 0) continue;
    if (offset + length > embeddings.length) throw damaged('fewer embedding floats than its rows need');
    rows[i].embedding = embeddings.subarray(offset, offset + length);
    offset += length;
  }
  if (offset !== embeddings.length) throw damaged('more embedding floats than its rows need');
  return rows;
}

/** Chunks of at most CHUNK_ROWS rows: the transitions in the given order, then the episodes. */
export function packChunks(
  transitions: readonly BufferTransition[],
  episodes: readonly BufferEpisode[],
): ChunkRecord[] {
  const chunks: ChunkRecord[] = [];
  let e = 0;
  for (let start = 0; start < transitions.length; start += CHUNK_ROWS) {
    const part = transitions.slice(start, start + CHUNK_ROWS);
    const room = CHUNK_ROWS - part.length;
    chunks.push(encodeChunk(part, episodes.slice(e, e + room)));
    e += room;
  }
  for (; e < episodes.length; e += CHUNK_ROWS) chunks.push(encodeChunk([], episodes.slice(e, e + CHUNK_ROWS)));
  return chunks;
}

/** The records without earlier duplicates (a later record for an id replaces an earlier one). */
export function lastOfEachId<T extends { id: string }>(records: T[]): T[] {
  const ids = new Set<string>();
  for (const record of records) ids.add(record.id);
  if (ids.size === records.length) return records;
  ids.clear();
  const out: T[] = [];
  for (let i = records.length - 1; i >= 0; i--) {
    if (ids.has(records[i].id)) continue;
    ids.add(records[i].id);
    out.push(records[i]);
  }
  return out.reverse();
}

/** How a write packs its batch into chunks (one chunk, or chunks of CHUNK_ROWS rows). */
export type ChunkPacker = (
  transitions: readonly BufferTransition[],
  episodes: readonly BufferEpisode[],
) => ChunkRecord[];
