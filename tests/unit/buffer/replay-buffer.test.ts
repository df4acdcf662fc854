import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ReplayBuffer, transitionsToTrajectories } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import { parseTrajectoriesJsonl, trajectoriesToJsonl } from '../../../src/core/data/trajectory';
import { envIds } from '../../../src/core/envs/registry';
import type { Trajectory } from '../../../src/core/types';

const webshop = parseTrajectoriesJsonl(readFileSync('public/datasets/webshop-lite-v0.jsonl', 'utf8'), {
  knownEnvs: envIds(),
}).slice(0, 60);
const household = parseTrajectoriesJsonl(readFileSync('public/datasets/household-v0.jsonl', 'utf8'), {
  knownEnvs: envIds(),
}).slice(0, 60);
const steps = (ts: Trajectory[]) => ts.reduce((s, t) => s + t.steps.length, 0);

describe('ReplayBuffer', () => {
  it('seeds from the shipped datasets as offline transitions, and re-importing adds nothing', async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const first = await buffer.importTrajectories([...webshop, ...household], { source: 'offline', createdAt: 1 });
    expect(first).toEqual({
      episodes: 120,
      transitions: steps(webshop) + steps(household),
      skipped: 0,
      repaired: 0,
      renamed: [],
    });
    const again = await buffer.importTrajectories([...webshop, ...household], { source: 'offline', createdAt: 2 });
    expect(again).toEqual({ episodes: 0, transitions: 0, skipped: 120, repaired: 0, renamed: [] });
    const stats = await buffer.stats();
    expect(stats.transitions).toBe(first.transitions);
    expect(stats.byEnvAndSource['webshop-lite-v0']).toEqual({ offline: steps(webshop) });
    expect(stats.tasks).toBe(new Set([...webshop, ...household].map((t) => t.task.id)).size);
    expect(buffer.index.size).toBe(first.transitions);
  });

  it('retrieves similar transitions of the asked env and source, never invalid ones, diverse on request', async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    await buffer.importTrajectories([...webshop, ...household], { source: 'offline', createdAt: 1 });
    const probe = household[3].steps[1];
    const hits = await buffer.retrieve(
      { instruction: household[3].task.instruction, observation: probe.observation, action: probe.action },
      8,
      { env: 'household-v0' },
    );
    expect(hits).toHaveLength(8);
    expect(hits[0].transition.id).toBe(`${household[3].id}#1`); // itself first
    expect(hits[0].score).toBeCloseTo(1, 5);
    expect(hits.every((h) => h.transition.env === 'household-v0' && h.transition.valid)).toBe(true);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score);
    const diverse = await buffer.retrieve('search sofa living room', 6, { env: 'webshop-lite-v0', diverse: true });
    expect(new Set(diverse.map((h) => h.transition.episodeId)).size).toBe(diverse.length);
    expect(diverse.every((h) => h.transition.env === 'webshop-lite-v0')).toBe(true);
  });

  it('rebuilds its index from the store on load (a reopened buffer answers the same)', async () => {
    const store = new MemoryBufferStore();
    const buffer = new ReplayBuffer(store);
    await buffer.importTrajectories(household, { source: 'offline', createdAt: 1 });
    const query = 'go to fridge 1';
    const before = (await buffer.retrieve(query, 5)).map((h) => h.transition.id);
    const reopened = new ReplayBuffer(store);
    const loaded = await reopened.load();
    expect(loaded).toEqual({ transitions: steps(household), reembedded: 0 });
    expect((await reopened.retrieve(query, 5)).map((h) => h.transition.id)).toEqual(before);
  });

  it('evicts oldest dream transitions first and keeps offline data', async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    await buffer.importTrajectories(household.slice(0, 10), { source: 'offline', createdAt: 1 });
    const dreams = household.slice(10, 20).map((t) => ({ ...t, id: `dream/${t.id}` }));
    await buffer.importTrajectories(dreams.slice(0, 5), { source: 'dream', createdAt: 2 });
    await buffer.importTrajectories(dreams.slice(5), { source: 'dream', createdAt: 3 });
    const offline = steps(household.slice(0, 10));
    const removed = await buffer.evict({ sources: ['dream'], maxTransitions: offline + steps(dreams.slice(5)) });
    expect(removed).toBe(steps(dreams.slice(0, 5)));
    const stats = await buffer.stats();
    expect(stats.byEnvAndSource['household-v0']).toEqual({ offline, dream: steps(dreams.slice(5)) });
    expect(buffer.index.size).toBe(stats.transitions);
  });

  it('keeps its cap at every moment: an add makes room first (oldest dreamed, then real), offline data stays', async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    await buffer.importTrajectories(household.slice(0, 4), { source: 'offline', createdAt: 1 });
    const offline = steps(household.slice(0, 4));
    const cap = offline + 30;
    buffer.keepAtMost(cap);
    const record = (i: number, source: 'real' | 'dream') => ({
      id: `run/${i}#0`,
      env: 'household-v0',
      taskId: `t${i}`,
      instruction: 'x',
      episodeId: `run/${i}`,
      stepIndex: 0,
      observation: `o${i}`,
      admissible: ['look'],
      action: 'look',
      nextObservation: 'n',
      nextAdmissible: ['look'],
      reward: 0,
      terminated: false,
      truncated: false,
      source,
      valid: true,
      createdAt: 10 + i,
    });
    for (let batch = 0; batch < 5; batch++) {
      await buffer.add(Array.from({ length: 12 }, (_, j) => record(batch * 12 + j, j % 3 === 0 ? 'real' : 'dream')));
      const stats = await buffer.stats();
      expect(stats.transitions).toBeLessThanOrEqual(cap);
      expect(stats.byEnvAndSource['household-v0'].offline).toBe(offline);
    }
    expect((await buffer.stats()).transitions).toBe(cap);
  });

  it('exports back to the same episodes', async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    await buffer.importTrajectories(webshop.slice(0, 5), { source: 'offline', createdAt: 1 });
    const tasks = new Map((await buffer.store.listTasks()).map((e) => [e.id, e.task]));
    const back = transitionsToTrajectories(await buffer.store.listTransitions(), tasks);
    const strip = (t: Trajectory) => ({ ...t, source: 'imported', policy: undefined });
    expect(trajectoriesToJsonl(back)).toBe(trajectoriesToJsonl(webshop.slice(0, 5).map(strip) as Trajectory[]));
  });
});
