/**
 * Dream and S2R modes of the trainer: the real budget is never exceeded, invalid dreamed
 * transitions are never learned from, dreamed transitions reach the buffer, and a checkpoint
 * resumes dream and s2r runs exactly.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { Trainer } from '../../../src/core/train/loop';
import { buildRunParts } from '../../../src/core/train/run-parts';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import type { DreamContext, ExperienceModel, Prediction } from '../../../src/core/experience/types';
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import { deserializeCheckpoint, serializeCheckpoint } from '../../../src/core/train/checkpoint';
import { runAll, smallWebshop, useWasmBackend } from './fixtures';

useWasmBackend();

/** The oracle, but every third asked step comes back unusable (as a broken LLM answer would). */
class PlantedInvalidModel implements ExperienceModel {
  readonly label = 'oracle with planted invalid answers (test double)';
  asked = 0;
  constructor(private readonly inner: NoisyOracleModel) {}
  initial(task: Parameters<ExperienceModel['initial']>[0]) {
    return this.inner.initial(task);
  }
  async next(ctx: DreamContext): Promise<Prediction> {
    const p = await this.inner.next(ctx);
    if (++this.asked % 3 !== 0) return p;
    return {
      ...p,
      valid: false,
      next: ctx.state,
      reward: 0,
      terminated: false,
      invalidReason: 'planted',
      raw: '{"broken": ',
    };
  }
}

