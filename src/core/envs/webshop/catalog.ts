/**
 * The seeded product catalog (200–5,000 products) and the product builder shared with the
 * per-episode distractors. A product mirrors WebShop's loaded record: Title, Description,
 * BulletPoints, options {group: values}, Attributes, a price tag ('$x' or '$x to $y') and the
 * hidden price sampled once (uniform inside a range), plus query and product_category.
 *
 * Catalogs are pure functions of (seed, size) and are cached with their BM25 index, because
 * building one per reset would be slow. Product i draws from its own stream, so a smaller
 * catalog is a prefix of a larger one with the same seed.
 */
import { Rng } from '../../rng';
import type { RewardProduct } from './reward';
import { Bm25Index } from './search';
import { PRODUCT_TYPES, productCategoryOf, type CategorySpec, type ProductTypeSpec, type TypeEntry } from './taxonomy';

export const MIN_CATALOG_SIZE = 200;
export const MAX_CATALOG_SIZE = 5000;
export const DEFAULT_CATALOG_SIZE = 1000;

export interface ProductOptionGroup {
  name: string;
  values: string[];
}

export interface Product extends RewardProduct {
  asin: string;
  typeId: string;
  /** Short category label (WebShop's `category`). */
  category: string;
  brand: string;
  /** Product line shown after the brand in the title. */
  line: string;
  /** Attribute phrases, ground truth for the reward. */
  attributes: string[];
  /** How many of `attributes` (a prefix) the title shows. */
  titleAttributeCount: number;
  options: ProductOptionGroup[];
  /** [price] or [lo, hi]. */
  pricing: number[];
  /** What pages show: '$12.99' or '$10.99 to $15.99'. */
  priceTag: string;
  /** Hidden price the reward compares (WebShop samples it once, uniformly inside a range). */
  price: number;
}

