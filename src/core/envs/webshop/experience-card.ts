/**
 * What an experience model is told about mini-WebShop (env.ts `experienceCard`), and how its pages
 * map to the compact abstract states the model reads and writes.
 *
 * Abstract pages: ' [SEP] ' becomes ' | ', the instruction header every page repeats is dropped
 * (the task is in the prompt once), so are the page buttons (Back to Search, < Prev, Next >,
 * Rating/Description/Features/Reviews/Buy Now: they follow from the page kind), long elements
 * (titles, descriptions) are cut to 48 characters, and the done page keeps only what was bought
 * and the score. Admissible lists leave the button clicks out too. `concrete` and
 * `concreteAdmissible` put everything back, so a dreamed page looks like WebShop's to the policy
 * (its page-type features read '[SEP] Buy Now' etc.).
 */
import type { ExperienceCard, StateAbstraction } from '../env';

const SEP = ' [SEP] ';
const ABSTRACT_SEP = ' | ';
/** Longest element kept whole in an abstract WebShop page (titles, descriptions). */
export const WEBSHOP_ELEMENT_CHARS = 48;

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Cuts an element to WEBSHOP_ELEMENT_CHARS characters, ending with '…' when cut. */
function shorten(part: string): string {
  const maxChars = WEBSHOP_ELEMENT_CHARS;
  if (part.length <= maxChars) return part;
  return `${part.slice(0, maxChars - 1).trimEnd()}…`;
}

/** WebShop's page buttons: the same on every page of a kind, so abstract states leave them out. */
const RESULT_BUTTONS = ['Back to Search', '< Prev', 'Next >'];
const ITEM_TAIL = ['Rating: N.A.', 'Description', 'Features', 'Reviews', 'Buy Now'];
const EMPTY_SUBPAGE = '(empty page)';
const SHOP_BUTTON_ACTIONS = new Set([
  'click[back to search]',
  'click[< prev]',
  'click[next >]',
  'click[description]',
  'click[features]',
  'click[reviews]',
  'click[buy now]',
]);

/**
 * A WebShop page as a clean element listing: the instruction header and the page buttons go
 * (they follow from the page kind), long elements are cut, the done page keeps what was bought.
 *   results  'Page 2 (Total results: 50) | B0… | title | $12.50 | …'
 *   item     'color | grey | navy | title | Price: $25.50'
 *   subpage  'the description text…' (an empty one: '(empty page)')
 */
