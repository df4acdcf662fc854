/**
 * Learned experience models in the page (fake-indexeddb, a tiny model trained once): the IndexedDB
 * store (both files in one transaction, checked on load, checkpoints), the shipped reader over
 * fetch, the env check, the one-model cache, and the trainer worker's learned:PATH loader.
 */
import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import { parseTrajectoriesJsonl } from '../../../src/core/data/trajectory';
import { CHECKPOINT_FORMAT, ModelFileError } from '../../../src/core/experience/learned/model-file';
import { TRAIN_DEFAULTS, type TrainConfig } from '../../../src/core/train/config';
import { LearnedModelStore, NoStoredModelError } from '../../../src/app/storage/learned-store';
import {
  LearnedModelCache,
  LearnedModelEnvError,
  loadPageLearnedModel,
  NoShippedModelError,
  readShippedModel,
} from '../../../src/app/workers/learned-source';
import { shippedModelUrl } from '../../../src/app/workers/learned-url';
import { fetchShippedInfo, learnedOptionsFor } from '../../../src/app/state/setup/learned-models.svelte';
import { trainerDeps } from '../../../src/app/workers/trainer/experience-source';
import { ENV, tinyModel } from './learned-fixtures';
import type { LearnedCheckpoint } from '../../../src/core/experience/learned/train-model';

const BASE = 'http://app.test/';

/** A fetch that serves `files` (path → body) and 404s the rest. */
function serving(files: Record<string, string | Uint8Array>, log: string[] = []): typeof fetch {
  return (async (input: string | URL | Request) => {
    const url = String(input);
    log.push(url);
    const path = url.slice(BASE.length);
    const body = files[path];
    if (body === undefined) return new Response('not found', { status: 404 });
    return new Response(body as BodyInit, { status: 200 });
  }) as typeof fetch;
}

describe('the learned-model store (IndexedDB)', () => {
  it('keeps both files under one name, checks them on load, lists and deletes', async () => {
    const { result } = await tinyModel();
    const store = new LearnedModelStore('learned-test-1');
    const summary = await store.saveModel('mine', result, 1234);
    expect(summary).toMatchObject({
      name: 'mine',
      env: ENV,
      modelName: 'tiny',
      savedAt: 1234,
      weightsBytes: result.weights.length,
    });
    expect(summary.parameters).toBe(result.network.parameterCount);
    const read = await store.readModel('mine');
    expect(read.manifest.weightsFile).toEqual(result.parsed.weightsFile);
    expect(read.weights.map((w) => w.name)).toEqual(result.parsed.weights.map((w) => w.name));
    expect((await store.listModels()).map((m) => m.name)).toEqual(['mine']);
    await expect(store.readModel('other')).rejects.toThrow(NoStoredModelError);
    await expect(store.readModel('other')).rejects.toThrow(/No learned model named 'other' .* Experience model page/);
    // A damaged pair is never stored.
    const damaged = result.weights.slice();
    damaged[10] ^= 0xff;
    await expect(store.saveModel('bad', { manifest: result.manifest, weights: damaged }, 1)).rejects.toThrow(
      /does not match model\.json/,
    );
    expect((await store.listModels()).map((m) => m.name)).toEqual(['mine']);
    await store.deleteModel('mine');
    expect(await store.listModels()).toEqual([]);
    await expect(store.readModel('mine')).rejects.toThrow(NoStoredModelError);
    await store.close();
  }, 120_000);

  it('refuses files damaged after they were stored, naming the store and the fix', async () => {
    const { result } = await tinyModel();
    const store = new LearnedModelStore('learned-test-2');
    await store.saveModel('mine', result, 1);
    // Damage the stored weights behind the store's back.
    const raw = indexedDB.open('learned-test-2');
    await new Promise<void>((resolve, reject) => {
      raw.onsuccess = () => {
        const tx = raw.result.transaction('weights', 'readwrite');
        const bytes = result.weights.slice();
        bytes[0] ^= 0x55;
        tx.objectStore('weights').put({ name: 'mine', bytes });
        tx.oncomplete = () => {
          raw.result.close();
          resolve();
        };
        tx.onerror = () => reject(tx.error);
      };
      raw.onerror = () => reject(raw.error);
    });
    await expect(store.readModel('mine')).rejects.toThrow(ModelFileError);
    await expect(store.readModel('mine')).rejects.toThrow(
      /weights\.bin in this browser's storage \(learned model 'mine'\) does not match/,
    );
    await store.close();
  }, 120_000);

  it('keeps one checkpoint per name, round-trips it, and drops it when the model is saved', async () => {
    const { result } = await tinyModel();
    const store = new LearnedModelStore('learned-test-3');
    const weights = await result.network.getWeights();
    const checkpoint: LearnedCheckpoint = {
      format: CHECKPOINT_FORMAT,
      env: ENV,
      options: JSON.parse(JSON.stringify({ fit: { epochs: 3 } })) as LearnedCheckpoint['options'],
      tokenizer: result.tokenizer.toJSON(),
      fit: {
        epochsDone: 1,
        step: 4,
        bestValidationLoss: 2.5,
        bestEpoch: 1,
        epochsWithoutGain: 0,
        history: [{ epoch: 1, trainLoss: 3, validationLoss: 2.5, tokensPerSecond: 100, seconds: 2 }],
        stopped: false,
      },
      weights,
      optimizer: weights.slice(0, 2),
      bestWeights: weights,
      seconds: 2,
    };
    await store.saveCheckpoint('mine', { name: 'mine', epochs: 3 }, checkpoint, 50);
    const listed = await store.listCheckpoints();
    expect(listed).toEqual([
      {
        name: 'mine',
        env: ENV,
        settings: { name: 'mine', epochs: 3 },
        epochsDone: 1,
        epochs: 3,
        savedAt: 50,
        history: checkpoint.fit.history,
      },
    ]);
    const back = await store.readCheckpoint('mine');
    expect(back!.settings).toEqual({ name: 'mine', epochs: 3 });
    expect(back!.checkpoint.fit).toEqual(checkpoint.fit);
    expect(back!.checkpoint.weights.map((w) => Array.from(w.data))).toEqual(weights.map((w) => Array.from(w.data)));
    expect(back!.checkpoint.optimizer).toHaveLength(2);
    expect(await store.readCheckpoint('other')).toBeNull();
    await store.saveModel('mine', result, 60);
    expect(await store.listCheckpoints()).toEqual([]);
    await store.close();
  }, 120_000);
});

