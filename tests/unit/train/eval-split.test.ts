/**
 * The dev/test split of the held-out tasks (docs/architecture.md §7.1): dev seeds from 1e9
 * for tuning and for every evaluation a run makes while it trains; test seeds from 2e9 only for
 * reported tables, evaluated once a run is over. These tests watch every task a run generates,
 * mutates or plays, so a curriculum, an intermediate evaluation or a final one that drew from the
 * test split during training would fail them.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { initBackend } from '../../../src/core/tfjs/backend';
import { CandidatePolicy } from '../../../src/core/policy/policy';
import { HELD_OUT_SEED_BASE } from '../../../src/core/envs/env';
import { getEnvDefinition } from '../../../src/core/envs/registry';
import { getPreset, validateConfig, type TrainConfig } from '../../../src/core/train/config';
import {
  evaluatePolicy,
  heldOutSeed,
  splitOfSeed,
  TEST_SEED_BASE,
  type EvalSplit,
} from '../../../src/core/train/evaluate';
import { evaluateBaseline, planExperiment, type ExperimentProgress } from '../../../src/core/experiments/experiment';
import { Trainer } from '../../../src/core/train/loop';
import { loadSeedDataset } from '../../../src/core/data/seed-datasets';
import { readPublicFile } from '../../../src/node/edge';
import { buildRunParts } from '../../../src/core/train/run-parts';
import { registeredEnvSchema } from '../../../src/core/train/policy-schema';
import type { Task } from '../../../src/core/types';
import { main } from '../../../src/cli/main';
import { captureCliOutput } from '../support/cli-output';

const { lastJson } = captureCliOutput();

beforeAll(async () => {
  await initBackend('wasm');
});
afterEach(() => {
  vi.restoreAllMocks();
});

interface Watch {
  /** Seeds generateTask was called with, in call order. */
  generated: number[];
  /** Tasks mutateTask returned (curriculum variations). */
  mutated: Task[];
  /** The definition's own generateTask, unwatched. */
  generate(seed: number, difficulty: number): Task;
}

/** Watches an env's task generation and mutation (each generated seed also told to onSeed). */
function watchTasks(envId: string, onSeed: (seed: number) => void = () => {}): Watch {
  const definition = getEnvDefinition(envId);
  const generate = definition.generateTask.bind(definition);
  const mutate = definition.mutateTask.bind(definition);
  const watch: Watch = { generated: [], mutated: [], generate };
  vi.spyOn(definition, 'generateTask').mockImplementation((seed, difficulty) => {
    watch.generated.push(seed);
    onSeed(seed);
    return generate(seed, difficulty);
  });
  vi.spyOn(definition, 'mutateTask').mockImplementation((task, rng, direction) => {
    const mutated = mutate(task, rng, direction);
    watch.mutated.push(mutated);
    return mutated;
  });
  return watch;
}

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe('held-out splits', () => {
  it('dev starts at 1e9, test at 2e9; a bad split or index is refused with the valid ones', () => {
    expect(heldOutSeed('dev', 0)).toBe(HELD_OUT_SEED_BASE);
    expect(heldOutSeed('test', 7)).toBe(2_000_000_007);
    expect(TEST_SEED_BASE).toBeGreaterThan(HELD_OUT_SEED_BASE + 1_000_000); // the benches' dev seeds stay below
    expect(splitOfSeed(999_999_999)).toBeNull();
    expect(splitOfSeed(heldOutSeed('dev', 99_999))).toBe('dev');
    expect(splitOfSeed(heldOutSeed('test', 0))).toBe('test');
    expect(() => heldOutSeed('train' as EvalSplit, 0)).toThrow(/Unknown held-out split 'train'; use dev or test/);
    expect(() => heldOutSeed('test', -1)).toThrow(/integer within 0\.\.99999; got -1/);
    // The highest test seed is still a valid 31-bit task seed.
    expect(heldOutSeed('test', 99_999)).toBeLessThan(2 ** 31);
  });

  it.each(['dev', 'test'] as const)('evaluatePolicy and the baselines play exactly the %s seeds', async (split) => {
    const seen = watchTasks('webshop-lite-v0').generated;
    const policy = new CandidatePolicy({ seed: 1 });
    const result = await evaluatePolicy(policy, 'webshop-lite-v0', 0, 5, { split, chunk: 2 });
    policy.dispose();
    expect(result.split).toBe(split);
    expect(seen).toEqual(range(heldOutSeed(split, 0), 5));
    seen.length = 0;
    const expert = await evaluateBaseline('expert', 'webshop-lite-v0', 0, 4, 1, split);
    expect(expert).toMatchObject({ split, success: 1, episodes: 4 });
    expect(seen).toEqual(range(heldOutSeed(split, 0), 4));
  });

  it('the two splits are different tasks', () => {
    const definition = getEnvDefinition('household-v0');
    const instructions = (split: EvalSplit) =>
      range(0, 10).map((i) => definition.generateTask(heldOutSeed(split, i), 0).instruction);
    expect(instructions('test')).not.toEqual(instructions('dev'));
  });
});

