import 'fake-indexeddb/auto';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { ConfigError, getPreset, validateConfig, type TrainConfig } from '../../../src/core/train/config';
import { CheckpointMismatchError, Trainer } from '../../../src/core/train/loop';
import type { TaskSource } from '../../../src/core/train/task-source';
import {
  IndexedDbCheckpointStore,
  deserializeCheckpoint,
  serializeCheckpoint,
} from '../../../src/core/train/checkpoint';
import { CandidatePolicy } from '../../../src/core/policy/policy';
import { TimeLimit, type Env } from '../../../src/core/envs/env';
import { Rng } from '../../../src/core/rng';
import type { DreamStepReport, Observation, StepResult, Task } from '../../../src/core/types';
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import type { EpisodeTrace } from '../../../src/core/train/trace';
import { IterationStoppedError } from '../../../src/core/train/rollout';
import { runAll, smallWebshop, useWasmBackend } from './fixtures';

useWasmBackend();

/** A small, fast config: 4 iterations of 2 tasks × 4 rollouts, evaluated every second one. */
function small(overrides: Partial<TrainConfig> = {}): TrainConfig {
  return smallWebshop({ iterations: 4, evalInterval: 2, evalEpisodes: 6, finalEvalEpisodes: 6, ...overrides });
}

describe('Trainer (real mode)', () => {
  it.each(['grpo', 'ppo', 'reinforce'] as const)(
    '%s: the same seed gives identical metrics twice, with every §5 metric present',
    async (algo) => {
      const a = new Trainer(small({ algo }));
      const b = new Trainer(small({ algo }));
      const [ma, mb] = [await runAll(a), await runAll(b)];
      expect(ma).toEqual(mb);
      const first = JSON.parse(ma[1]).metrics;
      for (const key of [
        'charts/success_rate',
        'charts/episodic_return',
        'charts/episode_length',
        'losses/policy_loss',
        'losses/entropy',
        'losses/approx_kl',
        'budget/real_steps',
        'budget/dream_steps',
        'eval/success_rate',
        'eval/score',
      ]) {
        expect(first, key).toHaveProperty([key]);
      }
      if (algo === 'ppo') expect(first).toHaveProperty(['losses/value_loss']);
      a.dispose();
      b.dispose();
    },
  );

  it('resuming from the checkpoint of iteration k gives the same iteration k+1 as an uninterrupted run', async () => {
    const uninterrupted = new Trainer(small({ algo: 'ppo' }));
    const full = await runAll(uninterrupted);
    const first = new Trainer(small({ algo: 'ppo' }));
    await first.runIteration();
    await first.runIteration();
    const store = new IndexedDbCheckpointStore('resume-test');
    await store.save(await first.state());
    first.dispose();
    const resumed = await Trainer.restore((await store.load())!);
    expect(resumed.iteration).toBe(2);
    const rest = await runAll(resumed);
    expect(rest).toEqual(full.slice(2));
    uninterrupted.dispose();
    resumed.dispose();
    await store.remove();
    expect(await store.load()).toBeNull();
    await store.close();
  });

  it('evaluates the final policy at the last iteration, whatever the interval (also with evalInterval 0)', async () => {
    for (const [evalInterval, iterations, expected] of [
      [2, 3, [2, 3]],
      [0, 2, [2]],
      [10, 3, [3]],
    ] as const) {
      const trainer = new Trainer(small({ evalInterval, iterations, finalEvalEpisodes: 5 }));
      const records = (await runAll(trainer)).map((l) => JSON.parse(l));
      expect(records.filter((r) => 'eval/success_rate' in r.metrics).map((r) => r.iteration)).toEqual(expected);
      expect(trainer.finalEvaluation).toMatchObject({ iteration: iterations, result: { episodes: 5 } });
      trainer.dispose();
    }
  });

  it('never exceeds the real-step budget', async () => {
    const trainer = new Trainer(small({ realStepBudget: 37, iterations: 10 }));
    const lines = await runAll(trainer);
    expect(trainer.realSteps).toBe(37);
    expect(JSON.parse(lines[lines.length - 1]).metrics['budget/real_steps']).toBe(37);
    trainer.dispose();
  });

  it('keeps tf.memory().numTensors flat across iterations', async () => {
    const trainer = new Trainer(small({ algo: 'ppo', evalInterval: 0, iterations: 8 }));
    await trainer.runIteration();
    await trainer.runIteration();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) await trainer.runIteration();
    expect(tf.memory().numTensors).toBe(before);
    trainer.dispose();
  });

  it('GRPO klCoef: a KL penalty to the initial policy, rebuilt from the seed (a resumed run continues exactly)', async () => {
    const run = async (klCoef: number) => {
      const trainer = new Trainer(small({ klCoef, iterations: 3, evalInterval: 0 }));
      const lines = (await runAll(trainer)).map((l) => JSON.parse(l).metrics as Record<string, number>);
      trainer.dispose();
      return lines;
    };
    expect((await run(0))[0]).not.toHaveProperty(['losses/ref_kl']);
    const weak = await run(1e-6);
    const strong = await run(5);
    // The first update starts at the reference (its 4 epochs move away a little); later ones are held near it.
    expect(weak[0]['losses/ref_kl']).toBeLessThan(1e-3);
    expect(weak[2]['losses/ref_kl']).toBeGreaterThan(0);
    expect(strong[2]['losses/ref_kl']).toBeLessThan(weak[2]['losses/ref_kl']);

    const first = new Trainer(small({ klCoef: 5, iterations: 3, evalInterval: 0 }));
    await first.runIteration();
    const resumed = await Trainer.restore(await first.state());
    first.dispose();
    expect((await runAll(resumed)).map((l) => JSON.parse(l).metrics)).toEqual(strong.slice(1));
    resumed.dispose();
    expect(() => validateConfig({ ...small(), algo: 'ppo', klCoef: 0.1 })).toThrow(
      /'klCoef' 0\.1 is GRPO's KL penalty/,
    );
  });

  it('reports perf/* only with an injected clock (metrics stay reproducible without one)', async () => {
    let ms = 0;
    const timed = new Trainer(small({ iterations: 1, evalInterval: 0 }), { clock: () => (ms += 250) });
    const plain = new Trainer(small({ iterations: 1, evalInterval: 0 }));
    const [a, b] = [(await timed.runIteration()).metrics, (await plain.runIteration()).metrics];
    expect(a['perf/iteration_seconds']).toBe(0.25);
    expect(a['perf/steps_per_second']).toBe(timed.realSteps / 0.25);
    expect(Object.keys(b).filter((k) => k.startsWith('perf/'))).toEqual([]);
    const { ['perf/iteration_seconds']: _s, ['perf/steps_per_second']: _r, ...rest } = a;
    expect(rest).toEqual(b);
    timed.dispose();
    plain.dispose();
  });

  it('explains a bad preset, a malformed value and a checkpoint of another policy shape', async () => {
    expect(() => getPreset('webshop-hard')).toThrow(
      "Unknown preset 'webshop-hard'. Valid presets: webshop-easy, webshop-medium, household-easy, household-medium, webarena-easy, webarena-hard, webshop-llm-demo, household-llm-demo.",
    );
    expect(() =>
      validateConfig({ ...getPreset('webshop-easy'), learningRate: -1, algo: 'dqn', groupSize: 2.5 }),
    ).toThrow(ConfigError);
    try {
      validateConfig({ ...getPreset('webshop-easy'), learningRate: -1, algo: 'dqn', groupSize: 2.5, colour: 'red' });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/'learningRate' must be within 1e-7\.\.1; got -1/);
      expect(message).toMatch(/'algo' must be one of grpo, ppo, reinforce; got "dqn"/);
      expect(message).toMatch(/'groupSize' must be an integer in 1\.\.256; got 2\.5/);
      expect(message).toMatch(/unknown setting 'colour'/);
    }
    const trainer = new Trainer(small());
    const state = await trainer.state();
    const other = new CandidatePolicy({ embeddingDim: 8, hidden: 16 });
    state.policy = await other.getWeights();
    await expect(Trainer.restore(state)).rejects.toThrow(CheckpointMismatchError);
    await expect(Trainer.restore(state)).rejects.toThrow(/does not fit this policy/);
    const { manifest, blob } = serializeCheckpoint(await trainer.state());
    expect(() => deserializeCheckpoint(manifest, blob.slice(1))).toThrow(/truncated/);
    other.dispose();
    trainer.dispose();
  });
});

