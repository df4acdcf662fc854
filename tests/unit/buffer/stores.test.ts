/**
 * One behaviour suite for the three buffer stores (memory, IndexedDB through fake-indexeddb, folder),
 * then what is particular to each: IndexedDB schema upgrades, quota errors and persistence; the
 * folder's files, crash recovery and compaction.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDB } from 'idb';
import {
  BufferQuotaError,
  BufferSchemaError,
  type BufferStore,
  type BufferTransition,
} from '../../../src/core/buffer/types';
import {
  IndexedDbBufferStore,
  INDEXEDDB_SCHEMA_VERSION,
  MemoryBufferStore,
  UNKNOWN_V1_EMBEDDER,
  type BufferStoreTestHooks,
} from '../../../src/core/buffer/stores';
import { FolderBufferStore } from '../../../src/node/buffer-folder';
import { FOLDER_FORMAT_VERSION } from '../../../src/node/buffer-folder-format';
import { benchStoreInsertAndLoad } from '../../../src/bench/buffer-stores';
import { tempFolders } from '../support/temp-folders';
import {
  bulkV2Transition,
  createV1Database,
  createV2Database,
  describeSchema,
  embeddingOf,
  makeEpisode,
  makeRun,
  makeTask,
  makeTransition,
  readChunks,
  v1Contents,
  v2Contents,
  V1_EMBEDDER,
} from '../../e2e/pages/buffer-fixtures';

/** The stores and indexes of schema v3 (the transitions, invalid and episodes stores are gone). */
const V3_STORES = { chunks: {}, tasks: { env: 'env' }, runs: {}, meta: {} };

const freshFolder = tempFolders('buffer-test');
let databases = 0;
const freshDatabaseName = () => `buffer-test-${++databases}`;

/** A place a store lives (a database name, a folder) and how to open a store there. */
interface Location {
  open(hooks?: BufferStoreTestHooks): Promise<BufferStore>;
  files?: string;
}
interface Harness {
  kind: BufferStore['kind'];
  persistent: boolean;
  location(): Location;
}

const harnesses: Harness[] = [
  {
    kind: 'memory',
    persistent: false,
    location: () => ({ open: async (testHooks) => new MemoryBufferStore({ testHooks }) }),
  },
  {
    kind: 'indexeddb',
    persistent: true,
    location: () => {
      const name = freshDatabaseName();
      return { open: (testHooks) => IndexedDbBufferStore.open({ name, testHooks, storage: null }) };
    },
  },
  {
    kind: 'folder',
    persistent: true,
    location: () => {
      const dir = freshFolder();
      return { open: (testHooks) => FolderBufferStore.open(dir, { testHooks, durable: false }), files: dir };
    },
  },
];

/** Everything a store holds, for "unchanged" checks. */
async function snapshot(store: BufferStore) {
  return {
    transitions: (await store.listTransitions()).map(plain),
    episodes: await store.listEpisodes(),
    tasks: await store.listTasks(),
    runs: await store.listRuns(),
    stats: await store.stats(),
  };
}

/** A transition with its embedding as a plain array (toEqual on Float32Array views is strict about type only). */
function plain(t: BufferTransition) {
  return { ...t, embedding: t.embedding && Array.from(t.embedding) };
}

function folderBytes(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name)).toString('base64')]),
  );
}

/** Six transitions across envs and sources, given out of order. */
function mixedBatch(): BufferTransition[] {
  return [
    makeTransition(5, { source: 'dream', createdAt: 50, embedding: embeddingOf(5), embedder: 'hash-4' }),
    makeTransition(0, { source: 'offline', createdAt: 10, embedding: embeddingOf(0), embedder: 'hash-4' }),
    makeTransition(1, { source: 'offline', createdAt: 20, env: 'household-v0' }),
    makeTransition(3, { source: 'real', createdAt: 30 }),
    makeTransition(4, {
      source: 'dream',
      createdAt: 30,
      valid: false,
      reasoning: 'no JSON',
      usage: { promptTokens: 10, completionTokens: 5, ms: 12 },
    }),
    makeTransition(6, { source: 'dream', createdAt: 60, env: 'household-v0' }),
  ];
}