describe('shipped models (fetched from the app) and the page loader', () => {
  it('reads and checks a shipped model over fetch; a missing one names the fix', async () => {
    const { result } = await tinyModel();
    const log: string[] = [];
    const get = serving(
      { [`models/${ENV}/model.json`]: result.manifest, [`models/${ENV}/weights.bin`]: result.weights },
      log,
    );
    const files = await readShippedModel(ENV, { fetch: get, base: BASE });
    expect(files.manifest.env).toBe(ENV);
    expect(log).toEqual([`${BASE}models/${ENV}/model.json`, `${BASE}models/${ENV}/weights.bin`]);
    await expect(readShippedModel('household-v0', { fetch: get, base: BASE })).rejects.toThrow(NoShippedModelError);
    await expect(readShippedModel('household-v0', { fetch: get, base: BASE })).rejects.toThrow(
      /ships no learned model for 'household-v0' .*'npm run models'/,
    );
    // A server that answers unknown paths with index.html.
    const spa = (async () => new Response('<!doctype html><html></html>', { status: 200 })) as typeof fetch;
    await expect(readShippedModel(ENV, { fetch: spa, base: BASE })).rejects.toThrow(NoShippedModelError);
    const damaged = serving({
      [`models/${ENV}/model.json`]: result.manifest,
      [`models/${ENV}/weights.bin`]: result.weights.subarray(0, 64),
    });
    await expect(readShippedModel(ENV, { fetch: damaged, base: BASE })).rejects.toThrow(
      /weights\.bin in the app's models\/webshop-lite-v0\/ does not match/,
    );
    expect(shippedModelUrl('household-v0', 'weights.bin', 'http://h/app/')).toBe(
      'http://h/app/models/household-v0/weights.bin',
    );
  }, 120_000);

  it('loads learned:models/ENV and learned:local/NAME as learned models; another env is refused with the fix', async () => {
    const { result, buffer } = await tinyModel();
    const store = new LearnedModelStore('learned-test-4');
    await store.saveModel('mine', result, 1);
    const get = serving({
      [`models/${ENV}/model.json`]: result.manifest,
      [`models/${ENV}/weights.bin`]: result.weights,
    });
    const shipped = await loadPageLearnedModel(
      `models/${ENV}`,
      { buffer, env: ENV, k: 2, historyLength: 1 },
      { fetch: get, base: BASE },
    );
    expect(shipped.label).toBe('learned tiny (k=2, H=1, T=0.7)');
    shipped.dispose();
    const local = await loadPageLearnedModel('local/mine', { env: ENV }, { store });
    expect(local.label).toMatch(/^learned tiny/);
    local.dispose();
    await expect(loadPageLearnedModel('local/mine', { env: 'household-v0' }, { store })).rejects.toThrow(
      LearnedModelEnvError,
    );
    await expect(loadPageLearnedModel('local/mine', { env: 'household-v0' }, { store })).rejects.toThrow(
      /trained on webshop-lite-v0, but this run's environment is household-v0/,
    );
    await expect(loadPageLearnedModel('runs/m', {}, { store })).rejects.toThrow(/command line only/);
    await store.close();
  }, 120_000);

  it('keeps one loaded model: the same path and settings reuse it, another disposes it, a retrained one reloads', async () => {
    const { result } = await tinyModel();
    const store = new LearnedModelStore('learned-test-5');
    await store.saveModel('a', result, 1);
    await store.saveModel('b', result, 1);
    const loads: string[] = [];
    const disposed: string[] = [];
    const cache = new LearnedModelCache(
      async (path, options, deps) => {
        loads.push(path);
        const model = await loadPageLearnedModel(path, options, deps);
        const dispose = model.dispose.bind(model);
        model.dispose = () => {
          disposed.push(path);
          dispose();
        };
        return model;
      },
      { store },
    );
    const first = await cache.get('local/a', { k: 4, historyLength: 4, env: ENV });
    expect(await cache.get('local/a', { k: 4, historyLength: 4, env: ENV })).toBe(first);
    await cache.get('local/a', { k: 0, historyLength: 4, env: ENV });
    await cache.get('local/b', { k: 0, historyLength: 4, env: ENV });
    await store.saveModel('b', result, 2); // retrained under the same name
    await cache.get('local/b', { k: 0, historyLength: 4, env: ENV });
    expect(loads).toEqual(['local/a', 'local/a', 'local/b', 'local/b']);
    expect(disposed).toEqual(['local/a', 'local/a', 'local/b']);
    cache.dispose();
    await store.close();
  }, 120_000);

  it('the trainer worker dreams with learned:local/NAME (the default store), refusing the LLM prior', async () => {
    const { result } = await tinyModel();
    const { defaultLearnedStore } = await import('../../../src/app/storage/learned-store');
    await defaultLearnedStore().saveModel('for-trainer', result, 1);
    const config = {
      ...TRAIN_DEFAULTS,
      env: ENV,
      mode: 'dream',
      llm: 'learned:local/for-trainer',
      llmPrior: false,
      curriculumVariations: 'procedural',
    } as unknown as TrainConfig;
    // No buffer to retrieve from: refused with the fix (core/train/grounding.ts); a grounded one dreams.
    await expect(trainerDeps(config)).rejects.toThrow(/there is no replay buffer to retrieve from/);
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    await buffer.importTrajectories(
      parseTrajectoriesJsonl(readFileSync(`public/datasets/${ENV}.jsonl`, 'utf8').split('\n')[0]),
      { source: 'offline', createdAt: 0 },
    );
    const deps = await trainerDeps(config, {}, async () => buffer);
    expect(deps.experienceModel?.label).toMatch(/^learned tiny \(k=\d+, H=\d+, T=0.7\)$/);
    await expect(trainerDeps({ ...config, llmPrior: true }, {}, async () => buffer)).rejects.toThrow(
      /'llmPrior' needs a language model, .* not a chat model/,
    );
    const household = new ReplayBuffer(new MemoryBufferStore());
    await household.importTrajectories(
      parseTrajectoriesJsonl(readFileSync('public/datasets/household-v0.jsonl', 'utf8').split('\n')[0]),
      { source: 'offline', createdAt: 0 },
    );
    await expect(trainerDeps({ ...config, env: 'household-v0' }, {}, async () => household)).rejects.toThrow(
      /this run's environment is household-v0/,
    );
    await expect(trainerDeps({ ...config, llm: 'learned:local/none' }, {}, async () => buffer)).rejects.toThrow(
      /No learned model named 'none'/,
    );
  }, 120_000);

  it('offers the shipped model of an env and the ones trained here, labelled as learned models', async () => {
    const { result } = await tinyModel();
    const get = serving({ [`models/${ENV}/model.json`]: result.manifest });
    const info = await fetchShippedInfo(ENV, get, BASE);
    expect(info).toMatchObject({ env: ENV, modelName: 'tiny', weightsBytes: result.weights.length });
    expect(await fetchShippedInfo('household-v0', get, BASE)).toBeNull();
    const local = [
      { name: 'mine', env: ENV, trainEpisodes: 6, epochs: 1 },
      { name: 'other-env', env: 'household-v0', trainEpisodes: 1, epochs: 1 },
    ] as never;
    const options = learnedOptionsFor(ENV, info, local);
    expect(options.map((o) => o.spec)).toEqual([`learned:models/${ENV}`, 'learned:local/mine']);
    for (const o of options) expect(o.label).toMatch(/^learned experience model \(tfjs, not a chat model\)/);
    expect(learnedOptionsFor(ENV, null, [])).toEqual([]);
  }, 120_000);
});
