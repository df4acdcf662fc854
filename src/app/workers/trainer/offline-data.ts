/**
 * Before a dream, in the trainer worker: the replay buffer gets the run's env's shipped offline
 * data when it holds no real transitions of that env (core/train/grounding.ts), read from the
 * app's own public/datasets/ (the service worker's precache answers offline). A buffer the user
 * filled on the Buffer page is left as it is.
 */
import type { ReplayBuffer } from '../../../core/buffer/buffer';
import { SeedDatasetMissingError, type PublicFileReader } from '../../../core/data/seed-datasets';
import { parseLlmSpec } from '../../../core/llm/spec';
import type { TrainConfig } from '../../../core/train/config';
import { seedOfflineData, type SeedResult } from '../../../core/train/grounding';
import { appBase } from '../learned-url';

/** The app's reader of public/ files (404: none). */
export function publicFileReader(
  base = appBase(),
  get: typeof fetch = globalThis.fetch.bind(globalThis),
): PublicFileReader {
  return async (path) => {
    const response = await get(new URL(path, base).href);
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`Could not fetch ${path}: HTTP ${response.status}.`);
    return response.text();
  };
}

/** Whether a run's dream reads the buffer: it dreams, retrieves (k > 0), and its engine is not the oracle. */
export function dreamRetrieves(config: Pick<TrainConfig, 'mode' | 'llm' | 'retrievalK'>): boolean {
  return config.mode !== 'real' && config.retrievalK > 0 && parseLlmSpec(config.llm).kind !== 'oracle';
}

/** What the run's status line says about it. */
export function groundingMessage(env: string, result: SeedResult): string {
  if (result.episodes === 0)
    return `The replay buffer holds ${result.before.toLocaleString('en-US')} real transitions of ${env}.`;
  return (
    `The replay buffer held no real transitions of ${env}: loaded its shipped offline data ` +
    `(${result.episodes.toLocaleString('en-US')} episodes, ${result.transitions.toLocaleString('en-US')} transitions).`
  );
}

/**
 * Seeds the buffer for a dream that retrieves; null when the run does not need it. A build that
 * ships no dataset for the env seeds nothing: the run builder then refuses a learned model on the
 * empty buffer with the fix (grounding.ts UngroundedDreamError).
 */
export async function groundDream(
  config: TrainConfig,
  buffer: ReplayBuffer | undefined,
  read: PublicFileReader = publicFileReader(),
): Promise<string | null> {
  if (!dreamRetrieves(config) || !buffer) return null;
  try {
    return groundingMessage(config.env, await seedOfflineData(buffer, config.env, read, Date.now()));
  } catch (error) {
    if (error instanceof SeedDatasetMissingError) return null;
    throw error;
  }
}
