import { describe, expect, it } from 'vitest';
import { groupEntries, latestGroup, START_HERE_RUNS, startHereConfigs, startHereEngine, startHereSizeFromQuery, cardIterations, groupSummary } from '../../../src/app/state/start-here';
import { START_HERE_TAG, unfinishedRun, type RunEntry } from '../../../src/app/workers/run-list';

describe('the start-here path', () => {
  it('dreams with the shipped learned model when there is one, else with the noisy oracle, named as such', () => {
    expect(startHereEngine(true)).toMatchObject({ llm: 'learned:models/webshop-lite-v0', kind: 'learned' });
    expect(startHereEngine(true).label).toMatch(/learned experience model .*not a chat model/);
    const oracle = startHereEngine(false);
    expect(oracle).toMatchObject({ llm: 'oracle:0.1,0.1', kind: 'oracle' });
    expect(oracle.label).toMatch(/noisy oracle \(ε_R=0\.1, ε_P=0\.1\).*not a learned model/);
  });

  it('builds real, dream and S2R on one tiny preset and seed; S2R may spend a tenth of the baseline\'s real budget', () => {
    const [real, dream, s2r] = startHereConfigs(startHereEngine(false));
    expect([real.mode, dream.mode, s2r.mode]).toEqual(['real', 'dream', 's2r']);
    for (const c of [real, dream, s2r]) {
      expect([c.preset, c.env, c.seed, c.iterations, c.tasksPerIteration, c.groupSize]).toEqual(['webshop-easy', 'webshop-lite-v0', 1, 40, 2, 4]);
      expect(c.evalInterval).toBeGreaterThan(0);
    }
    expect([real.curriculum, dream.curriculum, s2r.curriculum]).toEqual([false, true, true]);
    expect(s2r.s2rRealFraction * s2r.realStepBudget).toBe(real.realStepBudget / 10);
    expect(START_HERE_RUNS.map((r) => r.sentence.length > 20)).toEqual([true, true, true]);
  });

  it('keeps a group together in the run list, finds the newest after a reload, and leaves it out of the Train page\'s resume offer', () => {
    const configs = startHereConfigs(startHereEngine(false));
    const older = groupEntries(configs, 1000);
    const newer = groupEntries(configs, 2000).map((e): RunEntry => ({ ...e, state: 'running' }));
    const train: RunEntry = { ...older[0], runId: 'train-run', tags: [], createdAt: 3000, state: 'paused' };
    const runs = [...newer, ...older, train];
    expect(latestGroup(runs).map((e) => [e.config.mode, e.createdAt])).toEqual([['real', 2000], ['dream', 2000], ['s2r', 2000]]);
    expect(newer.every((e) => e.tags?.includes(START_HERE_TAG) && e.name)).toBe(true);
    expect(new Set(newer.map((e) => e.runId)).size).toBe(3);
    expect(unfinishedRun(runs)?.runId).toBe('train-run');
    expect(unfinishedRun(newer)).toBeNull();
  });

  it('shortens the path from its link (#/start?iterations=N, 1 to 39), and ignores anything else', () => {
    expect(startHereSizeFromQuery('iterations=6')).toEqual({ iterations: 6 });
    for (const q of ['', 'iterations=0', 'iterations=40', 'iterations=400', 'iterations=2.5', 'iterations=x', 'iterations=-3']) expect(startHereSizeFromQuery(q)).toEqual({});
    const short = startHereConfigs(startHereEngine(false), 1, startHereSizeFromQuery('iterations=6'));
    expect(short.map((c) => [c.iterations, c.evalInterval, c.tasksPerIteration])).toEqual([[6, 4, 2], [6, 4, 2], [6, 4, 2]]);
  });

  it('says each card\'s iterations (S2R: its dream phase, then its real iterations) and the group\'s state in one line', () => {
    expect(cardIterations({ mode: 'real', iterations: 3 }, 2)).toBe('2 of 3');
    expect(cardIterations({ mode: 's2r', iterations: 3 }, 1)).toBe('1 of 3 dream');
    expect(cardIterations({ mode: 's2r', iterations: 3 }, 7)).toBe('7 (3 dream + 4 real)');
    expect(groupSummary(['finished', 'running', 'running'])).toBe('1 finished, 2 running.');
    expect(groupSummary(['finished', 'finished', 'finished'])).toMatch(/^All three finished/);
  });
});
