/**
 * EpisodeStore (fake-indexeddb): traces of a run by iteration, summaries for the list, only the
 * last `keep` iterations kept, a repeated iteration replaces its rows, runs kept apart.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { EpisodeStore, summarize } from '../../../src/app/storage/episode-store';
import type { EpisodeTrace } from '../../../src/core/train/trace';

function trace(iteration: number, index: number, over: Partial<EpisodeTrace> = {}): EpisodeTrace {
  return {
    format: 'dreamgym-episode-trace/1',
    iteration,
    index,
    episodeId: `${iteration}/0/${index}`,
    groupId: `${iteration}/0`,
    phase: 'dream',
    experienceModel: 'oracle (ε_R=0.1, ε_P=0.1)',
    task: {
      id: 'webshop-lite-v0:1:0.20',
      env: 'webshop-lite-v0',
      instruction: 'find a red shoe',
      difficulty: 0.2,
      origin: 'generated',
      seed: 1,
    },
    success: index % 2 === 0,
    return: index % 2 === 0 ? 1 : 0,
    steps: [
      {
        observation: 'search',
        admissible: ['search[red shoe]'],
        action: 'search[red shoe]',
        actionIndex: 0,
        probabilities: [1],
        reward: 0,
        terminated: false,
        truncated: false,
        valid: true,
        reasoning: 'r',
      },
      {
        observation: 'results',
        admissible: ['click[a]', 'click[b]'],
        action: 'click[b]',
        actionIndex: 1,
        probabilities: [0.3, 0.7],
        reward: 0,
        terminated: false,
        truncated: false,
        valid: false,
        dreamInvalid: index === 1,
      },
    ],
    final: { observation: 'results', admissible: ['click[a]', 'click[b]'] },
    ...over,
  };
}

describe('EpisodeStore', () => {
  it('stores, lists and loads traces; keeps the last iterations; replaces a repeated iteration', async () => {
    const store = new EpisodeStore('episodes-test-1', 3);
    for (let it = 1; it <= 5; it++) await store.put('run-a', it, [trace(it, 0), trace(it, 1)]);
    await store.put('run-b', 1, [trace(1, 0)]);
    const listed = await store.list('run-a');
    expect(listed.map((e) => `${e.iteration}-${e.index}`)).toEqual(['3-0', '3-1', '4-0', '4-1', '5-0', '5-1']);
    expect(listed[1]).toMatchObject({
      success: false,
      length: 2,
      refusedSteps: 0,
      dreamInvalidSteps: 1,
      instruction: 'find a red shoe',
      phase: 'dream',
    });
    expect(listed[0]).toMatchObject({ refusedSteps: 1, dreamInvalidSteps: 0 });
    expect(await store.get('run-a', 2, 0)).toBeNull();
    expect(await store.get('run-a', 5, 1)).toEqual(trace(5, 1));
    // The run resumed after a crash repeats iteration 5 with one episode: the old rows go.
    await store.put('run-a', 5, [trace(5, 0, { success: false })]);
    const again = await store.list('run-a');
    expect(again.map((e) => `${e.iteration}-${e.index}`)).toEqual(['3-0', '3-1', '4-0', '4-1', '5-0']);
    expect(again[4].success).toBe(false);
    expect(await store.list('run-b')).toHaveLength(1);
    await store.remove('run-a');
    expect(await store.list('run-a')).toEqual([]);
    expect(await store.list('run-b')).toHaveLength(1);
    await store.close();
  });

  it('summaries carry what the filters need', () => {
    expect(summarize('r', trace(2, 1))).toEqual({
      runId: 'r',
      iteration: 2,
      index: 1,
      episodeId: '2/0/1',
      phase: 'dream',
      experienceModel: 'oracle (ε_R=0.1, ε_P=0.1)',
      taskId: 'webshop-lite-v0:1:0.20',
      instruction: 'find a red shoe',
      origin: 'generated',
      success: false,
      return: 0,
      length: 2,
      refusedSteps: 0,
      dreamInvalidSteps: 1,
    });
  });
});
