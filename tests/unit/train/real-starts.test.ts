/**
 * Dreams that start from real states (src/core/experience/real-starts.ts, rollout.ts): a share of
 * a dream's tasks begin at a recorded step of a real episode, its real prefix as the history the
 * model and the policy see, and end at their horizon.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getEnvDefinition, makeEnv } from '../../../src/core/envs/registry';
import { makeBaselinePolicy, rolloutEpisode } from '../../../src/core/data/rollout';
import { DreamEnv, makeDreamEnv } from '../../../src/core/experience/dream-env';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import { RealStartPool, RealStartsModel } from '../../../src/core/experience/real-starts';
import type { DreamContext, ExperienceModel, Prediction } from '../../../src/core/experience/types';
import { initBackend } from '../../../src/core/tfjs/backend';
import { CandidatePolicy } from '../../../src/core/policy/policy';
import { Rng } from '../../../src/core/rng';
import { getPreset, validateConfig } from '../../../src/core/train/config';
import { EnvPool, startEpisodes, stepEpisodes } from '../../../src/core/train/rollout';
import { buildRunParts } from '../../../src/core/train/run-parts';
import { RegisteredEnvSource } from '../../../src/core/train/task-source';
import { acceptedActionsBefore, replayInRealEnv, type EpisodeTrace } from '../../../src/core/train/trace';
import type { Trajectory } from '../../../src/core/types';

const ENV = 'household-v0';

beforeAll(async () => {
  await initBackend('wasm');
});

const policies: CandidatePolicy[] = [];
afterEach(() => {
  for (const p of policies.splice(0)) p.dispose();
});

async function expertEpisodes(seeds: number[]): Promise<Trajectory[]> {
  const definition = getEnvDefinition(ENV);
  const out: Trajectory[] = [];
  for (const seed of seeds)
    out.push(
      await rolloutEpisode(makeEnv(ENV), makeBaselinePolicy('expert'), {
        seed,
        task: definition.generateTask(seed, 0),
      }),
    );
  return out;
}

/** The oracle, keeping the history each call was asked with. */
class HistoryRecorder implements ExperienceModel {
  readonly label = 'oracle recording histories (test double)';
  private readonly inner = new NoisyOracleModel(ENV, { epsilonReward: 0, epsilonTransition: 0, seed: 1 });
  readonly histories: string[][] = [];
  initial(): Promise<never> {
    return Promise.reject(new Error('not asked: every task here has a real or recorded start'));
  }
  next(ctx: DreamContext): Promise<Prediction> {
    this.histories.push(ctx.history.map((s) => s.action));
    return this.inner.next(ctx);
  }
}

describe('a pool of real starts', () => {
  it('gives a recorded state with the real steps before it, the same for the same stream', async () => {
    const recorded = await expertEpisodes([100, 101, 102]);
    const pool = new RealStartPool(recorded.map((t) => ({ task: t.task, steps: t.steps })));
    expect(pool.size).toBe(3);
    const a = pool.pick(Rng.fromSeed(5, 'starts'));
    const b = pool.pick(Rng.fromSeed(5, 'starts'));
    expect(b).toEqual(a);
    const episode = recorded[a.episode];
    expect(a.task).toBe(episode.task);
    expect(a.history.map((s) => s.action)).toEqual(episode.steps.slice(0, a.fromStep).map((s) => s.action));
    expect(a.state.text).toBe(episode.steps[a.fromStep].observation);
    expect(a.state.admissible).toEqual(episode.steps[a.fromStep].admissible);
    const fromSteps = new Set(Array.from({ length: 60 }, (_, i) => pool.pick(Rng.fromSeed(i, 's')).fromStep));
    expect(fromSteps.size).toBeGreaterThan(2); // every depth, not only first states
  });

  it('leaves out states with nothing to do, and an episode without any', () => {
    const task = getEnvDefinition(ENV).generateTask(1, 0);
    const step = (admissible: string[]) => ({ observation: 'o', admissible, action: 'a', reward: 0, valid: true });
    const pool = new RealStartPool([
      { task, steps: [step([]), step(['look']), step([])] },
      { task, steps: [step([])] },
    ]);
    expect(pool.size).toBe(1);
    for (let i = 0; i < 20; i++) expect(pool.pick(Rng.fromSeed(i, 's')).fromStep).toBe(1);
    expect(() => new RealStartPool([]).pick(Rng.fromSeed(1, 's'))).toThrow(/no real episode/);
  });
});

describe('a dream begun at a recorded state', () => {
  it('shows the model the real prefix as its history; a real env refuses such a start', async () => {
    const [recorded] = await expertEpisodes([100]);
    const from = 2;
    const model = new HistoryRecorder();
    const env = new DreamEnv(model, { envId: ENV });
    const start = { history: recorded.steps.slice(0, from), state: { ...recorded.steps[from] } };
    const obs = await env.reset({
      seed: 0,
      task: recorded.task,
      start: { history: start.history, state: { text: start.state.observation, admissible: start.state.admissible } },
    });
    expect(obs.text).toBe(recorded.steps[from].observation);
    const result = await env.step(recorded.steps[from].action);
    expect(model.histories[0]).toEqual(recorded.steps.slice(0, from).map((s) => s.action));
    expect(result.text).toBe(recorded.steps[from + 1]?.observation ?? recorded.final_observation);
    await expect(
      makeEnv(ENV).reset({
        seed: 0,
        task: recorded.task,
        start: { history: [], state: { text: 'x', admissible: [] } },
      }),
    ).rejects.toThrow(/only a dream/);
  });
});

