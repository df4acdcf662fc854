import * as tf from '@tensorflow/tfjs';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../../src/core/tfjs/backend';
import { getEnvDefinition, makeEnv } from '../../../../src/core/envs/registry';
import { builtInDomainCard } from '../../../../src/core/experience/domain-card';
import { makeDreamEnv } from '../../../../src/core/experience/dream-env';
import { LearnedExperienceModel, type BatchDecoder } from '../../../../src/core/experience/learned/learned-model';
import { DEFAULT_FORMAT_OPTIONS, SEGMENT_COUNT } from '../../../../src/core/experience/learned/format';
import { Tokenizer } from '../../../../src/core/experience/learned/tokenizer';
import { TINY_NETWORK, tinyNetwork } from './fixtures';
import { decodeModelFiles, encodeModelFiles, ModelFileError } from '../../../../src/core/experience/learned/model-file';
import {
  learnedTrainOptions,
  trainLearnedModel,
  type LearnedCheckpoint,
} from '../../../../src/core/experience/learned/train-model';
import { bufferFromTrajectories } from '../../../../src/core/experience/seed-buffer';
import { rolloutEpisode, makeBaselinePolicy } from '../../../../src/core/data/rollout';
import { Rng } from '../../../../src/core/rng';
import type { Trajectory } from '../../../../src/core/types';
import { loadModelFolder, readModelFolder, writeModelFolder } from '../../../../src/node/model-folder';

const ENV = 'webshop-lite-v0';
const card = builtInDomainCard(ENV)!;
let trajectories: Trajectory[];

beforeAll(async () => {
  expect((await initBackend('wasm')).backend).toBe('wasm');
  const env = makeEnv(ENV);
  const definition = getEnvDefinition(ENV);
  trajectories = [];
  for (let i = 0; i < 6; i++) {
    const policy = makeBaselinePolicy(i % 3 === 2 ? 'random' : 'expert');
    trajectories.push(await rolloutEpisode(env, policy, { seed: 500 + i, task: definition.generateTask(500 + i, 0) }));
  }
});

/** A tiny model trained for a couple of epochs on a few expert and random episodes. */
async function tinyTrained(epochs = 2, resume?: LearnedCheckpoint, onCheckpoint?: (c: LearnedCheckpoint) => void) {
  const buffer = await bufferFromTrajectories(trajectories);
  const options = learnedTrainOptions({
    name: 'tiny',
    validationShare: 0.3,
    network: TINY_NETWORK,
    fit: { epochs, batchSize: 8, warmupSteps: 2, patience: 10, seed: 3 },
  });
  const result = await trainLearnedModel(buffer, ENV, card, options, {
    ...(resume ? { resume } : {}),
    ...(onCheckpoint ? { onCheckpoint } : {}),
  });
  return { buffer, result };
}

