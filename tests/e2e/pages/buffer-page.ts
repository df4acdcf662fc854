/**
 * Test page script (served by the Vite dev server at /tests/e2e/pages/buffer.html): drives the
 * IndexedDB buffer store against Chromium's real IndexedDB and returns plain JSON summaries to
 * Playwright (a Float32Array is reported by its constructor name and values).
 */
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { IndexedDbBufferStore, type BufferStoreTestHooks } from '../../../src/core/buffer/stores';
import type { Trajectory } from '../../../src/core/types';
import { benchStoreInsertAndLoad } from '../../../src/bench/buffer-stores';
import { BufferQuotaError, type BufferStore } from '../../../src/core/buffer/types';
import {
  createV1Database,
  createV2Database,
  describeSchema,
  embeddingOf,
  makeEpisode,
  makeRun,
  makeTask,
  makeTransition,
  readChunks,
  transitionSummary,
} from './buffer-fixtures';

const DIMS = 16;
const IMPORT_STEPS = 5;

/** `n` episodes of IMPORT_STEPS steps, each with a task of its own (an import's shape, made fast). */
function syntheticEpisodes(n: number): Trajectory[] {
  return Array.from({ length: n }, (_, i): Trajectory => ({
    format: 'dreamgym-trajectory/1',
    id: `import/${i}`,
    env: 'household-v0',
    seed: i,
    source: 'expert',
    task: {
      id: `import-task/${i}`,
      env: 'household-v0',
      instruction: `put apple ${i} in fridge ${i % 7}`,
      difficulty: 0.5,
      origin: 'generated',
    },
    steps: Array.from({ length: IMPORT_STEPS }, (_, t) => ({
      observation: `You are in room ${i}, step ${t}. You see a fridge ${i % 7} and a countertop ${t}.`,
      admissible: ['look', `go to fridge ${i % 7}`],
      action: t === IMPORT_STEPS - 1 ? `go to fridge ${i % 7}` : 'look',
      reward: t === IMPORT_STEPS - 1 ? 1 : 0,
      terminated: t === IMPORT_STEPS - 1,
      truncated: false,
      valid: true,
    })),
    final_observation: 'Done.',
    result: { reward: 1, success: true, score: 1, steps: IMPORT_STEPS, terminate_reason: 'success' },
  }));
}

async function contents(store: BufferStore) {
  return {
    transitions: (await store.listTransitions()).map(transitionSummary),
    episodes: (await store.listEpisodes()).map((e) => e.id),
    tasks: (await store.listTasks()).map((t) => t.id),
    runs: (await store.listRuns()).map((r) => [r.id, r.status]),
    stats: await store.stats(),
  };
}

function errorSummary(error: unknown) {
  const e = error as Error & Partial<BufferQuotaError>;
  return {
    name: e?.name,
    message: e?.message,
    isBufferQuotaError: error instanceof BufferQuotaError,
    usedBytes: e?.usedBytes ?? null,
    quotaBytes: e?.quotaBytes ?? null,
    attempted: e?.attempted ?? null,
    causeName: (e?.cause as { name?: string } | undefined)?.name ?? null,
  };
}

