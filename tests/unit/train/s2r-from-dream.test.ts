/**
 * S2R from a finished dream run (s2r-from-dream.ts): a tiny dream run's final checkpoint, restored
 * as S2R, continues exactly as a fresh S2R run of the same seed does at the end of its dream phase:
 * every metric of the real phase equal. The page's Start here relies on it (one dream for two cards).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../src/core/tfjs/backend';
import { getPreset, validateConfig, type TrainConfig } from '../../../src/core/train/config';
import { CheckpointMismatchError, Trainer, type IterationRecord } from '../../../src/core/train/loop';
import { buildRunParts } from '../../../src/core/train/run-parts';
import { deserializeCheckpoint, serializeCheckpoint } from '../../../src/core/train/checkpoint';
import { engineIdle, NO_DREAM_LEFT, s2rStateFromDream } from '../../../src/core/train/s2r-from-dream';

beforeAll(async () => {
  await initBackend('wasm');
});

/** Start here's shape, tiny: a noisy oracle dream (not the real env), the curriculum, evaluations. */
function tiny(mode: 'dream' | 's2r', overrides: Partial<TrainConfig> = {}): TrainConfig {
  return validateConfig({
    ...getPreset('webshop-easy'),
    mode,
    llm: 'oracle:0.1,0.1',
    curriculum: true,
    seed: 3,
    iterations: 3,
    tasksPerIteration: 4, // λ 0.25 leaves one slot to the curriculum's variations
    groupSize: 2,
    evalInterval: 2,
    evalEpisodes: 4,
    finalEvalEpisodes: 6,
    realStepBudget: 400,
    s2rRealFraction: 0.25,
    ...overrides,
  });
}

async function runAll(trainer: Trainer): Promise<IterationRecord[]> {
  const records: IterationRecord[] = [];
  while (!trainer.finished) records.push(await trainer.runIteration());
  return records;
}

/** The dream's final state, through the serialised checkpoint (manifest JSON + weights blob) as the stores keep it. */
async function finishedDream(config: TrainConfig) {
  const trainer = new Trainer(config, await buildRunParts(config));
  const records = await runAll(trainer);
  const { manifest, blob } = serializeCheckpoint(await trainer.state());
  const state = deserializeCheckpoint(JSON.parse(JSON.stringify(manifest)), blob.slice());
  trainer.dispose();
  return { records, state };
}

describe('S2R from a finished dream', () => {
  it('continues as a fresh S2R run of the same seed: every real-phase metric equal, the dream phase too', async () => {
    const s2r = tiny('s2r');
    const fresh = new Trainer(s2r, await buildRunParts(s2r));
    const full = await runAll(fresh);
    fresh.dispose();
    const dream = await finishedDream(tiny('dream'));

    const state = s2rStateFromDream(dream.state, s2r);
    expect(engineIdle(s2r, state.iteration)).toBe(true);
    expect(engineIdle(s2r, state.iteration - 1)).toBe(false);
    // Past the dream nothing dreams: no experience model is loaded for the real phase.
    const continued = await Trainer.restore(state, {}, { experienceModel: NO_DREAM_LEFT });
    expect(continued.dreamSteps).toBe(dream.state.dreamSteps);
    const realPhase = await runAll(continued);
    continued.dispose();

    const dreamPhase = full.filter((r) => r.iteration <= s2r.iterations);
    expect(realPhase.length).toBeGreaterThan(1);
    expect(realPhase).toEqual(full.slice(dreamPhase.length));
    expect(realPhase[realPhase.length - 1].metrics['budget/real_steps']).toBe(100);
    // The dream phase is the dream run, but for the evaluations: the dream's last iteration is its
    // final one (finalEvalEpisodes), S2R's an ordinary one (evalEpisodes, when due).
    const withoutEval = (r: IterationRecord) =>
      Object.fromEntries(Object.entries(r.metrics).filter(([key]) => !key.startsWith('eval/')));
    expect(dream.records.map(withoutEval)).toEqual(dreamPhase.map(withoutEval));
    expect(dream.records[1].metrics['eval/success_rate']).toBe(dreamPhase[1].metrics['eval/success_rate']);
  });

  it("refuses a dream that is not the S2R run's dream phase, saying why", async () => {
    const { state } = await finishedDream(tiny('dream', { iterations: 1 }));
    const refused = (config: TrainConfig, pattern: RegExp) => {
      expect(() => s2rStateFromDream(state, config)).toThrow(CheckpointMismatchError);
      expect(() => s2rStateFromDream(state, config)).toThrow(pattern);
    };
    refused(tiny('s2r', { iterations: 1, seed: 4 }), /the configs differ in seed/);
    refused(tiny('s2r', { iterations: 2 }), /the configs differ in iterations/);
    refused(tiny('dream', { iterations: 1 }), /mode 'dream', not 's2r'/);
    refused(
      tiny('s2r', { iterations: 1, llm: 'learned:models/webshop-lite-v0', s2rCorrectFraction: 0.5 }),
      /s2rCorrectFraction 0.5 corrects the dream/,
    );
    // What a dream never reads may differ: S2R's real budget.
    expect(s2rStateFromDream(state, tiny('s2r', { iterations: 1, s2rRealFraction: 0.5 })).config.mode).toBe('s2r');
    // A dream stopped before its last iteration.
    const stopped = new Trainer(
      tiny('dream', { iterations: 2 }),
      await buildRunParts(tiny('dream', { iterations: 2 })),
    );
    await stopped.runIteration();
    const unfinished = await stopped.state();
    stopped.dispose();
    expect(() => s2rStateFromDream(unfinished, tiny('s2r', { iterations: 2 }))).toThrow(
      /the dream saved iteration 1 of 2, not its last/,
    );
  });
});
