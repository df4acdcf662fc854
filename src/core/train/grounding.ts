/**
 * A dream is grounded by retrieval (docs/architecture.md §8.4): an experience model that retrieves from the
 * replay buffer needs real transitions of its environment there, or it dreams from nothing (the
 * learned model then writes gibberish and every dreamed episode runs to its step limit). This file
 * counts what a buffer holds of an env, seeds an empty one with the env's shipped offline data
 * (as the CLI does), and refuses a learned model on a buffer with no real data, naming the fix.
 */
import type { ReplayBuffer } from '../buffer/buffer';
import type { BufferStats } from '../buffer/types';
import { loadSeedDataset, type PublicFileReader } from '../data/seed-datasets';
import { DreamGymError } from '../errors';

/** Sources that are real experience: imported offline data and real-environment rollouts. */
const REAL_SOURCES = ['offline', 'real'] as const;

/** Real transitions (offline or real rollouts) of `env` in the buffer's stats. */
export function realTransitionCount(stats: Pick<BufferStats, 'byEnvAndSource'>, env: string): number {
  const bySource = stats.byEnvAndSource[env] ?? {};
  return REAL_SOURCES.reduce((sum, source) => sum + (bySource[source] ?? 0), 0);
}

export class UngroundedDreamError extends DreamGymError {
  constructor(env: string, where: 'empty' | 'none') {
    const what =
      where === 'none'
        ? 'there is no replay buffer to retrieve from (IndexedDB may be unavailable here)'
        : `the replay buffer holds no real transitions of '${env}'`;
    super(
      `The learned experience model retrieves real transitions to ground each dreamed step, but ${what}: ` +
        'without them it writes gibberish. Load the offline data first (the Buffer page\'s "Load the shipped datasets", ' +
        "or import your own episodes; the CLI loads the env's shipped dataset itself, or --dataset FILE), " +
        'or set retrievalK=0 for an ablation without retrieval.',
      {
        code: 'ungrounded-dream',
        fix: 'Load real or offline episodes into the replay buffer first, or set retrievalK=0 for an ablation without retrieval.',
      },
    );
    this.name = 'UngroundedDreamError';
  }
}

/** Throws UngroundedDreamError unless the buffer holds real transitions of `env` (k = 0 retrieves nothing: no check). */
export async function requireRealTransitions(buffer: ReplayBuffer | undefined, env: string, k: number): Promise<void> {
  if (k <= 0) return;
  if (!buffer) throw new UngroundedDreamError(env, 'none');
  if (realTransitionCount(await buffer.stats(), env) === 0) throw new UngroundedDreamError(env, 'empty');
}

export interface SeedResult {
  /** Real transitions of the env that were there before. */
  before: number;
  /** Episodes and transitions the seeding added (0 when the buffer already held real data). */
  episodes: number;
  transitions: number;
}

/**
 * Before a dream: a buffer with no real transitions of `env` gets the env's shipped offline data
 * (source 'offline'); a buffer that already holds some (the user's own import, an earlier seeding,
 * real rollouts) is left as it is.
 */
export async function seedOfflineData(
  buffer: ReplayBuffer,
  env: string,
  read: PublicFileReader,
  createdAt: number,
): Promise<SeedResult> {
  const before = realTransitionCount(await buffer.stats(), env);
  if (before > 0) return { before, episodes: 0, transitions: 0 };
  const trajectories = await loadSeedDataset(env, read);
  const result = await buffer.importTrajectories(trajectories, { source: 'offline', createdAt });
  return { before, episodes: result.episodes, transitions: result.transitions };
}
