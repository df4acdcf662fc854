/**
 * The page state machine (WebShop's SimServer.receive): parses an action, moves between pages,
 * and computes the reward at 'buy now'. Pure functions over (state, episode), shared by the env
 * and by the expert's solvability proof.
 */
import type { ShopEpisode } from './episode';
import { expertAction } from './expert';
import { clickables, renderPage, type PageState, type SubPage } from './pages';
import { getReward } from './reward';

export interface ParsedAction {
  verb: string;
  arg: string;
}

const ACTION = /^(\w+)\[(.+)\]$/s;

/**
 * `search[...]` / `click[...]`, verb and argument lower-cased and trimmed. A reply with
 * reasoning is accepted too: the action on the last line starting with 'Action:' (or on the
 * next non-empty line when that line holds nothing else, as in AgentGym's "Action:\nclick[x]").
 */
export function parseAction(text: string): ParsedAction | null {
  let candidate = text.trim();
  const lines = candidate.split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^\s*action\s*:\s*(.*)$/i.exec(lines[i]);
    if (!m) continue;
    let rest = m[1].trim();
    for (let j = i + 1; !rest && j < lines.length; j++) rest = lines[j].trim();
    candidate = rest;
    break;
  }
  const m = ACTION.exec(candidate.trim());
  if (!m) return null;
  const arg = m[2].trim().toLowerCase().replace(/\s+/g, ' ');
  if (!arg) return null;
  return { verb: m[1].toLowerCase(), arg };
}

const SUB_PAGES: Record<string, SubPage> = { description: 'Description', features: 'Features', reviews: 'Reviews' };

/** The next state, or null when the action is unparsable or not admissible here (a no-op). */
export function transition(state: PageState, action: string, episode: ShopEpisode): PageState | null {
  const parsed = parseAction(action);
  if (!parsed) return null;
  const { verb, arg } = parsed;
  if (verb === 'search') {
    // The search bar exists only on the search page.
    return state.kind === 'search' ? { kind: 'results', keywords: arg, page: 1 } : null;
  }
  if (verb !== 'click' || arg === 'search' || !clickables(state, episode).includes(arg)) return null;

  if (arg === 'back to search') return { kind: 'search' };
  switch (state.kind) {
    case 'results':
      if (arg === 'next >') return { ...state, page: state.page + 1 };
      if (arg === '< prev') return { ...state, page: state.page - 1 };
      return { kind: 'item', keywords: state.keywords, page: state.page, asin: arg.toUpperCase(), options: {} };
    case 'item': {
      if (arg === '< prev') return { kind: 'results', keywords: state.keywords, page: state.page };
      if (arg === 'buy now') {
        const product = episode.product(state.asin)!;
        const reward = getReward(product, episode.goal, product.price, state.options);
        return { kind: 'done', asin: state.asin, options: state.options, reward };
      }
      const sub = SUB_PAGES[arg];
      if (sub)
        return {
          kind: 'sub',
          keywords: state.keywords,
          page: state.page,
          asin: state.asin,
          options: state.options,
          sub,
        };
      // An option value: WebShop maps the text to the last radio input carrying it.
      const groups = episode.product(state.asin)!.options;
      let groupName = '';
      for (const g of groups) if (g.values.includes(arg)) groupName = g.name;
      return { ...state, options: { ...state.options, [groupName]: arg } };
    }
    case 'sub':
      // '< prev' returns to the item page with the options kept.
      return { kind: 'item', keywords: state.keywords, page: state.page, asin: state.asin, options: state.options };
    default:
      return null;
  }
}

/** Admissible actions: candidate searches on the search page, one click per clickable elsewhere. */
export function admissibleActions(state: PageState, episode: ShopEpisode): string[] {
  if (state.kind === 'done') return [];
  if (state.kind === 'search') return episode.candidates.map((q) => `search[${q}]`);
  return clickables(state, episode).map((c) => `click[${c}]`);
}

export function observe(state: PageState, episode: ShopEpisode): string {
  return renderPage(state, episode);
}

export interface ExpertRun {
  actions: string[];
  reward: number;
  success: boolean;
}

/** Plays the expert from the search page until it buys (or `maxSteps` pass). */
export function runExpert(episode: ShopEpisode, maxSteps = 40): ExpertRun {
  let state: PageState = { kind: 'search' };
  const actions: string[] = [];
  while (actions.length < maxSteps) {
    const action = expertAction(state, episode);
    if (action === null) break;
    const next = transition(state, action, episode);
    if (!next) break; // cannot happen for a consistent expert; stop rather than loop
    actions.push(action);
    state = next;
    if (state.kind === 'done') return { actions, reward: state.reward.reward, success: state.reward.reward === 1 };
  }
  return { actions, reward: 0, success: false };
}