describe.each(harnesses)('$kind store', (harness) => {
  it('puts, gets, lists in (createdAt, id) order and counts with filters', async () => {
    const store = await harness.location().open();
    const batch = mixedBatch();
    expect(
      await store.putTransitions(batch, [makeEpisode('ep-0', 'offline', 10), makeEpisode('ep-1', 'dream', 30)]),
    ).toEqual({ added: 6, replaced: 0 });

    const first = await store.getTransition(batch[0].id);
    expect(first?.embedding).toBeInstanceOf(Float32Array);
    expect(Array.from(first!.embedding!)).toEqual(Array.from(embeddingOf(5)));
    expect(plain(first!)).toEqual(plain(batch[0]));
    expect(await store.getTransition('nope')).toBeUndefined();

    const ids = (list: BufferTransition[]) => list.map((t) => t.id);
    // createdAt 30 twice: the id breaks the tie (ep-1#0 < ep-1#1).
    expect(ids(await store.listTransitions())).toEqual(['ep-0#0', 'ep-0#1', 'ep-1#0', 'ep-1#1', 'ep-1#2', 'ep-2#0']);
    expect(ids(await store.listTransitions({ env: 'household-v0' }))).toEqual(['ep-0#1', 'ep-2#0']);
    expect(ids(await store.listTransitions({ source: 'dream' }))).toEqual(['ep-1#1', 'ep-1#2', 'ep-2#0']);
    expect(ids(await store.listTransitions({ source: ['real', 'offline'] }))).toEqual(['ep-0#0', 'ep-0#1', 'ep-1#0']);
    expect(ids(await store.listTransitions({ source: 'dream', validOnly: true }))).toEqual(['ep-1#2', 'ep-2#0']);
    expect(
      ids(await store.listTransitions({ env: 'webshop-lite-v0', source: ['dream', 'real'], validOnly: true })),
    ).toEqual(['ep-1#0', 'ep-1#2']);
    expect(await store.listTransitions({ source: [] })).toEqual([]);

    for (const filter of [
      undefined,
      { env: 'household-v0' },
      { source: 'dream' as const },
      { validOnly: true },
      { env: 'webshop-lite-v0', source: ['dream' as const, 'real' as const], validOnly: true },
      { env: 'nowhere' },
    ]) {
      expect(await store.countTransitions(filter)).toBe((await store.listTransitions(filter)).length);
    }
    expect(await store.countTransitions()).toBe(6);
    expect(await store.countTransitions({ validOnly: true })).toBe(5);

    const visited: string[] = [];
    await store.forEachTransition((t) => visited.push(t.id), { source: ['dream', 'offline'] });
    expect(visited).toEqual(['ep-0#0', 'ep-0#1', 'ep-1#1', 'ep-1#2', 'ep-2#0']);

    expect(await store.hasEpisode('ep-1')).toBe(true);
    expect(await store.hasEpisode('ep-9')).toBe(false);
    expect((await store.listEpisodes({ source: 'dream' })).map((e) => e.id)).toEqual(['ep-1']);
    expect((await store.listEpisodes({ env: 'webshop-lite-v0' })).map((e) => e.id)).toEqual(['ep-0', 'ep-1']);
    await store.close();
  });

  it('replaces a re-put id instead of duplicating it', async () => {
    const location = harness.location();
    const store = await location.open();
    await store.putTransitions([
      makeTransition(0, { embedding: embeddingOf(0) }),
      makeTransition(1),
      makeTransition(2, { valid: false }),
    ]);
    const changed = makeTransition(0, { reward: 1, action: 'click[buy now]' }); // and no embedding any more
    const result = await store.putTransitions([
      changed,
      makeTransition(2, { valid: true }),
      makeTransition(3),
      makeTransition(3, { reward: 0.5 }),
    ]);
    expect(result).toEqual({ added: 1, replaced: 3 });
    expect(await store.countTransitions()).toBe(4);
    expect(plain((await store.getTransition(changed.id))!)).toEqual(plain(changed));
    expect((await store.getTransition(makeTransition(3).id))?.reward).toBe(0.5);
    expect((await store.stats()).invalid).toBe(0);
    expect(await store.countTransitions({ validOnly: true })).toBe(4);
    // An embedding comes back after being dropped, and a valid one turns invalid.
    await store.putTransitions([
      makeTransition(0, { embedding: embeddingOf(9), embedder: 'e2' }),
      makeTransition(1, { valid: false }),
    ]);
    const expected = await snapshot(store);
    expect(expected.stats.invalid).toBe(1);
    expect(expected.transitions.map((t) => t.id)).toEqual(['ep-0#0', 'ep-0#1', 'ep-0#2', 'ep-1#0']);
    if (harness.persistent) {
      await store.close();
      const again = await location.open();
      expect(await snapshot(again)).toEqual(expected);
      await again.close();
    }
  });

  it.each([
    [
      'a test hook that throws after the third put',
      (batch: BufferTransition[]) => batch,
      {
        afterPut: (i: number) => {
          if (i === 2) throw new Error('injected failure');
        },
      },
      /injected failure/,
    ],
    [
      'a malformed record half-way',
      (batch: BufferTransition[]) => batch.map((t, i) => (i === 2 ? { ...t, source: 'bogus' as never } : t)),
      {},
      /Transition 2 of the batch \(id 'ep-2#1'\): source must be one of/,
    ],
    [
      'a value that cannot be cloned half-way',
      (batch: BufferTransition[]) =>
        batch.map((t, i) =>
          i === 2 ? { ...t, usage: { promptTokens: 1, completionTokens: 1, ms: 1, oops: () => 1 } as never } : t,
        ),
      {},
      /clone|could not be cloned/i,
    ],
    [
      'a failure just before the commit',
      (batch: BufferTransition[]) => batch,
      {
        beforeCommit: () => {
          throw new Error('disk went away');
        },
      },
      /disk went away/,
    ],
  ])('leaves the store unchanged after %s', async (_name, corrupt, hooks: BufferStoreTestHooks, message) => {
    const location = harness.location();
    let armed = false; // the hooks fire only for the batch under test
    const store = await location.open({
      afterPut: (i, t) => {
        if (armed) hooks.afterPut?.(i, t);
      },
      beforeCommit: (operation) => {
        if (armed) hooks.beforeCommit?.(operation);
      },
    });
    await store.putTransitions(
      [makeTransition(1, { embedding: embeddingOf(1) }), makeTransition(2)],
      [makeEpisode('ep-0')],
    );
    await store.putTasks([makeTask('t1')]);
    await store.putRun(makeRun('r1'));
    const before = await snapshot(store);
    const filesBefore = location.files && folderBytes(location.files);

    // Replaces an existing id and adds new ones, with embeddings: everything a batch can touch.
    const batch = [
      makeTransition(1, { reward: 7, embedding: embeddingOf(11) }),
      ...[6, 7, 8, 9].map((n) => makeTransition(n, { embedding: embeddingOf(n) })),
    ];
    armed = true;
    await expect(
      store.putTransitions(corrupt(batch), [makeEpisode('ep-2'), makeEpisode('ep-0', 'real')]),
    ).rejects.toThrow(message);
    armed = false;
    expect(await snapshot(store)).toEqual(before);
    if (location.files) expect(folderBytes(location.files)).toEqual(filesBefore);
    // ... and it still takes the next batch.
    expect(await store.putTransitions(batch)).toEqual({ added: 4, replaced: 1 });
    await store.close();

    if (harness.persistent) {
      const reopened = await location.open();
      expect((await reopened.listTransitions()).map(plain)).toEqual(
        [...before.transitions.filter((t) => t.id !== batch[0].id), ...batch.map(plain)].sort(
          (a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1),
        ),
      );
      expect(await reopened.listEpisodes()).toEqual(before.episodes);
      await reopened.close();
    }
  });

  it('writes an import whole (transitions, episodes, tasks in one commit), or nothing of it when the commit fails', async () => {
    const location = harness.location();
    let failCommit = false;
    const store = await location.open({
      beforeCommit: (op) => {
        if (failCommit && op === 'putImport') throw new Error('power cut');
      },
    });
    await store.putTransitions([makeTransition(0, { embedding: embeddingOf(0) })], [makeEpisode('ep-0')]);
    const before = await snapshot(store);
    const filesBefore = location.files && folderBytes(location.files);
    const batch = {
      transitions: [
        makeTransition(0, { reward: 3 }),
        ...[3, 4, 5].map((n) => makeTransition(n, { embedding: embeddingOf(n) })),
      ],
      episodes: [makeEpisode('ep-0', 'real'), makeEpisode('ep-1')],
      tasks: [makeTask('t-1'), makeTask('t-2')],
    };
    failCommit = true;
    await expect(store.putImport(batch)).rejects.toThrow(/power cut/);
    expect(await snapshot(store)).toEqual(before);
    if (location.files) expect(folderBytes(location.files)).toEqual(filesBefore);
    failCommit = false;
    expect(await store.putImport(batch)).toEqual({ added: 3, replaced: 1 });
    const after = await snapshot(store);
    expect(after.stats).toMatchObject({ transitions: 4, episodes: 2, tasks: 2 });
    expect((await store.getTransition('ep-0#0'))?.reward).toBe(3);
    await expect(store.putImport({ ...batch, tasks: [{ ...makeTask('t-3'), rollouts: 0.5 }] })).rejects.toThrow(
      /Task 0 of the batch/,
    );
    expect(await snapshot(store)).toEqual(after);
    await store.close();
    if (harness.persistent) {
      const reopened = await location.open();
      expect(await snapshot(reopened)).toEqual(after);
      await reopened.close();
    }
  });

  it('evicts oldest first, source by source in the policy order, and never offline unless listed', async () => {
    const store = await harness.location().open();
    await store.putTransitions(
      [
        makeTransition(0, { episodeId: 'off', stepIndex: 0, source: 'offline', createdAt: 1 }),
        makeTransition(1, { episodeId: 'off', stepIndex: 1, source: 'offline', createdAt: 2 }),
        makeTransition(2, { episodeId: 'real-a', stepIndex: 0, source: 'real', createdAt: 3 }),
        makeTransition(3, { episodeId: 'real-b', stepIndex: 0, source: 'real', createdAt: 8 }),
        makeTransition(4, { episodeId: 'dream-a', stepIndex: 1, source: 'dream', createdAt: 5, valid: false }),
        makeTransition(5, { episodeId: 'dream-a', stepIndex: 0, source: 'dream', createdAt: 5 }),
        makeTransition(6, { episodeId: 'dream-b', stepIndex: 0, source: 'dream', createdAt: 9 }),
        makeTransition(7, { episodeId: 'dream-b', stepIndex: 1, source: 'dream', createdAt: 10 }),
      ],
      ['off', 'real-a', 'real-b', 'dream-a', 'dream-b'].map((id) => makeEpisode(id)),
    );

    expect(await store.evict({ sources: ['dream', 'real'], maxTransitions: 8 })).toEqual([]);
    // Dream first (createdAt 5 twice: id order), then dream-b's first step; dream-b keeps a step.
    expect(await store.evict({ sources: ['dream', 'real'], maxTransitions: 5 })).toEqual([
      'dream-a#0',
      'dream-a#1',
      'dream-b#0',
    ]);
    expect(await store.hasEpisode('dream-a')).toBe(false);
    expect(await store.hasEpisode('dream-b')).toBe(true);
    expect((await store.stats()).invalid).toBe(0);
    // Asked for far less than the evictable sources hold: offline stays.
    expect(await store.evict({ sources: ['real', 'dream', 'real'], maxTransitions: 0 })).toEqual([
      'real-a#0',
      'real-b#0',
      'dream-b#1',
    ]);
    expect((await store.listTransitions()).map((t) => t.id)).toEqual(['off#0', 'off#1']);
    expect((await store.listEpisodes()).map((e) => e.id)).toEqual(['off']);
    expect(await store.evict({ sources: ['offline'], maxTransitions: 1 })).toEqual(['off#0']);
    expect(await store.hasEpisode('off')).toBe(true);
    await expect(store.evict({ sources: ['dream'], maxTransitions: -1 })).rejects.toThrow(/maxTransitions/);
    await store.close();
  });

  it("evicts one env's transitions only (a domain removed), whole episodes with them", async () => {
    const store = await harness.location().open();
    const mine = { env: 'byo:mine', source: 'offline' as const };
    await store.putTransitions(
      [
        makeTransition(0, { episodeId: 'a', stepIndex: 0, ...mine, createdAt: 1 }),
        makeTransition(1, { episodeId: 'a', stepIndex: 1, ...mine, createdAt: 2 }),
        makeTransition(2, { episodeId: 'b', stepIndex: 0, source: 'offline', createdAt: 3 }),
        makeTransition(3, { episodeId: 'c', stepIndex: 0, ...mine, source: 'dream', createdAt: 4 }),
      ],
      ['a', 'b', 'c'].map((id) => makeEpisode(id)),
    );
    const sources = ['offline', 'real', 'dream'] as const;
    expect(await store.evict({ env: 'byo:mine', sources: [...sources], maxTransitions: 1 })).toEqual(['a#0', 'a#1']);
    expect(await store.evict({ env: 'byo:mine', sources: [...sources], maxTransitions: 0 })).toEqual(['c#0']);
    expect((await store.listTransitions()).map((t) => t.id)).toEqual(['b#0']);
    expect((await store.listEpisodes()).map((e) => e.id)).toEqual(['b']);
    await store.close();
  });

  it('keeps tasks and runs, replacing by id', async () => {
    const store = await harness.location().open();
    await store.putTasks([makeTask('b', 'webshop-lite-v0', 2), makeTask('a', 'household-v0', 1)]);
    await store.putTasks([
      { ...makeTask('b', 'webshop-lite-v0', 2), rollouts: 8, successes: 4 },
      makeTask('c', 'webshop-lite-v0', 3),
    ]);
    expect((await store.listTasks()).map((t) => [t.id, t.rollouts])).toEqual([
      ['a', 4],
      ['b', 8],
      ['c', 4],
    ]);
    expect((await store.listTasks('webshop-lite-v0')).map((t) => t.id)).toEqual(['b', 'c']);
    expect((await store.listTasks('webshop-lite-v0'))[0].task).toEqual(makeTask('b').task);
    await store.putRun(makeRun('r2', 20));
    await store.putRun(makeRun('r1', 10));
    await store.putRun({ ...makeRun('r2', 20), status: 'finished', updatedAt: 99 });
    expect((await store.listRuns()).map((r) => [r.id, r.status])).toEqual([
      ['r1', 'running'],
      ['r2', 'finished'],
    ]);
    await expect(store.putRun({ ...makeRun('r3'), status: 'exploded' as never })).rejects.toThrow(/RunStatus/);
    await store.close();
  });

  it('reports stats and clears everything', async () => {
    const store = await harness.location().open();
    await store.putTransitions(mixedBatch(), [makeEpisode('ep-0'), makeEpisode('ep-1')]);
    await store.putTasks([makeTask('t')]);
    await store.putRun(makeRun('r'));
    expect(await store.stats()).toEqual({
      transitions: 6,
      episodes: 2,
      tasks: 1,
      transitionTasks: 4,
      runs: 1,
      invalid: 1,
      byEnvAndSource: {
        'household-v0': { offline: 1, dream: 1 },
        'webshop-lite-v0': { offline: 1, real: 1, dream: 2 },
      },
    });
    await store.clear();
    expect(await store.stats()).toEqual({
      transitions: 0,
      episodes: 0,
      tasks: 0,
      transitionTasks: 0,
      runs: 0,
      invalid: 0,
      byEnvAndSource: {},
    });
    expect(await store.listTransitions()).toEqual([]);
    expect(await store.putTransitions([makeTransition(0)])).toEqual({ added: 1, replaced: 0 });
    await store.close();
  });

  it.runIf(harness.persistent)('keeps everything across close and reopen', async () => {
    const location = harness.location();
    const store = await location.open();
    await store.putTransitions(mixedBatch(), [makeEpisode('ep-0'), makeEpisode('ep-1', 'dream')]);
    await store.putTransitions([
      makeTransition(20, { createdAt: 70, embedding: embeddingOf(20, 8), embedder: 'other-8' }),
    ]);
    await store.putTasks([makeTask('t')]);
    await store.putRun(makeRun('r'));
    const before = await snapshot(store);
    await store.close();
    await expect(store.countTransitions()).rejects.toThrow(/closed/);

    const reopened = await location.open();
    const after = await snapshot(reopened);
    expect(after).toEqual(before);
    const embedded = await reopened.getTransition(makeTransition(20).id);
    expect(embedded?.embedding).toBeInstanceOf(Float32Array);
    expect(Array.from(embedded!.embedding!)).toEqual(Array.from(embeddingOf(20, 8)));
    await reopened.close();
  });

  it('refuses use after close', async () => {
    const store = await harness.location().open();
    await store.close();
    await expect(store.putTransitions([makeTransition(0)])).rejects.toThrow(/closed/);
    await expect(store.listTransitions()).rejects.toThrow(/closed/);
  });

  it('benchmarks insert and cold load (small n here)', async () => {
    const location = harness.location();
    const n = 2_000;
    const result = await benchStoreInsertAndLoad(await location.open(), n, {
      reopen: harness.persistent ? () => location.open() : undefined,
    });
    expect(result).toMatchObject({
      kind: harness.kind,
      transitions: n,
      loaded: n,
      dims: 256,
      cold: harness.persistent,
    });
    console.log(
      `[bench ${harness.kind}, n=${n}] insert ${result.insertPerSecond.toFixed(0)}/s, load ${result.loadSeconds.toFixed(3)} s`,
    );
  });
});

