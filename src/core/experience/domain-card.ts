/**
 * Domain cards: what the experience model is told about an environment, written once per env —
 * what it is, its action grammar, its text format and its reward rule — plus the mapping between
 * the env's concrete text and the compact abstract states the model reads and writes.
 *
 * Abstract states (paper §8.1: "clean element listings … discarding irrelevant structural
 * artifacts") keep dreams cheap: output tokens decide the dream's speed (design.md §4).
 * - mini-WebShop: ' [SEP] ' becomes ' | ', the instruction header every page repeats is dropped
 *   (the task is in the prompt once), so are the page buttons (Back to Search, < Prev, Next >,
 *   Rating/Description/Features/Reviews/Buy Now: they follow from the page kind), long elements
 *   (titles, descriptions) are cut to 48 characters, and the done page keeps only what was bought
 *   and the score. Admissible lists leave the button clicks out too. `concreteObservation` and
 *   `concreteAdmissible` put everything back, so a DreamEnv's pages look like WebShop's to the
 *   policy (its page-type features read '[SEP] Buy Now' etc.).
 * - household: the welcome banner and the repeated task line are dropped; feedback is kept as is.
 *   `go to R`, `look` and `inventory` are admissible everywhere: they are left out of prompts and
 *   answers (`globalActions`) and re-added from the episode's first admissible list.
 * - imported domains (`deriveDomainCard`): whitespace collapsed, bounded; globals derived from
 *   the data (action kinds present in every state of every episode).
 */
import type { Trajectory } from '../types';

export type AbstractionKind = 'webshop' | 'household' | 'generic';

export interface DomainCard {
  env: string;
  name: string;
  /** The description shown to the model (compact: it is part of every prompt). */
  text: string;
  /** How concrete text maps to abstract states and back. */
  abstraction: AbstractionKind;
  /**
   * Regular expression (source) of actions admissible in every state of an episode: they are
   * omitted from prompts and answers and re-added from the episode's first admissible list.
   */
  globalActions?: string;
  /** The env lists admissible actions sorted (TextWorld): re-sort after re-adding the globals. */
  sortedAdmissible?: boolean;
  /** Show the current state's admissible actions in the prompt (WebShop's are visible on the page). */
  showAdmissible: boolean;
}

const WEBSHOP_CARD: DomainCard = {
  env: 'webshop-lite-v0',
  name: 'mini-WebShop',
  abstraction: 'webshop',
  showAdmissible: false,
  text: [
    'mini-WebShop, a simulated shop; page elements joined by " | ". Pages: Search; results "Page N (Total results: M) | asin | title | $price | …"',
    '(10 a page); item "option group | values… | title | Price: $x"; done "Thank you for shopping with us! | …".',
    'Actions: search[query] on Search; click[asin | option value | button]; click[buy now] ends the episode, reward 1 if the item fits',
    'the instruction (type, attributes, options, price) else 0. admissible: only the queries, asins or option values (lower-case); buttons are implied.',
  ].join(' '),
};

const HOUSEHOLD_CARD: DomainCard = {
  env: 'household-v0',
  name: 'mini-ALFWorld household',
  abstraction: 'household',
  globalActions: '^(?:go to .+|look|inventory)$',
  sortedAdmissible: true,
  showAdmissible: true,
  text: [
    'mini-ALFWorld household (TextWorld). Commands: go to R, open/close R, take O from R, put O in/on R, heat O with microwave,',
    'cool O with fridge, clean O with sinkbasin, use O (lamp), examine X, look, inventory. One object can be held.',
    'Feedback like "You arrive at R. On the R, you see a O1, and a O2." / "The R is closed." / "You pick up the O from the R.".',
    'Reward 1 and the episode ends when the goal holds, else 0. admissible: omit "go to", look, inventory (always allowed).',
  ].join(' '),
};

const BUILT_IN: readonly DomainCard[] = [WEBSHOP_CARD, HOUSEHOLD_CARD];

/** The written card of one of our environments, or undefined for an unknown (imported) env. */
export function builtInDomainCard(envId: string): DomainCard | undefined {
  return BUILT_IN.find((c) => c.env === envId);
}

/** The card of `envId`; for an imported domain, derived from its trajectories (required then). */
export function domainCardFor(envId: string, trajectories?: readonly Trajectory[]): DomainCard {
  const card = builtInDomainCard(envId);
  if (card) return card;
  if (trajectories && trajectories.length > 0) return deriveDomainCard(trajectories);
  throw new Error(
    `No domain card for '${envId}': pass its trajectories so one can be derived (deriveDomainCard), or write one.`,
  );
}

// =============================================================================================
// Abstract ↔ concrete states
// =============================================================================================

