/**
 * Episode traces of the training loop (the Inspect view's data) and the on-demand real outcome of
 * a dreamed step: with an error-free oracle every dreamed step matches the real env exactly; a
 * planted dream error is found where it was planted; traces do not change what the run does.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { TrainConfig } from '../../../src/core/train/config';
import { Trainer } from '../../../src/core/train/loop';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import type { DreamContext, ExperienceModel, Prediction } from '../../../src/core/experience/types';
import {
  acceptedActionsBefore,
  compareOutcome,
  nextOf,
  replayInRealEnv,
  type EpisodeTrace,
} from '../../../src/core/train/trace';
import { getEnvDefinition } from '../../../src/core/envs/registry';
import { smallWebshop, useWasmBackend } from './fixtures';

useWasmBackend();

function small(overrides: Partial<TrainConfig> = {}): TrainConfig {
  return smallWebshop({ iterations: 2, groupSize: 3, ...overrides });
}

/** Step `i` of a traced episode replayed in the real env (an error where it cannot be). */
async function replayed(env: string, trace: EpisodeTrace, i: number) {
  const real = await replayInRealEnv(env, trace.task, acceptedActionsBefore(trace, i), trace.steps[i].action);
  if (real.kind !== 'real') throw new Error(real.reason);
  return real;
}

async function collect(
  config: TrainConfig,
  model?: ExperienceModel,
): Promise<{ traces: EpisodeTrace[]; lines: string[]; trainer: Trainer }> {
  const traces: EpisodeTrace[] = [];
  const trainer = new Trainer(config, {
    ...(model ? { experienceModel: model } : {}),
    onEpisodes: (episodes) => {
      traces.push(...episodes);
    },
  });
  const lines: string[] = [];
  while (!trainer.finished) lines.push(JSON.stringify(await trainer.runIteration()));
  return { traces, lines, trainer };
}

/** The error-free oracle, except that the second asked step of every episode reports a fake end. */
class PlantedEndModel implements ExperienceModel {
  readonly label = 'oracle with a planted fake ending (test double)';
  constructor(private readonly inner: NoisyOracleModel) {}
  initial(task: Parameters<ExperienceModel['initial']>[0]) {
    return this.inner.initial(task);
  }
  async next(ctx: DreamContext): Promise<Prediction> {
    const p = await this.inner.next(ctx);
    if (ctx.history.length !== 1 || p.terminated || !p.actionValid) return p;
    return {
      ...p,
      reasoning: 'planted: says the episode ended',
      next: { ...p.next, text: `${p.next.text} [planted]`, admissible: [] },
      reward: 1,
      terminated: true,
    };
  }
}

