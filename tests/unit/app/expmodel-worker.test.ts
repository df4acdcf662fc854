/**
 * The Experience model worker's host and client wired together in Node (no real Worker; a memory
 * replay buffer, fake-indexeddb for the model store): training streams status, batch and epoch
 * progress (the time left measured on the training) and stores the model; a stop keeps the last
 * epoch's checkpoint, `keep` stores its best epoch as the model (the checkpoint stays), and a
 * resume continues from it (the loss history first); evaluation audits against the real env and dreams held-out
 * transitions beside the real ones; a worker that never answers a stop is terminated.
 */
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { initBackend } from '../../../src/core/tfjs/backend';
import { ExpModelClient, ExpModelStoppedError } from '../../../src/app/workers/expmodel/expmodel-client';
import type { WorkerLike } from '../../../src/app/workers/worker-client';
import {
  autoBackend,
  chooseBackend,
  ExpModelHost,
  trainOptions,
} from '../../../src/app/workers/expmodel/expmodel-host';
import type {
  Evaluation,
  ExpModelProgress,
  ExpModelReply,
  ExpModelRequest,
  TrainOutcome,
} from '../../../src/app/workers/expmodel/expmodel-protocol';
import { LearnedModelStore } from '../../../src/app/storage/learned-store';
import { SIZE_INFO } from '../../../src/app/state/model/expmodel-settings';
import { DEFAULT_NETWORK } from '../../../src/core/experience/learned/train-model';
import { ENV, fixtureBuffer, tinySettings } from './learned-fixtures';

let buffer: ReplayBuffer;

beforeAll(async () => {
  await initBackend('wasm');
  buffer = await fixtureBuffer();
});

/** A fake Worker whose other end is an ExpModelHost in the same thread (messages cloned like postMessage). */
function inProcessWorker(
  store: LearnedModelStore,
  onPost?: (reply: ExpModelReply) => void,
): WorkerLike & { terminated: boolean } {
  const listeners: Record<string, ((event: Event) => void)[]> = { message: [], error: [], messageerror: [] };
  let clock = 0;
  const host = new ExpModelHost(
    (reply) => {
      onPost?.(reply);
      const data = structuredClone(reply);
      setTimeout(() => {
        for (const l of listeners.message) l({ data } as MessageEvent);
      }, 0);
    },
    {
      openBuffer: async () => buffer,
      store,
      chooseBackend: async () => ({ backend: 'wasm', reason: 'wasm (test)' }),
      now: () => (clock += 10),
      date: () => 1_700_000_000_000,
    },
  );
  const worker = {
    terminated: false,
    postMessage(message: unknown) {
      void host.handle(structuredClone(message) as ExpModelRequest);
    },
    terminate() {
      worker.terminated = true;
    },
    addEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void) {
      listeners[type].push(listener);
    },
  };
  return worker;
}