/** A tiny run with the curriculum on and an evaluation every iteration. */
function tinyConfig(preset: string, overrides: Partial<TrainConfig>): TrainConfig {
  return validateConfig({
    ...getPreset(preset),
    iterations: 3,
    tasksPerIteration: 3,
    groupSize: 2,
    curriculum: true,
    evalInterval: 1,
    evalEpisodes: 4,
    finalEvalEpisodes: 6,
    realStepBudget: 300,
    ...overrides,
  });
}

/**
 * A training task is a pool task or a curriculum variation of one. A variation may carry a seed in
 * a held-out range (webshop's mutateTask draws any 32-bit seed), but it is then another task than
 * the held-out one of that seed: other knobs, other instruction.
 */
function notHeldOut(task: Task, watch: Watch): void {
  const split = splitOfSeed(task.seed ?? 0);
  if (split === null) return;
  expect(task.origin, `${task.id} has a ${split} seed`).toBe('variation');
  const heldOut = watch.generate(task.seed!, task.difficulty);
  expect(JSON.stringify([task.instruction, task.spec])).not.toBe(JSON.stringify([heldOut.instruction, heldOut.spec]));
}

describe('training never sees the test split', () => {
  it.each([
    ['webshop-easy', 'real'],
    ['household-easy', 'real'],
    ['webshop-easy', 'dream'],
    ['household-easy', 's2r'],
  ] as const)('%s %s: the curriculum trains on pool seeds, every evaluation plays dev seeds', async (preset, mode) => {
    const config = tinyConfig(preset, { mode, llm: 'oracle:0.1,0.1' });
    // The policy's feature schema is mined from the env's offline episodes (the dataset's seeds, played by its
    // baseline policies), before the run: those are no tasks the run trains or is evaluated on.
    await registeredEnvSchema(config.env);
    const watch = watchTasks(config.env);
    const played: Task[] = [];
    const parts = await buildRunParts(config, {});
    const trainer = new Trainer(config, {
      ...parts,
      onEpisodes: (traces) => void played.push(...traces.map((t) => t.task)),
    });
    await trainer.initialRecord();
    while (!trainer.finished) await trainer.runIteration();
    trainer.dispose();
    expect(played.length).toBeGreaterThan(0);
    for (const task of played) notHeldOut(task, watch);
    for (const task of watch.mutated) notHeldOut(task, watch);
    expect(watch.generated.filter((s) => splitOfSeed(s) === 'test')).toEqual([]);
    // The pool's seeds, then the dev tasks: the initial record, every iteration, the final evaluation.
    expect(watch.generated.filter((s) => splitOfSeed(s) === null).every((s) => s < config.taskPool)).toBe(true);
    expect(new Set(watch.generated.filter((s) => splitOfSeed(s) === 'dev'))).toEqual(
      new Set(range(HELD_OUT_SEED_BASE, 6)),
    );
    expect(trainer.finalEvaluation?.result.split).toBe('dev');
  });

  it('experiment --split test: a run meets the test tasks only after its iterations (S2R: after each phase)', async () => {
    // Seeds and progress events interleaved in call order.
    const events: { kind: ExperimentProgress['kind'] | 'seed'; seed?: number }[] = [];
    watchTasks('webshop-lite-v0', (seed) => events.push({ kind: 'seed', seed }));
    const plan = planExperiment(
      {
        envs: ['webshop-lite-v0'],
        llm: 'oracle:0.1,0.1',
        seeds: 1,
        table: 1,
        split: 'test',
        overrides: { iterations: 2, tasksPerIteration: 2, groupSize: 2, finalEvalEpisodes: 5 },
      },
      { onProgress: (e) => events.push({ kind: e.kind }), loadDataset: (env) => loadSeedDataset(env, readPublicFile) },
    );
    const testSeedsOf = (from: number) =>
      events.flatMap((e, i) => (i >= from && e.seed !== undefined && splitOfSeed(e.seed) === 'test' ? [i] : []));
    const dream = plan.jobs.find((j) => j.label.includes('SFT, then dream GRPO'))!;
    expect((await plan.runJob(dream.index)).split).toBe('test');
    const lastIteration = events.map((e) => e.kind).lastIndexOf('iteration');
    expect(testSeedsOf(0)).toHaveLength(5);
    expect(Math.min(...testSeedsOf(0))).toBeGreaterThan(lastIteration);
    expect(testSeedsOf(0).map((i) => events[i].seed)).toEqual(range(TEST_SEED_BASE, 5));

    // S2R: once when its dream phase ends (the dream row), once after its last real iteration;
    // between them only real iterations, which never read the evaluation.
    const start = events.length;
    const s2r = plan.jobs.find((j) => j.label.includes('s2r GRPO'))!;
    const outcome = await plan.runJob(s2r.index);
    expect([outcome.split, outcome.dreamPhase?.split]).toEqual(['test', 'test']);
    const seen = testSeedsOf(start);
    expect(seen.map((i) => events[i].seed)).toEqual([...range(TEST_SEED_BASE, 5), ...range(TEST_SEED_BASE, 5)]);
    const iterations = events.flatMap((e, i) => (i >= start && e.kind === 'iteration' ? [i] : []));
    expect(iterations.filter((i) => i < seen[0])).toHaveLength(2); // the two dream iterations
    expect(Math.min(...seen.slice(5))).toBeGreaterThan(Math.max(...iterations));
  });
});

