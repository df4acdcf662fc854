import { describe, expect, it } from 'vitest';
import {
  groupEntries,
  latestGroup,
  START_HERE_ENV,
  START_HERE_RUNS,
  startHereConfigs,
  startHereEngine,
  startHereSizeFromQuery,
  cardIterations,
  cardSentence,
  groupSummary,
  s2rNext,
  s2rStopped,
  groupEnv,
  lastTimeKey,
  seedLink,
  START_HERE_DEFAULT,
  START_HERE_ENVS,
  START_HERE_NOT_OFFERED,
  startHereEnv,
  startHereEnvFromQuery,
  startHereRuns,
  WEBARENA_SIZE,
} from '../../../src/app/state/start/start-here';
import { StartHereSession } from '../../../src/app/state/start/start-here.svelte';
import { groupSeconds, LAST_GROUP_KEY, WEBARENA_WORK } from '../../../src/app/state/start/start-here-estimate';
import { DEFAULT_CHOICE, dreamEngine, type EngineChoice } from '../../../src/app/state/setup/engine';
import { START_HERE_TAG, unfinishedRun, type RunEntry } from '../../../src/app/storage/run-list';

describe('the start-here path', () => {
  it("dreams with the engine Train uses: Setup's pick, else the shipped learned model, else the noisy oracle", () => {
    const shipped = { shipped: ['webshop-lite-v0', 'household-v0'] };
    const learned = startHereEngine(null, shipped);
    expect(learned).toMatchObject({ llm: 'learned:models/webshop-lite-v0', kind: 'learned', source: 'default' });
    expect(learned.label).toMatch(/learned experience model .*not a chat model.*the default/);
    expect(learned).toEqual(dreamEngine(null, START_HERE_ENV, shipped));
    const oracle = startHereEngine(null, { shipped: [] });
    expect(oracle).toMatchObject({ llm: 'oracle:0.1,0.1', kind: 'oracle' });
    expect(oracle.label).toMatch(/^noisy oracle \(ε_R=0\.1, ε_P=0\.1\) — teaching option, not a language model /);
    // A language model picked on Setup: the start-here dream uses it too, and names it.
    const picked = (change: Partial<EngineChoice>): EngineChoice => ({ ...structuredClone(DEFAULT_CHOICE), ...change });
    const openai = picked({ kind: 'openai', openai: { baseUrl: 'http://h:1/v1', model: 'm' } });
    const SPEC = 'openai:http://h:1/v1#m';
    expect(startHereEngine(openai, shipped)).toMatchObject({
      llm: SPEC,
      kind: 'openai',
      source: 'chosen',
      label: 'OpenAI-compatible server: m at http://h:1/v1',
    });
    expect(startHereConfigs(startHereEngine(openai, shipped)).map((c) => c.llm)).toEqual([SPEC, SPEC, SPEC]);
    // An incomplete pick: the default instead, and why.
    const webllm = picked({ kind: 'webllm', webllm: { modelId: 'X-q4f32_1-MLC' } });
    expect(startHereEngine(webllm, { ...shipped, webllmCached: false }).label).toMatch(
      /shipped for webshop-lite-v0 — instead of Setup's pick .*not downloaded yet/,
    );
  });

  it("builds real, dream and S2R on one small preset and seed; S2R may spend a tenth of the baseline's real budget", () => {
    const [real, dream, s2r] = startHereConfigs(startHereEngine(null, { shipped: [] }));
    expect([real.mode, dream.mode, s2r.mode]).toEqual(['real', 'dream', 's2r']);
    for (const c of [real, dream, s2r]) {
      expect([c.preset, c.env, c.seed, c.iterations, c.tasksPerIteration, c.groupSize]).toEqual([
        'webshop-easy',
        'webshop-lite-v0',
        1,
        30,
        4,
        8,
      ]);
      expect(c.learningRate).toBe(0.01);
      expect(c.evalInterval).toBeGreaterThan(0);
    }
    expect([real.curriculum, dream.curriculum, s2r.curriculum]).toEqual([false, true, true]);
    expect(s2r.s2rRealFraction * s2r.realStepBudget).toBe(real.realStepBudget / 10);
    expect(START_HERE_RUNS.map((r) => r.sentence.length > 20)).toEqual([true, true, true]);
    // S2R's label states its real budget in steps, as its config has it.
    expect(START_HERE_RUNS[2].name).toBe(
      `S2R (dream, then ${(s2r.s2rRealFraction * s2r.realStepBudget).toLocaleString('en-US')} real steps)`,
    );
    // Once the baseline has finished, S2R's sentence gives its budget as a share of what the baseline really spent.
    expect(cardSentence(START_HERE_RUNS[2], 3892)).toBe(
      'Dream first, then 600 real steps: 15% of the 3,892 real RL spent.',
    );
    expect(cardSentence(START_HERE_RUNS[2], null)).toBe(START_HERE_RUNS[2].sentence);
    expect(cardSentence(START_HERE_RUNS[1], 3892)).toBe(START_HERE_RUNS[1].sentence);
  });

  it("keeps a group together in the run list, finds the newest after a reload, and leaves it out of the Train page's resume offer", () => {
    const configs = startHereConfigs(startHereEngine(null, { shipped: [] }));
    const older = groupEntries(configs, 1000);
    const newer = groupEntries(configs, 2000).map((e): RunEntry => ({ ...e, state: 'running' }));
    const train: RunEntry = { ...older[0], runId: 'train-run', tags: [], createdAt: 3000, state: 'paused' };
    const runs = [...newer, ...older, train];
    expect(latestGroup(runs).map((e) => [e.config.mode, e.createdAt])).toEqual([
      ['real', 2000],
      ['dream', 2000],
      ['s2r', 2000],
    ]);
    expect(newer.every((e) => e.tags?.includes(START_HERE_TAG) && e.name)).toBe(true);
    expect(new Set(newer.map((e) => e.runId)).size).toBe(3);
    expect(unfinishedRun(runs)?.runId).toBe('train-run');
    expect(unfinishedRun(newer)).toBeNull();
  });

  it('shortens the path from its link (#/start?iterations=N, 1 to 29), and ignores anything else', () => {
    expect(startHereSizeFromQuery('iterations=3')).toEqual({ iterations: 3 });
    for (const q of [
      '',
      'iterations=0',
      'iterations=30',
      'iterations=400',
      'iterations=2.5',
      'iterations=x',
      'iterations=-3',
    ])
      expect(startHereSizeFromQuery(q)).toEqual({});
    const short = startHereConfigs(startHereEngine(null, { shipped: [] }), 1, startHereSizeFromQuery('iterations=3'));
    expect(short.map((c) => [c.iterations, c.evalInterval, c.tasksPerIteration])).toEqual([
      [3, 2, 4],
      [3, 2, 4],
      [3, 2, 4],
    ]);
    // Another seed for the measurements over seeds (the button's is 1).
    expect(startHereSizeFromQuery('seed=3&iterations=2')).toEqual({ iterations: 2, seed: 3 });
    expect(
      startHereConfigs(startHereEngine(null, { shipped: [] }), 1, startHereSizeFromQuery('seed=3')).map((c) => c.seed),
    ).toEqual([3, 3, 3]);
    for (const q of ['seed=-1', 'seed=x', 'seed=1e3', 'seed=99999999']) expect(startHereSizeFromQuery(q)).toEqual({});
  });

  it("says each card's iterations (S2R: its dream phase, then its real iterations) and the group's state in one line", () => {
    expect(cardIterations({ mode: 'real', iterations: 3 }, 2)).toBe('2 of 3');
    expect(cardIterations({ mode: 's2r', iterations: 3 }, 1)).toBe('1 of 3 dream');
    expect(cardIterations({ mode: 's2r', iterations: 3 }, 7)).toBe('7 (3 dream + 4 real)');
    expect(groupSummary(['finished', 'running', 'running'])).toBe('1 finished, 2 running.');
    expect(groupSummary(['finished', 'finished', 'finished'])).toMatch(/^All three finished/);
  });

  it('has S2R wait for the dream, continue from its final checkpoint, or stop when the dream ended early', () => {
    for (const state of ['starting', 'running', 'paused'] as const) expect(s2rNext(state)).toBe('wait');
    expect(s2rNext('finished')).toBe('continue');
    for (const state of ['stopped', 'error', 'idle', undefined] as const) expect(s2rNext(state)).toBe('stop');
    expect(s2rStopped('error')).toBe(
      'The dream failed before its last iteration: S2R has no dream to continue from. Train the three again.',
    );
    expect(s2rStopped('stopped')).toMatch(/^The dream was stopped before its last iteration/);
    expect(s2rStopped(undefined)).toMatch(/^The group has no dream run/);
    // The same configs but the mode: S2R's dream phase is the dream run (core s2r-from-dream.ts checks it).
    const [, dream, s2r] = startHereConfigs(startHereEngine(null, { shipped: [] }));
    expect({ ...s2r, mode: 'dream' }).toEqual(dream);
    expect(groupSummary(['running', 'finished', 'waiting'])).toBe('1 running, 1 finished, 1 waiting.');
  });
});

