/**
 * How the Play page shows an observation (plain logic, unit-tested in Node). The agent reads the
 * environment's text as it is; a person reads better with structure: WebShop's results page as
 * product cards (id, title, price, then its click), and its end page as what was bought and the
 * score — without the original WebShop's debug text (the MTurk code line, the raw target record);
 * on a product page, the options picked so far (the page's text does not say).
 * Nothing here changes what the environment says or what the agent sees.
 */
import { parseAction } from '../../../core/envs/webshop/machine';

export interface ProductCard {
  /** The product id as the page shows it, and the action that opens it. */
  id: string;
  title: string;
  price: string;
  action: string;
}

export type PageView =
  | { kind: 'results'; page: string; products: ProductCard[] }
  | { kind: 'purchase'; bought: string | null; options: string; score: string | null }
  | { kind: 'text' };

const SEP = ' [SEP] ';

/** A WebShop results page (its products) or end page (the purchase and score); anything else is shown as text. */
export function pageView(text: string, admissible: readonly string[]): PageView {
  if (!text.includes(SEP)) return { kind: 'text' };
  const parts = text.split(SEP).map((p) => p.trim());
  if (parts[0].startsWith('Thank you for shopping')) return purchaseView(parts);
  const pageAt = parts.findIndex((p) => /^Page \d+ \(Total results: \d+\)$/.test(p));
  if (pageAt < 0) return { kind: 'text' };
  const clicks = new Set(admissible);
  const products: ProductCard[] = [];
  for (let i = pageAt + 1; i < parts.length; i++) {
    const action = `click[${parts[i].toLowerCase()}]`;
    if (!/^[A-Z0-9]{10}$/.test(parts[i]) || !clicks.has(action)) continue;
    const price = parts[i + 2]?.startsWith('$') ? parts[i + 2] : '';
    products.push({ id: parts[i], title: parts[i + 1] ?? '', price, action });
  }
  return products.length ? { kind: 'results', page: parts[pageAt], products } : { kind: 'text' };
}

/** The end page: 'Purchased' 'asin' ID 'options' JSON … 'Your score (min 0.0, max 1.0)' SCORE; the rest is WebShop's debug record. */
function purchaseView(parts: string[]): PageView {
  const purchased = parts.indexOf('Purchased');
  const after = (label: string, from: number) => {
    const at = parts.indexOf(label, from);
    return at >= 0 && at + 1 < parts.length ? parts[at + 1] : null;
  };
  const bought = purchased >= 0 ? after('asin', purchased) : null;
  const rawOptions = purchased >= 0 ? after('options', purchased) : null;
  const scoreAt = parts.findIndex((p) => p.startsWith('Your score'));
  return {
    kind: 'purchase',
    bought,
    options: readableOptions(rawOptions),
    score: scoreAt >= 0 ? (parts[scoreAt + 1] ?? null) : null,
  };
}

/** `{"scent": "lavender"}` → 'scent: lavender'; none → 'no options chosen'. */
function readableOptions(raw: string | null): string {
  if (!raw) return 'no options chosen';
  try {
    const parsed = JSON.parse(raw) as Record<string, unknown>;
    const entries = Object.entries(parsed);
    return entries.length ? entries.map(([k, v]) => `${k}: ${String(v)}`).join(', ') : 'no options chosen';
  } catch {
    return raw;
  }
}

/** What the free-text action box suggests, per environment (its own action grammar). */
export function actionHint(envId: string): string {
  if (envId.startsWith('webshop')) return 'Type any action, e.g. search[lavender shampoo] or click[buy now]';
  if (envId.startsWith('household'))
    return 'Type any action, e.g. go to cabinet 1, open drawer 1, take candle 2 from shelf 1';
  if (envId.startsWith('webarena'))
    return 'Type any action, e.g. click [3], type [7] [31.50], scroll [down], go_back or stop [answer]';
  return 'Type any action';
}

// ---- The options picked on a product page --------------------------------------------------------

/** One option group of a WebShop product page (e.g. size: small, medium, large), values lower-case. */
export interface OptionGroup {
  name: string;
  values: string[];
}

/** A picked option: its group and the value clicked. */
export interface ChosenOption {
  group: string;
  value: string;
}