/** What decides a product; the builder renders the texts from it. */
export interface ProductFields {
  asin: string;
  entry: TypeEntry;
  brand: string;
  line: string;
  attributes: string[];
  titleAttributeCount: number;
  options: ProductOptionGroup[];
  pricing: number[];
  price: number;
  /** Force a synonym into the title (pushers mirror the instruction's noun). */
  titleSynonym?: string;
  /** A short, keyword-dense description (pushers). */
  terseDescription?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------------

export function titleCase(phrase: string): string {
  return phrase
    .split(' ')
    .map((w) => (w ? w[0].toUpperCase() + w.slice(1) : w))
    .join(' ');
}

export function andList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

export function formatPrice(value: number): string {
  return `$${value.toFixed(2)}`;
}

export function priceTagOf(pricing: readonly number[]): string {
  return pricing.length > 1 ? `${formatPrice(pricing[0])} to ${formatPrice(pricing[1])}` : formatPrice(pricing[0]);
}

const CENTS = [0.99, 0.49, 0.95, 0.97, 0.0, 0.5];

/** A shop-like price (whole dollars + typical cents) inside [lo, hi]. */
export function samplePrice(rng: Rng, lo: number, hi: number): number {
  const dollars = Math.floor(rng.uniform(lo, hi));
  const cents = rng.pick(CENTS);
  return Math.max(0.99, Math.round((dollars + cents) * 100) / 100);
}

const ASIN_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function sampleAsin(rng: Rng): string {
  let s = 'B0';
  for (let i = 0; i < 8; i++) s += ASIN_ALPHABET[rng.int(0, 35)];
  return s;
}

/** WebShop's search document: lower(Title + Description + BulletPoints[0] + option text). */
export function optionText(options: readonly ProductOptionGroup[]): string {
  return options.map((g) => `${g.name}: ${g.values.join(', ')}`).join(', and ');
}

export function searchText(p: Product): string {
  return [p.title, p.description, p.bullets[0] ?? '', optionText(p.options)].join(' ').toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// Product builder
// ---------------------------------------------------------------------------------------------

function renderTitle(rng: Rng, f: ProductFields): string {
  const type = f.entry.type;
  const shown = f.attributes.slice(0, f.titleAttributeCount).map(titleCase);
  let noun = titleCase(type.noun);
  if (f.titleSynonym) noun += ` ${titleCase(f.titleSynonym)}`;
  else if (type.synonyms.length > 0 && rng.bool(0.2)) noun += ` ${titleCase(rng.pick(type.synonyms))}`;
  const maker = `${f.brand} ${f.line}`;
  if (shown.length === 0) return `${maker} ${noun}`;
  switch (rng.int(0, 3)) {
    case 0:
      return `${maker} ${shown.join(' ')} ${noun}`;
    case 1:
      return `${maker} ${noun} - ${shown.join(', ')}`;
    case 2:
      return `${maker} ${shown[0]} ${noun}${shown.length > 1 ? `, ${shown.slice(1).join(', ')}` : ''}`;
    default:
      return `${f.line} ${shown.join(' ')} ${noun} by ${f.brand}`;
  }
}

function renderDescription(rng: Rng, f: ProductFields, category: CategorySpec, type: ProductTypeSpec): string {
  const hidden = f.attributes.slice(f.titleAttributeCount);
  const mentioned = hidden.length > 0 ? hidden : f.attributes;
  const nounPhrase = type.synonyms.length > 0 && rng.bool(0.5) ? rng.pick(type.synonyms) : type.noun;
  if (f.terseDescription) return `This ${f.titleSynonym ?? type.noun} is ${andList(f.attributes)}.`;
  let lead: string;
  switch (rng.int(0, 3)) {
    case 0:
      lead = `The ${f.brand} ${nounPhrase} is ${andList(mentioned)}.`;
      break;
    case 1:
      lead = `This ${nounPhrase} from ${f.brand} is ${andList(mentioned)}.`;
      break;
    case 2:
      lead = `Looking for a ${nounPhrase} that is ${andList(mentioned)}? ${f.brand} has you covered.`;
      break;
    default:
      lead = `Our ${nounPhrase} features: ${mentioned.join(', ')}.`;
  }
  return `${lead} ${rng.pick(category.closings)}`;
}

function renderBullets(rng: Rng, f: ProductFields, category: CategorySpec): string[] {
  const hidden = f.attributes.slice(f.titleAttributeCount);
  // Bullet 0 is indexed for search; lead with an attribute the title does not show.
  const order = [...rng.shuffle(hidden), ...rng.shuffle(f.attributes.slice(0, f.titleAttributeCount))];
  return order.map((a) => `${a.toUpperCase()} - ${rng.pick(category.bulletTails)}.`);
}

/** Renders title, description and bullets for decided fields (texts draw from `rng`). */
export function buildProduct(rng: Rng, f: ProductFields): Product {
  const { type, category } = f.entry;
  const title = renderTitle(rng, f);
  const description = renderDescription(rng, f, category, type);
  const bullets = f.terseDescription
    ? [`${f.attributes[0].toUpperCase()} - ${rng.pick(category.bulletTails)}.`]
    : renderBullets(rng, f, category);
  return {
    asin: f.asin,
    typeId: type.id,
    category: category.label,
    brand: f.brand,
    line: f.line,
    title,
    description,
    bullets,
    query: type.query,
    productCategory: productCategoryOf(type),
    attributes: f.attributes,
    titleAttributeCount: f.titleAttributeCount,
    options: f.options,
    pricing: f.pricing,
    priceTag: priceTagOf(f.pricing),
    price: f.price,
  };
}

/** Option groups for a type: usually all of them, sometimes fewer; 2–6 values each in pool order. */
export function sampleOptions(rng: Rng, type: ProductTypeSpec): ProductOptionGroup[] {
  const groups = type.options;
  if (groups.length === 0 || rng.bool(0.06)) return [];
  const count = rng.bool(0.65) ? groups.length : rng.int(1, groups.length);
  const chosen = new Set(
    rng.sample(
      groups.map((_, i) => i),
      count,
    ),
  );
  return groups.filter((_, i) => chosen.has(i)).map((g) => sampleGroupValues(rng, g.name, g.values));
}

export function sampleGroupValues(
  rng: Rng,
  name: string,
  pool: readonly string[],
  must: readonly string[] = [],
  exclude: ReadonlySet<string> = new Set(),
): ProductOptionGroup {
  const available = pool.filter((v) => !exclude.has(v));
  const k = Math.min(available.length, rng.int(2, 6));
  const picked = new Set([
    ...must,
    ...rng.sample(
      available.filter((v) => !must.includes(v)),
      Math.max(0, k - must.length),
    ),
  ]);
  const values = pool.filter((v) => picked.has(v));
  for (const m of must) if (!pool.includes(m)) values.push(m);
  return { name, values };
}

/** A single price or (25%) a range with the hidden price sampled inside it. */
export function samplePricing(rng: Rng, lo: number, hi: number): { pricing: number[]; price: number } {
  const p = samplePrice(rng, lo, hi);
  if (rng.bool(0.25)) {
    const top = Math.max(p + 1, Math.floor(p * rng.uniform(1.1, 1.6)) + 0.99);
    const upper = Math.round(top * 100) / 100;
    return { pricing: [p, upper], price: rng.uniform(p, upper) };
  }
  return { pricing: [p], price: p };
}

function sampleCatalogProduct(rng: Rng, asin: string): Product {
  const entry = PRODUCT_TYPES[rng.int(0, PRODUCT_TYPES.length - 1)];
  const { type, category } = entry;
  const n = Math.min(type.attributes.length, rng.int(3, 6));
  const attributes = rng.sample(type.attributes, n);
  const titleAttributeCount = rng.int(1, Math.min(3, n - 1));
  const options = sampleOptions(rng, type);
  const { pricing, price } = samplePricing(rng, type.price[0], type.price[1]);
  return buildProduct(rng, {
    asin,
    entry,
    brand: rng.pick(category.brands),
    line: rng.pick(category.lines),
    attributes,
    titleAttributeCount,
    options,
    pricing,
    price,
  });
}

// ---------------------------------------------------------------------------------------------
// Catalog (cached)
// ---------------------------------------------------------------------------------------------

export class Catalog {
  readonly products: Product[];
  readonly byAsin = new Map<string, Product>();
  readonly index: Bm25Index;
  private readonly eligibleCache = new Map<string, Product[]>();

  constructor(
    readonly seed: number,
    readonly size: number,
  ) {
    if (!Number.isInteger(size) || size < MIN_CATALOG_SIZE || size > MAX_CATALOG_SIZE) {
      throw new RangeError(
        `webshop: catalogSize must be an integer in [${MIN_CATALOG_SIZE}, ${MAX_CATALOG_SIZE}], got ${size}`,
      );
    }
    const root = Rng.fromSeed(seed, 'webshop-lite-v0', 'catalog');
    this.products = [];
    for (let i = 0; i < size; i++) {
      const rng = root.split(`p${i}`);
      let asin = sampleAsin(rng);
      while (this.byAsin.has(asin)) asin = sampleAsin(rng);
      const product = sampleCatalogProduct(rng, asin);
      this.products.push(product);
      this.byAsin.set(asin, product);
    }
    this.index = new Bm25Index(this.products.map((p) => ({ asin: p.asin, text: searchText(p) })));
  }

  /** Products that can be a target with k_att attributes and k_opt option groups (catalog order). */
  eligible(attributes: number, options: number, typeId?: string): Product[] {
    const key = `${attributes}/${options}/${typeId ?? ''}`;
    let list = this.eligibleCache.get(key);
    if (!list) {
      list = this.products.filter(
        (p) =>
          p.attributes.length >= attributes &&
          p.options.length >= options &&
          (typeId === undefined || p.typeId === typeId),
      );
      this.eligibleCache.set(key, list);
    }
    return list;
  }
}

const catalogs = new Map<string, Catalog>();

/** The catalog for (seed, size), built once per process. */
export function getCatalog(seed: number, size: number = DEFAULT_CATALOG_SIZE): Catalog {
  const key = `${seed}/${size}`;
  let catalog = catalogs.get(key);
  if (!catalog) {
    catalog = new Catalog(seed, size);
    if (catalogs.size >= 8) catalogs.delete(catalogs.keys().next().value as string);
    catalogs.set(key, catalog);
  }
  return catalog;
}
