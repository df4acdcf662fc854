/**
 * What one open connection of the IndexedDB buffer loaded: every chunk, in seq order, into a
 * MemoryBufferStore, and which chunk holds which rows, so that writes know what a re-put
 * supersedes, which chunks an eviction must rewrite, and when compaction is due.
 */
import type { IDBPDatabase } from 'idb';
import type { BufferEpisode, BufferTransition, RunRecord, TaskBankEntry } from '../types';
import { compareInsertion, type BufferStoreTestHooks } from './common';
import { CHUNK_ROWS, decodeChunk, type ChunkRecord } from './indexeddb-chunks';
import { MemoryBufferStore, type EvictionPlan } from './memory';

/** Chunks per getAll page when loading (≈ 1.5 MB a chunk of 1,000 transitions with 256-dim embeddings). */
const LOAD_PAGE = 16;
/** Rows (live and superseded) beyond 2 × live + this trigger compaction. */
const COMPACT_SLACK = 1000;
/** A chunk of fewer rows is small; more than SMALL_CHUNKS_MAX small chunks are merged. */
const SMALL_CHUNK_ROWS = CHUNK_ROWS / 4;
const SMALL_CHUNKS_MAX = 32;

/** Ids of the rows (live or superseded) one chunk holds. */
interface ChunkInfo {
  transitionIds: string[];
  episodeIds: string[];
}

/**
 * What one open connection loaded: the contents (a MemoryBufferStore) and which chunk holds which
 * rows, so writes know what a re-put supersedes and which chunks an eviction must rewrite.
 */
export class LoadedBuffer {
  readonly chunks = new Map<number, ChunkInfo>();
  /** Id → seq of the chunk with its latest row. */
  readonly transitionHome = new Map<string, number>();
  readonly episodeHome = new Map<string, number>();
  /** Rows in all chunks, live and superseded. */
  rows = 0;

  constructor(
    readonly db: IDBPDatabase,
    readonly state: MemoryBufferStore,
  ) {}

  addChunk(seq: number, transitionIds: string[], episodeIds: string[]): void {
    this.chunks.set(seq, { transitionIds, episodeIds });
    this.rows += transitionIds.length + episodeIds.length;
    for (const id of transitionIds) this.transitionHome.set(id, seq);
    for (const id of episodeIds) this.episodeHome.set(id, seq);
  }

  /** A chunk just written: its rows are the latest of their ids. */
  addChunkRecord(seq: number, chunk: ChunkRecord): void {
    this.addChunk(
      seq,
      chunk.transitions.map((t) => t.id),
      chunk.episodes.map((e) => e.id),
    );
  }

  dropChunk(seq: number): void {
    const info = this.chunks.get(seq);
    if (!info) return;
    this.chunks.delete(seq);
    this.rows -= info.transitionIds.length + info.episodeIds.length;
    for (const id of info.transitionIds) if (this.transitionHome.get(id) === seq) this.transitionHome.delete(id);
    for (const id of info.episodeIds) if (this.episodeHome.get(id) === seq) this.episodeHome.delete(id);
  }

  clear(): void {
    this.chunks.clear();
    this.transitionHome.clear();
    this.episodeHome.clear();
    this.rows = 0;
  }

  private liveRows(seq: number, info: ChunkInfo): number {
    let live = 0;
    for (const id of info.transitionIds) if (this.transitionHome.get(id) === seq) live++;
    for (const id of info.episodeIds) if (this.episodeHome.get(id) === seq) live++;
    return live;
  }

  /** Chunks to rewrite: mostly superseded ones once superseded rows pile up, and small ones once there are many. */
  compactionVictims(): number[] {
    const victims: number[] = [];
    const live = this.transitionHome.size + this.episodeHome.size;
    const wasteful = this.rows > 2 * live + COMPACT_SLACK;
    const small: number[] = [];
    for (const [seq, info] of this.chunks) {
      const rows = info.transitionIds.length + info.episodeIds.length;
      if (wasteful && 2 * this.liveRows(seq, info) < rows) victims.push(seq);
      else if (rows < SMALL_CHUNK_ROWS) small.push(seq);
    }
    if (small.length > SMALL_CHUNKS_MAX) victims.push(...small);
    return victims;
  }

