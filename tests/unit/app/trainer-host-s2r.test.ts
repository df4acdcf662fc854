/**
 * The trainer worker's host in Node (fake-indexeddb for its stores): an S2R run started from a
 * finished dream run (Start here's S2R card) continues from the dream's final checkpoint, without
 * a second dream: the dream's history is copied under S2R's run, the engine is never loaded, and
 * the real phase, stopped midway and resumed as after a reload, is a fresh S2R run's, metric for
 * metric.
 */
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../src/core/tfjs/backend';
import { getPreset, validateConfig, type TrainConfig } from '../../../src/core/train/config';
import { Trainer, type IterationRecord } from '../../../src/core/train/loop';
import { buildRunParts } from '../../../src/core/train/run-parts';
import { TrainerHost } from '../../../src/app/workers/trainer/trainer-host';
import { MetricsHistoryStore } from '../../../src/app/storage/metrics-store';
import type { TrainerReply, TrainerRequest, TrainerStatus } from '../../../src/app/workers/trainer/trainer-protocol';

beforeAll(async () => {
  await initBackend('wasm');
});

const tiny = (mode: 'dream' | 's2r'): TrainConfig =>
  validateConfig({
    ...getPreset('webshop-easy'),
    mode,
    llm: 'oracle:0.1,0.1',
    curriculum: true,
    seed: 5,
    iterations: 2,
    tasksPerIteration: 4,
    groupSize: 2,
    evalInterval: 2,
    evalEpisodes: 4,
    finalEvalEpisodes: 6,
    realStepBudget: 4000,
    s2rRealFraction: 0.2,
  });

type Start = Omit<Extract<TrainerRequest, { type: 'start' }>, 'id' | 'type'>;
type Control = (host: TrainerHost) => Promise<unknown>;

/**
 * A start request on a fresh host (a new worker) to its end: the worker's log (each status
 * message once, in order) and its final status. `control` runs once the run is running.
 */
async function run(request: Start, control?: Control): Promise<{ log: string[]; final: TrainerStatus }> {
  const log: string[] = [];
  let final: TrainerStatus | null = null;
  let controlled = false;
  const host: TrainerHost = new TrainerHost((reply: TrainerReply) => {
    if (reply.kind === 'throw' && reply.id === 1) throw new Error(reply.error.message);
    if (reply.kind === 'return' && reply.id === 1) final = reply.value as TrainerStatus;
    if (reply.kind !== 'progress' || reply.progress.kind === 'live') return;
    const status = reply.progress.status;
    if (log.at(-1) !== status.message) log.push(status.message);
    if (control && !controlled && status.state === 'running') {
      controlled = true;
      void control(host);
    }
  });
  await host.handle({ id: 1, type: 'start', ...request });
  return { log, final: final! };
}

const steps = (n: number) => n.toLocaleString('en-US');
const withoutPerf = (records: IterationRecord[]) =>
  records.map((r) => ({
    iteration: r.iteration,
    metrics: Object.fromEntries(Object.entries(r.metrics).filter(([key]) => !key.startsWith('perf/'))),
  }));

describe('S2R from the dream run, in the trainer worker', () => {
  it("continues from the dream's checkpoint, dreams nothing, and resumes its real phase after a stop", async () => {
    const history = new MetricsHistoryStore();
    const dream = await run({ runId: 'dream-1', config: tiny('dream'), resume: false });
    expect(dream.final.state).toBe('finished');
    const dreamHistory = await history.list('dream-1');

    // Paused at once, two real iterations stepped, stopped: as a reload in the middle of the real phase.
    const stepTwiceAndStop: Control = async (host) => {
      for (const type of ['pause', 'step', 'step', 'stop'] as const) await host.handle({ id: 2, type });
    };
    const s2r = { runId: 's2r-1', config: tiny('s2r'), fromDream: 'dream-1' };
    const first = await run({ ...s2r, resume: false }, stepTwiceAndStop);
    expect(first.final).toMatchObject({ state: 'stopped', iteration: 4, dreamSteps: dream.final.dreamSteps });
    const dreams = /Loading the experience model|Evaluating the untrained|offline data/;
    expect(first.log.filter((m) => dreams.test(m))).toEqual([]);
    expect(first.log).toContain(
      `Continued from the dream run's final checkpoint (iteration 2, ${steps(dream.final.dreamSteps)} ` +
        'dream steps): no second dream, straight to the real phase.',
    );

    const resumed = await run({ ...s2r, resume: true });
    expect(resumed.log.filter((m) => dreams.test(m))).toEqual([]);
    expect(resumed.log).toContain('Resumed from the checkpoint at iteration 4.');
    expect(resumed.final).toMatchObject({ state: 'finished', realSteps: 800, dreamSteps: dream.final.dreamSteps });

    // The dream phase is the dream's own records (copied); the real phase a fresh S2R run's.
    const s2rHistory = await history.list('s2r-1');
    expect(s2rHistory.slice(0, dreamHistory.length)).toEqual(dreamHistory);
    const fresh = new Trainer(tiny('s2r'), await buildRunParts(tiny('s2r')));
    const records: IterationRecord[] = [];
    while (!fresh.finished) records.push(await fresh.runIteration());
    fresh.dispose();
    expect(withoutPerf(s2rHistory.slice(dreamHistory.length))).toEqual(records.slice(2));
  });

  it('refuses to start S2R from a dream that has no checkpoint, saying so', async () => {
    await expect(
      run({ runId: 's2r-2', config: tiny('s2r'), resume: false, fromDream: 'no-such-dream' }),
    ).rejects.toThrow(/the dream run 'no-such-dream' has no checkpoint, so S2R has no dream to continue from/);
  });
});
