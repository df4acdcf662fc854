/**
 * ReplayBuffer.importTrajectories: all or nothing in every store (one putImport), a re-import that
 * repairs what an interrupted import of an older version left (episodes without their tasks), and
 * repeated ids refused instead of silently skipped.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { DuplicateEpisodeError, ReplayBuffer } from '../../../src/core/buffer/buffer';
import { HashedNgramEmbedder, transitionText, type Embedder } from '../../../src/core/buffer/embedders';
import { IndexedDbBufferStore, MemoryBufferStore, type BufferStoreTestHooks } from '../../../src/core/buffer/stores';
import { trajectoryToTransitions } from '../../../src/core/buffer/transitions';
import type { BufferStore } from '../../../src/core/buffer/types';
import type { Trajectory } from '../../../src/core/types';
import { parseTrajectoriesJsonl } from '../../../src/core/data/trajectory';
import { envIds } from '../../../src/core/envs/registry';
import { FolderBufferStore } from '../../../src/node/buffer-folder';
import { tempFolders } from '../support/temp-folders';

const episodes = parseTrajectoriesJsonl(readFileSync('public/datasets/household-v0.jsonl', 'utf8'), {
  knownEnvs: envIds(),
}).slice(0, 40);
const steps = episodes.reduce((s, t) => s + t.steps.length, 0);
const taskCount = new Set(episodes.map((t) => t.task.id)).size;
const options = { source: 'offline' as const, createdAt: 1 };

const freshFolder = tempFolders('import-test');
let databases = 0;

const stores: { kind: string; open(hooks?: BufferStoreTestHooks): () => Promise<BufferStore> }[] = [
  {
    kind: 'memory',
    open: (testHooks) => {
      const store = new MemoryBufferStore({ testHooks });
      return async () => store;
    },
  },
  {
    kind: 'indexeddb',
    open: (testHooks) => {
      const name = `import-test-${++databases}`;
      return () => IndexedDbBufferStore.open({ name, storage: null, testHooks });
    },
  },
  {
    kind: 'folder',
    open: (testHooks) => {
      const dir = freshFolder();
      return () => FolderBufferStore.open(dir, { durable: false, testHooks });
    },
  },
];

describe.each(stores)('importTrajectories ($kind store)', ({ kind, open }) => {
  it('writes nothing when the one commit fails, then everything on the next try', async () => {
    let fail = true;
    const reopen = open({
      beforeCommit: () => {
        if (fail) throw new Error('killed mid-import');
      },
    });
    const store = await reopen();
    const buffer = new ReplayBuffer(store);
    await expect(buffer.importTrajectories(episodes, options)).rejects.toThrow(/killed mid-import/);
    expect(await store.stats()).toMatchObject({ transitions: 0, episodes: 0, tasks: 0 });
    fail = false;
    expect(await buffer.importTrajectories(episodes, options)).toEqual({
      episodes: 40,
      transitions: steps,
      skipped: 0,
      repaired: 0,
      renamed: [],
    });
    await store.close();
    const again = kind === 'memory' ? store : await reopen();
    if (kind !== 'memory')
      expect(await again.stats()).toMatchObject({ transitions: steps, episodes: 40, tasks: taskCount });
  });

  it('repairs a partial import of an older version (episodes and transitions stored, tasks never written)', async () => {
    const store = await open()();
    // What the old importer left after a kill: batches of transitions and episodes, no task-bank entries.
    const partial = episodes.slice(0, 25).map((t) => trajectoryToTransitions(t, options));
    await store.putTransitions(
      partial.flatMap((p) => p.transitions),
      partial.map((p) => p.episode),
    );
    const buffer = new ReplayBuffer(store);
    const result = await buffer.importTrajectories(episodes, options);
    expect(result).toEqual({
      episodes: 15,
      transitions: steps - partial.reduce((s, p) => s + p.transitions.length, 0),
      skipped: 0,
      repaired: 25,
      renamed: [],
    });
    expect(await store.stats()).toMatchObject({ transitions: steps, episodes: 40, tasks: taskCount });
    // Each task counts each of its episodes once, repaired or new.
    const rollouts = (await store.listTasks()).reduce((s, t) => s + t.rollouts, 0);
    expect(rollouts).toBe(40);
    expect(await buffer.importTrajectories(episodes, options)).toEqual({
      episodes: 0,
      transitions: 0,
      skipped: 40,
      repaired: 0,
      renamed: [],
    });
    await store.close();
  });
});

describe('importTrajectories: repeated ids', () => {
  it('refuses an import naming one episode id twice, writing nothing', async () => {
    const store = new MemoryBufferStore();
    const twice = [episodes[0], episodes[1], { ...episodes[2], id: episodes[0].id }];
    const error = await new ReplayBuffer(store).importTrajectories(twice, options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateEpisodeError);
    expect((error as Error).message).toContain(`'${episodes[0].id}'`);
    expect((error as Error).message).toMatch(/nothing was imported.*dreamgym convert/s);
    expect((await store.stats()).transitions).toBe(0);
  });
});

// Issue 31: two files whose episodes share ids (AgentGym's webshop_SEED) overwrote or dropped each other.
describe.each(stores)('importTrajectories: an id held by a different episode ($kind store)', ({ open }) => {
  const [first, second] = [episodes[0], episodes[1]];
  /** Two episodes of one id and one task id (what two imported AgentGym files with the same seeds give). */
  const clash = (t: Trajectory): Trajectory => ({
    ...t,
    id: 'alfworld_7',
    task: { ...t.task, id: 'household-v0/imported/alfworld_7' },
  });

  it('stores the newcomer under a new id, says which, keeps the first, and a re-import adds nothing', async () => {
    const store = await open()();
    const buffer = new ReplayBuffer(store);
    await buffer.importTrajectories([clash(first)], options);
    const result = await buffer.importTrajectories([clash(second)], options);
    expect(result.episodes).toBe(1);
    expect(result.renamed).toEqual([{ id: 'alfworld_7', storedAs: expect.stringMatching(/^alfworld_7~[0-9a-f]{8}$/) }]);
    const storedAs = result.renamed[0].storedAs;
    expect((await store.getTransition('alfworld_7#0'))?.action).toBe(first.steps[0].action);
    expect((await store.getTransition(`${storedAs}#0`))?.action).toBe(second.steps[0].action);
    expect(await store.stats()).toMatchObject({
      episodes: 2,
      transitions: first.steps.length + second.steps.length,
      tasks: 2,
    });
    const instructions = (await store.listTasks()).map((e) => e.task.instruction).sort();
    expect(instructions).toEqual([first.task.instruction, second.task.instruction].sort());
    // Importing the second file again finds it under its new id: nothing is added or renamed again.
    expect(await buffer.importTrajectories([clash(second)], options)).toMatchObject({ episodes: 0, skipped: 1 });
    expect((await store.stats()).episodes).toBe(2);
    await store.close();
  });
});

