import { describe, expect, it } from 'vitest';
import { getPreset, type TrainConfig } from '../../../src/core/train/config';
import type { IterationRecord } from '../../../src/core/train/loop';
import { RegisteredEnvSource } from '../../../src/core/train/task-source';
import {
  buildTaskBank,
  curriculumSeries,
  filterBank,
  nextSort,
  pageOf,
  sortBank,
  type TaskBankRow,
} from '../../../src/app/state/curriculum/curriculum-bank';

const config: TrainConfig = {
  ...getPreset('webshop-easy'),
  curriculum: true,
  lambda: 0.5,
  curriculumSeeds: 2,
  tasksPerIteration: 4,
  groupSize: 4,
  taskPool: 6,
  seed: 7,
};

/** The curriculum a training run of `config` builds (its task source's). */
const curriculumOf = (c: TrainConfig) => new RegisteredEnvSource(c).curriculum!;

/** Runs the real Curriculum for `n` iterations with made-up outcomes; returns it, the history and the truth. */
function simulate(n: number) {
  const curriculum = curriculumOf(config);
  const history: IterationRecord[] = [];
  const seenAt = new Map<string, number[]>();
  const tasksById = new Map<string, string>();
  for (let it = 1; it <= n; it++) {
    const { tasks } = curriculum.nextBatch(it, config.tasksPerIteration);
    tasks.forEach((t) => tasksById.set(t.id, t.instruction));
    tasks.forEach((t) => {
      const s = seenAt.get(t.id) ?? [];
      if (s[s.length - 1] !== it) s.push(it);
      seenAt.set(t.id, s);
    });
    // Mixed outcomes for most groups, so variations are made.
    curriculum.record(
      it,
      tasks.map((task, i) => ({ task, successes: (it + i) % 5, rollouts: config.groupSize })),
    );
    history.push({
      iteration: it,
      metrics: {
        'curriculum/synthetic_share': curriculum.lastSyntheticShare,
        'curriculum/mean_variance': curriculum.lastMeanVariance,
      },
    });
  }
  return { curriculum, history, seenAt, tasksById };
}

describe('the task bank', () => {
  it('lists every task the curriculum ran, with its instruction, outcomes, V and when it ran, exactly', () => {
    const { curriculum, seenAt, tasksById } = simulate(10);
    const state = curriculum.state();
    const rows = buildTaskBank({ state });
    const ran = rows.filter((r) => !r.pending);
    expect(ran.map((r) => r.id).sort()).toEqual([...seenAt.keys()].sort());
    expect(ran.some((r) => r.origin === 'variation')).toBe(true);
    // Variations of variations are listed with their parent.
    expect(ran.some((r) => r.origin === 'variation' && state.outcomes[r.parent!]?.origin === 'variation')).toBe(true);
    for (const row of ran) {
      const truth = seenAt.get(row.id)!;
      expect(row.instruction, row.id).toBe(tasksById.get(row.id));
      expect(row.iterationsSeen, row.id).toBe(truth.length);
      expect(row.lastSeen, row.id).toBe(truth[truth.length - 1]);
      const o = state.outcomes[row.id];
      expect([row.rollouts, row.successes]).toEqual([o.rollouts, o.successes]);
      expect(row.variance).toBeCloseTo(row.successRate * (1 - row.successRate), 12);
      if (row.origin === 'variation') expect(row.parent).toBeTruthy();
    }
    // Queued variations are listed with their instruction and no rollouts.
    const pending = rows.filter((r) => r.pending);
    expect(pending.map((r) => r.id)).toEqual(state.pending.filter((t) => !(t.id in state.outcomes)).map((t) => t.id));
    for (const row of pending)
      expect([row.instruction, row.rollouts]).toEqual([tasksById.get(row.id) ?? row.instruction, 0]);
  });

  it('shows what an older checkpoint did not record as unknown, never guessed', () => {
    const { curriculum } = simulate(4);
    const state = curriculum.state();
    const old = {
      ...state,
      outcomes: Object.fromEntries(
        Object.entries(state.outcomes).map(([id, o]) => [
          id,
          { rollouts: o.rollouts, successes: o.successes, origin: o.origin, ...(o.parent ? { parent: o.parent } : {}) },
        ]),
      ),
    };
    const rows = buildTaskBank({ state: old as typeof state }).filter((r) => !r.pending);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.instruction === null && r.iterationsSeen === null && r.lastSeen === null)).toBe(true);
  });

  it('keeps the recorded fields across a checkpoint round trip', () => {
    const { curriculum } = simulate(6);
    const copy = curriculumOf(config);
    copy.restore(JSON.parse(JSON.stringify(curriculum.state())));
    expect(buildTaskBank({ state: copy.state() })).toEqual(buildTaskBank({ state: curriculum.state() }));
  });
});

