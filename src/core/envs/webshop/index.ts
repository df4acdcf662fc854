/**
 * mini-WebShop (`webshop-lite-v0`): a seeded, in-memory miniature of princeton-nlp/WebShop with
 * its pages, text format, actions and reward (docs/architecture.md §3.3).
 */
import type { EnvDefinition } from '../env';
import { WebShopEnv, type WebShopCreateOptions } from './env';
import { knobsForLevel, type WebShopKnobs } from './knobs';
import { generateTask, mutateTask, solveTask, WEBSHOP_ENV_ID } from './tasks';
import { overChosen } from './verdict-features';
import { webshopExperienceCard } from './experience-card';
import { webshopPolicyFeatures } from './policy-features';

export const webshopDefinition: EnvDefinition<WebShopKnobs> = {
  id: WEBSHOP_ENV_ID,
  name: 'mini-WebShop',
  summary:
    'Find and buy the product an instruction describes: search, browse results, pick options, buy. ' +
    "Seeded catalog of 200–5,000 products, BM25 search, WebShop's exact text pages and reward.",
  defaultStepLimit: 15,
  create: (options?: WebShopCreateOptions) => new WebShopEnv(options),
  knobsForLevel: (level: number) => knobsForLevel(level),
  generateTask: (seed: number, difficulty: number | WebShopKnobs) => generateTask(seed, difficulty),
  mutateTask,
  solve: solveTask,
  verdictFeatures: [overChosen],
  policyFeatures: webshopPolicyFeatures,
  experienceCard: webshopExperienceCard,
};

export { WebShopEnv, type WebShopCreateOptions } from './env';
export { WEBSHOP_ELEMENT_CHARS, webshopAbstraction, webshopExperienceCard } from './experience-card';
export {
  knobsForLevel,
  difficultyOfKnobs,
  movableKnobs,
  moveKnob,
  KNOB_RANGES,
  KNOB_NOTCHES,
  type WebShopKnobs,
} from './knobs';
export {
  getReward,
  typeReward,
  attributeMatched,
  attributeMatches,
  optionMatches,
  optionMatchCount,
  normalizeColor,
  titleNouns,
  type RewardBreakdown,
  type RewardGoal,
  type RewardProduct,
  type TypeReward,
} from './reward';
export { tokenSetRatio, ratio, fullProcess, indelDistance } from './fuzz';
export {
  generateTask,
  mutateTask,
  solveTask,
  episodeOf,
  forgetEpisodes,
  priceUpperFor,
  renderInstruction,
  WEBSHOP_ENV_ID,
  DEFAULT_CATALOG_SEED,
  type GenerateOptions,
} from './tasks';
export {
  getCatalog,
  DEFAULT_CATALOG_SIZE,
  MIN_CATALOG_SIZE,
  MAX_CATALOG_SIZE,
  type Catalog,
  type Product,
} from './catalog';
export { candidateQueries, type WebShopTaskSpec, type DistractorRecipe, type GoalOption, ShopEpisode } from './episode';
export { parseAction } from './machine';
export { Bm25Index, analyze } from './search';
export { CATEGORIES, PRODUCT_TYPES, NOUN_VOCABULARY, COLOR_SET } from './taxonomy';