// -----------------------------------------------------------------------------------------------
// IndexedDB: schema versions, quota, persistence
// -----------------------------------------------------------------------------------------------

describe('IndexedDbBufferStore', () => {
  it('upgrades a hand-made v1 database to the current schema, keeping and migrating every record', async () => {
    const name = freshDatabaseName();
    await createV1Database(name);
    const v1 = v1Contents();
    expect((await describeSchema(name)).version).toBe(1);

    const store = await IndexedDbBufferStore.open({ name, storage: null });
    const transitions = await store.listTransitions();
    expect(transitions.map((t) => t.id)).toEqual(v1.transitions.map((t) => t.id));
    for (const [i, t] of transitions.entries()) {
      const original = v1.transitions[i];
      // Embedded transitions get the database's embedder; the others stay without one.
      expect(plain(t)).toEqual(
        plain({ ...original, ...(original.embedding ? { embedder: V1_EMBEDDER } : {}) } as BufferTransition),
      );
      if (original.embedding) expect(t.embedding).toBeInstanceOf(Float32Array);
    }
    expect(await store.listEpisodes()).toEqual([...v1.episodes].sort((a, b) => a.createdAt - b.createdAt));
    expect(await store.listTasks()).toEqual(v1.tasks);
    expect(await store.listRuns()).toEqual(v1.runs);
    expect(await store.stats()).toMatchObject({
      transitions: 4,
      invalid: 1,
      byEnvAndSource: { 'household-v0': { dream: 1 }, 'webshop-lite-v0': { offline: 1, real: 1, dream: 1 } },
    });
    expect(await store.countTransitions({ env: 'webshop-lite-v0', validOnly: true })).toBe(2);
    await store.close();

    const schema = await describeSchema(name);
    expect(schema.version).toBe(INDEXEDDB_SCHEMA_VERSION);
    expect(schema.stores).toEqual(V3_STORES);
    const raw = await openDB(name);
    expect(await raw.get('meta', 'embedder')).toBeUndefined();
    raw.close();
    // v1 → v2 → v3 in one upgrade: the rows sit in one chunk, in insertion order.
    const chunks = await readChunks(name);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].transitions.map((t) => t.id)).toEqual(v1.transitions.map((t) => t.id));
    expect(chunks[0].episodes.map((e) => e.id)).toEqual(['ep-0', 'ep-1']);
  });

  it('upgrades a hand-made v2 database to v3: every transition, embedding and episode moves into chunks in insertion order', async () => {
    const name = freshDatabaseName();
    await createV2Database(name);
    expect((await describeSchema(name)).version).toBe(2);
    const v2 = v2Contents();
    const ordered = [...v2.transitions].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));

    const store = await IndexedDbBufferStore.open({ name, storage: null });
    const transitions = await store.listTransitions();
    expect(transitions.map(plain)).toEqual(ordered.map(plain));
    for (const t of transitions) if (t.embedding) expect(t.embedding).toBeInstanceOf(Float32Array);
    expect(await store.listEpisodes()).toEqual([...v2.episodes].sort((a, b) => a.createdAt - b.createdAt));
    expect(await store.listTasks()).toEqual(v2.tasks);
    expect(await store.listRuns()).toEqual(v2.runs);
    expect(await store.stats()).toMatchObject({ transitions: 5, episodes: 2, invalid: 1 });
    expect(await store.countTransitions({ validOnly: true })).toBe(4);
    // The migrated rows are replaced like any other: a re-put id is not added twice.
    expect(await store.putTransitions([makeTransition(0, { reward: 1 }), makeTransition(9)])).toEqual({
      added: 1,
      replaced: 1,
    });
    await store.close();

    const schema = await describeSchema(name);
    expect(schema.version).toBe(INDEXEDDB_SCHEMA_VERSION);
    expect(schema.stores).toEqual(V3_STORES);
    const chunks = await readChunks(name);
    expect(chunks.map((c) => c.seq)).toEqual([1, 2]);
    const [migrated] = chunks;
    expect(migrated.transitions.map((t) => t.id)).toEqual(ordered.map((t) => t.id));
    expect(migrated.transitions.every((t) => !('embedding' in t))).toBe(true);
    // Mixed dims (4, 8, none): floats per row, -1 for none; the rows one after another.
    expect(migrated.dims).toBeUndefined();
    expect(Array.from(migrated.rowDims!)).toEqual(ordered.map((t) => t.embedding?.length ?? -1));
    expect(Array.from(migrated.embeddings)).toEqual(
      ordered.flatMap((t) => (t.embedding ? Array.from(t.embedding) : [])),
    );
    expect(migrated.transitions.map((t) => t.embedder ?? null)).toEqual(ordered.map((t) => t.embedder ?? null));

    const reopened = await IndexedDbBufferStore.open({ name, storage: null });
    expect((await reopened.getTransition(makeTransition(0).id))?.reward).toBe(1);
    expect(await reopened.countTransitions()).toBe(6);
    await reopened.close();
  });

  it('migrates a large v2 database into full chunks (several pages of the old store)', async () => {
    const name = freshDatabaseName();
    const bulk = 2_500;
    await createV2Database(name, bulk);
    const store = await IndexedDbBufferStore.open({ name, storage: null });
    expect(await store.countTransitions()).toBe(bulk + 5);
    expect((await store.stats()).episodes).toBe(2 + bulk / 10);
    const sample = await store.getTransition(bulkV2Transition(1234).id);
    expect(plain(sample!)).toEqual(plain(bulkV2Transition(1234)));
    const listed = await store.listTransitions();
    expect(listed.map((t) => t.id)).toEqual(
      [...listed].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).map((t) => t.id),
    );
    await store.close();
    const chunks = await readChunks(name);
    expect(chunks.map((c) => c.transitions.length)).toEqual([1000, 1000, 505]);
    expect(chunks.reduce((sum, c) => sum + c.episodes.length, 0)).toBe(2 + bulk / 10);
    expect(chunks[0].transitions[0].id).toBe(v2Contents().transitions[4].id); // createdAt 1001 comes first
  });

  it('writes ONE chunk per batch: rows without embeddings, the embeddings as one Float32Array, and the episodes', async () => {
    const name = freshDatabaseName();
    const store = await IndexedDbBufferStore.open({ name, storage: null });
    const batch = [0, 1, 2].map((n) => makeTransition(n, { embedding: embeddingOf(n), embedder: 'hash-4' }));
    // The same id twice in one batch: the later one wins, and the chunk holds it once.
    await store.putTransitions(
      [...batch, makeTransition(0, { reward: 3, embedding: embeddingOf(7), embedder: 'hash-4' })],
      [makeEpisode('ep-0')],
    );
    await store.putTransitions([
      makeTransition(3),
      makeTransition(4, { embedding: embeddingOf(4, 8), embedder: 'other-8' }),
    ]);
    await store.putTasks([makeTask('t')]);
    await store.close();
    const chunks = await readChunks(name);
    expect(chunks).toHaveLength(2);
    expect(chunks[0]).toMatchObject({ seq: 1, dims: 4, episodes: [makeEpisode('ep-0')] });
    expect(chunks[0].transitions.map((t) => [t.id, t.reward])).toEqual([
      ['ep-0#1', 0],
      ['ep-0#2', 0],
      ['ep-0#0', 3],
    ]);
    expect(chunks[0].embeddings).toBeInstanceOf(Float32Array);
    expect(Array.from(chunks[0].embeddings)).toEqual(
      [...embeddingOf(1), ...embeddingOf(2), ...embeddingOf(7)].map((x) => Math.fround(x)),
    );
    expect(chunks[1]).toMatchObject({ seq: 2, episodes: [] });
    expect(Array.from(chunks[1].rowDims!)).toEqual([-1, 8]);
    const reopened = await IndexedDbBufferStore.open({ name, storage: null });
    expect(Array.from((await reopened.getTransition('ep-0#0'))!.embedding!)).toEqual(Array.from(embeddingOf(7)));
    expect((await reopened.getTransition('ep-1#0'))?.embedding).toBeUndefined();
    expect(Array.from((await reopened.getTransition('ep-1#1'))!.embedding!)).toEqual(Array.from(embeddingOf(4, 8)));
    await reopened.close();
  });

  it('evicts every stored row of an evicted id, so no older row comes back when reopened', async () => {
    const name = freshDatabaseName();
    const store = await IndexedDbBufferStore.open({ name, storage: null });
    const dream = (n: number, overrides: Partial<BufferTransition> = {}) =>
      makeTransition(n, { source: 'dream', episodeId: `d-${n}`, stepIndex: 0, ...overrides });
    // d-0 is written three times (three chunks), its episode twice; offline rows share the chunks.
    await store.putTransitions([dream(0), makeTransition(10)], [makeEpisode('d-0', 'dream')]);
    await store.putTransitions(
      [dream(0, { reward: 1 }), dream(1), makeTransition(11)],
      [makeEpisode('d-0', 'dream', 2_000)],
    );
    await store.putTransitions([dream(0, { reward: 2, embedding: embeddingOf(0) }), makeTransition(12)]);
    expect(await store.evict({ sources: ['dream'], maxTransitions: 4 })).toEqual(['d-0#0']);
    const expected = await snapshot(store);
    expect(expected.transitions.map((t) => t.id)).toEqual(['d-1#0', 'ep-3#1', 'ep-3#2', 'ep-4#0']);
    expect(expected.episodes).toEqual([]);
    await store.close();
    const chunks = await readChunks(name);
    expect(chunks.flatMap((c) => c.transitions.map((t) => t.id))).not.toContain('d-0#0');
    expect(chunks.flatMap((c) => c.episodes.map((e) => e.id))).not.toContain('d-0');
    const reopened = await IndexedDbBufferStore.open({ name, storage: null });
    expect(await snapshot(reopened)).toEqual(expected);
    // A failing eviction (hook before the commit) leaves the chunks as they were.
    await reopened.close();
    const failing = await IndexedDbBufferStore.open({
      name,
      storage: null,
      testHooks: {
        beforeCommit: (op) => {
          if (op === 'evict') throw new Error('no evict');
        },
      },
    });
    await expect(failing.evict({ sources: ['offline'], maxTransitions: 0 })).rejects.toThrow('no evict');
    expect(await snapshot(failing)).toEqual(expected);
    await failing.close();
    expect(await readChunks(name)).toEqual(chunks);
  });

  it('compacts superseded rows and merges small chunks, keeping the contents', async () => {
    const name = freshDatabaseName();
    const store = await IndexedDbBufferStore.open({ name, storage: null });
    // 5 live transitions re-put 250 times: 1,250 rows, 1,245 of them superseded.
    for (let round = 0; round < 250; round++) {
      await store.putTransitions(
        [0, 1, 2, 3, 4].map((n) => makeTransition(n, { reward: round, embedding: embeddingOf(n + round) })),
      );
    }
    // 100 small batches of new ids: the small chunks get merged.
    for (let b = 0; b < 100; b++)
      await store.putTransitions([makeTransition(100 + 2 * b), makeTransition(101 + 2 * b)]);
    const before = await snapshot(store);
    expect(before.transitions).toHaveLength(205);
    await store.close();
    const chunks = await readChunks(name);
    expect(chunks.length).toBeLessThanOrEqual(40);
    expect(chunks.reduce((sum, c) => sum + c.transitions.length, 0)).toBeLessThan(300);
    const reopened = await IndexedDbBufferStore.open({ name, storage: null });
    expect(await snapshot(reopened)).toEqual(before);
    expect((await reopened.getTransition(makeTransition(0).id))?.reward).toBe(249);
    expect(Array.from((await reopened.getTransition(makeTransition(4).id))!.embedding!)).toEqual(
      Array.from(embeddingOf(253)),
    );
    await reopened.close();
  });

  it('loads many chunks (more than one page of them) in seq order', async () => {
    const name = freshDatabaseName();
    const store = await IndexedDbBufferStore.open({ name, storage: null });
    // 40 batches of 300 (not small, so never merged); the last batch re-puts ids of the first.
    for (let b = 0; b < 39; b++) {
      await store.putTransitions(
        Array.from({ length: 300 }, (_, i) => makeTransition(b * 300 + i, { embedding: embeddingOf(i, 2) })),
      );
    }
    await store.putTransitions(Array.from({ length: 300 }, (_, i) => makeTransition(i, { reward: 5 })));
    await store.close();
    expect(await readChunks(name)).toHaveLength(40);
    const reopened = await IndexedDbBufferStore.open({ name, storage: null });
    expect(await reopened.countTransitions()).toBe(39 * 300);
    const replaced = await reopened.getTransition(makeTransition(7).id);
    expect(replaced?.reward).toBe(5);
    expect(replaced?.embedding).toBeUndefined();
    expect(Array.from((await reopened.getTransition(makeTransition(300 * 38 + 7).id))!.embedding!)).toEqual(
      Array.from(embeddingOf(7, 2)),
    );
    await reopened.close();
  });

  it('lets another tab upgrade or delete the database (versionchange), then opens and loads it again', async () => {
    const name = freshDatabaseName();
    const store = await IndexedDbBufferStore.open({ name, storage: null });
    await store.putTransitions([makeTransition(0)]);
    // Another tab deletes the database: it is not blocked, and this store starts over empty.
    await IndexedDbBufferStore.deleteDatabase(name);
    expect(await store.countTransitions()).toBe(0);
    await store.putTransitions([makeTransition(1)]);
    expect((await store.listTransitions()).map((t) => t.id)).toEqual([makeTransition(1).id]);
    await store.close();
  });

  it('backfills unknown-v1 when the v1 database never recorded its embedder', async () => {
    const name = freshDatabaseName();
    await createV1Database(name);
    const raw = await openDB(name, 1);
    await raw.delete('meta', 'embedder');
    raw.close();
    const store = await IndexedDbBufferStore.open({ name, storage: null });
    expect((await store.getTransition(v1Contents().transitions[0].id))?.embedder).toBe(UNKNOWN_V1_EMBEDDER);
    await store.close();
  });

  it('refuses a database newer than the code with a BufferSchemaError naming both versions', async () => {
    const name = freshDatabaseName();
    const future = await openDB(name, INDEXEDDB_SCHEMA_VERSION + 5, {
      upgrade: (db) => {
        db.createObjectStore('transitions', { keyPath: 'id' });
      },
    });
    future.close();
    const error = await IndexedDbBufferStore.open({ name, storage: null }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BufferSchemaError);
    expect((error as Error).message).toContain(`schema version ${INDEXEDDB_SCHEMA_VERSION + 5}`);
    expect((error as Error).message).toContain(`up to ${INDEXEDDB_SCHEMA_VERSION}`);
    expect((error as Error).message).toMatch(/newer DreamGym Playground/);
    // The lazy constructor reports the same on first use.
    await expect(new IndexedDbBufferStore({ name, storage: null }).countTransitions()).rejects.toBeInstanceOf(
      BufferSchemaError,
    );
  });

  it('turns a QuotaExceededError into a BufferQuotaError with the storage estimate, writing nothing', async () => {
    const name = freshDatabaseName();
    const storage = { estimate: async () => ({ usage: 9_500_000, quota: 10_000_000 }) };
    const store = await IndexedDbBufferStore.open({
      name,
      storage,
      testHooks: {
        afterPut: (i) => {
          if (i === 1) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
        },
      },
    });
    const error = await store
      .putTransitions([0, 1, 2].map((n) => makeTransition(n, { embedding: embeddingOf(n) })))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BufferQuotaError);
    expect(error).toMatchObject({
      usedBytes: 9_500_000,
      quotaBytes: 10_000_000,
      attempted: 3,
      name: 'BufferQuotaError',
    });
    expect((error as Error).message).toMatch(/9\.5 MB used of 10\.0 MB; 3 transitions were not saved/);
    expect(((error as Error).cause as DOMException).name).toBe('QuotaExceededError');
    expect(await store.countTransitions()).toBe(0);
    await store.close();

    const unknown = await IndexedDbBufferStore.open({
      name,
      storage: null,
      testHooks: {
        afterPut: () => {
          throw new DOMException('full', 'QuotaExceededError');
        },
      },
    });
    await expect(unknown.putTransitions([makeTransition(0)])).rejects.toMatchObject({
      usedBytes: null,
      quotaBytes: null,
      attempted: 1,
    });
    await unknown.close();
  });

  it('reports persistence and the estimate, or why not', async () => {
    const name = freshDatabaseName();
    const none = new IndexedDbBufferStore({ name, storage: null });
    expect(await none.requestPersistence()).toMatchObject({
      persisted: false,
      reason: expect.stringMatching(/not available/),
    });
    expect(await none.estimate()).toEqual({ usage: null, quota: null });
    const declined = new IndexedDbBufferStore({
      name,
      storage: { persist: async () => false, persisted: async () => false },
    });
    expect(await declined.requestPersistence()).toMatchObject({
      persisted: false,
      reason: expect.stringMatching(/declined/),
    });
    const granted = new IndexedDbBufferStore({
      name,
      storage: { persist: async () => true, estimate: async () => ({ usage: 1, quota: 2 }) },
    });
    expect(await granted.requestPersistence()).toMatchObject({ persisted: true });
    expect(await granted.estimate()).toEqual({ usage: 1, quota: 2 });
  });
});