describe('the Experience model worker', () => {
  it("trains on the buffer's real episodes with live progress, stores the model, then evaluates it", async () => {
    const store = new LearnedModelStore('expmodel-worker-1');
    const client = new ExpModelClient(inProcessWorker(store));
    const events: ExpModelProgress[] = [];
    const outcome = (await client.train(tinySettings({ epochs: 2 }), false, (p) => events.push(p))) as Extract<
      TrainOutcome,
      { outcome: 'finished' }
    >;
    expect(outcome.outcome).toBe('finished');
    expect(outcome.path).toBe('local/tiny');
    expect(outcome.summary).toMatchObject({ name: 'tiny', env: ENV, epochs: 2, backend: 'wasm' });
    const kinds = events.map((e) => e.kind);
    expect(kinds.filter((k) => k === 'epoch')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'checkpoint')).toHaveLength(2);
    expect(kinds).toContain('batch');
    // Status first (backend, data preparation), the epochs in order, each followed by its checkpoint.
    expect(kinds[0]).toBe('status');
    const epochs = events
      .filter((e) => e.kind === 'epoch')
      .map((e) => (e as Extract<ExpModelProgress, { kind: 'epoch' }>).record.epoch);
    expect(epochs).toEqual([1, 2]);
    expect(kinds.lastIndexOf('checkpoint')).toBeGreaterThan(kinds.lastIndexOf('epoch'));
    // An epoch's last batch is always sent: by then the speed is measured (start-up left out), the time left given.
    type BatchEvent = Extract<ExpModelProgress, { kind: 'batch' }>;
    const lasts = events.filter((e) => e.kind === 'batch' && e.batch === e.batches) as BatchEvent[];
    expect(lasts).toHaveLength(2);
    for (const b of lasts) {
      expect(b.speedBatches).toBeGreaterThanOrEqual(3);
      expect(b.epochTokens).toBeGreaterThan(0);
      expect(b.tokensPerSecond).toBeGreaterThan(0);
      expect(b.epochSecondsLeft).toBeGreaterThanOrEqual(0);
      expect(b.secondsLeft).toBeGreaterThanOrEqual(b.epochSecondsLeft!);
    }
    expect(lasts[0].secondsLeft).toBeGreaterThan(lasts[0].epochSecondsLeft!);
    const statuses = events
      .filter((e) => e.kind === 'status')
      .map((e) => (e as Extract<ExpModelProgress, { kind: 'status' }>).status);
    expect(statuses.at(-1)).toMatchObject({ state: 'finished', backend: 'wasm', backendReason: 'wasm (test)' });
    expect(statuses.at(-1)!.message).toMatch(/Stored in this browser as learned:local\/tiny/);
    // Stored, and its checkpoint gone.
    expect((await store.listModels()).map((m) => m.name)).toEqual(['tiny']);
    expect(await store.listCheckpoints()).toEqual([]);

    const progress: ExpModelProgress[] = [];
    const evaluation: Evaluation = await client.evaluate(
      { path: 'local/tiny', env: ENV, audit: 4, samples: 2, seed: 0, backend: 'wasm' },
      (p) => progress.push(p),
    );
    expect(evaluation.label).toMatch(/^learned tiny \(k=4, H=4, T=0.7\)$/);
    expect(evaluation.audit!.report).toMatchObject({ env: ENV, n: 4 });
    for (const key of [
      'reward_accuracy',
      'terminated_accuracy',
      'admissible_jaccard',
      'observation_f1',
      'invalid_rate',
    ] as const) {
      const v = evaluation.audit!.report[key];
      if (v !== null) expect(v).toBeGreaterThanOrEqual(0);
    }
    expect(evaluation.oracle!.llm).toBe('oracle (ε_R=0.1, ε_P=0.1)');
    expect(evaluation.samples).toHaveLength(2);
    for (const s of evaluation.samples) {
      expect(s.episodeSeed).toBeGreaterThanOrEqual(1_000_000_000);
      expect(s.action).not.toBe('');
      expect(s.real.observation).not.toBe('');
    }
    expect(evaluation.training.epochs).toHaveLength(2);
    const audited = progress.filter((p) => p.kind === 'audit') as Extract<ExpModelProgress, { kind: 'audit' }>[];
    expect(audited.at(-1)).toEqual({ kind: 'audit', done: 8, total: 8 });
    await store.close();
  }, 120_000);

  it("a stop keeps the last epoch's checkpoint; a resume sends the history and continues from it", async () => {
    const store = new LearnedModelStore('expmodel-worker-2');
    let client!: ExpModelClient;
    const settings = tinySettings({ epochs: 3, name: 'resumable' });
    const first: ExpModelProgress[] = [];
    const stopped = await client_train();
    async function client_train(): Promise<TrainOutcome> {
      client = new ExpModelClient(
        inProcessWorker(store, (reply) => {
          // Stop as soon as the first epoch's checkpoint is written (the host is in the same thread: it sees it at once).
          if (reply.kind === 'progress' && reply.progress.kind === 'checkpoint') void client.stop();
        }),
      );
      return client.train(settings, false, (p) => first.push(p));
    }
    expect(stopped).toEqual({ outcome: 'stopped', path: 'local/resumable', epochsDone: 1 });
    expect(await store.listModels()).toEqual([]);
    const unfinished = await store.listCheckpoints();
    expect(unfinished.map((u) => [u.name, u.epochsDone, u.epochs])).toEqual([['resumable', 1, 3]]);
    expect(unfinished[0].settings).toMatchObject({ name: 'resumable', epochs: 3, size: 'tiny' });

    // What the page does next (in a fresh worker, as after a terminated one): keep the best finished epoch as a model.
    const keeping: ExpModelProgress[] = [];
    const keeper = new ExpModelClient(inProcessWorker(store));
    const kept = await keeper.keep('resumable', 'wasm', (p) => keeping.push(p));
    expect(kept).toMatchObject({ path: 'local/resumable', epochsDone: 1, epochs: 3, bestEpoch: 1 });
    expect(kept.summary).toMatchObject({ name: 'resumable', env: ENV, epochs: 1, bestEpoch: 1, epochsPlanned: 3 });
    type StatusEvent = Extract<ExpModelProgress, { kind: 'status' }>;
    const states = keeping.filter((p) => p.kind === 'status').map((p) => (p as StatusEvent).status);
    expect(states.map((st) => st.state)).toContain('saving');
    expect(states.at(-1)!.message).toMatch(/^Stopped after epoch 1 of 3\. The model of epoch 1 .* stored as /);
    expect(states.at(-1)!.message).toMatch(/learned:local\/resumable, usable now; the checkpoint after epoch 1 stays/);
    expect((await store.listModels()).map((m) => [m.name, m.epochs, m.epochsPlanned])).toEqual([['resumable', 1, 3]]);
    // The kept model is the checkpoint's best epoch, and it loads; the checkpoint still resumes.
    const stored = await store.readModel('resumable');
    expect(stored.manifest.training.epochs.map((e) => e.epoch)).toEqual([1]);
    expect(stored.manifest.training.bestValidationLoss).toBe(unfinished[0].history[0].validationLoss);
    expect((await store.listCheckpoints()).map((u) => u.epochsDone)).toEqual([1]);

    // A fresh worker (a reload) resumes: the epoch trained before comes first, then epochs 2 and 3.
    const second: ExpModelProgress[] = [];
    const resumed = new ExpModelClient(inProcessWorker(store));
    const outcome = (await resumed.train({ ...settings, epochs: 99 }, true, (p) => second.push(p))) as Extract<
      TrainOutcome,
      { outcome: 'finished' }
    >;
    expect(outcome.outcome).toBe('finished');
    const history = second.find((p) => p.kind === 'history') as Extract<ExpModelProgress, { kind: 'history' }>;
    expect(history.records.map((r) => r.epoch)).toEqual([1]);
    const epochs = second
      .filter((e) => e.kind === 'epoch')
      .map((e) => (e as Extract<ExpModelProgress, { kind: 'epoch' }>).record.epoch);
    expect(epochs).toEqual([2, 3]); // the checkpoint's own settings win (3 epochs, not 99)
    expect(outcome.training.epochs.map((e) => e.epoch)).toEqual([1, 2, 3]);
    expect(await store.listCheckpoints()).toEqual([]);
    // The finished model replaced the kept one.
    const models = await store.listModels();
    expect(models.map((m) => [m.name, m.epochs, m.epochsPlanned])).toEqual([['resumable', 3, undefined]]);
    // Nothing to resume now: the error says what to do.
    await expect(resumed.train(settings, true, () => {})).rejects.toThrow(
      /no unfinished training named 'resumable' .* press Train/,
    );
    await expect(resumed.keep('resumable', 'wasm')).rejects.toThrow(/no unfinished training named 'resumable' .* keep/);
    await store.close();
  }, 120_000);

  it('refuses bad settings and an env without real data, naming the fix', async () => {
    const store = new LearnedModelStore('expmodel-worker-3');
    const client = new ExpModelClient(inProcessWorker(store));
    await expect(client.train(tinySettings({ name: 'bad name' }), false, () => {})).rejects.toThrow(
      /cannot name a model/,
    );
    await expect(client.train(tinySettings({ env: 'household-v0' }), false, () => {})).rejects.toThrow(
      /no real episodes of 'household-v0'/,
    );
    await expect(
      client.evaluate({ path: 'local/none', env: ENV, audit: 1, samples: 0, seed: 0, backend: 'wasm' }, () => {}),
    ).rejects.toThrow(/No learned model named 'none'/);
    expect((await client.status()).state).toBe('error');
    await store.close();
  }, 120_000);

  it('terminates a worker that does not answer a stop in time; the running request ends as stopped', async () => {
    const posted: unknown[] = [];
    const worker = {
      terminated: false,
      postMessage: (m: unknown) => {
        posted.push(m);
      },
      terminate() {
        worker.terminated = true;
      },
      addEventListener() {},
    };
    const client = new ExpModelClient(worker, 20);
    const training = client.train(tinySettings(), false, () => {});
    await client.stop();
    await expect(training).rejects.toThrow(ExpModelStoppedError);
    expect(worker.terminated).toBe(true);
    expect(posted.map((m) => (m as { type: string }).type)).toEqual(['train', 'stop']);
    expect(client.gone).toBe(true);
    await expect(client.status()).rejects.toThrow(/terminated to stop it/);
  });
});