describe('train and eval --split', () => {
  it('train --split test reports the test split beside its own dev evaluation; eval --split repeats either', async () => {
    const run = join(mkdtempSync(join(tmpdir(), 'dreamgym-split-')), 'run');
    const settings = 'iterations=2,tasksPerIteration=2,groupSize=2,finalEvalEpisodes=8';
    const train = ['train', '--preset', 'webshop-easy', '--seed', '3', '--set', settings, '--out', run, '--json'];
    expect(await main([...train, '--split', 'test'])).toBe(0);
    const trained = lastJson();
    expect(trained.eval).toMatchObject({ split: 'test', episodes: 8 });
    expect(trained.eval_dev).toMatchObject({ split: 'dev', episodes: 8 });
    for (const split of ['test', 'dev'] as const) {
      expect(await main(['eval', '--run', run, '--episodes', '8', '--split', split, '--json'])).toBe(0);
      expect(lastJson().eval).toEqual(split === 'test' ? trained.eval : trained.eval_dev);
    }
    expect(await main(['eval', '--run', run, '--split', 'holdout'])).toBe(2);
  });
});

/** The source files under src/ (TypeScript and Svelte). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|svelte)$/.test(name) ? [path] : [];
  });
}

/** Code without comments and string literals (crudely, enough to find identifiers and numbers). */
function codeOnly(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/[^\n]*/g, '')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");
}

describe('one place knows where the test seeds are', () => {
  it('no file under src/ but evaluate.ts names TEST_SEED_BASE or a seed from 2e9', () => {
    const offenders = sourceFiles('src').filter((path) => {
      if (path === join('src', 'core', 'train', 'evaluate.ts')) return false;
      return /\bTEST_SEED_BASE\b|\b2_?000_?000_?000\b|\b2e9\b|\b2\.\d+e9\b/.test(codeOnly(readFileSync(path, 'utf8')));
    });
    expect(offenders, 'pick held-out seeds with heldOutSeed(split, i) in src/core/train/evaluate.ts').toEqual([]);
  });
});
