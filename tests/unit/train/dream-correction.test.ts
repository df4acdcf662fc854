/**
 * S2R that corrects the dream (dream-correction.ts): rounds replay the dream's claimed successes
 * in the real env, charged to the real budget and never beyond it; the model is corrected with the
 * replays (a false success of the oracle's flipped rewards is a miss); the same seed gives the
 * same run, a resumed run rebuilds the same corrections; a config that cannot correct is refused.
 */
import { describe, expect, it } from 'vitest';
import type { TrainConfig } from '../../../src/core/train/config';
import { Trainer } from '../../../src/core/train/loop';
import {
  claimedSuccesses,
  correctionRoundAt,
  replayInReal,
  roundAllowance,
} from '../../../src/core/train/dream-correction';
import { getEnvDefinition, makeEnv } from '../../../src/core/envs/registry';
import { makeBaselinePolicy, rolloutEpisode } from '../../../src/core/data/rollout';
import type { Episode } from '../../../src/core/train/rollout';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import type { DreamContext, DreamCorrection, ExperienceModel, Prediction } from '../../../src/core/experience/types';
import type { Task } from '../../../src/core/types';
import { deserializeCheckpoint, serializeCheckpoint } from '../../../src/core/train/checkpoint';
import { smallWebshop, useWasmBackend } from './fixtures';

useWasmBackend();

function config(overrides: Partial<TrainConfig> = {}): TrainConfig {
  return smallWebshop({
    mode: 's2r',
    llm: 'learned:test-double',
    iterations: 4,
    evalEpisodes: 2,
    finalEvalEpisodes: 2,
    realStepBudget: 400,
    s2rRealFraction: 0.5,
    s2rCorrectFraction: 0.5,
    s2rCorrectRounds: 2,
    ...overrides,
  });
}

/** The oracle with half its rewards flipped (false successes to catch), keeping every correction it is given. */
class CorrectableOracle implements ExperienceModel {
  readonly label = 'oracle with flipped rewards that records its corrections (test double)';
  readonly corrections: DreamCorrection[] = [];
  private readonly inner: NoisyOracleModel;
  constructor(env: string) {
    this.inner = new NoisyOracleModel(env, { epsilonReward: 0.5, epsilonTransition: 0, seed: 3 });
  }
  initial(task: Task): ReturnType<ExperienceModel['initial']> {
    return this.inner.initial(task);
  }
  next(ctx: DreamContext): Promise<Prediction> {
    return this.inner.next(ctx);
  }
  async correct(correction: DreamCorrection): Promise<void> {
    this.corrections.push(correction);
  }
  /** Every replayed episode so far, as plain data. */
  replayed(): string {
    return JSON.stringify(this.corrections.flatMap((c) => c.episodes));
  }
}

async function runAll(trainer: Trainer): Promise<Record<string, number>[]> {
  const metrics: Record<string, number>[] = [];
  while (!trainer.finished) metrics.push((await trainer.runIteration()).metrics);
  return metrics;
}

