/**
 * The SFT (behaviour cloning) baseline: which steps are demonstrations, that cloning lowers the
 * loss and learns the expert's choices, that it is deterministic, and that it beats the untrained
 * policy on held-out tasks.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../src/core/tfjs/backend';
import { CandidatePolicy } from '../../../src/core/policy/policy';
import { loadSeedDataset } from '../../../src/core/data/seed-datasets';
import { getEnvDefinition } from '../../../src/core/envs/registry';
import { readPublicFile } from '../../../src/node/edge';
import { evaluatePolicy } from '../../../src/core/train/evaluate';
import {
  behaviourCloning,
  DEFAULT_SFT_CONFIG,
  SftDataError,
  sftAccuracy,
  sftExamples,
  type SftConfig,
} from '../../../src/core/train/sft';
import type { Trajectory } from '../../../src/core/types';
import { main } from '../../../src/cli/main';
import { captureCliOutput } from '../support/cli-output';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { err, lastJson } = captureCliOutput();

const ENV = 'webshop-lite-v0';
const STEP_LIMIT = getEnvDefinition(ENV).defaultStepLimit;
let data: Trajectory[];

beforeAll(async () => {
  await initBackend('wasm');
  data = await loadSeedDataset(ENV, readPublicFile);
});

const config = (overrides: Partial<SftConfig> = {}): SftConfig => ({
  ...DEFAULT_SFT_CONFIG,
  stepLimit: STEP_LIMIT,
  seed: 1,
  ...overrides,
});

describe('SFT examples', () => {
  it("are the chosen sources' valid steps with a choice, as the evaluation states them; held-out tasks never", () => {
    const expert = data.filter((t) => t.source === 'expert');
    const examples = sftExamples(data, ['expert'], STEP_LIMIT);
    const choices = expert.flatMap((t) => t.steps).filter((s) => s.valid && s.admissible.length > 1);
    expect(examples).toHaveLength(choices.length);
    const first = expert[0];
    expect(examples[0].state).toEqual({
      instruction: first.task.instruction,
      observation: first.steps[0].observation,
      admissible: first.steps[0].admissible,
      step: 0,
      maxSteps: STEP_LIMIT,
      previousActions: [],
    });
    expect(examples[0].state.admissible[examples[0].action]).toBe(first.steps[0].action);
    expect(sftExamples(data, ['expert', 'noisy-expert'], STEP_LIMIT).length).toBeGreaterThan(examples.length);
    const heldOut = expert.slice(0, 3).map((t) => ({ ...t, task: { ...t.task, seed: 1_000_000_000 + 5 } }));
    expect(sftExamples(heldOut, ['expert'], STEP_LIMIT)).toEqual([]);
  });
});

describe('behaviour cloning', () => {
  it('learns the expert’s choices, the same way twice, and beats the untrained policy held out', async () => {
    const examples = sftExamples(data, ['expert'], STEP_LIMIT);
    const untrained = new CandidatePolicy({ seed: 4 });
    const before = sftAccuracy(untrained, examples);
    const [a, b] = [new CandidatePolicy({ seed: 4 }), new CandidatePolicy({ seed: 4 })];
    const records = await behaviourCloning(a, examples, config());
    await behaviourCloning(b, examples, config());
    expect(records.map((r) => r.epoch)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(records[11].loss).toBeLessThan(records[0].loss / 4);
    expect(records[11].accuracy).toBeGreaterThan(Math.max(0.9, before));
    expect(await a.getWeights()).toEqual(await b.getWeights());
    const [cloned, raw] = [await evaluatePolicy(a, ENV, 0, 30), await evaluatePolicy(untrained, ENV, 0, 30)];
    expect(cloned.success).toBeGreaterThan(raw.success);
    for (const p of [a, b, untrained]) p.dispose();
  }, 120_000);

  it('refuses data without demonstrations, naming what it needs', async () => {
    const policy = new CandidatePolicy({ seed: 1 });
    const randomOnly = sftExamples(data, ['random'], STEP_LIMIT);
    await expect(behaviourCloning(policy, [], config())).rejects.toThrow(SftDataError);
    await expect(behaviourCloning(policy, [], config())).rejects.toThrow(/No demonstrated steps from expert episodes/);
    expect(randomOnly.length).toBeGreaterThan(0); // random episodes are steps too, only not chosen by default
    policy.dispose();
  });
});

describe('train --mode sft and --sft', () => {
  it('clones, saves a run eval can play, and starts a dream from the clone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dreamgym-sft-'));
    const sftRun = join(dir, 'sft');
    const base = ['--preset', 'webshop-easy', '--seed', '2', '--json'];
    expect(await main(['train', '--mode', 'sft', ...base, '--set', 'finalEvalEpisodes=20', '--out', sftRun])).toBe(0);
    const cloned = lastJson();
    expect(cloned).toMatchObject({ mode: 'sft', real_steps: 0, dream_steps: 0, sft: { from: 'sft', epochs: 12 } });
    expect(cloned.eval).toMatchObject({ split: 'dev', episodes: 20 });
    expect(cloned.eval.success).toBeGreaterThan(0.5);
    expect(await main(['eval', '--run', sftRun, '--episodes', '20', '--json'])).toBe(0);
    expect(lastJson().eval).toEqual(cloned.eval);

    const dream = ['--mode', 'dream', '--llm', 'oracle:0,0', '--sft', '--out', join(dir, 'dream')];
    const settings = 'iterations=1,tasksPerIteration=2,groupSize=2,finalEvalEpisodes=20';
    expect(await main(['train', ...base, ...dream, '--set', settings])).toBe(0);
    expect(lastJson()).toMatchObject({ mode: 'dream', real_steps: 0, started_from: cloned.sft });

    expect(await main(['train', '--mode', 'sft', ...base, '--llm', 'oracle:0,0', '--out', join(dir, 'x')])).toBe(2);
    expect(err.join('\n')).toMatch(/--mode sft clones the offline data and trains nothing else: drop --llm/);
  }, 120_000);
});
