/**
 * One episode's world: the cached catalog plus a small overlay of near-miss distractors built
 * from the task spec, the goal, search over base + overlay, and the privileged facts the
 * expert reads (which products fully satisfy the goal, which options to pick, which candidate
 * query finds one first). Everything here is a deterministic function of the task spec.
 */
import { Rng } from '../../rng';
import {
  buildProduct,
  getCatalog,
  sampleAsin,
  sampleGroupValues,
  samplePrice,
  searchText,
  type Catalog,
  type Product,
  type ProductOptionGroup,
} from './catalog';
import { getReward, optionMatches, typeReward, attributeMatched, type RewardGoal } from './reward';
import { prepareExternalDoc, SEARCH_RETURN_N, type ExternalDoc } from './search';
import { getTypeEntry } from './taxonomy';
import type { WebShopKnobs } from './knobs';

export type DistractorKind = 'attribute' | 'option' | 'price' | 'type' | 'push';

/** How to rebuild one overlay product: its kind and the key of its random stream. */
export interface DistractorRecipe {
  kind: DistractorKind;
  key: string;
}

export interface GoalOption {
  group: string;
  value: string;
}

/** Everything needed to rebuild an episode exactly (JSON-serialisable; Task.spec). */
export interface WebShopTaskSpec {
  version: 1;
  catalogSeed: number;
  catalogSize: number;
  knobs: WebShopKnobs;
  /** ASIN of the catalog product the goal was written from. */
  target: string;
  typeId: string;
  goal: { attributes: string[]; options: GoalOption[]; priceUpper: number };
  /** The noun the instruction uses (the type noun or a synonym). */
  noun: string;
  style: 'synthetic' | 'human';
  distractors: DistractorRecipe[];
  /** Informational: the expert's query, the rank of the first satisfying product under it, plan length. */
  expert?: { query: string; rank: number; optimalLength: number };
}

export const PRICE_CLAUSE = /, and price lower than [0-9.]+ dollars$/;

/** Up to 4 distinct candidate queries derived from the instruction and goal (search-page admissible). */
export function candidateQueries(instruction: string, spec: WebShopTaskSpec): string[] {
  const noun = spec.noun;
  const out = [
    instruction.replace(PRICE_CLAUSE, '').trim(),
    `${spec.goal.attributes.join(' ')} ${noun}`,
    spec.goal.options.length > 0 ? `${spec.goal.options.map((o) => o.value).join(' ')} ${noun}` : '',
    noun,
  ]
    .map((q) => q.toLowerCase().replace(/\s+/g, ' ').trim())
    .filter((q) => q.length > 0);
  return [...new Set(out)];
}

// ---------------------------------------------------------------------------------------------
// Distractors
// ---------------------------------------------------------------------------------------------

function uniqueAsin(rng: Rng, taken: (asin: string) => boolean): string {
  let asin = sampleAsin(rng);
  while (taken(asin)) asin = sampleAsin(rng);
  return asin;
}

/** Option groups carrying every goal option (other groups of the type sampled as usual). */
function optionsWithGoal(
  rng: Rng,
  typeId: string,
  goal: readonly GoalOption[],
  omitValue?: GoalOption,
): ProductOptionGroup[] {
  const type = getTypeEntry(typeId).type;
  const out: ProductOptionGroup[] = [];
  const used = new Set<string>();
  for (const group of type.options) {
    const wanted = goal.find((o) => o.group === group.name);
    if (omitValue && omitValue.group === group.name) {
      // Every value that would still match the goal option is left out.
      const exclude = new Set(group.values.filter((v) => optionMatches(v, omitValue.value)));
      const g = sampleGroupValues(rng, group.name, group.values, [], exclude);
      if (g.values.length > 0) {
        out.push(g);
        g.values.forEach((v) => used.add(v));
      }
    } else if (wanted) {
      const g = sampleGroupValues(rng, group.name, group.values, used.has(wanted.value) ? [] : [wanted.value]);
      out.push(g);
      g.values.forEach((v) => used.add(v));
    } else if (rng.bool(0.6)) {
      const g = sampleGroupValues(
        rng,
        group.name,
        group.values.filter((v) => !used.has(v)),
      );
      if (g.values.length > 0) {
        out.push(g);
        g.values.forEach((v) => used.add(v));
      }
    }
  }
  return out;
}