describe('importTrajectories: embeddings', () => {
  it('embeds a text once however many transitions share it, and may leave the index for the first search', async () => {
    const hashed = new HashedNgramEmbedder();
    const texts: string[] = [];
    const counting: Embedder = {
      id: hashed.id,
      dims: hashed.dims,
      embed: (batch) => {
        texts.push(...batch);
        return hashed.embed(batch);
      },
    };
    const store = new MemoryBufferStore();
    const buffer = new ReplayBuffer(store, counting);
    const again = episodes.map((t) => ({ ...t, id: `${t.id}-again` })); // the same states, other episodes
    await buffer.importTrajectories([...episodes, ...again], { ...options, loadIndex: false });
    const stored = await store.listTransitions();
    expect(stored).toHaveLength(2 * steps);
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts.length).toBeLessThanOrEqual(steps);
    for (const t of stored) {
      expect(t.embedder).toBe(hashed.id);
      expect(Array.from(t.embedding!)).toEqual(Array.from(hashed.embedOne(transitionText(t))));
    }
    expect(buffer.index.size).toBe(0); // not loaded for the import
    const [hit] = await buffer.retrieve(stored[0], 1);
    expect(buffer.index.size).toBe(2 * steps); // loaded from the store, the import included
    expect(hit.score).toBeCloseTo(1, 5);
  });
});