describe('sorting', () => {
  const row = (
    id: string,
    variance: number,
    lastSeen: number | null,
    instruction: string | null = id,
  ): TaskBankRow => ({
    id,
    instruction,
    origin: 'generated',
    parent: null,
    rollouts: 4,
    successes: 2,
    successRate: 0.5,
    variance,
    iterationsSeen: 1,
    lastSeen,
    pending: false,
  });
  const rows = [row('b', 0.1875, 3), row('a', 0.25, null), row('c', 0, 1, null), row('d', 0.25, 2)];

  it('sorts numbers both ways, ties by id, unknown values last', () => {
    expect(sortBank(rows, 'variance', 'descending').map((r) => r.id)).toEqual(['a', 'd', 'b', 'c']);
    expect(sortBank(rows, 'variance', 'ascending').map((r) => r.id)).toEqual(['c', 'b', 'a', 'd']);
    expect(sortBank(rows, 'lastSeen', 'ascending').map((r) => r.id)).toEqual(['c', 'd', 'b', 'a']);
    expect(sortBank(rows, 'lastSeen', 'descending').map((r) => r.id)).toEqual(['b', 'd', 'c', 'a']);
    expect(sortBank(rows, 'instruction', 'ascending').map((r) => r.id)).toEqual(['a', 'b', 'd', 'c']);
    expect(rows.map((r) => r.id)).toEqual(['b', 'a', 'c', 'd']); // not mutated
  });

  it('a header click toggles the direction; a new numeric column starts descending, text ascending', () => {
    expect(nextSort({ key: 'variance', direction: 'descending' }, 'variance')).toEqual({
      key: 'variance',
      direction: 'ascending',
    });
    expect(nextSort({ key: 'variance', direction: 'ascending' }, 'rollouts')).toEqual({
      key: 'rollouts',
      direction: 'descending',
    });
    expect(nextSort({ key: 'variance', direction: 'ascending' }, 'id')).toEqual({ key: 'id', direction: 'ascending' });
  });
});

describe('filtering and paging a large bank', () => {
  const bank: TaskBankRow[] = Array.from({ length: 1007 }, (_, i) => ({
    id: `webshop-lite-v0/t${String(i).padStart(4, '0')}`,
    instruction: i % 2 ? `find a red sofa ${i}` : `buy a lavender shampoo ${i}`,
    origin: i % 10 === 0 ? 'variation' : 'generated',
    parent: i % 10 === 0 ? `webshop-lite-v0/t${String(i + 1).padStart(4, '0')}` : null,
    rollouts: 4,
    successes: i % 5,
    successRate: (i % 5) / 4,
    variance: 0,
    iterationsSeen: 1,
    lastSeen: 1,
    pending: false,
  }));

  it('pages 1,007 tasks 50 at a time, clamping the page to those there are', () => {
    expect(pageOf(bank, 1, 50)).toMatchObject({ page: 1, pages: 21, first: 1, last: 50, total: 1007 });
    const lastPage = pageOf(bank, 21, 50);
    expect([lastPage.first, lastPage.last, lastPage.rows.length]).toEqual([1001, 1007, 7]);
    expect(pageOf(bank, 99, 50).page).toBe(21);
    expect(pageOf(bank, 0, 50).page).toBe(1);
    expect(pageOf([], 3, 50)).toMatchObject({ page: 1, pages: 1, first: 0, last: 0, total: 0 });
    // Sorting applies to the whole bank before paging: the first page holds the largest values.
    const sorted = pageOf(sortBank(bank, 'successes', 'descending'), 1, 50);
    expect(sorted.rows.every((r) => r.successes === 4)).toBe(true);
  });

  it('filters by text in the id, instruction or parent, and by origin', () => {
    expect(filterBank(bank, { text: 'SOFA', origin: '' })).toHaveLength(503);
    expect(filterBank(bank, { text: 't0003', origin: '' }).map((r) => r.id)).toEqual(['webshop-lite-v0/t0003']);
    expect(filterBank(bank, { text: '', origin: 'variation' })).toHaveLength(101);
    expect(filterBank(bank, { text: 't0011', origin: 'variation' }).map((r) => r.id)).toEqual([
      'webshop-lite-v0/t0010',
    ]); // by its parent
  });
});

describe('the curriculum chart series', () => {
  it('takes the share and mean variance of the iterations that have them', () => {
    const history: IterationRecord[] = [
      { iteration: 1, metrics: { 'charts/success_rate': 0.5 } },
      { iteration: 2, metrics: { 'curriculum/synthetic_share': 0.25, 'curriculum/mean_variance': 0.1 } },
      { iteration: 3, metrics: { 'curriculum/synthetic_share': 0.5 } },
    ];
    expect(curriculumSeries(history)).toEqual({ iterations: [2, 3], share: [0.25, 0.5], variance: [0.1, null] });
  });
});
