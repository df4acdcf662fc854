/**
 * The recipe of the shipped offline datasets (public/datasets/): per environment a mix like the
 * paper's offline data — mostly expert demonstrations, plus noisy-expert and random episodes so
 * the buffer also holds mistakes, invalid moves and failures. Each episode's seed and difficulty
 * follow from its index, so anyone can regenerate the same bytes (`npm run datasets`).
 */
import { envIds, getEnvDefinition, makeEnv } from '../envs/registry';
import type { Trajectory } from '../types';
import { makeBaselinePolicy, rolloutEpisode, type BaselinePolicy } from './rollout';
import { parseTrajectoriesJsonl, trajectoryToJsonLine } from './trajectory';
import { DreamGymError } from '../errors';

export interface DatasetPart {
  policy: 'expert' | 'noisy-expert' | 'decoy-expert' | 'random';
  epsilon?: number;
  expertSteps?: number;
  episodes: number;
  firstSeed: number;
  /** Only in these envs' datasets (default: all). */
  envs?: readonly string[];
}

/**
 * Expert demonstrations; noisy experts (a random move 30 % of the time); expert starts with a
 * random finish (the wrong buys and wrong puts near the goal that an experience model must learn
 * to call failures); random episodes. Household also gets decoy experts: where only the goal ends
 * an episode, a wrong finish (the right object in a wrong place, a wrong object in the right one)
 * just goes on with reward 0, and the other parts hold too few of those steps to learn it from.
 */
export const SEED_DATASET_PARTS: readonly DatasetPart[] = [
  { policy: 'expert', episodes: 120, firstSeed: 100_000 },
  { policy: 'noisy-expert', epsilon: 0.3, episodes: 40, firstSeed: 200_000 },
  { policy: 'noisy-expert', epsilon: 1, expertSteps: 6, episodes: 40, firstSeed: 250_000 },
  { policy: 'random', episodes: 40, firstSeed: 300_000 },
  { policy: 'decoy-expert', episodes: 60, firstSeed: 350_000, envs: ['household-v0'] },
];

/** The parts of `envId`'s dataset. */
export function datasetPartsFor(envId: string, parts: readonly DatasetPart[] = SEED_DATASET_PARTS): DatasetPart[] {
  return parts.filter((p) => !p.envs || p.envs.includes(envId));
}

/** Difficulty levels cycled through by episode index. */
/** Episodes in an env's shipped dataset (the sum of its parts). */
export function seedDatasetEpisodes(envId: string): number {
  return datasetPartsFor(envId).reduce((sum, part) => sum + part.episodes, 0);
}

export const SEED_DATASET_LEVELS = [0, 0.25, 0.5, 0.75, 1] as const;

export const SEED_DATASET_ENVS = ['webshop-lite-v0', 'household-v0', 'webarena-lite-v0'] as const;

/** The dataset's path in public/ (what the page fetches, what `npm run datasets` writes). */
export function seedDatasetFile(envId: string): string {
  return `datasets/${envId}.jsonl`;
}

/** Reads a file of public/ by its path there: Node from the checkout, the page with fetch; null when there is none. */
export type PublicFileReader = (path: string) => Promise<string | null>;

export class SeedDatasetMissingError extends DreamGymError {
  constructor(envId: string) {
    super(
      `No seed dataset for '${envId}': public/${seedDatasetFile(envId)} is missing. Run 'npm run datasets' to generate it.`,
      { code: 'seed-dataset-missing', fix: "Run 'npm run datasets' to generate it." },
    );
    this.name = 'SeedDatasetMissingError';
  }
}

/** The one loader of an env's shipped offline trajectories, through the caller's reader (a missing file is an error). */
export async function loadSeedDataset(envId: string, read: PublicFileReader): Promise<Trajectory[]> {
  const file = seedDatasetFile(envId);
  const text = await read(file);
  if (text === null) throw new SeedDatasetMissingError(envId);
  return parseTrajectoriesJsonl(text, { knownEnvs: envIds(), sourceName: file }).filter((t) => t.env === envId);
}

/**
 * `envId`'s recipe scaled to `episodes` in all, in the same proportions and seed ranges, so a
 * bigger set holds the shipped one (the first episodes of each part): the data-efficiency studies.
 */
export function scaledDatasetParts(episodes: number, envId: string): DatasetPart[] {
  const recipe = datasetPartsFor(envId);
  const total = recipe.reduce((s, p) => s + p.episodes, 0);
  const parts = recipe.map((p) => ({ ...p, episodes: Math.floor((p.episodes * episodes) / total) }));
  parts[0].episodes += episodes - parts.reduce((s, p) => s + p.episodes, 0);
  return parts;
}

/** The JSONL lines of the seed dataset of `envId` (at most `limit` episodes, in file order). */
export async function* seedDatasetLines(
  envId: string,
  limit = Infinity,
  parts: readonly DatasetPart[] = SEED_DATASET_PARTS,
): AsyncGenerator<string> {
  const definition = getEnvDefinition(envId);
  const env = makeEnv(envId);
  let produced = 0;
  for (const part of datasetPartsFor(envId, parts)) {
    const policy: BaselinePolicy = makeBaselinePolicy(part.policy, {
      epsilon: part.epsilon,
      expertSteps: part.expertSteps,
    });
    for (let i = 0; i < part.episodes; i++) {
      if (produced++ >= limit) return;
      const seed = part.firstSeed + i;
      const task = definition.generateTask(seed, SEED_DATASET_LEVELS[i % SEED_DATASET_LEVELS.length]);
      yield trajectoryToJsonLine(await rolloutEpisode(env, policy, { seed, task })) + '\n';
    }
  }
}
