/**
 * A dream is grounded by retrieval (src/core/train/grounding.ts): an empty buffer gets the env's
 * shipped offline data before a dream, a buffer the user filled is left alone, and a learned model
 * that retrieves is refused on a buffer with no real transitions of its env — by the one run
 * builder, so the CLI, the worker and the page all refuse it the same way.
 */
import { readFileSync } from 'node:fs';
import { HaltingExperienceModel } from '../../../src/core/experience/halting-model';
import { RealStartsModel } from '../../../src/core/experience/real-starts';
import { describe, expect, it } from 'vitest';
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import { parseTrajectoriesJsonl } from '../../../src/core/data/trajectory';
import type { ExperienceModel } from '../../../src/core/experience/types';
import { getPreset, validateConfig } from '../../../src/core/train/config';
import {
  realTransitionCount,
  requireRealTransitions,
  seedOfflineData,
  UngroundedDreamError,
} from '../../../src/core/train/grounding';
import { buildRunParts } from '../../../src/core/train/run-parts';

const readPublic = async (path: string) => readFileSync(`public/${path}`, 'utf8');
const model: ExperienceModel = {
  label: 'learned (double)',
  initial: () => Promise.reject(new Error('unused')),
  next: () => Promise.reject(new Error('unused')),
};
const dream = (k = 4) =>
  validateConfig({ ...getPreset('webshop-easy'), mode: 'dream', llm: 'learned:models/webshop-lite-v0', retrievalK: k });

describe('grounding a dream in real data', () => {
  it('seeds an empty buffer with the shipped offline data once, and never again', async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const first = await seedOfflineData(buffer, 'webshop-lite-v0', readPublic, 1);
    expect(first.before).toBe(0);
    expect(first.episodes).toBe(240);
    expect(realTransitionCount(await buffer.stats(), 'webshop-lite-v0')).toBe(first.transitions);
    const second = await seedOfflineData(buffer, 'webshop-lite-v0', readPublic, 2);
    expect(second).toEqual({ before: first.transitions, episodes: 0, transitions: 0 });
  });

  it('leaves a buffer the user filled as it is', async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const mine = parseTrajectoriesJsonl(
      readFileSync('public/datasets/webshop-lite-v0.jsonl', 'utf8').split('\n').slice(0, 3).join('\n'),
    );
    await buffer.importTrajectories(mine, { source: 'offline', createdAt: 0 });
    const result = await seedOfflineData(buffer, 'webshop-lite-v0', readPublic, 1);
    expect(result.episodes).toBe(0);
    expect((await buffer.stats()).episodes).toBe(3);
  });

  it('counts only real sources of the env: dreamed transitions and other envs do not ground it', () => {
    const stats = { byEnvAndSource: { 'webshop-lite-v0': { dream: 500 }, 'household-v0': { offline: 9 } } };
    expect(realTransitionCount(stats, 'webshop-lite-v0')).toBe(0);
    expect(
      realTransitionCount(
        { byEnvAndSource: { 'webshop-lite-v0': { real: 2, offline: 3, dream: 1 } } },
        'webshop-lite-v0',
      ),
    ).toBe(5);
  });

  it('refuses a learned model on an empty buffer or none, naming the fix; k = 0 of run or model passes', async () => {
    const empty = new ReplayBuffer(new MemoryBufferStore());
    const loadLearnedModel = async () => model;
    await expect(buildRunParts(dream(), { buffer: empty, loadLearnedModel })).rejects.toThrow(UngroundedDreamError);
    await expect(buildRunParts(dream(), { buffer: empty, loadLearnedModel })).rejects.toThrow(
      /holds no real transitions of 'webshop-lite-v0'.*Load the shipped datasets.*--dataset FILE.*retrievalK=0/,
    );
    await expect(buildRunParts(dream(), { loadLearnedModel })).rejects.toThrow(
      /there is no replay buffer to retrieve from/,
    );
    expect((await buildRunParts(dream(0), { buffer: empty, loadLearnedModel })).experienceModel).toBe(model);
    // A model trained with k = 0 (the shipped webshop one) retrieves nothing at the run's k = 4.
    const trainedWithoutRetrieval: ExperienceModel = { ...model, retrievalK: 0 };
    const loadK0 = async () => trainedWithoutRetrieval;
    expect((await buildRunParts(dream(), { loadLearnedModel: loadK0 })).experienceModel).toBe(trainedWithoutRetrieval);
    const trainedWithRetrieval = async (): Promise<ExperienceModel> => ({ ...model, retrievalK: 4 });
    await expect(buildRunParts(dream(), { loadLearnedModel: trainedWithRetrieval })).rejects.toThrow(
      /there is no replay buffer to retrieve from/,
    );
    await seedOfflineData(empty, 'webshop-lite-v0', readPublic, 1);
    // Grounded now: dreams may begin at those real episodes' states, and the halt measures against them.
    const grounded = (await buildRunParts(dream(), { buffer: empty, loadLearnedModel })).experienceModel;
    expect(grounded).toBeInstanceOf(RealStartsModel);
    const halting = (grounded as RealStartsModel).inner;
    expect(halting).toBeInstanceOf(HaltingExperienceModel);
    expect((halting as HaltingExperienceModel).inner).toBe(model);
    expect(
      (await buildRunParts({ ...dream(), halt: false, realStartShare: 0 }, { buffer: empty, loadLearnedModel }))
        .experienceModel,
    ).toBe(model);
  });

  it('a buffer of another env does not ground this one', async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    await seedOfflineData(buffer, 'household-v0', readPublic, 1);
    await expect(requireRealTransitions(buffer, 'webshop-lite-v0', 4)).rejects.toThrow(UngroundedDreamError);
  });
});