describe('S2R that corrects the dream', () => {
  it('schedules its rounds inside the dream, never after its last iteration, and splits the budget among them', () => {
    const c = config({ iterations: 60, s2rCorrectRounds: 4 });
    const rounds = Array.from({ length: 80 }, (_, i) => i + 1).filter((i) => correctionRoundAt(c, i) > 0);
    expect(rounds).toEqual([12, 24, 36, 48]);
    expect(correctionRoundAt(config({ s2rCorrectFraction: 0 }), 1)).toBe(0);
    expect([1, 2, 3, 4].map((k) => roundAllowance(c, 200, k))).toEqual([25, 50, 75, 100]);
  });

  it('replays claimed successes, charged to the real budget and never beyond it, and corrects the model', async () => {
    const c = config();
    const model = new CorrectableOracle(c.env);
    const trainer = new Trainer(c, { experienceModel: model });
    const metrics = await runAll(trainer);
    expect(trainer.realBudget).toBe(200);
    // Rounds after dream iterations 1 and 3 (of 4), each allowed at most its share of 100 steps.
    expect(metrics.map((m) => m['s2r/corrected_episodes'] !== undefined)).toEqual(
      metrics.map((_, i) => i === 0 || i === 2),
    );
    const correctionSteps = metrics.reduce((sum, m) => sum + (m['s2r/correction_steps'] ?? 0), 0);
    expect(metrics[0]['s2r/correction_steps']).toBeLessThanOrEqual(50);
    expect(correctionSteps).toBeGreaterThan(0);
    expect(correctionSteps).toBeLessThanOrEqual(100);
    expect(metrics[0]['budget/real_steps']).toBe(metrics[0]['s2r/correction_steps']);
    // The real phase spends what is left, and the run never more than its budget.
    expect(trainer.realSteps).toBe(200);
    expect(Math.max(...metrics.map((m) => m['budget/real_steps']))).toBeLessThanOrEqual(200);
    // Flipped rewards make false successes: the real env does not confirm them.
    const replays = model.corrections.flatMap((r) => r.episodes);
    expect(replays.length).toBe(metrics[0]['s2r/corrected_episodes'] + metrics[2]['s2r/corrected_episodes']);
    expect(replays.every((e) => e.steps.every((t) => t.source === 'real'))).toBe(true);
    expect(metrics.some((m) => m['s2r/false_success_rate'] > 0)).toBe(true);
    trainer.dispose();
  }, 120_000);

  it('replays a dream begun at a real state from the real first state, its recorded prefix first', async () => {
    const definition = getEnvDefinition('household-v0');
    const task = definition.generateTask(5, 0);
    const real = await rolloutEpisode(makeEnv('household-v0'), makeBaselinePolicy('expert'), { seed: 5, task });
    const from = Math.floor(real.steps.length / 2);
    const prefix = real.steps
      .slice(0, from)
      .map((s) => ({ observation: s.observation, action: s.action, valid: true }));
    prefix.splice(1, 0, { observation: prefix[1].observation, action: 'dance', valid: false }); // a recorded no-op
    // The dream "plays" the rest of the expert's actions from the real state it began at, and claims a success.
    const record = real.steps.slice(from).map((s) => ({ observation: s.observation, action: s.action, valid: true }));
    const episode = { task, success: true, record, realStart: { fromStep: from, horizon: 10, prefix } };
    const [plan] = claimedSuccesses([episode as unknown as Episode]);
    expect(plan.start).toBe(real.steps[0].observation);
    expect(plan.actions).toEqual(real.steps.map((s) => s.action));
    const replayed = await replayInReal(makeEnv('household-v0'), plan, 'replay');
    expect(replayed).toMatchObject({ success: true, steps: real.steps.length });
  });

  it('the same seed gives the same corrections; a resumed run rebuilds them and goes on exactly', async () => {
    const c = config();
    const first = new CorrectableOracle(c.env);
    const whole = new Trainer(c, { experienceModel: first });
    const wholeMetrics = await runAll(whole);

    const again = new CorrectableOracle(c.env);
    const part = new Trainer(c, { experienceModel: again });
    const partMetrics = [(await part.runIteration()).metrics, (await part.runIteration()).metrics];
    const { manifest, blob } = serializeCheckpoint(await part.state());
    const saved = deserializeCheckpoint(JSON.parse(JSON.stringify(manifest)), blob.slice());
    part.dispose();
    expect(saved.corrections?.length).toBe(1);
    const resumedModel = new CorrectableOracle(c.env);
    const resumed = await Trainer.restore(saved, {}, { experienceModel: resumedModel });
    // Rebuilt at once, with the replays of round 1, as one correction.
    expect(resumedModel.replayed()).toBe(JSON.stringify(again.corrections[0].episodes));
    partMetrics.push(...(await runAll(resumed)));
    expect(partMetrics).toEqual(wholeMetrics);
    expect(
      JSON.stringify([...again.corrections, ...resumedModel.corrections.slice(1)].flatMap((x) => x.episodes)),
    ).toBe(first.replayed());
    expect(resumed.realSteps).toBe(whole.realSteps);
    whole.dispose();
    resumed.dispose();
  }, 180_000);

  it('is refused where it cannot correct: another mode, the oracle, a model without correct()', () => {
    expect(() => config({ mode: 'dream' })).toThrow(/'s2rCorrectFraction' 0.5 .* mode is "dream"; use mode s2r/);
    expect(() => config({ llm: 'oracle:0.1,0.1' })).toThrow(/the oracle is the real env .* nothing to correct/);
    expect(() => config({ s2rCorrectFraction: 1.5 })).toThrow(/'s2rCorrectFraction' must be within 0..1/);
    const c = config();
    const oracle = new NoisyOracleModel(c.env, { epsilonReward: 0, epsilonTransition: 0 });
    expect(() => new Trainer(c, { experienceModel: oracle })).toThrow(/cannot be corrected/);
    expect(() => config({ s2rCorrectFraction: 0, llm: 'oracle:0,0' })).not.toThrow();
  });
});
