/**
 * Versioned environment ids → definitions. `makeEnv` is Gymnasium's `make`: the raw env wrapped
 * in TimeLimit with the definition's default step limit unless one is given.
 */
import { TimeLimit, type EnvCreateOptions, type EnvDefinition, type GroundTruthEnv } from './env';
import { webshopDefinition } from './webshop';
import { householdDefinition } from './household';
import { webarenaDefinition } from './webarena';
import { DreamGymError } from '../errors';

const definitions: EnvDefinition[] = [webshopDefinition, householdDefinition, webarenaDefinition];

export class UnknownEnvError extends DreamGymError {
  constructor(readonly requested: string) {
    super(`Unknown environment '${requested}'. Valid ids: ${definitions.map((d) => d.id).join(', ')}.`, {
      code: 'unknown-env',
      fix: `Use one of the valid ids: ${definitions.map((d) => d.id).join(', ')}.`,
    });
    this.name = 'UnknownEnvError';
  }
}

export function listEnvDefinitions(): readonly EnvDefinition[] {
  return definitions;
}

export function envIds(): string[] {
  return definitions.map((d) => d.id);
}

export function getEnvDefinition(id: string): EnvDefinition {
  const found = definitions.find((d) => d.id === id);
  if (!found) throw new UnknownEnvError(id);
  return found;
}

export interface MakeEnvOptions extends EnvCreateOptions {
  /** Overrides the definition's default step limit. */
  stepLimit?: number;
}

export function makeEnv(id: string, options: MakeEnvOptions = {}): TimeLimit<GroundTruthEnv> {
  const definition = getEnvDefinition(id);
  const { stepLimit, ...createOptions } = options;
  return new TimeLimit(definition.create(createOptions), stepLimit ?? definition.defaultStepLimit);
}
