/**
 * Buffer-store fixtures shared by the Node unit tests (fake-indexeddb) and the browser test page
 * (real IndexedDB): small records made by code, and a v1 database built by hand with the raw v1
 * schema — deliberately NOT through the store, so the upgrade is tested against the real old layout.
 */
import { openDB, type IDBPDatabase } from 'idb';
import type {
  BufferEpisode,
  BufferTransition,
  RunRecord,
  TaskBankEntry,
  TransitionSource,
} from '../../../src/core/buffer/types';

export function makeTransition(n: number, overrides: Partial<BufferTransition> = {}): BufferTransition {
  const episodeId = overrides.episodeId ?? `ep-${Math.floor(n / 3)}`;
  const stepIndex = overrides.stepIndex ?? n % 3;
  return {
    id: `${episodeId}#${stepIndex}`,
    env: 'webshop-lite-v0',
    taskId: `task-${Math.floor(n / 3)}`,
    instruction: `buy item ${n}`,
    episodeId,
    stepIndex,
    observation: `page ${n}`,
    admissible: ['search[x]', 'click[back]'],
    action: 'click[back]',
    nextObservation: `page ${n + 1}`,
    nextAdmissible: ['click[buy now]'],
    reward: 0,
    terminated: false,
    truncated: false,
    source: 'offline',
    valid: true,
    createdAt: 1_000 + n,
    ...overrides,
  };
}

export function embeddingOf(n: number, dims = 4): Float32Array {
  return Float32Array.from({ length: dims }, (_, d) => (n + 1) / (d + 2));
}

export function makeEpisode(
  id: string,
  source: TransitionSource = 'offline',
  createdAt = 1_000,
  env = 'webshop-lite-v0',
): BufferEpisode {
  return { id, env, taskId: `task-of-${id}`, source, steps: 3, return: 1, success: true, createdAt };
}

export function makeTask(id: string, env = 'webshop-lite-v0', createdAt = 5_000): TaskBankEntry {
  return {
    id,
    env,
    origin: 'generated',
    rollouts: 4,
    successes: 1,
    createdAt,
    task: { id, env, instruction: `do ${id}`, difficulty: 0.3, origin: 'generated', seed: 7 },
  };
}

export function makeRun(id: string, createdAt = 9_000): RunRecord {
  return {
    id,
    name: `run ${id}`,
    config: { mode: 'dream', seed: 1 },
    status: 'running',
    createdAt,
    updatedAt: createdAt,
  };
}

/** What createV1Database writes: v1 transitions carry no `embedder` (the database had one, in meta). */
export const V1_EMBEDDER = 'hash-4-v1';

export function v1Contents(): {
  transitions: Omit<BufferTransition, 'embedder'>[];
  episodes: BufferEpisode[];
  tasks: TaskBankEntry[];
  runs: RunRecord[];
} {
  const transitions = [
    makeTransition(0, { embedding: embeddingOf(0) }),
    makeTransition(1, { embedding: embeddingOf(1), source: 'real' }),
    makeTransition(2, { source: 'dream', valid: false, reasoning: 'unparsable' }),
    makeTransition(3, { env: 'household-v0', source: 'dream', embedding: embeddingOf(3) }),
  ];
  return {
    transitions,
    episodes: [makeEpisode('ep-0'), makeEpisode('ep-1', 'dream', 1_003, 'household-v0')],
    tasks: [makeTask('task-0'), makeTask('task-1', 'household-v0')],
    runs: [makeRun('run-1')],
  };
}

/**
 * A transition as the buffer test page reports it to Playwright (plain JSON: an embedding by its
 * constructor's name and its values); the e2e test builds its expectations from the same fields.
 */
export function transitionSummary(t: BufferTransition) {
  return {
    id: t.id,
    env: t.env,
    source: t.source,
    valid: t.valid,
    createdAt: t.createdAt,
    reward: t.reward,
    embedder: t.embedder ?? null,
    embeddingType: t.embedding ? t.embedding.constructor.name : null,
    embedding: t.embedding ? Array.from(t.embedding) : null,
  };
}

/**
 * The stores that schemas v1 and v2 laid out alike: episodes (by env and source), tasks (by env),
 * runs and meta.
 */
function createSharedV1V2Stores(db: IDBPDatabase): void {
  const episodes = db.createObjectStore('episodes', { keyPath: 'id' });
  episodes.createIndex('env', 'env');
  episodes.createIndex('source', 'source');
  db.createObjectStore('tasks', { keyPath: 'id' }).createIndex('env', 'env');
  db.createObjectStore('runs', { keyPath: 'id' });
  db.createObjectStore('meta');
}

/** Builds a schema-v1 database exactly as the v1 code did (stores, indexes, meta.embedder) and fills it. */
export async function createV1Database(name: string): Promise<void> {
  const db = await openDB(name, 1, {
    upgrade(v1) {
      const transitions = v1.createObjectStore('transitions', { keyPath: 'id' });
      transitions.createIndex('env', 'env');
      transitions.createIndex('source', 'source');
      transitions.createIndex('episodeId', 'episodeId');
      transitions.createIndex('createdAt', 'createdAt');
      createSharedV1V2Stores(v1);
    },
  });
  const contents = v1Contents();
  const tx = db.transaction(['transitions', 'episodes', 'tasks', 'runs', 'meta'], 'readwrite');
  await Promise.all([
    ...contents.transitions.map((t) => tx.objectStore('transitions').put(t)),
    ...contents.episodes.map((e) => tx.objectStore('episodes').put(e)),
    ...contents.tasks.map((t) => tx.objectStore('tasks').put(t)),
    ...contents.runs.map((r) => tx.objectStore('runs').put(r)),
    tx.objectStore('meta').put(V1_EMBEDDER, 'embedder'),
    tx.done,
  ]);
  db.close();
}