// ---- A dream-only task source (an imported domain's shape): scripted tasks and envs, no registered env ----

const BUTTONS = ['press red', 'press blue', 'press green'];
const buttonTask = (colour: string): Task => ({
  id: `fake:buttons:${colour}`,
  env: 'fake:buttons',
  instruction: `press the ${colour} button`,
  difficulty: 0,
  origin: 'imported',
});

/**
 * Pressing the task's button succeeds; another button does nothing; 'press green' is an unusable
 * dreamed answer (info.dream.invalid). The 'none' task starts with nothing to choose from.
 */
const report = (over: Partial<DreamStepReport> = {}): DreamStepReport => ({
  predicted: true,
  reasoning: 'scripted',
  tokens: 7,
  cached: false,
  invalid: false,
  ...over,
});
class ButtonsEnv implements Env {
  readonly id = 'fake:buttons';
  private task: Task | null = null;
  async reset({ task }: { seed: number; task?: Task }): Promise<Observation> {
    this.task = task!;
    return {
      text: 'Three buttons: red, blue, green.',
      admissible: task!.id.endsWith(':none') ? [] : BUTTONS.slice(),
      task: task!,
    };
  }
  async step(action: string): Promise<StepResult> {
    const task = this.task!;
    if (action === 'press green') {
      return {
        text: 'Three buttons: red, blue, green.',
        admissible: BUTTONS.slice(),
        task,
        reward: 0,
        terminated: false,
        truncated: false,
        info: {
          valid: false,
          success: false,
          steps: 0,
          dream: report({ invalid: true, invalidReason: 'scripted', reasoning: 'garbled' }),
        },
      };
    }
    const hit = action === `press ${task.id.split(':')[2]}`;
    return {
      text: hit ? 'Done.' : 'Nothing happens.',
      admissible: hit ? [] : BUTTONS.slice(),
      task,
      reward: hit ? 1 : 0,
      terminated: hit,
      truncated: false,
      info: { valid: true, success: hit, steps: 0, dream: report({ cached: hit }) },
    };
  }
}

