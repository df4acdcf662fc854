/**
 * webarena-lite-v0 (mini-WebArena): the registry's definition and the public API. See README.md in
 * this folder for the sites, the observation and action grammar, the tasks and the evaluators.
 */
import type { EnvDefinition } from '../env';
import { WebArenaEnv, type WebArenaEnvOptions } from './env';
import { webarenaExperienceCard } from './experience-card';
import { answerBySubjectFeature, endsByPageFeature, reachesSubjectFeature } from './verdict-features';
import {
  generateTask,
  knobsForLevel,
  mutateTask,
  solveTask,
  WEBARENA_ENV_ID,
  WEBARENA_STEP_LIMIT,
  type WebArenaKnobs,
} from './tasks';

export const webarenaDefinition: EnvDefinition<WebArenaKnobs> = {
  id: WEBARENA_ENV_ID,
  name: 'mini-WebArena',
  summary:
    'WebArena-style web tasks on two seeded sites, a forum (posts, comments, votes) and a store admin ' +
    '(products, orders, prices, stock): accessibility-tree pages, click/type/scroll/goto/go_back/stop, ' +
    'answers judged by exact or must-include match, navigation by URL, changes by a state check.',
  defaultStepLimit: WEBARENA_STEP_LIMIT,
  create: (options?: WebArenaEnvOptions) => new WebArenaEnv(options),
  knobsForLevel: (level: number) => knobsForLevel(level),
  generateTask: (seed, difficulty) => generateTask(seed, difficulty),
  mutateTask,
  solve: solveTask,
  experienceCard: webarenaExperienceCard,
  verdictFeatures: [answerBySubjectFeature, reachesSubjectFeature, endsByPageFeature],
};

export { WebArenaEnv, type WebArenaEnvOptions } from './env';
export { Browser, candidateTexts, type Command } from './browser';
export { webarenaAbstraction, webarenaExperienceCard } from './experience-card';
export {
  checkState,
  evaluate,
  exactMatch,
  judgedByState,
  mustInclude,
  normalizeAnswer,
  urlMatch,
  type Evaluator,
  type FinalState,
  type StateCheck,
} from './evaluators';
export { expertCommand, renderCommand, type Target } from './expert';
export { answerBySubjectFeature, endsByPageFeature, reachesSubjectFeature, subjectOf } from './verdict-features';
export { HOME_ROUTES, renderPage, urlOf, type Element, type Page, type Route } from './pages';
export { Playthrough } from './playthrough';
export {
  generateTask,
  KNOB_NOTCHES,
  KNOB_RANGES,
  knobsForLevel,
  levelOfKnobs,
  moveKnob,
  movableKnobs,
  mutateTask,
  normalizeKnobs,
  runExpert,
  solveTask,
  taskSpecOf,
  TEMPLATE_TIERS,
  WEBARENA_ENV_ID,
  WEBARENA_STEP_LIMIT,
  WebArenaTaskError,
  type KnobName,
  type TaskKind,
  type TemplateName,
  type WebArenaKnobs,
  type WebArenaTaskSpec,
} from './tasks';
export {
  ADMIN_HOME,
  AGENT_USER,
  emptyEdits,
  FORUM_HOME,
  money,
  orderNumber,
  ROWS_PER_PAGE,
  Sites,
  worldOf,
  type World,
  type WorldRecipe,
} from './world';