  /** Chunks holding any row (of any version) of these transitions or episodes. */
  chunksHolding(transitionIds: ReadonlySet<string>, episodeIds: ReadonlySet<string>): number[] {
    const victims: number[] = [];
    for (const [seq, info] of this.chunks) {
      if (info.transitionIds.some((id) => transitionIds.has(id)) || info.episodeIds.some((id) => episodeIds.has(id)))
        victims.push(seq);
    }
    return victims;
  }

  /** The live rows of these chunks, less the removed ones, in insertion order. */
  liveRowsOf(
    victims: number[],
    removed: EvictionPlan | null,
  ): { transitions: BufferTransition[]; episodes: BufferEpisode[] } {
    const removedTransitions = new Set(removed?.transitionIds);
    const removedEpisodes = new Set(removed?.episodeIds);
    const transitions: BufferTransition[] = [];
    const episodeIds: string[] = [];
    for (const seq of victims) {
      const info = this.chunks.get(seq)!;
      for (const id of info.transitionIds) {
        if (this.transitionHome.get(id) !== seq || removedTransitions.has(id)) continue;
        const t = this.state.peekTransition(id);
        if (t) transitions.push(t);
      }
      for (const id of info.episodeIds)
        if (this.episodeHome.get(id) === seq && !removedEpisodes.has(id)) episodeIds.push(id);
    }
    let episodes: BufferEpisode[] = [];
    if (episodeIds.length > 0) {
      const wanted = new Set(episodeIds);
      episodes = this.state.allEpisodes().filter((e) => wanted.has(e.id));
    }
    return { transitions: transitions.sort(compareInsertion), episodes: episodes.sort(compareInsertion) };
  }
}

/** Reads tasks, runs and every chunk (seq order, LOAD_PAGE at a time with the next page in flight) into memory. */
export async function loadBuffer(db: IDBPDatabase, hooks: BufferStoreTestHooks): Promise<LoadedBuffer> {
  const tx = db.transaction(['chunks', 'tasks', 'runs'], 'readonly');
  const done = tx.done;
  const tasks = tx.objectStore('tasks').getAll() as Promise<TaskBankEntry[]>;
  const runs = tx.objectStore('runs').getAll() as Promise<RunRecord[]>;
  for (const request of [done, tasks, runs])
    request.catch(() => {
      /* awaited below */
    });
  const state = new MemoryBufferStore({ testHooks: hooks });
  const loaded = new LoadedBuffer(db, state);
  const transitions: BufferTransition[] = [];
  const episodes: BufferEpisode[] = [];
  const store = tx.objectStore('chunks');
  let next = store.getAll(null, LOAD_PAGE) as Promise<ChunkRecord[]>;
  for (;;) {
    const page = await next;
    const more = page.length === LOAD_PAGE;
    if (more) {
      next = store.getAll(IDBKeyRange.lowerBound(page[page.length - 1].seq!, true), LOAD_PAGE) as Promise<
        ChunkRecord[]
      >;
      next.catch(() => {
        /* awaited on the next round */
      });
    }
    for (const chunk of page) {
      const rows = decodeChunk(chunk, db.name);
      const transitionIds = new Array<string>(rows.length);
      for (let i = 0; i < rows.length; i++) {
        transitions.push(rows[i]);
        transitionIds[i] = rows[i].id;
      }
      for (const e of chunk.episodes) episodes.push(e);
      loaded.addChunk(
        chunk.seq!,
        transitionIds,
        chunk.episodes.map((e) => e.id),
      );
    }
    if (!more) break;
  }
  // In seq order, so a later row for an id replaces the earlier ones.
  state.load({ transitions, episodes, tasks: await tasks, runs: await runs });
  await done;
  return loaded;
}