describe('learned experience model', () => {
  it('round-trips its files, and refuses damaged or mismatched ones by name', async () => {
    const { result } = await tinyTrained(1);
    const { manifest, weights } = decodeModelFiles(result.manifest, result.weights);
    expect(manifest.env).toBe(ENV);
    expect(manifest.training.data.trainPairs).toBeGreaterThan(0);
    const original = await result.network.getWeights();
    expect(weights.map((w) => Array.from(w.data))).toEqual(original.map((w) => Array.from(w.data)));
    const flipped = result.weights.slice();
    flipped[100] ^= 0xff;
    expect(() => decodeModelFiles(result.manifest, flipped)).toThrow(ModelFileError);
    expect(() => decodeModelFiles(result.manifest, flipped)).toThrow(/weights\.bin .* does not match model\.json/);
    expect(() => decodeModelFiles('{not json', result.weights)).toThrow(/model\.json .* is not JSON/);
    // A model of the previous format (no checksum of its own) is refused, naming the command that re-makes it.
    const previousFormat = JSON.stringify({ ...manifest, format: 'dreamgym-learned-model/2' });
    expect(() => decodeModelFiles(previousFormat, result.weights)).toThrow(ModelFileError);
    expect(() => decodeModelFiles(previousFormat, result.weights)).toThrow(
      /format 'dreamgym-learned-model\/2'.*'npm run models'/,
    );
    expect(manifest.network.segments).toBe(SEGMENT_COUNT);
    const nan = encodeModelFiles(
      { ...manifest },
      original.map((w, i) => (i === 0 ? { ...w, data: w.data.map((x, j) => (j === 0 ? NaN : x)) } : w)),
    );
    expect(() => decodeModelFiles(nan.manifest, nan.weights)).toThrow(/holds NaN/);
    const dir = join(mkdtempSync(join(tmpdir(), 'learned-')), 'model');
    writeModelFolder(dir, result);
    writeModelFolder(dir, result); // replacing a model is one swap
    expect((await readModelFolder(dir)).manifest.weightsFile).toEqual(manifest.weightsFile);
    writeFileSync(join(dir, 'weights.bin'), readFileSync(join(dir, 'weights.bin')).subarray(0, 40));
    await expect(readModelFolder(dir)).rejects.toThrow(/does not match/);
    result.network.dispose();
  }, 120_000);

  it('resumes training from an epoch checkpoint to exactly the uninterrupted weights', async () => {
    const checkpoints: LearnedCheckpoint[] = [];
    const straight = await tinyTrained(2, undefined, (c) => {
      checkpoints.push(c);
    });
    expect(checkpoints.map((c) => c.fit.epochsDone)).toEqual([1, 2]);
    const resumed = await tinyTrained(2, checkpoints[0]);
    expect(resumed.result.weights).toEqual(straight.result.weights);
    straight.result.network.dispose();
    resumed.result.network.dispose();
  }, 120_000);

  // That it never sees task.spec is spec-leak.test.ts's: here the cache key and a batch's shared rows
  // leave the spec out, so a spec'd and a stripped request would share one answer and prove nothing.

  it('gives the same dream at any batch size, coalescing concurrent calls into batches', async () => {
    const { buffer, result } = await tinyTrained(1);
    const weights = await result.network.getWeights();
    const dream = async (maxBatch: number) => {
      const model = LearnedExperienceModel.fromFiles(result.parsed, weights, {
        buffer,
        maxBatch,
        transitionCache: false,
      });
      const envs = Array.from({ length: 6 }, () => makeDreamEnv(model, { envId: ENV }));
      const definition = getEnvDefinition(ENV);
      const observations = await Promise.all(
        envs.map((e, i) => e.reset({ seed: 1_000_000_000 + i, task: definition.generateTask(1_000_000_000 + i, 0) })),
      );
      const rng = Rng.fromSeed(1, 'dream-test');
      const trace: string[] = [];
      for (let t = 0; t < 4; t++) {
        const actions = observations.map((o) => (o.admissible.length ? rng.pick(o.admissible) : ''));
        const steps = await Promise.all(envs.map((e, i) => (actions[i] ? e.step(actions[i]) : Promise.resolve(null))));
        steps.forEach((r, i) => {
          if (r) {
            observations[i] = r;
            trace.push(
              `${i}:${actions[i]}→${r.text}|${r.admissible.join(',')}|${r.reward}|${r.terminated}|${r.info.valid}`,
            );
          }
        });
      }
      const stats = { ...model.stats };
      model.dispose();
      return { trace, stats };
    };
    const one = await dream(1);
    const many = await dream(64);
    expect(many.trace).toEqual(one.trace);
    expect(one.stats.batches).toBeGreaterThan(many.stats.batches);
    expect(many.stats.rows / many.stats.batches).toBeGreaterThan(1); // concurrent calls became batches
    result.network.dispose();
  }, 120_000);

  it('decodes the same answers in worker threads (a batch split between them)', async () => {
    const { buffer, result } = await tinyTrained(1);
    const dir = join(mkdtempSync(join(tmpdir(), 'learned-threads-')), 'model');
    writeModelFolder(dir, result);
    result.network.dispose();
    const t = trajectories[0];
    const contexts = t.steps.map((s, i) => ({
      task: t.task,
      history: t.steps.slice(0, i),
      state: { text: s.observation, admissible: s.admissible, task: t.task },
      action: s.action,
    }));
    const ask = async (threads: number) => {
      const model = await loadModelFolder(dir, { buffer, transitionCache: false, threads });
      expect(model.options.decoders?.length ?? 1).toBe(threads);
      const answers = await Promise.all(
        [...contexts, ...contexts.map((c) => ({ ...c, action: c.state.admissible.at(-1)! }))].map((c) => model.next(c)),
      );
      model.dispose();
      return answers.map((a) => [a.raw, a.next.text, a.reward, a.terminated, a.valid]);
    };
    expect(await ask(2)).toEqual(await ask(1));
  }, 120_000);

  it('keeps tf.memory flat across dream steps', async () => {
    const { buffer, result } = await tinyTrained(1);
    const model = new LearnedExperienceModel(result.network, result.tokenizer, card, result.parsed, {
      buffer,
      transitionCache: false,
    });
    const t = trajectories[0];
    const ask = () =>
      Promise.all(
        t.steps.map((s, i) =>
          model.next({
            task: t.task,
            history: t.steps.slice(0, i),
            state: { text: s.observation, admissible: s.admissible, task: t.task },
            action: s.action,
          }),
        ),
      );
    await ask();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await ask();
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
  }, 120_000);

  it("reads an answer's placeholders back as new ids, the same on the page and in its list, the same for the same step", async () => {
    const tokenizer = Tokenizer.learn(['page 1 total results lamp click b0eub84qr9 red'], { minCount: 1, freshIds: 4 });
    const net = tinyNetwork(tokenizer, 1, { maxContext: 768, maxAnswer: 384 });
    const [id1, id2] = tokenizer.freshIdTokens;
    const text = (s: string) => tokenizer.encode(s);
    const answer = [
      [tokenizer.special('<yes>'), tokenizer.special('<no>'), tokenizer.special('<r0>'), tokenizer.special('<obs>')],
      text('Page 1 |').ids,
      [id1],
      text('| Lamp |').ids,
      [id2],
      [tokenizer.special('<adm>')],
      text('click[').ids,
      [tokenizer.special('<sep>'), id1, tokenizer.special('<sep>'), id2, tokenizer.special('<eos>')],
    ].flat();
    const cases = answer.map((id) => (id === id1 || id === id2 ? 2 : 0));
    cases[answer.lastIndexOf(id1)] = 0;
    cases[answer.lastIndexOf(id2)] = 0;
    const fixed: BatchDecoder = async ({ contexts }) =>
      contexts.map(() => ({ tokens: { ids: answer, spaces: answer.map(() => 0), cases }, steps: answer.length }));
    const task = trajectories[0].task;
    const state = { text: 'Instruction: [SEP] buy a red lamp [SEP] Search', admissible: ['search[red lamp]'], task };
    const model = new LearnedExperienceModel(
      net,
      tokenizer,
      card,
      {
        name: 'fake',
        env: ENV,
        formatOptions: { ...DEFAULT_FORMAT_OPTIONS, freshIds: { count: 4, prefix: 'b0', length: 10 } },
      },
      { decoders: [fixed, fixed], transitionCache: false },
    );
    // Four distinct requests, so the batch goes to the two (fake) decoders; then the same four again.
    const ask = () =>
      Promise.all(
        ['search[red lamp]', 'search[lamp]', 'search[blue lamp]', 'search[a lamp]'].map((action) =>
          model.next({ task, history: [], state, action }),
        ),
      );
    const [a, b, other] = await ask();
    const [again] = await ask();
    expect(a).toMatchObject({ valid: true, actionValid: true });
    const asins = [...a.next.text.matchAll(/\bB0[A-Z0-9]{8}\b/g)].map((m) => m[0].toLowerCase());
    expect(asins).toHaveLength(2);
    expect(a.next.admissible.filter((x) => x.startsWith('click[b0'))).toEqual(asins.map((x) => `click[${x}]`));
    expect(a.next.text).not.toContain('<id');
    expect(again.next).toEqual(a.next);
    expect(b.next.text).not.toBe(a.next.text);
    expect(other.next.text).not.toBe(a.next.text);
    net.dispose();
  });

  it('reads an empty state back as the current one', async () => {
    const tokenizer = Tokenizer.learn(['click red blue buy now lamp'], { minCount: 1 });
    const net = tinyNetwork(tokenizer, 1, { maxContext: 768, maxAnswer: 384 });
    const ids = (['<yes>', '<no>', '<r0>', '<obs>', '<eos>'] as const).map((t) => tokenizer.special(t));
    const empty: BatchDecoder = async ({ contexts }) =>
      contexts.map(() => ({ tokens: { ids, spaces: ids.map(() => 0), cases: ids.map(() => 0) }, steps: ids.length }));
    const t = trajectories[0];
    const task = t.task;
    const state = {
      text: 'Instruction: [SEP] buy a red lamp [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] red [SEP] blue [SEP] Lamp [SEP] Price: $9.99 [SEP] Buy Now',
      admissible: ['click[back to search]', 'click[< prev]', 'click[red]', 'click[blue]', 'click[buy now]'],
      task,
    };
    // Four distinct requests, so the batch is split between the two (fake) decoders.
    const model = new LearnedExperienceModel(
      net,
      tokenizer,
      card,
      { name: 'fake', env: ENV, formatOptions: DEFAULT_FORMAT_OPTIONS },
      { decoders: [empty, empty], transitionCache: false },
    );
    const actions = ['click[red]', 'click[blue]', 'click[< prev]', 'click[back to search]'];
    for (const unchanged of await Promise.all(
      actions.map((action) => model.next({ task, history: [], state, action })),
    )) {
      expect(unchanged).toMatchObject({ valid: true, actionValid: true, terminated: false, reward: 0 });
      expect(unchanged.next.text).toBe(state.text);
      expect(unchanged.next.admissible).toEqual(state.admissible);
    }
    net.dispose();
  });
});