function buttonsSource(tasks: Task[] = [buttonTask('red'), buttonTask('blue')]) {
  const calls: { iteration: number; count: number }[] = [];
  let envsMade = 0;
  const source: TaskSource = {
    envId: 'fake:buttons',
    stepLimit: 3,
    hasRealEnv: false,
    curriculum: null,
    chooseTasks: (iteration, count, phase, rng) => {
      calls.push({ iteration, count });
      expect(phase).toBe('dream');
      expect(rng).toBeInstanceOf(Rng);
      return Array.from({ length: count }, () => tasks[rng.int(0, tasks.length - 1)]);
    },
    replacement: () => null,
    makeEnv: () => {
      envsMade++;
      return new TimeLimit(new ButtonsEnv(), 3);
    },
    recordOutcomes: async () => {},
    evaluate: () => Promise.reject(new Error("'fake:buttons' has no real env")),
  };
  return { source, calls, envsMade: () => envsMade };
}

const dreamOnlyConfig = (overrides: Partial<TrainConfig> = {}) =>
  validateConfig({
    ...getPreset('webshop-easy'),
    env: 'fake:buttons',
    mode: 'dream',
    evalInterval: 0,
    iterations: 2,
    tasksPerIteration: 2,
    groupSize: 3,
    ...overrides,
  });