const SEP = ' [SEP] ';
const ABSTRACT_SEP = ' | ';
/** Longest element kept whole in an abstract WebShop page (titles, descriptions). */
export const WEBSHOP_ELEMENT_CHARS = 48;

export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Cuts to `maxChars` characters, ending with '…' when cut. */
export function bound(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return maxChars <= 1 ? text.slice(0, Math.max(0, maxChars)) : `${text.slice(0, maxChars - 1).trimEnd()}…`;
}

function shorten(part: string): string {
  return bound(part, WEBSHOP_ELEMENT_CHARS);
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

const WELCOME = /^-= Welcome to TextWorld, ALFRED! =-\s*/;

function householdAbstract(text: string): string {
  return collapse(text.replace(WELCOME, '').replace(/\s*Your task is to: .*$/s, ''));
}

/**
 * The compact abstract form of a concrete observation, at most `maxChars` characters (the
 * experience model reads these, and its examples show it what to write).
 */
export function abstractObservation(card: DomainCard, text: string, maxChars = Infinity): string {
  const abstract =
    card.abstraction === 'webshop'
      ? webshopAbstract(text)
      : card.abstraction === 'household'
        ? householdAbstract(text)
        : collapse(text);
  return bound(abstract, maxChars);
}

/** The env's own text for an abstract state (what a DreamEnv shows the policy). */
export function concreteObservation(card: DomainCard, abstract: string, instruction: string): string {
  const text = collapse(abstract);
  if (card.abstraction === 'webshop') return webshopConcrete(text, instruction);
  return text;
}

function globalPattern(card: DomainCard): RegExp | null {
  return card.globalActions ? new RegExp(card.globalActions) : null;
}

/** The admissible actions of the episode that hold in every state (from its first admissible list). */
export function globalActionsOf(card: DomainCard, firstAdmissible: readonly string[]): string[] {
  const pattern = globalPattern(card);
  return pattern ? firstAdmissible.filter((a) => pattern.test(a)) : [];
}

/** The state-specific admissible actions (globals and WebShop's page buttons left out). */
export function abstractAdmissible(card: DomainCard, admissible: readonly string[]): string[] {
  if (card.abstraction === 'webshop') return admissible.filter((a) => !SHOP_BUTTON_ACTIONS.has(a));
  const pattern = globalPattern(card);
  return pattern ? admissible.filter((a) => !pattern.test(a)) : admissible.slice();
}

/**
 * The full admissible list of a next state: the model's state-specific actions plus the
 * episode's globals (household) or the page's buttons (WebShop, read from the concrete page
 * text), de-duplicated, in the env's order. Global-looking actions in `local` are dropped (the
 * episode's own globals are authoritative) unless `dropGlobalsFromLocal` is false (a first
 * state, whose list defines the globals).
 */
export function concreteAdmissible(
  card: DomainCard,
  local: readonly string[],
  globals: readonly string[],
  concreteText = '',
  dropGlobalsFromLocal = true,
): string[] {
  const pattern = globalPattern(card);
  const webshop = card.abstraction === 'webshop';
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (raw: string) => {
    // WebShop lists actions lower-cased (its clickables are); a model may write 'click[B0ABC…]'.
    const a = webshop ? collapse(raw).toLowerCase() : collapse(raw);
    if (a.length === 0 || seen.has(a)) return;
    seen.add(a);
    out.push(a);
  };
  if (webshop) {
    for (const b of webshopButtons(concreteText)) add(b);
    for (const a of local) if (!SHOP_BUTTON_ACTIONS.has(collapse(a).toLowerCase())) add(a);
    return out;
  }
  for (const a of pattern && dropGlobalsFromLocal ? local.filter((x) => !pattern.test(collapse(x))) : local) add(a);
  for (const g of globals) add(g);
  return card.sortedAdmissible ? out.sort() : out;
}

// =============================================================================================
// Cards for imported domains
// =============================================================================================

/** What kind of action this is: `verb[` for bracket actions, else the first word. */
function actionKind(action: string): string {
  const bracket = /^(\w+)\[/.exec(action);
  if (bracket) return `${bracket[1]}[`;
  return action.trim().split(/\s+/)[0] ?? action;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export interface DerivedStats {
  episodes: number;
  steps: number;
  successRate: number;
  terminatedShare: number;
  meanLength: number;
  /** Share of non-zero rewards that fell on an episode's last step. */
  finalRewardShare: number;
  /** Action kinds (verb) with their counts and one example, most frequent first. */
  actionKinds: { kind: string; count: number; example: string }[];
}

/** Statistics of an imported domain's trajectories (what `deriveDomainCard` writes from). */
export function domainStats(trajectories: readonly Trajectory[]): DerivedStats {
  const kinds = new Map<string, { count: number; example: string }>();
  let steps = 0,
    successes = 0,
    terminated = 0,
    rewards = 0,
    finalRewards = 0;
  for (const t of trajectories) {
    steps += t.steps.length;
    if (t.result.success) successes++;
    if (t.steps.some((s) => s.terminated)) terminated++;
    t.steps.forEach((s, i) => {
      const kind = actionKind(s.action);
      const entry = kinds.get(kind);
      if (entry) entry.count++;
      else kinds.set(kind, { count: 1, example: s.action });
      if (s.reward !== 0) {
        rewards++;
        if (i === t.steps.length - 1) finalRewards++;
      }
    });
  }
  const n = Math.max(1, trajectories.length);
  return {
    episodes: trajectories.length,
    steps,
    successRate: successes / n,
    terminatedShare: terminated / n,
    meanLength: steps / n,
    finalRewardShare: rewards === 0 ? 1 : finalRewards / rewards,
    actionKinds: [...kinds.entries()].map(([kind, v]) => ({ kind, ...v })).sort((a, b) => b.count - a.count),
  };
}

/**
 * Action kinds admissible in every state of every episode that lists them (household's `go to`,
 * `look`, `inventory`): each such kind becomes part of the card's `globalActions`.
 */
function deriveGlobalKinds(trajectories: readonly Trajectory[]): string[] {
  const everywhere = new Map<string, boolean>();
  for (const t of trajectories) {
    const states = t.steps.map((s) => new Set(s.admissible)).filter((s) => s.size > 0);
    if (states.length < 2) continue;
    // An action is in every state when it is in as many states as there are (one pass, not all pairs).
    const statesWith = new Map<string, number>();
    for (const state of states) for (const a of state) statesWith.set(a, (statesWith.get(a) ?? 0) + 1);
    for (const [a, count] of statesWith) {
      const kind = actionKind(a);
      everywhere.set(kind, (everywhere.get(kind) ?? true) && count === states.length);
    }
  }
  return [...everywhere.entries()].filter(([, all]) => all).map(([kind]) => kind);
}

/**
 * A card for an imported domain, written from its trajectories: action kinds with examples,
 * example observations and instructions, and the reward/termination statistics.
 */
export function deriveDomainCard(
  trajectories: readonly Trajectory[],
  options: { name?: string; maxChars?: number } = {},
): DomainCard {
  if (trajectories.length === 0) throw new Error('deriveDomainCard needs at least one trajectory of the domain.');
  const env = trajectories[0].env;
  const stats = domainStats(trajectories);
  const globalKinds = deriveGlobalKinds(trajectories);
  const kinds = stats.actionKinds
    .slice(0, 8)
    .map((k) => `${k.kind.replace(/\[$/, '[…]')} e.g. "${bound(collapse(k.example), 40)}"`);
  const instructions = [...new Set(trajectories.map((t) => collapse(t.task.instruction)))]
    .slice(0, 2)
    .map((s) => `"${bound(s, 80)}"`);
  const first = trajectories[0].steps[0]?.observation ?? trajectories[0].final_observation;
  const middle = trajectories.find((t) => t.steps.length > 2)?.steps[1]?.observation;
  const examples = [first, middle].filter((x): x is string => !!x).map((o) => `"${bound(collapse(o), 110)}"`);
  const pct = (x: number) => `${Math.round(100 * x)}%`;
  const text = [
    `Imported domain '${env}'${options.name ? ` (${options.name})` : ''}, learned from ${stats.episodes} episodes.`,
    `Instructions look like ${instructions.join(', ')}.`,
    `Actions: ${kinds.join('; ')}.`,
    `Observations look like ${examples.join(' then ')}.`,
    `Reward: ${stats.finalRewardShare >= 0.95 ? 'non-zero only on the last step' : 'sparse'}; ${pct(stats.successRate)} of episodes succeed (reward 1),`,
    `${pct(stats.terminatedShare)} end by themselves (terminated), the rest hit the step limit; ${stats.meanLength.toFixed(1)} steps on average.`,
    globalKinds.length
      ? `Actions of kind ${globalKinds.map((k) => `"${k}"`).join(', ')} are always admissible and never listed.`
      : '',
  ]
    .filter(Boolean)
    .join(' ');
  const sorted = trajectories.every((t) =>
    t.steps.every((s) => s.admissible.every((a, i) => i === 0 || s.admissible[i - 1] <= a)),
  );
  return {
    env,
    name: options.name ?? env,
    abstraction: 'generic',
    showAdmissible: true,
    text: bound(text, options.maxChars ?? 900),
    ...(globalKinds.length
      ? {
          globalActions: `^(?:${globalKinds.map((k) => `${escapeRegExp(k)}${k.endsWith('[') ? '' : '\\b'}`).join('|')})`,
        }
      : {}),
    ...(sorted ? { sortedAdmissible: true } : {}),
  };
}