describe('a rollout with real starts', () => {
  async function rollOut(share: number, horizon: number) {
    const recorded = await expertEpisodes([100, 101, 102, 103]);
    const pool = new RealStartPool(recorded.map((t) => ({ task: t.task, steps: t.steps })));
    const model = new RealStartsModel(new HistoryRecorder(), pool);
    const config = validateConfig({ ...getPreset('household-easy'), mode: 'dream' });
    const tasks = [0, 1, 2, 3].map((seed) => getEnvDefinition(ENV).generateTask(seed, 0));
    const given = tasks.slice();
    const envs = new EnvPool(() => makeDreamEnv(model, { envId: ENV, stepLimit: 30 }));
    const { episodes } = await startEpisodes(tasks, {
      iteration: 1,
      groupSize: 2,
      phase: 'dream',
      source: new RegisteredEnvSource(config, model),
      envs,
      rng: Rng.fromSeed(1, 'tasks'),
      realStarts: { pool, share, horizon, stepLimit: 30, rng: Rng.fromSeed(1, 'real-starts') },
    });
    const policy = new CandidatePolicy({ seed: 1 });
    policies.push(policy);
    await stepEpisodes(episodes, {
      policy,
      rng: Rng.fromSeed(1, 'sample'),
      phase: 'dream',
      stepLimit: 30,
      stepBudget: Infinity,
    });
    return { episodes, tasks, given, recorded };
  }

  it('begins each group at one recorded state of its own task, and ends it at the horizon', async () => {
    const { episodes, tasks, recorded } = await rollOut(1, 2);
    const recordedIds = new Set(recorded.map((t) => t.task.id));
    for (const task of tasks) expect(recordedIds.has(task.id)).toBe(true);
    for (let t = 0; t < tasks.length; t++) {
      const [a, b] = episodes.slice(2 * t, 2 * t + 2);
      expect(a.realStart).toEqual(b.realStart);
      expect(a.task).toBe(tasks[t]);
      const fromStep = a.realStart!.fromStep;
      const prefix = recorded.find((r) => r.task.id === tasks[t].id)!.steps.slice(0, fromStep);
      // The policy's history starts with the real prefix.
      expect(a.actions.slice(0, fromStep)).toEqual(prefix.map((s) => s.action));
      for (const e of [a, b]) {
        expect(e.record.length).toBeLessThanOrEqual(2);
        expect(e.done).toBe(true);
        const last = e.record[e.record.length - 1];
        if (!last.terminated) expect(last.truncated).toBe(true);
      }
    }
  });

  it('keeps the real prefix for traces, so Inspect replays it before asking the real env', async () => {
    const { episodes, recorded } = await rollOut(1, 2);
    const e = episodes[0];
    const source = recorded.find((r) => r.task.id === e.task.id)!;
    const prefix = source.steps.slice(0, e.realStart!.fromStep);
    expect(e.realStart!.prefix).toEqual(
      prefix.map((s) => ({ observation: s.observation, action: s.action, valid: s.valid })),
    );
    const trace = {
      task: e.task,
      realStart: { fromStep: e.realStart!.fromStep, prefix: e.realStart!.prefix },
      steps: e.record.map((s) => ({ action: s.action, valid: s.valid })),
    } as unknown as EpisodeTrace;
    expect(acceptedActionsBefore(trace, 0)).toEqual(prefix.map((s) => s.action));
    // The real env, replaying that prefix, is where the dream began: the same observation.
    const outcome = await replayInRealEnv(ENV, e.task, acceptedActionsBefore(trace, 0), e.record[0].action);
    expect(outcome.kind).toBe('real');
    if (outcome.kind === 'real') {
      expect(outcome.refused).toEqual([]);
      expect(outcome.before.text).toBe(e.record[0].observation);
    }
  });

  it('leaves the tasks as given at share 0', async () => {
    const { episodes, tasks, given } = await rollOut(0, 2);
    expect(tasks).toEqual(given);
    expect(episodes.every((e) => e.realStart === undefined)).toBe(true);
  });
});

describe('real-start settings', () => {
  it('are ignored by a real run (a restored agent evaluates so), and refuse a dream with nothing to begin at', async () => {
    expect(validateConfig({ ...getPreset('household-easy'), mode: 'real', realStartShare: 0.5 }).realStartShare).toBe(
      0.5,
    );
    // Nothing real to begin at: every task begins at its first state.
    const parts = await buildRunParts(
      { env: ENV, llm: 'oracle:0,0', seed: 1, mode: 'dream', realStartShare: 0.5 },
      { buffer: undefined },
    );
    expect(parts.experienceModel?.realStarts).toBeUndefined();
  });
});