const bufferPage = {
  async reset(name: string) {
    await IndexedDbBufferStore.deleteDatabase(name);
  },

  /** Writes n transitions (16-dim embeddings on every other one), their episodes, a task and a run. */
  async write(name: string, n: number) {
    const store = await IndexedDbBufferStore.open({ name });
    const transitions = Array.from({ length: n }, (_, i) =>
      makeTransition(i, {
        source: (['offline', 'real', 'dream'] as const)[i % 3],
        valid: i % 7 !== 6,
        ...(i % 2 === 0 ? { embedding: embeddingOf(i, DIMS), embedder: `hash-${DIMS}` } : {}),
      }),
    );
    const episodes = [...new Set(transitions.map((t) => t.episodeId))].map((id, i) =>
      makeEpisode(id, 'offline', 1_000 + i),
    );
    const result = await store.putTransitions(transitions, episodes);
    await store.putTasks([makeTask('task-a'), makeTask('task-b', 'household-v0')]);
    await store.putRun(makeRun('run-1'));
    await store.close();
    return result;
  },

  /**
   * Starts importing `n` episodes (not awaited: a reload is meant to interrupt it). `window.importPhase`
   * says how far it got: 'embedding', 'writing' (the one transaction is being filled), 'done'.
   */
  startImport(name: string, n: number) {
    window.importPhase = 'embedding';
    void (async () => {
      const hooks: BufferStoreTestHooks = {
        afterPut: (i) => {
          if (i === 0) window.importPhase = 'writing';
        },
      };
      const buffer = new ReplayBuffer(await IndexedDbBufferStore.open({ name, testHooks: hooks }));
      await buffer.importTrajectories(syntheticEpisodes(n), { source: 'offline', createdAt: 1 });
      window.importPhase = 'done';
    })();
  },

  /** What an import left: counts of episodes, tasks and transitions. */
  async importCounts(name: string) {
    const store = await IndexedDbBufferStore.open({ name });
    const stats = await store.stats();
    await store.close();
    return { episodes: stats.episodes, tasks: stats.tasks, transitions: stats.transitions, perEpisode: IMPORT_STEPS };
  },

  async read(name: string) {
    const store = await IndexedDbBufferStore.open({ name });
    const result = await contents(store);
    await store.close();
    return result;
  },

  /** A hand-made v1 database (raw v1 schema), then opened — and so upgraded — by the store. */
  async upgradeFromV1(name: string) {
    await IndexedDbBufferStore.deleteDatabase(name);
    await createV1Database(name);
    const before = await describeSchema(name);
    const store = await IndexedDbBufferStore.open({ name });
    const result = await contents(store);
    await store.close();
    return { before, after: await describeSchema(name), ...result };
  },

  /** A hand-made v2 database (raw v2 schema, `bulk` extra transitions), then opened — and so upgraded to v3 — by the store. */
  async upgradeFromV2(name: string, bulk = 0) {
    await IndexedDbBufferStore.deleteDatabase(name);
    await createV2Database(name, bulk);
    const before = await describeSchema(name);
    const store = await IndexedDbBufferStore.open({ name });
    const result =
      bulk > 0
        ? { transitions: [], episodes: [], tasks: [], runs: [], stats: await store.stats() }
        : await contents(store);
    await store.close();
    const chunks = (await readChunks(name)).map((c) => ({
      seq: c.seq,
      ids: bulk > 0 ? [] : c.transitions.map((t) => t.id),
      transitions: c.transitions.length,
      episodes: c.episodes.length,
      dims: c.dims ?? null,
      rowDims: c.rowDims ? Array.from(c.rowDims) : null,
      rowDimsType: c.rowDims?.constructor.name ?? null,
      embeddingsType: c.embeddings.constructor.name,
      floats: c.embeddings.length,
      hasEmbeddingField: c.transitions.some((t) => 'embedding' in t),
    }));
    return { before, after: await describeSchema(name), chunks, ...result };
  },

  /** Batches that fail half-way (thrown hook, uncloneable value): the database must be unchanged. */
  async failingBatches(name: string) {
    await IndexedDbBufferStore.deleteDatabase(name);
    let armed = false;
    const hooks: BufferStoreTestHooks = {
      afterPut: (i) => {
        if (armed && i === 2) throw new Error('injected failure half-way');
      },
    };
    const store = await IndexedDbBufferStore.open({ name, testHooks: hooks });
    await store.putTransitions(
      [0, 1, 2].map((i) => makeTransition(i, { embedding: embeddingOf(i, DIMS) })),
      [makeEpisode('ep-0')],
    );
    const before = await contents(store);
    const batch = [
      makeTransition(0, { reward: 9 }),
      ...[3, 4, 5, 6].map((i) => makeTransition(i, { embedding: embeddingOf(i, DIMS) })),
    ];
    armed = true;
    const thrown = await store.putTransitions(batch, [makeEpisode('ep-1')]).then(() => null, errorSummary);
    armed = false;
    const afterThrow = await contents(store);
    const uncloneable = batch.map((t, i) =>
      i === 3 ? { ...t, usage: { promptTokens: 1, completionTokens: 1, ms: 1, fn: () => 1 } as never } : t,
    );
    const cloneError = await store.putTransitions(uncloneable).then(() => null, errorSummary);
    const afterClone = await contents(store);
    await store.close();
    return { before, thrown, afterThrow, cloneError, afterClone };
  },

  /** A QuotaExceededError injected half-way through a batch, with the real storage estimate. */
  async quota(name: string) {
    await IndexedDbBufferStore.deleteDatabase(name);
    const store = await IndexedDbBufferStore.open({
      name,
      testHooks: {
        afterPut: (i) => {
          if (i === 1) throw new DOMException('Injected: the quota has been exceeded.', 'QuotaExceededError');
        },
      },
    });
    const error = await store
      .putTransitions([0, 1, 2, 3].map((i) => makeTransition(i, { embedding: embeddingOf(i, DIMS) })))
      .then(() => null, errorSummary);
    const count = await store.countTransitions();
    await store.close();
    return { error, count };
  },

  async storage(name: string) {
    const store = new IndexedDbBufferStore({ name });
    const persistence = await store.requestPersistence();
    const estimate = await store.estimate();
    await store.close();
    return { persistence, estimate };
  },

  async bench(name: string, n: number) {
    await IndexedDbBufferStore.deleteDatabase(name);
    const result = await benchStoreInsertAndLoad(await IndexedDbBufferStore.open({ name }), n, {
      reopen: () => IndexedDbBufferStore.open({ name }),
    });
    const estimate = await new IndexedDbBufferStore({ name }).estimate();
    await IndexedDbBufferStore.deleteDatabase(name);
    return { ...result, usageBytes: estimate.usage };
  },
};

declare global {
  interface Window {
    bufferPage: typeof bufferPage;
    bufferPageReady: boolean;
    importPhase?: 'embedding' | 'writing' | 'done';
  }
}
window.bufferPage = bufferPage;
window.bufferPageReady = true;
