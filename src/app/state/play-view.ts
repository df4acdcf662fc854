/**
 * How the Play page shows an observation (plain logic, unit-tested in Node). The agent reads the
 * environment's text as it is; a person reads better with structure: WebShop's results page as
 * product cards (id, title, price, then its click), and its end page as what was bought and the
 * score — without the original WebShop's debug text (the MTurk code line, the raw target record).
 * Nothing here changes what the environment says or what the agent sees.
 */

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
  return { kind: 'purchase', bought, options: readableOptions(rawOptions), score: scoreAt >= 0 ? parts[scoreAt + 1] ?? null : null };
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
  if (envId.startsWith('household')) return 'Type any action, e.g. go to cabinet 1, open drawer 1, take candle 2 from shelf 1';
  return 'Type any action';
}
