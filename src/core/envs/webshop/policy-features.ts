/**
 * What WebShop adds to the policy's features (envs/env.ts `policyFeatures`): the product a click leads to, read from
 * the page ('B0XXXXXXXX [SEP] Title [SEP] $price' on a results page, the item's title and 'Price:' on an item page),
 * against the instruction: the title's overlap with it, and the price against its price bound. The title's words go
 * into the action bag of a product click.
 */
import type { ExtraRow, PolicyFeatureSet, PolicyState } from '../../policy/features';
import { contentStems, tokenize } from '../../policy/text';

const SEP = ' [SEP] ';
const ASIN_RE = /^b0[a-z0-9]{8}$/;
const MAX_TITLE_TOKENS = 24;
/** Words of WebShop's instructions that say nothing of the product. */
const INSTRUCTION_WORDS = new Set(
  'price lower less than under below dollars dollar cheaper up buy item items product products'.split(' '),
);
const NAV_CLICKS = new Set(['back to search', 'next >', '< prev', 'description', 'features', 'reviews', 'attributes']);
const PRICE_BOUND_RE =
  /(?:lower|less|cheaper|under|below|within|max(?:imum)?)\s+(?:than\s+)?\$?\s*([0-9]+(?:\.[0-9]+)?)/;

interface Product {
  titleTokens: string[];
  titleStems: string[];
  price: number | null;
}

/** "$12.50" or "$10.00 to $20.00" → the lower price. */
function parsePrice(text: string): number | null {
  const m = /\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)/.exec(text);
  return m ? Number(m[1].replace(/,/g, '')) : null;
}

function product(title: string, priceText: string | undefined): Product {
  const titleTokens = tokenize(title).slice(0, MAX_TITLE_TOKENS);
  return {
    titleTokens,
    titleStems: contentStems(titleTokens, INSTRUCTION_WORDS),
    price: priceText === undefined ? null : parsePrice(priceText),
  };
}

/** The products of a results page by ASIN (lower case), or the item of an item page. */
function productsOf(observation: string): { products: Map<string, Product>; item: Product | null } {
  const products = new Map<string, Product>();
  let item: Product | null = null;
  if (!observation.includes(SEP)) return { products, item };
  const segments = observation.split(SEP);
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i].trim();
    if (seg.length === 10 && ASIN_RE.test(seg.toLowerCase()) && i + 1 < segments.length)
      products.set(seg.toLowerCase(), product(segments[i + 1], segments[i + 2]));
  }
  if (products.size === 0 && observation.includes('[SEP] Buy Now'))
    for (let i = 1; i < segments.length; i++)
      if (segments[i].startsWith('Price:')) {
        item = product(segments[i - 1], segments[i]);
        break;
      }
  return { products, item };
}

const ROW = [
  'title_overlap_ratio', // target title ∩ instruction / |content(instruction)|
  'title_overlap_count', // … / 5, capped at 2
  'has_title',
  'price_known',
  'price_within_bound',
  'price_over_bound',
  'price_to_bound', // price / bound / 2, capped at 1
] as const;

function prepare(state: PolicyState): { state: number[]; row(action: string): ExtraRow } {
  const instructionLower = state.instruction.toLowerCase();
  const instructionContent = new Set(contentStems(tokenize(instructionLower).slice(0, 48), INSTRUCTION_WORDS));
  const bound = PRICE_BOUND_RE.exec(instructionLower);
  const priceBound = bound ? Number(bound[1]) : null;
  const { products, item } = productsOf(state.observation);
  const size = Math.max(1, instructionContent.size);
  return {
    state: [priceBound !== null ? 1 : 0],
    row(action: string): ExtraRow {
      const click = /^click\[(.*)\]$/.exec(action.toLowerCase().trim());
      const argument = click?.[1].trim() ?? null;
      const clicked = argument === null ? null : (products.get(argument) ?? null);
      // A product click leads to its product; an option or Buy Now on an item page is about the item on show.
      const target = clicked ?? (argument !== null && item && !NAV_CLICKS.has(argument) ? item : null);
      if (!target) return { values: [0, 0, 0, 0, 0, 0, 0] };
      const overlap = new Set(target.titleStems.filter((c) => instructionContent.has(c))).size;
      const price = target.price;
      return {
        values: [
          overlap / size,
          Math.min(overlap / 5, 2),
          1,
          price !== null ? 1 : 0,
          price !== null && priceBound !== null && price <= priceBound ? 1 : 0,
          price !== null && priceBound !== null && price > priceBound ? 1 : 0,
          price !== null && priceBound ? Math.min(price / priceBound / 2, 1) : 0,
        ],
        ...(clicked ? { bag: clicked.titleTokens } : {}),
      };
    },
  };
}

export const webshopPolicyFeatures: PolicyFeatureSet = { row: ROW, state: ['has_price_bound'], prepare };