describe('the choice of environment', () => {
  const oracle = () => startHereEngine(null, { shipped: [] });

  it('offers webshop first, as the default, and each environment its own preset and size', () => {
    expect(START_HERE_ENVS.map((e) => [e.env, e.preset])).toEqual([
      ['webshop-lite-v0', 'webshop-easy'],
      ['webarena-lite-v0', 'webarena-easy'],
    ]);
    expect(START_HERE_DEFAULT).toBe(START_HERE_ENVS[0]);
    expect(START_HERE_ENV).toBe('webshop-lite-v0');
    for (const choice of START_HERE_ENVS) {
      const configs = startHereConfigs(oracle(), 1, {}, choice);
      expect(configs.map((c) => [c.mode, c.env, c.preset])).toEqual([
        ['real', choice.env, choice.preset],
        ['dream', choice.env, choice.preset],
        ['s2r', choice.env, choice.preset],
      ]);
      for (const c of configs) {
        expect(c.iterations).toBe(choice.size.iterations);
        expect(c.realStepBudget).toBe(choice.size.realStepBudget);
        expect([c.tasksPerIteration, c.groupSize, c.learningRate]).toEqual([4, 8, 0.01]);
      }
      // The cards state the environment's own budgets.
      const [real, , s2r] = startHereRuns(choice);
      expect(real.realBudget).toBe(choice.size.realStepBudget);
      expect(s2r.realBudget).toBe(configs[2].s2rRealFraction * configs[2].realStepBudget);
      expect(s2r.name).toBe(`S2R (dream, then ${s2r.realBudget.toLocaleString('en-US')} real steps)`);
    }
    expect([WEBARENA_SIZE.iterations, WEBARENA_SIZE.realStepBudget]).toEqual([20, 6000]);
    expect(startHereRuns(startHereEnv('webarena-lite-v0'))[2].name).toBe('S2R (dream, then 600 real steps)');
    expect(() => startHereEnv('household-v0')).toThrow(/does not offer 'household-v0': choose one of webshop-lite-v0/);
    expect(START_HERE_NOT_OFFERED).toMatch(/^Household is not offered/);
  });

  it('names another environment in its runs, keeps the link shorter only, and links its seeds with env=', () => {
    const webarena = startHereEnv('webarena-lite-v0');
    const entries = groupEntries(startHereConfigs(oracle(), 1, {}, webarena), 5000);
    expect(entries.map((e) => e.name)).toEqual([
      'Real RL (baseline) · mini-WebArena',
      'Dream (0 real steps) · mini-WebArena',
      'S2R (dream, then 600 real steps) · mini-WebArena',
    ]);
    expect(groupEnv(entries[0].config.env)).toBe(webarena);
    expect(groupEnv('household-v0')).toBe(START_HERE_DEFAULT);
    // A group of either environment is the newest group after a reload.
    const webshop = groupEntries(startHereConfigs(oracle()), 4000);
    expect(latestGroup([...webshop, ...entries]).map((e) => e.config.env)).toEqual(Array(3).fill('webarena-lite-v0'));
    const short = startHereConfigs(oracle(), 1, startHereSizeFromQuery('iterations=2&seed=3'), webarena);
    expect(short.map((c) => [c.iterations, c.seed, c.env])).toEqual(Array(3).fill([2, 3, 'webarena-lite-v0']));
    expect(startHereEnvFromQuery('env=webarena-lite-v0&seed=2')).toBe(webarena);
    for (const q of ['', 'env=household-v0', 'env=x']) expect(startHereEnvFromQuery(q)).toBeNull();
    expect(seedLink(START_HERE_DEFAULT)).toBe('#/start?seed=S');
    expect(seedLink(webarena)).toBe('#/start?env=webarena-lite-v0&seed=S');
    expect(startHereEnvFromQuery(seedLink(webarena).slice('#/start?'.length))).toBe(webarena);
  });

  it('keeps the choice in the session: webshop by default, another by choose or link, with its own estimate', () => {
    const session = new StartHereSession(false);
    expect(session.choice).toBe(START_HERE_DEFAULT);
    expect(session.runs).toEqual(START_HERE_RUNS);
    expect(session.iterations({})).toBe(30);
    session.clock.score = 500_000;
    const webshopSeconds = session.clock.expectedSeconds(30);
    session.choose('webarena-lite-v0');
    expect(session.choice.env).toBe('webarena-lite-v0');
    expect(session.iterations({})).toBe(20);
    expect(session.iterations({ iterations: 2 })).toBe(2);
    expect(session.iterations({ iterations: 200 })).toBe(session.choice.size.iterations);
    expect(session.clock.expectedSeconds(20)).toBeCloseTo(groupSeconds(WEBARENA_WORK, 20, 500_000, 1));
    expect(() => session.choose('household-v0')).toThrow(/does not offer/);
    expect(session.choice.env).toBe('webarena-lite-v0');
    session.chooseFromLink('seed=2');
    expect(session.choice.env).toBe('webarena-lite-v0');
    session.chooseFromLink('env=webshop-lite-v0');
    expect(session.choice).toBe(START_HERE_DEFAULT);
    expect(session.clock.expectedSeconds(30)).toBe(webshopSeconds);
    expect(lastTimeKey(START_HERE_DEFAULT)).toBe(LAST_GROUP_KEY);
    expect(lastTimeKey(startHereEnv('webarena-lite-v0'))).toBe(`${LAST_GROUP_KEY}.webarena-lite-v0`);
  });
});