describe('dream and s2r modes', () => {
  it('dream: zero real steps, every dreamed transition in the buffer, curriculum metrics logged', async () => {
    const config = smallWebshop({ mode: 'dream', curriculum: true });
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const trainer = new Trainer(config, { ...(await buildRunParts(config)), buffer, now: () => 7 });
    const lines = await runAll(trainer);
    const last = JSON.parse(lines[lines.length - 1]).metrics;
    expect(trainer.realSteps).toBe(0);
    expect(last['budget/real_steps']).toBe(0);
    expect(last['budget/dream_steps']).toBe(trainer.dreamSteps);
    expect(last).toHaveProperty(['curriculum/mean_variance']);
    expect(last).toHaveProperty(['curriculum/synthetic_share']);
    expect(last['dream/invalid_rate']).toBe(0);
    const stats = await buffer.stats();
    expect(stats.byEnvAndSource['webshop-lite-v0']).toEqual({ dream: trainer.dreamSteps });
    // Every transition belongs to an episode record the buffer counts (3 iterations × 2 tasks × 4 rollouts).
    expect(stats.episodes).toBe(24);
    expect(stats.transitionTasks).toBeGreaterThan(0);
    trainer.dispose();
  });

  it('invalid dreamed transitions are recorded but never reach an update', async () => {
    const config = smallWebshop({ mode: 'dream', iterations: 2 });
    const model = new PlantedInvalidModel(new NoisyOracleModel(config.env, { epsilonReward: 0, epsilonTransition: 0 }));
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    // Watch what the update sees.
    let learned = 0;
    const trainer = new Trainer(config, {
      experienceModel: model,
      buffer,
      onBatch: (b) => {
        learned += b.steps.length;
      },
    });
    const lines = await runAll(trainer);
    const metrics = lines.map((l) => JSON.parse(l).metrics);
    expect(metrics.every((m) => m['dream/invalid_rate'] > 0.2 && m['dream/invalid_rate'] < 0.45)).toBe(true);
    const transitions = await buffer.store.listTransitions();
    const invalid = transitions.filter((t) => !t.valid).length;
    expect(invalid).toBeGreaterThan(0);
    expect(transitions.length).toBe(trainer.dreamSteps);
    // Every dreamed step was learned from except exactly the planted (unusable) ones.
    expect(learned).toBe(trainer.dreamSteps - invalid);
    trainer.dispose();
  });

  it('s2r: dreams first, then spends exactly its real budget (10% of the real-mode budget by default) and never more', async () => {
    const config = smallWebshop({ mode: 's2r', iterations: 2, realStepBudget: 600, s2rRealFraction: 0.1 });
    const trainer = new Trainer(config, await buildRunParts(config));
    expect(trainer.realBudget).toBe(60);
    const lines = (await runAll(trainer)).map((l) => JSON.parse(l));
    expect(lines.slice(0, 2).every((l) => l.metrics['budget/real_steps'] === 0)).toBe(true);
    expect(trainer.phaseOf(3)).toBe('real');
    expect(trainer.realSteps).toBe(60);
    expect(lines[lines.length - 1].metrics['budget/real_steps']).toBe(60);
    trainer.dispose();
  });

  it.each(['dream', 's2r'] as const)('%s: resuming from a checkpoint continues exactly', async (mode) => {
    const config = smallWebshop({ mode, iterations: 3, realStepBudget: 500, s2rRealFraction: 0.2, curriculum: true });
    const deps = () => buildRunParts(config);
    const full = await runAll(new Trainer(config, await deps()));
    const first = new Trainer(config, await deps());
    await first.runIteration();
    await first.runIteration();
    // Through the serialised checkpoint (manifest JSON + weights blob), as the stores keep it.
    const { manifest, blob } = serializeCheckpoint(await first.state());
    const state = deserializeCheckpoint(JSON.parse(JSON.stringify(manifest)), blob.slice());
    expect(state.dreamSteps).toBe(first.dreamSteps);
    expect(state.curriculum).toEqual(first.curriculum!.state());
    first.dispose();
    const resumed = await Trainer.restore(state, {}, await deps());
    expect(await runAll(resumed)).toEqual(full.slice(2));
    resumed.dispose();
  });

  it('dream: success as the dream judges it is dream/…, never charts/…; the final policy is evaluated in the real env at the last iteration', async () => {
    const config = smallWebshop({ mode: 'dream', evalInterval: 2, finalEvalEpisodes: 6 }); // 3 iterations
    const trainer = new Trainer(config, await buildRunParts(config));
    const metrics = (await runAll(trainer)).map((l) => JSON.parse(l).metrics);
    for (const m of metrics) {
      expect(m).toHaveProperty(['dream/success_rate']);
      expect(m).toHaveProperty(['dream/episodic_return']);
      expect(m).toHaveProperty(['dream/episode_length']);
      expect(Object.keys(m).filter((k) => k.startsWith('charts/'))).toEqual([]);
    }
    // Due at 2 (every evalInterval), and always at the last iteration (3) on finalEvalEpisodes tasks.
    expect(metrics.map((m) => typeof m['eval/success_rate'])).toEqual(['undefined', 'number', 'number']);
    expect(trainer.finalEvaluation?.iteration).toBe(3);
    expect(trainer.finalEvaluation?.result.episodes).toBe(6);
    expect(metrics[2]['eval/success_rate']).toBe(trainer.finalEvaluation!.result.success);
    // The same policy evaluated again gives the same figure (held-out seeds, greedy).
    expect((await trainer.evaluate(6)).success).toBe(trainer.finalEvaluation!.result.success);
    trainer.dispose();
  });

  it('s2r: the last real iteration counts only the episodes the budget let finish (no drop to 0 from cut episodes), and is evaluated', async () => {
    const config = smallWebshop({ mode: 's2r', iterations: 1, realStepBudget: 130, s2rRealFraction: 0.1 });
    const trainer = new Trainer(config, await buildRunParts(config));
    const lines = (await runAll(trainer)).map((l) => JSON.parse(l));
    expect(trainer.realSteps).toBe(13); // fewer than one iteration of 8 episodes can take: the last one is cut
    const last = lines[lines.length - 1].metrics;
    expect(last).toHaveProperty(['eval/success_rate']);
    expect(lines[0].metrics).toHaveProperty(['dream/success_rate']);
    // Each figure is over finished episodes only; an iteration whose episodes were all cut has none.
    if ('charts/success_rate' in last) expect(last['charts/episode_length']).toBeGreaterThan(0);
    trainer.dispose();
  });

  it('the LLM prior: off by default (the ablation), refused with the oracle, used by the policy when given', async () => {
    expect((await buildRunParts(smallWebshop())).prior).toBeUndefined();
    await expect(buildRunParts(smallWebshop({ llmPrior: true }))).rejects.toThrow(
      /'llmPrior' needs a language model, but llm is 'oracle:0,0'/,
    );
    expect(() => new Trainer(smallWebshop({ llmPrior: true }))).toThrow(/no prior was given/);
    // A scripted LLM that always answers the first label (no logprobs: the documented fallback).
    const chat = new ScriptedChatModel(() => ({ text: 'A' }));
    const config = smallWebshop({ llmPrior: true, llm: 'openai:http://127.0.0.1:9/v1#test', iterations: 1 });
    const trainer = new Trainer(config, await buildRunParts(config, { chat }));
    expect(trainer.policy.prior.id).toMatch(/^llm-prior:test:/);
    await trainer.runIteration();
    expect(chat.requests.length).toBeGreaterThan(0);
    trainer.dispose();
  });
});
