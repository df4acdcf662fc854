/**
 * household-v0 (mini-household, ALFWorld-style): the registry's definition and the public API.
 */
import type { EnvDefinition } from '../env';
import { HouseholdEnv, type HouseholdEnvOptions } from './env';
import {
  decoyTask,
  generateTask,
  HOUSEHOLD_ENV_ID,
  HOUSEHOLD_STEP_LIMIT,
  knobsForLevel,
  mutateTask,
  solveTask,
  type HouseholdKnobs,
} from './tasks';
import { householdExperienceCard } from './experience-card';
import { householdPolicyFeatures } from './policy-features';

export const householdDefinition: EnvDefinition<HouseholdKnobs> = {
  id: HOUSEHOLD_ENV_ID,
  name: 'mini-household',
  summary:
    'ALFWorld-style text household: find, heat, cool, clean, light and place objects in a generated room (six task types, exact ALFWorld text).',
  defaultStepLimit: HOUSEHOLD_STEP_LIMIT,
  create: (options?: HouseholdEnvOptions) => new HouseholdEnv(options),
  knobsForLevel: (level: number) => knobsForLevel(level),
  generateTask: (seed, difficulty) => generateTask(seed, difficulty),
  mutateTask,
  solve: solveTask,
  decoyTask,
  experienceCard: householdExperienceCard,
  policyFeatures: householdPolicyFeatures,
};

export { HouseholdEnv, type HouseholdEnvOptions } from './env';
export { householdAbstraction, householdExperienceCard } from './experience-card';
export {
  decoyTask,
  generateTask,
  HOUSEHOLD_ENV_ID,
  HOUSEHOLD_STEP_LIMIT,
  HouseholdTaskError,
  KNOB_LADDERS,
  knobsForLevel,
  levelOfKnobs,
  mutateTask,
  nextNotch,
  normalizeKnobs,
  relevantKnobs,
  solveTask,
  taskFromSpec,
  taskSpecOf,
  type GenerateOptions,
  type HouseholdKnobs,
  type HouseholdTaskSpec,
  type KnobName,
} from './tasks';
export {
  ALFWORLD_TASK_TYPE,
  goalHolds,
  goalProgress,
  instructionFor,
  TASK_TYPES,
  VALID_ROOMS,
  type Goal,
  type TaskType,
} from './goals';
export { NOTHING_HAPPENS, renderList, type PutVerb } from './text';
export { World, type ObjectSpec, type ReceptacleSpec, type WorldSpec } from './world';
export type { RoomType } from './catalog';
