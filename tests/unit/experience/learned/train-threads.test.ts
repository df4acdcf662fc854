import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../../src/core/tfjs/backend';
import { DEFAULT_FIT_OPTIONS, fitNetwork, shardOf, type FitOptions } from '../../../../src/core/experience/learned/fit';
import { startTrainHelpers, type TrainHelpers } from '../../../../src/node/workers/train-pool';
import { tinyNetwork, toyPairs, toyTokenizer } from './fixtures';

let pool: TrainHelpers;

beforeAll(async () => {
  expect((await initBackend('wasm')).backend).toBe('wasm');
  pool = startTrainHelpers(1);
});

afterAll(() => pool.close());

/** The toy network after two epochs of `fit` (batches of 4 pairs), its weights and epoch losses. */
async function trained(fit: Partial<FitOptions>, threads: 1 | 2) {
  const tokenizer = toyTokenizer();
  const pairs = toyPairs(tokenizer);
  const net = tinyNetwork(tokenizer, 5);
  const options = { ...DEFAULT_FIT_OPTIONS, epochs: 2, batchSize: 4, warmupSteps: 2, patience: 10, ...fit };
  const state = await fitNetwork(net, tokenizer, pairs, [], options, undefined, {
    helpers: threads === 2 ? pool.helpers : [],
  });
  const weights = await net.getWeights();
  net.dispose();
  return { weights, losses: state.history.map((e) => e.trainLoss) };
}

describe('training in shards', () => {
  it('takes every shards-th pair from the shard index on', () => {
    expect(shardOf([0, 1, 2, 3, 4], 0, 2)).toEqual([0, 2, 4]);
    expect(shardOf([0, 1, 2, 3, 4], 1, 2)).toEqual([1, 3]);
  });

  it('gives the same weights at one and two threads', async () => {
    const one = await trained({ shards: 2 }, 1);
    const two = await trained({ shards: 2 }, 2);
    expect(two.losses).toEqual(one.losses);
    expect(two.weights).toEqual(one.weights);
  }, 60_000);

  it('learns what the whole batch at once learns, up to rounding', async () => {
    const whole = await trained({}, 1);
    const sharded = await trained({ shards: 2 }, 1);
    sharded.losses.forEach((loss, i) => expect(loss).toBeCloseTo(whole.losses[i], 4));
  }, 60_000);

  it('keeps tf.memory flat with a helper thread', async () => {
    const tokenizer = toyTokenizer();
    const pairs = toyPairs(tokenizer);
    const net = tinyNetwork(tokenizer, 7);
    const options = { ...DEFAULT_FIT_OPTIONS, epochs: 1, batchSize: 4, warmupSteps: 1, shards: 2 };
    const fit = () => fitNetwork(net, tokenizer, pairs, pairs, options, undefined, { helpers: pool.helpers });
    await fit();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await fit();
    expect(tf.memory().numTensors).toBe(before);
    net.dispose();
  }, 60_000);
});
