import 'fake-indexeddb/auto';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../src/core/policy/backend';
import { ConfigError, getPreset, validateConfig, type TrainConfig } from '../../../src/core/train/config';
import { CheckpointMismatchError, Trainer } from '../../../src/core/train/loop';
import { IndexedDbCheckpointStore, deserializeCheckpoint, serializeCheckpoint } from '../../../src/core/train/checkpoint';
import { CandidatePolicy } from '../../../src/core/policy/policy';

beforeAll(async () => { await initBackend('wasm'); });

/** A small, fast config: 2 tasks × 4 rollouts per iteration. */
function small(overrides: Partial<TrainConfig> = {}): TrainConfig {
  return validateConfig({ ...getPreset('webshop-easy'), iterations: 4, tasksPerIteration: 2, groupSize: 4, evalInterval: 2,
    evalEpisodes: 6, finalEvalEpisodes: 6, ...overrides });
}

async function runAll(trainer: Trainer): Promise<string[]> {
  const lines: string[] = [];
  while (!trainer.finished) lines.push(JSON.stringify(await trainer.runIteration()));
  return lines;
}

describe('Trainer (real mode)', () => {
  it.each(['grpo', 'ppo', 'reinforce'] as const)('%s: the same seed gives identical metrics twice, with every §5 metric present', async (algo) => {
    const a = new Trainer(small({ algo }));
    const b = new Trainer(small({ algo }));
    const [ma, mb] = [await runAll(a), await runAll(b)];
    expect(ma).toEqual(mb);
    const first = JSON.parse(ma[1]).metrics;
    for (const key of ['charts/success_rate', 'charts/episodic_return', 'charts/episode_length', 'losses/policy_loss',
      'losses/entropy', 'losses/approx_kl', 'budget/real_steps', 'budget/dream_steps', 'eval/success_rate', 'eval/score']) {
      expect(first, key).toHaveProperty([key]);
    }
    if (algo === 'ppo') expect(first).toHaveProperty(['losses/value_loss']);
    a.dispose(); b.dispose();
  });

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
    uninterrupted.dispose(); resumed.dispose();
    await store.remove();
    expect(await store.load()).toBeNull();
    await store.close();
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

  it('explains a bad preset, a malformed value and a checkpoint of another policy shape', async () => {
    expect(() => getPreset('webshop-hard')).toThrow("Unknown preset 'webshop-hard'. Valid presets: webshop-easy, webshop-medium, household-easy, household-medium.");
    expect(() => validateConfig({ ...getPreset('webshop-easy'), learningRate: -1, algo: 'dqn', groupSize: 2.5 })).toThrow(ConfigError);
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
    other.dispose(); trainer.dispose();
  });
});
