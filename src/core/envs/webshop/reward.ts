/**
 * WebShop's reward, `web_agent_site/engine/goal.py::get_reward`, as a pure function:
 *
 *   R = r_type · (N_att + N_opt + r_price) / (|goal.attributes| + |goal.goal_options| + 1)
 *
 * The only deliberate change: title nouns come from the generator's noun vocabulary (type
 * nouns, synonyms and brands) instead of spaCy's POS tagger (docs/architecture.md §3.3).
 */
import { fullProcess, tokenSetRatio } from './fuzz';
import { COLOR_SET, NOUN_VOCABULARY } from './taxonomy';

/** The purchased product, as the reward sees it (WebShop's product record). */
export interface RewardProduct {
  title: string;
  /** WebShop's scraping query, e.g. 'sofas and couches'. */
  query: string;
  /** 'A › B › C'. */
  productCategory: string;
  /** Ground-truth attribute phrases (WebShop's `Attributes`). */
  attributes: readonly string[];
  bullets: readonly string[];
  description: string;
}

/** The goal record (WebShop's goal dict). */
export interface RewardGoal {
  /** Title of the target product (goal['name']). */
  name: string;
  query: string;
  productCategory: string;
  attributes: readonly string[];
  /** Goal option values, e.g. ['grey', 'large']. */
  goalOptions: readonly string[];
  /** 1e6 when the instruction has no price clause. */
  priceUpper: number;
}

export interface TypeReward {
  rType: number;
  queryMatch: boolean;
  categoryMatch: boolean;
  titleScore: number;
}

export interface RewardBreakdown extends TypeReward {
  reward: number;
  attributeMatches: number;
  optionMatches: number;
  /** price <= price_upper (null when price_upper <= 0, as in WebShop). */
  priceOk: boolean | null;
}

/** The first COLOR_SET entry that is a substring of the value, else the value itself. */
export function normalizeColor(value: string): string {
  let out = normalized.get(value);
  if (out === undefined) {
    out = value;
    for (const color of COLOR_SET)
      if (value.includes(color)) {
        out = color;
        break;
      }
    if (normalized.size >= 10_000) normalized.clear();
    normalized.set(value, out);
  }
  return out;
}

const normalized = new Map<string, string>();

/** Lower-cased title tokens that the noun vocabulary knows, in order (duplicates kept, like spaCy). */
export function titleNouns(title: string, vocabulary: ReadonlySet<string> = NOUN_VOCABULARY): string[] {
  const cacheable = vocabulary === NOUN_VOCABULARY;
  const cached = cacheable ? nounCache.get(title) : undefined;
  if (cached) return cached.slice();
  const out: string[] = [];
  for (const token of title.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (token && vocabulary.has(token)) out.push(token);
  }
  if (cacheable) {
    if (nounCache.size >= 20_000) nounCache.clear();
    nounCache.set(title, out.slice());
  }
  return out;
}

const nounCache = new Map<string, string[]>();

/** Equal strings score 100 unless processing empties them (then thefuzz gives 0). */
function hasAlphanumeric(text: string): boolean {
  return /[a-z0-9]/i.test(text) || fullProcess(text) !== '';
}

/** get_type_reward: the query / category / title-noun gate. */
export function typeReward(
  product: RewardProduct,
  goal: RewardGoal,
  vocabulary: ReadonlySet<string> = NOUN_VOCABULARY,
): TypeReward {
  const queryMatch = product.query === goal.query;
  const purchasedCategory = new Set(product.productCategory.split('›').map((x) => x.trim()));
  let shared = 0;
  for (const c of new Set(goal.productCategory.split('›').map((x) => x.trim()))) if (purchasedCategory.has(c)) shared++;
  const categoryMatch = shared >= 2;

  const purchasedNouns = new Set(titleNouns(product.title, vocabulary));
  const desiredNouns = titleNouns(goal.name, vocabulary);
  let intersect = 0;
  for (const n of new Set(desiredNouns)) if (purchasedNouns.has(n)) intersect++;
  const titleScore = desiredNouns.length === 0 ? 0.2 : intersect / desiredNouns.length;

  let rType = 1.0;
  if (!(queryMatch || categoryMatch || titleScore > 0.2)) rType = 0.5;
  if (titleScore < 0.1) rType = 0.1;
  if (titleScore === 0.0) rType = 0.0;
  return { rType, queryMatch, categoryMatch, titleScore };
}

/** Is one goal attribute matched? Fuzzy against the attribute list, then substring fallbacks. */
export function attributeMatched(product: RewardProduct, goalAttribute: string): boolean {
  for (const p of product.attributes) {
    if ((p === goalAttribute && hasAlphanumeric(p)) || tokenSetRatio(p, goalAttribute) > 85) return true;
  }
  return (
    product.title.toLowerCase().includes(goalAttribute) ||
    product.bullets.join(' ').toLowerCase().includes(goalAttribute) ||
    product.description.toLowerCase().includes(goalAttribute)
  );
}

/** get_attribute_reward's count. */
export function attributeMatches(product: RewardProduct, goalAttributes: readonly string[]): number {
  let n = 0;
  for (const g of goalAttributes) if (attributeMatched(product, g)) n++;
  return n;
}

/** Does a chosen option value match a goal option (both through normalize_color)? */
export function optionMatches(chosen: string, goalOption: string): boolean {
  const p = normalizeColor(chosen);
  const g = normalizeColor(goalOption);
  return (p === g && hasAlphanumeric(p)) || tokenSetRatio(p, g) > 85;
}

/** get_option_reward's count: goal options hit by any chosen value. */
export function optionMatchCount(chosen: readonly string[], goalOptions: readonly string[]): number {
  let n = 0;
  for (const g of goalOptions) {
    for (const p of chosen) {
      if (optionMatches(p, g)) {
        n++;
        break;
      }
    }
  }
  return n;
}

/**
 * get_reward. `options` are the chosen option values (a group → value record or a list);
 * `price` is the product's hidden sampled price.
 */
export function getReward(
  product: RewardProduct,
  goal: RewardGoal,
  price: number,
  options: Readonly<Record<string, string>> | readonly string[],
  vocabulary: ReadonlySet<string> = NOUN_VOCABULARY,
): RewardBreakdown {
  const type = typeReward(product, goal, vocabulary);
  const priceOk = goal.priceUpper > 0 ? price <= goal.priceUpper : null;
  const attributeCount = attributeMatches(product, goal.attributes);
  const chosen = Array.isArray(options) ? (options as readonly string[]) : Object.values(options);
  const optionCount = optionMatchCount(chosen, goal.goalOptions);
  const total =
    (attributeCount + optionCount + (priceOk ? 1 : 0)) / (goal.attributes.length + goal.goalOptions.length + 1);
  return {
    reward: total * type.rType,
    ...type,
    attributeMatches: attributeCount,
    optionMatches: optionCount,
    priceOk,
  };
}