describe('episode traces', () => {
  it('record every step with the policy distribution over the admissible actions, and leave the run unchanged', async () => {
    const config = small({ mode: 'dream', llm: 'oracle:0,0' });
    const oracle = () =>
      new NoisyOracleModel(config.env, { epsilonReward: 0, epsilonTransition: 0, seed: config.seed });
    const { traces, lines, trainer } = await collect(config, oracle());
    expect(traces).toHaveLength(2 * 2 * 3);
    expect(traces.reduce((n, t) => n + t.steps.length, 0)).toBe(trainer.dreamSteps);
    for (const trace of traces) {
      expect(trace.phase).toBe('dream');
      expect(trace.experienceModel).toBe('oracle (ε_R=0, ε_P=0)');
      expect(trace.steps.length).toBeGreaterThan(0);
      for (const step of trace.steps) {
        expect(step.probabilities).toHaveLength(step.admissible.length);
        expect(step.probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
        expect(step.admissible[step.actionIndex]).toBe(step.action);
        expect(step.reasoning).toMatch(/^Oracle: /);
      }
      const last = trace.steps[trace.steps.length - 1];
      expect(last.terminated || last.truncated).toBe(true);
      expect(trace.success).toBe(last.terminated && last.reward >= 1);
    }
    // Without the hook, the same run gives the same metrics (the hook draws nothing).
    const plain = new Trainer(config, { experienceModel: oracle() });
    const plainLines: string[] = [];
    while (!plain.finished) plainLines.push(JSON.stringify(await plain.runIteration()));
    expect(plainLines).toEqual(lines);
    trainer.dispose();
    plain.dispose();
  });

  it('an error-free oracle dream matches the real env at every step, computed on demand', async () => {
    const config = small({ mode: 'dream', iterations: 1 });
    const { traces, trainer } = await collect(
      config,
      new NoisyOracleModel(config.env, { epsilonReward: 0, epsilonTransition: 0 }),
    );
    let compared = 0;
    for (const trace of traces) {
      for (let i = 0; i < trace.steps.length; i++) {
        const real = await replayed(config.env, trace, i);
        expect(real.before.text).toBe(trace.steps[i].observation);
        const c = compareOutcome(trace, i, real);
        expect(c, `${trace.episodeId} step ${i}`).toMatchObject({ same: true, divergedBefore: false });
        expect(real.result.text).toBe(nextOf(trace, i).observation);
        compared++;
      }
    }
    expect(compared).toBe(trainer.dreamSteps);
    trainer.dispose();
  });

  it('finds a planted dream error exactly where it was planted', async () => {
    const config = small({ mode: 'dream', iterations: 1 });
    const { traces, trainer } = await collect(
      config,
      new PlantedEndModel(new NoisyOracleModel(config.env, { epsilonReward: 0, epsilonTransition: 0 })),
    );
    let planted = 0;
    for (const trace of traces) {
      for (let i = 0; i < trace.steps.length; i++) {
        const real = await replayed(config.env, trace, i);
        const c = compareOutcome(trace, i, real);
        const isPlanted = trace.steps[i].reasoning === 'planted: says the episode ended';
        if (isPlanted) {
          planted++;
          // Step 2 of the dream "ends" the episode with reward 1; the real env goes on.
          expect(i).toBe(1);
          expect(c.same).toBe(false);
          expect(c.sameObservation).toBe(false);
          expect(c.sameReward).toBe(real.result.reward === 1);
          expect(c.sameTerminated).toBe(false);
          expect(c.onlyInReal.length).toBeGreaterThan(0);
          expect(nextOf(trace, i).observation.endsWith(' [planted]')).toBe(true);
        } else {
          expect(c.same).toBe(true);
        }
      }
    }
    expect(planted).toBeGreaterThan(0);
    trainer.dispose();
  });

  it('real-mode traces replay to the same outcomes', async () => {
    const config = small({ mode: 'real', iterations: 1 });
    const { traces, trainer } = await collect(config);
    expect(traces.every((t) => t.phase === 'real' && t.experienceModel === undefined)).toBe(true);
    for (const trace of traces.slice(0, 3)) {
      for (let i = 0; i < trace.steps.length; i++) {
        const real = await replayed(config.env, trace, i);
        expect(real.result.reward).toBe(trace.steps[i].reward);
        expect(real.result.text).toBe(nextOf(trace, i).observation);
      }
    }
    trainer.dispose();
  });

  it('says when there is no real counterpart, and reports a diverged prefix', async () => {
    const task = getEnvDefinition('webshop-lite-v0').generateTask(4, 0.2);
    await expect(
      replayInRealEnv('webshop-lite-v0', { ...task, origin: 'llm' }, [], 'search[x]'),
    ).resolves.toMatchObject({ kind: 'none', reason: expect.stringMatching(/written by an LLM/) });
    await expect(replayInRealEnv('my-domain-v0', task, [], 'go')).resolves.toMatchObject({
      kind: 'none',
      reason: expect.stringMatching(/no built-in real environment/),
    });
    const real = await replayInRealEnv('webshop-lite-v0', task, ['click[no such button]'], 'click[also missing]');
    expect(real).toMatchObject({ kind: 'real', refused: [0] });
    if (real.kind === 'real') expect(real.result.info.valid).toBe(false);
  });
});