describe('backend choice and training options', () => {
  it('auto picks WebGPU on a hardware adapter only; a failed WebGPU falls back to wasm with the reason', async () => {
    expect(autoBackend({ adapter: true, fallback: false }).backend).toBe('webgpu');
    expect(autoBackend({ adapter: true, fallback: true })).toEqual({
      backend: 'wasm',
      why: expect.stringMatching(/software one .* so wasm/),
    });
    expect(autoBackend({ adapter: false, fallback: false, reason: 'navigator.gpu is missing' }).why).toMatch(
      /no WebGPU here \(navigator\.gpu is missing\), so wasm/,
    );
    const asked: (string | undefined)[] = [];
    const init = async (name?: string) => {
      asked.push(name);
      return { backend: name === 'webgpu' ? 'webgl' : 'wasm', reason: `${name} reason` } as never;
    };
    const gpu = await chooseBackend('auto', { probe: async () => ({ adapter: true, fallback: false }), init });
    expect(asked).toEqual(['webgpu', 'wasm']);
    expect(gpu).toEqual({
      backend: 'wasm',
      reason: expect.stringMatching(
        /hardware WebGPU adapter.*WebGPU did not start \(webgpu reason\); fell back to wasm reason/,
      ),
    });
    asked.length = 0;
    const software = await chooseBackend('auto', { probe: async () => ({ adapter: true, fallback: true }), init });
    expect(asked).toEqual(['wasm']);
    expect(software.reason).toMatch(/software one/);
    const ok = await chooseBackend('webgpu', { init: async (name) => ({ backend: name!, reason: 'ok' }) as never });
    expect(ok).toEqual({ backend: 'webgpu', reason: 'asked for webgpu: ok' });
  });

  it("maps the page's settings to core's options: the size picks the network, 0 episodes means all", () => {
    const tiny = trainOptions(
      tinySettings({ episodes: 8, k: 2, history: 1, epochs: 2, batchSize: 8, learningRate: 0.001, seed: 5 }),
    );
    expect(tiny.network).toMatchObject(SIZE_INFO.tiny.network);
    expect(tiny).toMatchObject({
      name: 'tiny',
      maxEpisodes: 8,
      format: { k: 2, historyLength: 1 },
      fit: { epochs: 2, batchSize: 8, learningRate: 0.001, seed: 5, warmupSteps: 2 },
    });
    const standard = trainOptions(tinySettings({ size: 'standard', episodes: 0 }));
    expect(standard.network).toEqual(DEFAULT_NETWORK);
    expect(standard.maxEpisodes).toBeUndefined();
    expect(standard.fit.warmupSteps).toBe(100);
  });
});
