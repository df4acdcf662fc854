import { describe, expect, it } from 'vitest';
import { groupEntries, latestGroup, START_HERE_RUNS, startHereConfigs, startHereEngine } from '../../../src/app/state/start-here';
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
});
