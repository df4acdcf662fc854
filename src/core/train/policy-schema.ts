/**
 * The policy's feature schema for a run (policy/feature-schema.ts), mined from the offline data of the run's env or
 * domain, and the features the env adds (its definition's policyFeatures). A registered env's data is the first
 * episodes of each part of its shipped dataset (data/seed-datasets.ts), generated again here from their seeds, so
 * the page and Node mine the same schema with no file to read; an imported domain's is its training episodes.
 */
import { seedDatasetLines, scaledDatasetParts } from '../data/seed-datasets';
import { envIds, getEnvDefinition } from '../envs/registry';
import { mineFeatureSchema, type FeatureSchema, type SchemaEpisode } from '../policy/feature-schema';
import type { PolicyFeatureSet } from '../policy/features';
import type { Trajectory } from '../types';

/** Episodes of a registered env's dataset the schema is mined from (its parts in their shipped proportions). */
export const SCHEMA_EPISODES = 60;

/** The features a registered env adds to the policy's (undefined for an imported domain or an env with none). */
export function envPolicyFeatures(envId: string): PolicyFeatureSet | undefined {
  return envIds().includes(envId) ? getEnvDefinition(envId).policyFeatures : undefined;
}

function extraNames(envId: string): { row: readonly string[]; state: readonly string[] } {
  const extras = envPolicyFeatures(envId);
  return { row: extras?.row ?? [], state: extras?.state ?? [] };
}

const asSchemaEpisode = (t: Pick<Trajectory, 'task' | 'steps'>): SchemaEpisode => ({
  instruction: t.task.instruction,
  steps: t.steps,
});

/** The schema of recorded episodes of `envId` (a domain's training episodes, or a registered env's data). */
export function schemaOfEpisodes(
  envId: string,
  episodes: readonly Pick<Trajectory, 'task' | 'steps'>[],
): FeatureSchema {
  return mineFeatureSchema(episodes.map(asSchemaEpisode), {}, extraNames(envId));
}

/** A schema with no mined part: generic features and the env's own (a policy built without the run's data). */
export function unminedSchema(envId: string): FeatureSchema {
  return schemaOfEpisodes(envId, []);
}

const mined = new Map<string, Promise<FeatureSchema>>();

/** A registered env's schema, from the first SCHEMA_EPISODES episodes of its dataset's recipe (computed once). */
export function registeredEnvSchema(envId: string): Promise<FeatureSchema> {
  let schema = mined.get(envId);
  if (!schema) {
    schema = (async () => {
      const episodes: Trajectory[] = [];
      for await (const line of seedDatasetLines(envId, SCHEMA_EPISODES, scaledDatasetParts(SCHEMA_EPISODES, envId)))
        episodes.push(JSON.parse(line) as Trajectory);
      return schemaOfEpisodes(envId, episodes);
    })();
    mined.set(envId, schema);
  }
  return schema;
}
