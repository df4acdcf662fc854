/**
 * Shared fixtures of the page's learned-model tests: a few real webshop episodes in a memory
 * buffer, the page's tiny settings, and a tiny model trained on them once per test file.
 */
import { makeBaselinePolicy, rolloutEpisode } from '../../../src/core/data/rollout';
import { getEnvDefinition, makeEnv } from '../../../src/core/envs/registry';
import type { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { builtInDomainCard } from '../../../src/core/experience/domain-card';
import { trainLearnedModel, type LearnedTrainResult } from '../../../src/core/experience/learned/train-model';
import { bufferFromTrajectories } from '../../../src/core/experience/seed-buffer';
import { initBackend } from '../../../src/core/tfjs/backend';
import type { Trajectory } from '../../../src/core/types';
import { defaultSettings, TINY_SETTINGS, type ExpModelSettings } from '../../../src/app/state/model/expmodel-settings';
import { trainOptions } from '../../../src/app/workers/expmodel/expmodel-host';

export const ENV = 'webshop-lite-v0';

/** The page's tiny size, 1 epoch on all of the fixture's episodes, a short audit. */
export function tinySettings(over: Partial<ExpModelSettings> = {}): ExpModelSettings {
  return {
    ...defaultSettings(ENV),
    ...TINY_SETTINGS,
    name: 'tiny',
    epochs: 1,
    episodes: 0,
    audit: 4,
    samples: 2,
    backend: 'wasm',
    ...over,
  };
}

export async function episodes(n = 6): Promise<Trajectory[]> {
  const env = makeEnv(ENV);
  const definition = getEnvDefinition(ENV);
  const out: Trajectory[] = [];
  for (let i = 0; i < n; i++) {
    const policy = makeBaselinePolicy(i % 3 === 2 ? 'random' : 'expert');
    out.push(await rolloutEpisode(env, policy, { seed: 500 + i, task: definition.generateTask(500 + i, 0) }));
  }
  return out;
}

export async function fixtureBuffer(): Promise<ReplayBuffer> {
  return bufferFromTrajectories(await episodes());
}

let trained: Promise<{ buffer: ReplayBuffer; result: LearnedTrainResult }> | null = null;

/** A tiny model trained once (per test file) on the fixture's episodes. */
export function tinyModel(): Promise<{ buffer: ReplayBuffer; result: LearnedTrainResult }> {
  trained ??= (async () => {
    await initBackend('wasm');
    const buffer = await fixtureBuffer();
    const result = await trainLearnedModel(buffer, ENV, builtInDomainCard(ENV)!, trainOptions(tinySettings()));
    return { buffer, result };
  })();
  return trained;
}