/** The schema of an open database, for checking a migration: stores and their indexes with key paths. */
export async function describeSchema(
  name: string,
): Promise<{ version: number; stores: Record<string, Record<string, string | string[]>> }> {
  const db = await openDB(name);
  const stores: Record<string, Record<string, string | string[]>> = {};
  const tx = db.transaction([...db.objectStoreNames], 'readonly');
  for (const storeName of db.objectStoreNames) {
    const store = tx.objectStore(storeName);
    const indexes: Record<string, string | string[]> = {};
    for (const indexName of store.indexNames) indexes[indexName] = store.index(indexName).keyPath;
    stores[storeName] = indexes;
  }
  const version = db.version;
  db.close();
  return { version, stores };
}

/**
 * What createV2Database writes: per-transition embedders (two of them, of different dims), one
 * transition without an embedding, an invalid one (also listed in the v2 'invalid' store), a
 * createdAt tie broken by id, and everything put out of insertion order.
 */
export function v2Contents(): {
  transitions: BufferTransition[];
  episodes: BufferEpisode[];
  tasks: TaskBankEntry[];
  runs: RunRecord[];
} {
  const transitions = [
    makeTransition(4, {
      env: 'household-v0',
      source: 'dream',
      createdAt: 1_020,
      embedding: embeddingOf(4, 8),
      embedder: 'other-8',
    }),
    makeTransition(0, { createdAt: 1_010, embedding: embeddingOf(0), embedder: 'hash-4' }),
    makeTransition(2, {
      source: 'dream',
      valid: false,
      reasoning: 'unparsable',
      createdAt: 1_015,
      usage: { promptTokens: 3, completionTokens: 2, ms: 9 },
    }),
    makeTransition(1, {
      source: 'real',
      createdAt: 1_015,
      embedding: embeddingOf(1),
      embedder: 'hash-4',
      runId: 'run-1',
    }),
    makeTransition(3, { createdAt: 1_001, embedding: embeddingOf(3), embedder: 'hash-4' }),
  ];
  return {
    transitions,
    episodes: [makeEpisode('ep-1', 'dream', 1_020, 'household-v0'), makeEpisode('ep-0')],
    tasks: [makeTask('task-0'), makeTask('task-1', 'household-v0')],
    runs: [makeRun('run-1')],
  };
}

/** A v2 transition of a bulk fill (16-dim embeddings, episodes of 10 steps). */
export function bulkV2Transition(i: number): BufferTransition {
  return makeTransition(i, {
    episodeId: `bulk-${Math.floor(i / 10)}`,
    stepIndex: i % 10,
    createdAt: 2_000 + Math.floor(i / 3),
    source: (['offline', 'real', 'dream'] as const)[i % 3],
    embedding: embeddingOf(i, 16),
    embedder: 'hash-16',
  });
}

/**
 * Builds a schema-v2 database exactly as the v2 code laid it out (per-record transitions with the
 * [source, createdAt, id] and [env, source, createdAt, id] indexes, the 'invalid' store, no
 * meta.embedder) and fills it with v2Contents(), plus `bulk` transitions (bulkV2Transition) and
 * their episodes when asked.
 */
export async function createV2Database(name: string, bulk = 0): Promise<void> {
  const db = await openDB(name, 2, {
    upgrade(v2) {
      const transitions = v2.createObjectStore('transitions', { keyPath: 'id' });
      transitions.createIndex('episodeId', 'episodeId');
      transitions.createIndex('source_order', ['source', 'createdAt', 'id']);
      transitions.createIndex('env_source', ['env', 'source', 'createdAt', 'id']);
      createSharedV1V2Stores(v2);
      v2.createObjectStore('invalid', { keyPath: 'id' });
    },
  });
  const contents = v2Contents();
  const transitions = [...contents.transitions, ...Array.from({ length: bulk }, (_, i) => bulkV2Transition(i))];
  const episodes = [...contents.episodes];
  for (let e = 0; e * 10 < bulk; e++) episodes.push(makeEpisode(`bulk-${e}`, 'offline', 2_000 + e));
  const tx = db.transaction(['transitions', 'episodes', 'tasks', 'runs', 'invalid'], 'readwrite');
  await Promise.all([
    ...transitions.map((t) => tx.objectStore('transitions').put(t)),
    ...transitions
      .filter((t) => !t.valid)
      .map((t) => tx.objectStore('invalid').put({ id: t.id, env: t.env, source: t.source })),
    ...episodes.map((e) => tx.objectStore('episodes').put(e)),
    ...contents.tasks.map((t) => tx.objectStore('tasks').put(t)),
    ...contents.runs.map((r) => tx.objectStore('runs').put(r)),
    tx.done,
  ]);
  db.close();
}

/** The raw chunk records of a v3 database, in seq order (for checking the layout). */
export async function readChunks(name: string): Promise<
  Array<
    Record<string, unknown> & {
      seq: number;
      transitions: Array<Record<string, unknown>>;
      episodes: BufferEpisode[];
      embeddings: Float32Array;
      dims?: number;
      rowDims?: Int32Array;
    }
  >
> {
  const db = await openDB(name);
  const chunks = await db.getAll('chunks');
  db.close();
  return chunks;
}