describe('Trainer with a dream-only task source (no registered env)', () => {
  it("plays the source's tasks in its envs under its step limit, never learns from unusable steps, and writes buffer records of its env", async () => {
    const { source, calls, envsMade } = buttonsSource();
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const traces: EpisodeTrace[] = [];
    const learned: { maxSteps: number | undefined; action: number }[][] = [];
    const trainer = new Trainer(dreamOnlyConfig(), {
      source,
      buffer,
      now: () => 9,
      runId: 'buttons-run',
      onEpisodes: (episodes, phase) => {
        expect(phase).toBe('dream');
        traces.push(...episodes);
      },
      onBatch: (batch) => {
        learned.push(batch.steps.map((s) => ({ maxSteps: s.state.maxSteps, action: s.action })));
      },
    });
    expect(trainer.source).toBe(source);
    expect(trainer.stepLimit).toBe(3);
    const records = [await trainer.runIteration(), await trainer.runIteration()];
    expect(trainer.finished).toBe(true);
    expect(calls).toEqual([
      { iteration: 1, count: 2 },
      { iteration: 2, count: 2 },
    ]);
    expect(envsMade()).toBe(6); // tasks × group, reused across iterations

    expect(traces).toHaveLength(12);
    for (const e of traces) {
      expect(['fake:buttons:red', 'fake:buttons:blue']).toContain(e.task.id);
      expect(e.steps.length).toBeGreaterThan(0);
      expect(e.steps.length).toBeLessThanOrEqual(3);
      expect(e.success).toBe(e.steps.some((s) => s.action === `press ${e.task.id.split(':')[2]}`));
    }
    const allSteps = traces.flatMap((e) => e.steps);
    const unusable = allSteps.filter((s) => s.dreamInvalid).length;
    expect(unusable).toBeGreaterThan(0); // the seeded policy presses green sometimes
    expect(learned.flat()).toHaveLength(allSteps.length - unusable);
    expect(learned.flat().every((s) => s.maxSteps === 3)).toBe(true);

    expect(trainer.realSteps).toBe(0);
    expect(trainer.dreamSteps).toBe(allSteps.length);
    const last = records[1].metrics;
    expect(last['budget/real_steps']).toBe(0);
    expect(last['budget/dream_steps']).toBe(allSteps.length);
    expect(last['dream/invalid_rate']).toBeGreaterThan(0);
    // Read from each step's info.dream: tokens per answer and cache hits (the scripted hits are the winning presses).
    expect(last['dream/tokens_per_transition']).toBe(7);
    expect(last['dream/cache_hit_rate']).toBeGreaterThan(0);
    expect(last).not.toHaveProperty(['eval/success_rate']);
    expect(Number.isFinite(last['losses/policy_loss'])).toBe(true);

    const transitions = await buffer.store.listTransitions();
    expect(transitions).toHaveLength(allSteps.length);
    expect(new Set(transitions.map((t) => `${t.env} ${t.source} ${t.runId}`))).toEqual(
      new Set(['fake:buttons dream buttons-run']),
    );
    expect(transitions.filter((t) => !t.valid).length).toBeGreaterThanOrEqual(unusable);

    await expect(trainer.evaluate(4)).rejects.toThrow(/'fake:buttons' has no real env/);
    trainer.dispose();
  });

  it('is deterministic in the seed, and an episode that starts with nothing to choose from ends at once', async () => {
    const run = async () => {
      const trainer = new Trainer(dreamOnlyConfig({ seed: 5 }), { source: buttonsSource().source });
      const lines = [JSON.stringify(await trainer.runIteration()), JSON.stringify(await trainer.runIteration())];
      trainer.dispose();
      return lines;
    };
    expect(await run()).toEqual(await run());

    const traces: EpisodeTrace[] = [];
    const trainer = new Trainer(dreamOnlyConfig({ iterations: 1 }), {
      source: buttonsSource([buttonTask('red'), buttonTask('none')]).source,
      onEpisodes: (episodes) => {
        traces.push(...episodes);
      },
    });
    await trainer.runIteration();
    const stuck = traces.filter((e) => e.task.id === 'fake:buttons:none');
    expect(stuck.length + traces.filter((e) => e.task.id === 'fake:buttons:red').length).toBe(6);
    for (const e of stuck) expect(e.steps).toEqual([]);
    trainer.dispose();
  });

  it('refuses what needs a real env or a task generator, naming the fix', () => {
    const { source } = buttonsSource();
    const refuse = (overrides: Partial<TrainConfig>, message: RegExp) => {
      expect(() => new Trainer(dreamOnlyConfig(overrides), { source })).toThrow(ConfigError);
      expect(() => new Trainer(dreamOnlyConfig(overrides), { source })).toThrow(message);
    };
    refuse({ mode: 'real' }, /'mode' real trains in a real env, and 'fake:buttons' has none; use mode dream/);
    refuse({ mode: 's2r' }, /'mode' s2r .*use mode dream/);
    refuse({ curriculum: true }, /'curriculum' .*set curriculum false/);
    refuse({ evalInterval: 5 }, /'evalInterval' 5 evaluates on held-out real tasks.*set evalInterval 0/);
    refuse({ env: 'household-v0' }, /'env' must be the task source's env id 'fake:buttons'; got 'household-v0'/);
    expect(() => new Trainer(dreamOnlyConfig(), { source: { ...source, stepLimit: 0 } })).toThrow(
      /stepLimit must be a positive integer/,
    );
  });

  it('says so when the source gives no tasks', async () => {
    const trainer = new Trainer(dreamOnlyConfig(), { source: { ...buttonsSource().source, chooseTasks: () => [] } });
    await expect(trainer.runIteration()).rejects.toThrow(/task source 'fake:buttons' gave no tasks for iteration 1/);
    trainer.dispose();
  });
});

describe('Trainer: iteration 0 and stopping inside an iteration', () => {
  it('iteration 0 evaluates the untrained policy and changes nothing after it', async () => {
    const plain = new Trainer(small());
    const measured = new Trainer(small());
    const zero = (await measured.initialRecord())!;
    expect(zero.iteration).toBe(0);
    expect(zero.metrics['budget/real_steps']).toBe(0);
    expect(zero.metrics['eval/success_rate']).toEqual((await plain.evaluate(small().evalEpisodes)).success);
    expect(await runAll(measured)).toEqual(await runAll(plain));
    expect(await measured.initialRecord()).toBeNull(); // only before the first iteration
    plain.dispose();
    measured.dispose();
  });

  it('a stop inside an iteration drops it before the next rollout step, and the run can go on as if never stopped', async () => {
    const reference = new Trainer(small());
    const full = await runAll(reference);
    const trainer = new Trainer(small());
    await trainer.runIteration();
    const abort = new AbortController();
    abort.abort();
    await expect(trainer.runIteration({ signal: abort.signal })).rejects.toThrow(IterationStoppedError);
    expect([trainer.iteration, trainer.realSteps]).toEqual([1, JSON.parse(full[0]).metrics['budget/real_steps']]);
    expect(await runAll(trainer)).toEqual(full.slice(1));
    reference.dispose();
    trainer.dispose();
  });
});