function priceWithin(rng: Rng, lo: number, upper: number, hi: number): number {
  const top = Math.min(hi, upper - 0.01);
  if (top <= lo) return Math.max(0.99, Math.floor(Math.min(lo, upper) * 0.9 * 100) / 100);
  return Math.min(samplePrice(rng, lo, top), Math.floor(upper * 100 - 1) / 100);
}

function priceAbove(rng: Rng, upper: number): number {
  return Math.round((upper + rng.uniform(Math.max(1, upper * 0.05), Math.max(5, upper * 0.6))) * 100) / 100;
}

/** Builds one overlay product from its recipe (deterministic in the recipe key). */
export function buildDistractor(
  recipe: DistractorRecipe,
  spec: WebShopTaskSpec,
  target: Product,
  taken: (asin: string) => boolean,
): Product {
  const rng = new Rng(`webshop-lite-v0/distractor/${recipe.key}`);
  const asin = uniqueAsin(rng, taken);
  const entry = getTypeEntry(spec.typeId);
  const { type, category } = entry;
  const goal = spec.goal;
  const upper = goal.priceUpper;
  const extras = (pool: readonly string[], exclude: readonly string[], k: number) =>
    rng.sample(
      pool.filter((a) => !exclude.includes(a)),
      k,
    );
  const within = () => priceWithin(rng, type.price[0], upper, type.price[1]);

  switch (recipe.kind) {
    case 'attribute': {
      const drop = rng.int(0, goal.attributes.length - 1);
      const removed = goal.attributes[drop];
      const kept = goal.attributes.filter((_, i) => i !== drop);
      const replacement = extras(type.attributes, goal.attributes, 1);
      const attributes = rng.shuffle([
        ...kept,
        ...replacement,
        ...extras(type.attributes, [...goal.attributes, ...replacement], rng.int(0, 2)),
      ]);
      const filtered = attributes.filter((a) => a !== removed);
      const price = within();
      return buildProduct(rng, {
        asin,
        entry,
        brand: rng.pick(category.brands),
        line: rng.pick(category.lines),
        attributes: filtered,
        titleAttributeCount: rng.int(1, Math.max(1, Math.min(3, filtered.length - 1))),
        options: optionsWithGoal(rng, spec.typeId, goal.options),
        pricing: [price],
        price,
      });
    }
    case 'option': {
      const omit = rng.pick(goal.options);
      const attributes = rng.shuffle([...goal.attributes, ...extras(type.attributes, goal.attributes, rng.int(0, 2))]);
      const price = within();
      return buildProduct(rng, {
        asin,
        entry,
        brand: rng.pick(category.brands),
        line: rng.pick(category.lines),
        attributes,
        titleAttributeCount: rng.int(1, Math.max(1, Math.min(3, attributes.length - 1))),
        options: optionsWithGoal(rng, spec.typeId, goal.options, omit),
        pricing: [price],
        price,
      });
    }
    case 'price': {
      const attributes = rng.shuffle([...goal.attributes, ...extras(type.attributes, goal.attributes, rng.int(0, 2))]);
      const price = priceAbove(rng, upper);
      return buildProduct(rng, {
        asin,
        entry,
        brand: rng.pick(category.brands),
        line: rng.pick(category.lines),
        attributes,
        titleAttributeCount: rng.int(1, Math.max(1, Math.min(3, attributes.length - 1))),
        options: optionsWithGoal(rng, spec.typeId, goal.options),
        pricing: [price],
        price,
      });
    }
    case 'type': {
      const others = category.types.filter((t) => t.id !== spec.typeId);
      const otherType = rng.pick(others);
      const otherEntry = getTypeEntry(otherType.id);
      const attributes = rng.shuffle([
        ...goal.attributes,
        ...extras(otherType.attributes, goal.attributes, rng.int(0, 2)),
      ]);
      const brand = rng.pick(category.brands.filter((b) => b !== target.brand));
      const line = rng.pick(category.lines.filter((l) => l !== target.line));
      const price = priceWithin(rng, otherType.price[0], Math.max(upper, otherType.price[0] + 1), otherType.price[1]);
      return buildProduct(rng, {
        asin,
        entry: otherEntry,
        brand,
        line,
        attributes,
        titleAttributeCount: rng.int(1, Math.max(1, Math.min(3, attributes.length - 1))),
        options: optionsWithGoal(rng, otherType.id, goal.options),
        pricing: [price],
        price,
      });
    }
    case 'push': {
      // A keyword-dense near copy priced above the bound: it outranks the real matches.
      const options = goal.options.map((o) => {
        const pool = type.options.find((g) => g.name === o.group)?.values ?? [o.value];
        const other = pool.filter((v) => v !== o.value);
        const values = other.length > 0 ? [o.value, rng.pick(other)] : [o.value];
        return { name: o.group, values: pool.filter((v) => values.includes(v)) };
      });
      const price = priceAbove(rng, upper);
      return buildProduct(rng, {
        asin,
        entry,
        brand: rng.pick(category.brands),
        line: rng.pick(category.lines),
        attributes: [...goal.attributes],
        titleAttributeCount: goal.attributes.length,
        options,
        pricing: [price],
        price,
        titleSynonym: spec.noun !== type.noun ? spec.noun : undefined,
        terseDescription: true,
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Episode
// ---------------------------------------------------------------------------------------------

export class ShopEpisode {
  readonly catalog: Catalog;
  readonly target: Product;
  readonly goal: RewardGoal;
  readonly overlay: Product[] = [];
  readonly candidates: string[];
  private readonly overlayDocs: ExternalDoc[] = [];
  private readonly overlayByAsin = new Map<string, Product>();
  private readonly searchCache = new Map<string, string[]>();
  private readonly expertOptionsCache = new Map<string, Record<string, string> | null>();
  private readonly satisfiesCache = new Map<string, boolean>();
  private best: { query: string; rank: number } | null | undefined;

  constructor(
    readonly spec: WebShopTaskSpec,
    readonly instruction: string,
  ) {
    this.catalog = getCatalog(spec.catalogSeed, spec.catalogSize);
    const target = this.catalog.byAsin.get(spec.target);
    if (!target)
      throw new RangeError(
        `webshop: task target ${spec.target} is not in catalog ${spec.catalogSeed}/${spec.catalogSize}`,
      );
    this.target = target;
    this.goal = {
      name: target.title,
      query: target.query,
      productCategory: target.productCategory,
      attributes: spec.goal.attributes,
      goalOptions: spec.goal.options.map((o) => o.value),
      priceUpper: spec.goal.priceUpper,
    };
    this.candidates = candidateQueries(instruction, spec);
    for (const recipe of spec.distractors) this.addOverlay(this.makeDistractor(recipe));
  }

  makeDistractor(recipe: DistractorRecipe): Product {
    return buildDistractor(
      recipe,
      this.spec,
      this.target,
      (a) => this.catalog.byAsin.has(a) || this.overlayByAsin.has(a),
    );
  }

  addOverlay(product: Product): void {
    this.overlay.push(product);
    this.overlayByAsin.set(product.asin, product);
    this.overlayDocs.push(prepareExternalDoc(product.asin, searchText(product)));
    this.searchCache.clear();
    this.best = undefined;
  }

  /** Takes back the last overlay product (a draw that turned out to satisfy the goal). */
  removeLastOverlay(): void {
    const product = this.overlay.pop();
    if (!product) return;
    this.overlayDocs.pop();
    this.overlayByAsin.delete(product.asin);
    this.expertOptionsCache.delete(product.asin);
    this.satisfiesCache.delete(product.asin);
    this.searchCache.clear();
    this.best = undefined;
  }

  product(asin: string): Product | undefined {
    return this.overlayByAsin.get(asin) ?? this.catalog.byAsin.get(asin);
  }

  /** Top 50 ASINs for the keywords over catalog + overlay. */
  search(keywords: string): string[] {
    let hits = this.searchCache.get(keywords);
    if (!hits) {
      hits = this.catalog.index.search(keywords, this.overlayDocs, SEARCH_RETURN_N);
      if (this.searchCache.size >= 256) this.searchCache.clear();
      this.searchCache.set(keywords, hits);
    }
    return hits;
  }

  /**
   * The options the expert picks on this product so that every goal option is matched (one
   * value per group, exact values preferred), or null if no choice can match them all.
   */
  expertOptions(asin: string): Record<string, string> | null {
    if (this.expertOptionsCache.has(asin)) return this.expertOptionsCache.get(asin)!;
    const product = this.product(asin);
    const result = product ? chooseOptions(product.options, this.goal.goalOptions) : null;
    this.expertOptionsCache.set(asin, result);
    return result;
  }

  /** Would buying this product (with the expert's options) earn reward exactly 1? */
  satisfies(asin: string): boolean {
    let result = this.satisfiesCache.get(asin);
    if (result === undefined) {
      result = this.computeSatisfies(asin);
      this.satisfiesCache.set(asin, result);
    }
    return result;
  }

  private computeSatisfies(asin: string): boolean {
    const product = this.product(asin);
    if (!product) return false;
    if (!(product.price <= this.goal.priceUpper)) return false;
    if (typeReward(product, this.goal).rType !== 1) return false;
    if (!this.goal.attributes.every((g) => attributeMatched(product, g))) return false;
    const options = this.expertOptions(asin);
    if (!options) return false;
    return getReward(product, this.goal, product.price, options).reward === 1;
  }

  /** Rank (0-based) of the first satisfying product under the query, or -1. */
  firstSatisfyingRank(query: string): number {
    return this.search(query).findIndex((a) => this.satisfies(a));
  }

  /** The candidate query whose first satisfying product ranks best (ties: candidate order). */
  bestCandidate(): { query: string; rank: number } | null {
    if (this.best !== undefined) return this.best;
    let best: { query: string; rank: number } | null = null;
    for (const query of this.candidates) {
      const rank = this.firstSatisfyingRank(query);
      if (rank >= 0 && (best === null || rank < best.rank)) best = { query, rank };
    }
    this.best = best;
    return best;
  }
}

/** One value per group so that every goal option is matched by some chosen value; null if impossible. */
export function chooseOptions(
  groups: readonly ProductOptionGroup[],
  goalOptions: readonly string[],
): Record<string, string> | null {
  const chosen: Record<string, string> = {};
  const candidatesFor = goalOptions.map((g) => {
    const exact: [string, string][] = [];
    const fuzzy: [string, string][] = [];
    for (const group of groups) {
      for (const v of group.values) {
        if (v === g) exact.push([group.name, v]);
        else if (optionMatches(v, g)) fuzzy.push([group.name, v]);
      }
    }
    return [...exact, ...fuzzy];
  });
  const matched = (goal: string) => Object.values(chosen).some((v) => optionMatches(v, goal));
  const assign = (i: number): boolean => {
    if (i === goalOptions.length) return true;
    if (matched(goalOptions[i])) return assign(i + 1);
    for (const [group, value] of candidatesFor[i]) {
      if (chosen[group] !== undefined) continue;
      chosen[group] = value;
      if (assign(i + 1)) return true;
      delete chosen[group];
    }
    return false;
  };
  if (!assign(0)) return null;
  // Keep the product's group order (the order the expert clicks them).
  const ordered: Record<string, string> = {};
  for (const group of groups) if (chosen[group.name] !== undefined) ordered[group.name] = chosen[group.name];
  return ordered;
}