/**
 * A WebShop product page's option groups, read from its text (after '< Prev', before the title
 * and 'Price: …'): a segment the page lets you click is a value, the one before a run of values
 * names their group. Null when the text is not a product page.
 */
export function itemOptions(text: string, admissible: readonly string[]): OptionGroup[] | null {
  if (!text.includes(SEP)) return null;
  const parts = text.split(SEP).map((p) => p.trim());
  const prevAt = parts.indexOf('< Prev');
  const priceAt = parts.findIndex((p) => p.startsWith('Price: '));
  if (prevAt < 0 || priceAt <= prevAt || !parts.includes('Buy Now')) return null;
  const clicks = new Set(admissible);
  const groups: OptionGroup[] = [];
  let group: OptionGroup | null = null;
  // The segment right before 'Price: …' is the product's title.
  for (const part of parts.slice(prevAt + 1, priceAt - 1)) {
    const value = part.toLowerCase();
    if (group && clicks.has(`click[${value}]`)) group.values.push(value);
    else groups.push((group = { name: part, values: [] }));
  }
  return groups.filter((g) => g.values.length > 0);
}

/** A product page's buttons that are not option values. */
const ITEM_BUTTONS = new Set(['back to search', '< prev', 'buy now', 'description', 'features', 'reviews']);
const SUB_PAGES = new Set(['description', 'features', 'reviews']);

/**
 * The options picked on the product page open now, from the episode's actions so far: follows
 * the pages the accepted actions led through (a refused action changes nothing) — opening a
 * product starts with none picked, a click on a value picks it in its group (the last group
 * that has it, as WebShop does), a sub-page keeps them. `groups` are the open page's
 * (itemOptions); the result is in their order.
 */
export function chosenOptions(
  steps: readonly { action: string; valid: boolean }[],
  groups: readonly OptionGroup[],
): ChosenOption[] {
  let page: 'search' | 'results' | 'item' | 'sub' | 'done' = 'search';
  let picked = new Map<string, string>();
  for (const step of steps) {
    // Read as the env reads it: `click[Large]` → click 'large' (lower-cased, spaces collapsed).
    const parsed = step.valid ? parseAction(step.action) : null;
    if (!parsed) continue;
    if (parsed.verb === 'search') {
      page = 'results';
      continue;
    }
    if (parsed.verb !== 'click') continue;
    const arg = parsed.arg;
    if (arg === 'back to search') {
      page = 'search';
      continue;
    }
    if (page === 'results') {
      if (arg !== 'next >' && arg !== '< prev') {
        page = 'item';
        picked = new Map();
      }
    } else if (page === 'item') {
      if (arg === '< prev') page = 'results';
      else if (arg === 'buy now') page = 'done';
      else if (SUB_PAGES.has(arg)) page = 'sub';
      else if (!ITEM_BUTTONS.has(arg)) {
        let group: string | null = null;
        for (const g of groups) if (g.values.includes(arg)) group = g.name;
        if (group !== null) picked.set(group, arg);
      }
    } else if (page === 'sub' && arg === '< prev') {
      page = 'item';
    }
  }
  return groups.filter((g) => picked.has(g.name)).map((g) => ({ group: g.name, value: picked.get(g.name)! }));
}

/** The line under a product page: 'Chosen: size: small, color: walnut', or that none is yet. */
export function chosenLine(chosen: readonly ChosenOption[]): string {
  if (chosen.length === 0) return 'Chosen: none yet (click an option to pick it).';
  return `Chosen: ${chosen.map((c) => `${c.group}: ${c.value}`).join(', ')}`;
}

/**
 * The option buttons' pressed state, by action (`click[value]` → picked or not); actions that
 * are not option values are absent, so their buttons carry no aria-pressed.
 */
export function optionPressed(
  groups: readonly OptionGroup[],
  chosen: readonly ChosenOption[],
): Record<string, boolean> {
  const pressed: Record<string, boolean> = {};
  for (const g of groups) for (const v of g.values) pressed[`click[${v}]`] ||= false;
  for (const c of chosen) pressed[`click[${c.value}]`] = true;
  return pressed;
}
