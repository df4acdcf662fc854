/**
 * The five WebShop pages in "simple" text mode (docs/architecture.md §3.3): every visible text
 * node, stripped, joined with ' [SEP] '. Clickables are listed as WebShop's
 * get_available_actions lists them: buttons in page order, then product links, then option
 * values (radio inputs), lower-cased and de-duplicated.
 */
import type { Product } from './catalog';
import type { RewardBreakdown, RewardGoal } from './reward';

export const SEP = ' [SEP] ';
/** WebShop's PRODUCT_WINDOW. */
export const PRODUCTS_PER_PAGE = 10;

export type SubPage = 'Description' | 'Features' | 'Reviews';

export type PageState =
  | { kind: 'search' }
  | { kind: 'results'; keywords: string; page: number }
  | { kind: 'item'; keywords: string; page: number; asin: string; options: Record<string, string> }
  | { kind: 'sub'; keywords: string; page: number; asin: string; options: Record<string, string>; sub: SubPage }
  | { kind: 'done'; asin: string; options: Record<string, string>; reward: RewardBreakdown };

export interface RenderContext {
  instruction: string;
  product(asin: string): Product | undefined;
  search(keywords: string): string[];
  /** For the done page's (CSS-hidden, but extracted) debug block. */
  goal: RewardGoal;
  target: Product;
}

/** The ASINs shown on results page `page` (1-based). */
export function pageAsins(hits: readonly string[], page: number): string[] {
  return hits.slice((page - 1) * PRODUCTS_PER_PAGE, page * PRODUCTS_PER_PAGE);
}

/** Python's repr of a float (1 → '1.0'). */
export function pyFloat(x: number): string {
  return Number.isInteger(x) ? x.toFixed(1) : String(x);
}

/** Python's repr of a list of strings. */
export function pyList(items: readonly string[]): string {
  return `[${items.map((s) => (s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replace(/'/g, "\\'")}'`)).join(', ')}]`;
}

function instructionHeader(ctx: RenderContext): string[] {
  return ['Instruction:', ctx.instruction];
}

export function renderPage(state: PageState, ctx: RenderContext): string {
  switch (state.kind) {
    case 'search':
      return ['WebShop', ...instructionHeader(ctx), 'Search'].join(SEP);
    case 'results': {
      const hits = ctx.search(state.keywords);
      const parts = [...instructionHeader(ctx), 'Back to Search', `Page ${state.page} (Total results: ${hits.length})`];
      if (state.page > 1) parts.push('< Prev');
      parts.push('Next >');
      for (const asin of pageAsins(hits, state.page)) {
        const p = ctx.product(asin)!;
        parts.push(p.asin, p.title, p.priceTag);
      }
      return parts.join(SEP);
    }
    case 'item': {
      const p = ctx.product(state.asin)!;
      const parts = [...instructionHeader(ctx), 'Back to Search', '< Prev'];
      for (const group of p.options) parts.push(group.name, ...group.values);
      parts.push(p.title, `Price: ${p.priceTag}`, 'Rating: N.A.', 'Description', 'Features', 'Reviews', 'Buy Now');
      return parts.join(SEP);
    }
    case 'sub': {
      const p = ctx.product(state.asin)!;
      const parts = [...instructionHeader(ctx), 'Back to Search', '< Prev'];
      if (state.sub === 'Description') parts.push(p.description);
      else if (state.sub === 'Features') parts.push(...p.bullets);
      // Reviews: WebShop's shipped loader disables the reviews file, so the page is empty.
      return parts.filter((x) => x.length > 0).join(SEP);
    }
    case 'done': {
      const p = ctx.product(state.asin)!;
      const g = ctx.goal;
      const optionsJson = `{${Object.entries(state.options)
        .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
        .join(', ')}}`;
      return [
        'Thank you for shopping with us!',
        'Your code:',
        'None',
        '(Paste it in your MTurk interface.)',
        'Purchased',
        'asin',
        p.asin,
        'options',
        optionsJson,
        'attrs',
        pyList(p.attributes),
        'category',
        p.category,
        'query',
        p.query,
        'product category',
        p.productCategory,
        'Target',
        'asin',
        ctx.target.asin,
        'options',
        pyList(g.goalOptions),
        'attrs',
        pyList(g.attributes),
        'price upper',
        g.priceUpper >= 1e6 ? String(g.priceUpper) : pyFloat(g.priceUpper),
        'instuction text',
        ctx.instruction,
        'category',
        ctx.target.category,
        'product category',
        g.productCategory,
        'query',
        g.query,
        'Reward',
        'Your score (min 0.0, max 1.0)',
        pyFloat(state.reward.reward),
      ].join(SEP);
    }
  }
}

/** WebShop's clickables for the page (lower-cased, de-duplicated, in its listing order). */
export function clickables(state: PageState, ctx: RenderContext): string[] {
  const out: string[] = [];
  switch (state.kind) {
    case 'search':
    case 'done':
      return out; // 'search' is refused as a click; the search bar is the only way on.
    case 'results': {
      out.push('back to search');
      if (state.page > 1) out.push('< prev');
      out.push('next >');
      for (const asin of pageAsins(ctx.search(state.keywords), state.page)) out.push(asin.toLowerCase());
      break;
    }
    case 'item': {
      out.push('back to search', '< prev', 'description', 'features', 'reviews', 'buy now');
      for (const group of ctx.product(state.asin)!.options) out.push(...group.values);
      break;
    }
    case 'sub':
      out.push('back to search', '< prev');
      break;
  }
  return [...new Set(out)];
}