// -----------------------------------------------------------------------------------------------
// Folder: files, crash recovery, compaction
// -----------------------------------------------------------------------------------------------

describe('FolderBufferStore', () => {
  it('writes the documented files: JSONL without embeddings, float32 rows, their index, meta', async () => {
    const dir = freshFolder();
    const store = await FolderBufferStore.open(dir, { durable: false });
    await store.putTransitions(
      [
        makeTransition(0, { embedding: embeddingOf(0), embedder: 'hash-4' }),
        makeTransition(1),
        makeTransition(2, { embedding: embeddingOf(2), embedder: 'hash-4' }),
      ],
      [makeEpisode('ep-0')],
    );
    await store.putTasks([makeTask('t')]);
    await store.putRun(makeRun('r'));
    await store.close();
    expect(readdirSync(dir).sort()).toEqual([
      'embeddings.bin',
      'embeddings.json',
      'episodes.jsonl',
      'meta.json',
      'runs.jsonl',
      'tasks.jsonl',
      'transitions.jsonl',
    ]);
    const lines = readFileSync(join(dir, 'transitions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.id)).toEqual(['ep-0#0', 'ep-0#1', 'ep-0#2']);
    expect(lines.every((l) => !('embedding' in l))).toBe(true);
    expect(lines[0].embedder).toBe('hash-4');
    const bin = readFileSync(join(dir, 'embeddings.bin'));
    expect(bin.length).toBe(2 * 4 * 4);
    expect(bin.readFloatLE(4 * 4)).toBeCloseTo(embeddingOf(2)[0]);
    expect(JSON.parse(readFileSync(join(dir, 'embeddings.json'), 'utf8'))).toMatchObject({
      dims: 4,
      embedders: ['hash-4'],
      rows: ['ep-0#0', 'ep-0#2'],
      dtype: 'float32-le',
    });
    const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'));
    expect(meta).toMatchObject({ format: 'dreamgym-buffer-folder', version: FOLDER_FORMAT_VERSION, embeddingRows: 2 });
    expect(meta.committedBytes['embeddings.bin']).toBe(32);
  });

  it('ignores and cuts off what an interrupted batch left behind', async () => {
    const dir = freshFolder();
    const store = await FolderBufferStore.open(dir, { durable: false });
    await store.putTransitions([makeTransition(0, { embedding: embeddingOf(0) }), makeTransition(1)]);
    const before = await snapshot(store);
    await store.close();
    const sizes = Object.fromEntries(
      ['transitions.jsonl', 'embeddings.bin'].map((f) => [f, statSync(join(dir, f)).size]),
    );
    // A crash after appending, before the commit: half a line and a few floats past the committed end,
    // and an embeddings.json that already lists the lost row (it is renamed before meta.json).
    appendFileSync(join(dir, 'transitions.jsonl'), JSON.stringify(makeTransition(0, { reward: 9 })) + '\n{"id":"half');
    appendFileSync(join(dir, 'embeddings.bin'), Buffer.alloc(16));
    const index = JSON.parse(readFileSync(join(dir, 'embeddings.json'), 'utf8'));
    writeFileSync(join(dir, 'embeddings.json'), JSON.stringify({ ...index, rows: [...index.rows, 'ep-0#0'] }));
    writeFileSync(join(dir, 'meta.json.tmp'), '{"torn');

    const reopened = await FolderBufferStore.open(dir, { durable: false });
    expect(await snapshot(reopened)).toEqual(before);
    expect(existsSync(join(dir, 'meta.json.tmp'))).toBe(false);
    for (const [file, size] of Object.entries(sizes)) expect(statSync(join(dir, file)).size).toBe(size);
    await reopened.putTransitions([makeTransition(2, { embedding: embeddingOf(2) })]);
    await reopened.close();
    const again = await FolderBufferStore.open(dir, { durable: false });
    expect((await again.listTransitions()).map((t) => [t.id, t.embedding && Array.from(t.embedding)])).toEqual([
      ['ep-0#0', Array.from(embeddingOf(0))],
      ['ep-0#1', undefined],
      ['ep-0#2', Array.from(embeddingOf(2))],
    ]);
    await again.close();
  });

  it('compacts logs once replaced records pile up, keeping the contents', async () => {
    const dir = freshFolder();
    const store = await FolderBufferStore.open(dir, { durable: false });
    // 2 × live + 1000 lines trigger a rewrite: 5 live transitions → after 203 rounds; 1 run → after 1003 puts.
    for (let round = 0; round < 250; round++) {
      await store.putTransitions(
        [0, 1, 2, 3, 4].map((n) => makeTransition(n, { reward: round, embedding: embeddingOf(n + round) })),
      );
    }
    for (let update = 0; update < 1100; update++) await store.putRun({ ...makeRun('r'), updatedAt: update });
    const before = await snapshot(store);
    await store.close();
    // A rewrite writes new names (transitions.G.jsonl) and meta.json names them; the old files are gone.
    const files = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')).files as Record<string, string>;
    expect(files['transitions.jsonl']).toMatch(/^transitions\.\d+\.jsonl$/);
    expect(existsSync(join(dir, 'transitions.jsonl'))).toBe(false);
    const lineCount = (file: string) => readFileSync(join(dir, files[file]), 'utf8').split('\n').filter(Boolean).length;
    expect(lineCount('transitions.jsonl')).toBeLessThan(300);
    expect(lineCount('runs.jsonl')).toBeLessThan(100);
    expect(JSON.parse(readFileSync(join(dir, files['embeddings.json']), 'utf8')).rows.length).toBeLessThan(300);
    expect(statSync(join(dir, files['embeddings.bin'])).size).toBeLessThan(300 * 16);
    const reopened = await FolderBufferStore.open(dir, { durable: false });
    expect(await snapshot(reopened)).toEqual(before);
    expect((await reopened.getTransition(makeTransition(0).id))?.reward).toBe(249);
    expect((await reopened.listRuns())[0].updatedAt).toBe(1099);
    await reopened.close();
  });

  it('refuses a folder of a newer format, or one that is not a buffer folder', async () => {
    const newer = freshFolder();
    (await FolderBufferStore.open(newer)).close();
    const meta = JSON.parse(readFileSync(join(newer, 'meta.json'), 'utf8'));
    writeFileSync(join(newer, 'meta.json'), JSON.stringify({ ...meta, version: FOLDER_FORMAT_VERSION + 1 }));
    const error = await FolderBufferStore.open(newer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BufferSchemaError);
    expect((error as Error).message).toContain(`format version ${FOLDER_FORMAT_VERSION + 1}`);
    expect((error as Error).message).toContain(`up to ${FOLDER_FORMAT_VERSION}`);

    const stranger = freshFolder();
    writeFileSync(join(stranger, 'transitions.jsonl'), '{}\n');
    await expect(FolderBufferStore.open(stranger)).rejects.toThrow(/no meta\.json/);
  });

  it.runIf(process.env.BUFFER_BENCH_N !== undefined)(
    'benchmarks the folder store at BUFFER_BENCH_N',
    async () => {
      const n = Number(process.env.BUFFER_BENCH_N);
      for (const durable of [false, true]) {
        const dir = freshFolder();
        const result = await benchStoreInsertAndLoad(await FolderBufferStore.open(dir, { durable }), n, {
          reopen: () => FolderBufferStore.open(dir, { durable }),
        });
        const bytes = readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
        console.log(
          `[bench folder durable=${durable} n=${n}] insert ${result.insertPerSecond.toFixed(0)} transitions/s (${result.insertSeconds.toFixed(2)} s), ` +
            `cold load ${result.loadSeconds.toFixed(2)} s, ${(bytes / 1e6).toFixed(0)} MB on disk`,
        );
      }
    },
    300_000,
  );
});

describe.each(harnesses.filter((h) => h.kind !== 'indexeddb'))('$kind store: its own copies', (harness) => {
  it('keeps its own copy of a batch, as structuredClone makes it, or the embeddings handed over', async () => {
    const store = await harness.location().open();
    const usage = { promptTokens: 10, completionTokens: 5, ms: 12 };
    const given = makeTransition(0, { embedding: embeddingOf(0), embedder: 'hash-4', usage });
    const handed = makeTransition(1, { embedding: embeddingOf(1), embedder: 'hash-4' });
    await store.putTransitions([given]);
    await store.putImport({ transitions: [handed], episodes: [], tasks: [], embeddingsHandedOver: true });
    const before = plain((await store.getTransition(given.id))!);
    given.admissible.push('click[changed]');
    given.embedding![0] = 42;
    usage.ms = 99;
    expect(plain((await store.getTransition(given.id))!)).toEqual(before);
    const kept = (await store.getTransition(handed.id))!;
    expect(kept.embedding).toBe(handed.embedding);
    expect(kept.admissible).not.toBe(handed.admissible);
    // A value structuredClone refuses is refused here too, and nothing of the batch is written.
    const bad = { ...makeTransition(2), note: () => 'not data' } as unknown as BufferTransition;
    await expect(store.putTransitions([makeTransition(3), bad])).rejects.toThrow(/could not be cloned/);
    expect(await store.getTransition(makeTransition(3).id)).toBeUndefined();
    await store.close();
  });
});
