/**
 * A replay buffer in memory seeded with offline trajectories (the shipped datasets,
 * public/datasets/<env>.jsonl, read with loadSeedDataset): what the experience model retrieves
 * its examples from when no persistent buffer is at hand (CLI, tests, benchmarks).
 */
import { ReplayBuffer } from '../buffer/buffer';
import type { Embedder } from '../buffer/embedders';
import { MemoryBufferStore } from '../buffer/stores/memory';
import type { Trajectory } from '../types';

export async function bufferFromTrajectories(
  trajectories: readonly Trajectory[],
  options: { embedder?: Embedder } = {},
): Promise<ReplayBuffer> {
  const buffer = new ReplayBuffer(new MemoryBufferStore(), ...(options.embedder ? [options.embedder] : []));
  // createdAt 0: seeding is data, not an event; the same file always gives the same buffer.
  await buffer.importTrajectories(trajectories, { source: 'offline', createdAt: 0 });
  return buffer;
}