function webshopAbstract(text: string): string {
  let parts = text.split(SEP).map((p) => p.trim());
  if (parts[0] === 'WebShop') parts = parts.slice(1);
  if (parts[0] === 'Instruction:') parts = parts.slice(2);
  if (parts[0]?.startsWith('Thank you for shopping')) {
    const asin = parts.indexOf('asin');
    const options = parts.indexOf('options');
    const score = parts.indexOf('Your score (min 0.0, max 1.0)');
    const out = ['Thank you for shopping with us!', 'Purchased'];
    if (asin >= 0) out.push('asin', parts[asin + 1] ?? '');
    if (options >= 0) out.push('options', parts[options + 1] ?? '{}');
    if (score >= 0) out.push('Your score (min 0.0, max 1.0)', parts[score + 1] ?? '');
    return out.join(ABSTRACT_SEP);
  }
  if (parts.length === 1 && parts[0] === 'Search') return 'Search';
  const isResults = parts.some((p) => /^Page \d+ \(Total results/.test(p));
  const isItem = parts[parts.length - 1] === 'Buy Now';
  if (isResults) parts = parts.filter((p) => !RESULT_BUTTONS.includes(p));
  else {
    if (parts[0] === 'Back to Search') parts = parts.slice(1);
    if (parts[0] === '< Prev') parts = parts.slice(1);
    if (isItem) parts = parts.slice(0, parts.length - ITEM_TAIL.length);
  }
  if (parts.length === 0) return EMPTY_SUBPAGE;
  return parts.map(shorten).join(ABSTRACT_SEP);
}

function webshopConcrete(abstract: string, instruction: string): string {
  let parts = abstract
    .split(/\s*(?:\||\[SEP\])\s*/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (parts[0] === 'WebShop') parts = parts.slice(1);
  if (parts[0] === 'Instruction:') parts = parts.slice(parts[1] === undefined ? 1 : 2);
  const search = ['WebShop', 'Instruction:', instruction, 'Search'].join(SEP);
  if (parts.length === 0) return search;
  if (parts.length === 1 && parts[0].toLowerCase() === 'search') return search;
  if (parts[0].startsWith('Thank you for shopping')) return parts.join(SEP);
  // The model may have written the buttons itself: take them out, then put them where WebShop has them.
  parts = parts.filter((p) => !RESULT_BUTTONS.includes(p) && !ITEM_TAIL.includes(p) && p !== EMPTY_SUBPAGE);
  const header = ['Instruction:', instruction, 'Back to Search'];
  const pageAt = parts.findIndex((p) => /^Page \d+ \(Total results/.test(p));
  if (pageAt >= 0) {
    const page = Number(/^Page (\d+)/.exec(parts[pageAt])![1]);
    const rest = parts.filter((_, i) => i !== pageAt);
    return [...header, parts[pageAt], ...(page > 1 ? ['< Prev'] : []), 'Next >', ...rest].join(SEP);
  }
  if (parts.some((p) => p.startsWith('Price:'))) return [...header, '< Prev', ...parts, ...ITEM_TAIL].join(SEP);
  return [...header, '< Prev', ...parts].join(SEP);
}

/** The page buttons of a concrete WebShop page, as WebShop lists them (before the page's links). */
function webshopButtons(text: string): string[] {
  if (text.startsWith('WebShop [SEP]') || text.startsWith('Thank you for shopping')) return [];
  const page = /\[SEP\] Page (\d+) \(Total results/.exec(text);
  if (page) return ['click[back to search]', ...(Number(page[1]) > 1 ? ['click[< prev]'] : []), 'click[next >]'];
  if (text.endsWith('[SEP] Buy Now'))
    return [
      'click[back to search]',
      'click[< prev]',
      'click[description]',
      'click[features]',
      'click[reviews]',
      'click[buy now]',
    ];
  return ['click[back to search]', 'click[< prev]'];
}

/**
 * A next page's full admissible list: its buttons (read from the concrete page text), then the
 * model's own actions less any button it wrote, lower-cased as WebShop lists them (its clickables
 * are; a model may write 'click[B0ABC…]'), de-duplicated.
 */
function webshopAdmissible(local: readonly string[], concreteText: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (raw: string) => {
    const a = collapse(raw).toLowerCase();
    if (a.length === 0 || seen.has(a)) return;
    seen.add(a);
    out.push(a);
  };
  for (const b of webshopButtons(concreteText)) add(b);
  for (const a of local) if (!SHOP_BUTTON_ACTIONS.has(collapse(a).toLowerCase())) add(a);
  return out;
}

export const webshopAbstraction: StateAbstraction = {
  kind: 'webshop',
  abstract: webshopAbstract,
  concrete: webshopConcrete,
  abstractAdmissible: (admissible) => admissible.filter((a) => !SHOP_BUTTON_ACTIONS.has(a)),
  concreteAdmissible: webshopAdmissible,
};

export const webshopExperienceCard: ExperienceCard = {
  name: 'mini-WebShop',
  showAdmissible: false,
  elementSeparator: SEP,
  text: [
    'mini-WebShop, a simulated shop; page elements joined by " | ".',
    'Pages: Search; results "Page N (Total results: M) | asin | title | $price | …" (10 a page);',
    'item "option group | values… | title | Price: $x"; done "Thank you for shopping with us! | …".',
    'Actions: search[query] on Search; click[asin | option value | button];',
    'click[buy now] ends the episode, reward 1 if the item fits the instruction',
    '(type, attributes, options, price) else 0.',
    'admissible: only the queries, asins or option values (lower-case); buttons are implied.',
  ].join(' '),
  abstraction: webshopAbstraction,
};
