/**
 * Features x(s, a) for the candidate-scoring policy (docs/architecture.md §3.8), built from strings only, so
 * they work for any text environment and generalise across tasks:
 *
 * 1. Hashed token bags (ids into one embedding table of `buckets` rows, each field prefixed so
 *    the same word in different fields lands in different buckets):
 *    - instruction bag (per state):  `i|tok`, `i2|tok tok` (uni- and bigrams), bias `<i>`
 *    - observation bag (per state):  the observation with the instruction removed, bounded to
 *      its first `obsHeadTokens` and last `obsTailTokens` tokens: `o|tok`, `o2|tok tok`, bias `<o>`
 *    - action bag (per row):         `a|tok`, `a2|tok tok`, action type `at|type`, type × page
 *      `ap|type@page`, the clicked product's title tokens `t|tok` (WebShop), bias `<a>`
 * 2. Dense per-row features (`ROW_DENSE_NAMES`): action-type one-hot; overlap between the
 *    instruction and the action text (count, ratios, phrase match); overlap between the
 *    instruction and the target product's title (the title that follows the clicked ASIN in the
 *    results page, 'B0XXXXXXXX [SEP] Title [SEP] $price', or the current item's title for
 *    option/buy clicks); price cues against the instruction's price bound; number cues; repeats
 *    of earlier actions; the action's rank among actions of its type.
 * 3. Dense per-state features (`STATE_DENSE_NAMES`): page type, step index fraction, number of
 *    candidates, price bound present.
 *
 * `encodeStates` turns a batch of states into flat typed arrays (`EncodedBatch`) ready for
 * tensors: variable-length bags as (ids, segment ids) pairs for `embeddingBag`, and the
 * [nStates, maxActions] padding layout. Everything is deterministic.
 */
import { stemmer } from 'stemmer';
import { hashString } from '../rng';

// =============================================================================================
// State record and configuration
// =============================================================================================

/** What the policy sees at one decision point. Plain data (works from strings only). */
export interface PolicyState {
  instruction: string;
  observation: string;
  /** The candidates the policy chooses among (the environment's admissible actions). */
  admissible: readonly string[];
  /** 0-based index of this step in the episode. */
  step?: number;
  /** The episode's step limit (for the step-fraction feature). */
  maxSteps?: number;
  /** Actions already taken in this episode, oldest first (repeat features). */
  previousActions?: readonly string[];
}

export interface FeatureConfig {
  /** Embedding table rows; a power of two (hash & (buckets − 1)). */
  buckets: number;
  /** Instruction tokens kept (from the start). */
  maxInstructionTokens: number;
  /** Observation tokens kept from the start of the (instruction-free) observation. */
  obsHeadTokens: number;
  /** Observation tokens kept from the end. */
  obsTailTokens: number;
  /** Action tokens kept. */
  maxActionTokens: number;
  /** Title tokens of a clicked product kept. */
  maxTitleTokens: number;
}

export const DEFAULT_FEATURE_CONFIG: Readonly<FeatureConfig> = Object.freeze({
  buckets: 1 << 14,
  maxInstructionTokens: 48,
  obsHeadTokens: 16,
  obsTailTokens: 48,
  maxActionTokens: 16,
  maxTitleTokens: 24,
});

// =============================================================================================
// Vocabulary of the dense features
// =============================================================================================

export const ACTION_TYPES = [
  'search',
  'click-product',
  'click-option',
  'click-buy',
  'click-nav',
  'go to',
  'take',
  'put',
  'open',
  'close',
  'heat',
  'cool',
  'clean',
  'use',
  'examine',
  'other',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export const PAGE_TYPES = [
  'webshop-search',
  'webshop-results',
  'webshop-item',
  'webshop-subpage',
  'webshop-done',
  'household',
  'other',
] as const;
export type PageType = (typeof PAGE_TYPES)[number];

/** Names of the dense per-row features, in column order. */
export const ROW_DENSE_NAMES: readonly string[] = [
  ...ACTION_TYPES.map((t) => `type=${t}`),
  'overlap_count', // |content(action) ∩ content(instruction)| / 3, capped at 2
  'overlap_ratio_action', // … / |content(action)|
  'overlap_ratio_instruction', // … / |content(instruction)|
  'overlap_any',
  'phrase_in_instruction', // the action's argument appears verbatim in the instruction
  'title_overlap_ratio', // target title ∩ instruction / |content(instruction)|
  'title_overlap_count', // … / 5, capped at 2
  'has_title',
  'price_known',
  'price_within_bound',
  'price_over_bound',
  'price_to_bound', // price / bound / 2, capped at 1
  'action_has_number',
  'action_number_in_instruction',
  'action_in_observation', // share of the action's content tokens present in the observation
  'repeat_count', // times taken before / 3, capped at 1
  'repeat_last', // equals the previous action
  'rank_in_type', // index among candidates of the same type / 10, capped at 1
  'action_length', // tokens / 10, capped at 2
  'arg1_type_in_instruction', // household-style 'verb X … Y': X's type (number dropped) is named in the instruction
  'arg2_type_in_instruction', // … Y's type is named in the instruction
  'arg1_both_in_instruction', // both arguments' types are named (e.g. put <object> in/on <target>)
  'holding_instruction_object', // the last take (not yet put down) was of an object the instruction names
  'bias',
];
export const ROW_DENSE_DIM = ROW_DENSE_NAMES.length;

/** Names of the dense per-state features, in column order. */
export const STATE_DENSE_NAMES: readonly string[] = [
  ...PAGE_TYPES.map((p) => `page=${p}`),
  'step_fraction', // step / maxSteps (0 when unknown)
  'step_scaled', // min(step, 50) / 50
  'num_actions_log', // log(1 + n) / log(64)
  'has_price_bound',
  'observation_length_log',
  'history_length', // min(previous actions, 30) / 30
  'bias',
];
export const STATE_DENSE_DIM = STATE_DENSE_NAMES.length;

// =============================================================================================
// Tokens and hashing
// =============================================================================================

const TOKEN_RE = /[a-z0-9]+(?:\.[0-9]+)?/g;

/** Lower-cased word/number tokens ('$64.98' → '64.98', "l'eau" → 'l', 'eau'). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(TOKEN_RE) ?? [];
}

/** Words that carry no task content: function words, instruction boilerplate, action verbs. */
const STOPWORDS = new Set(
  (
    'a an the and or of for to in on at by with from into onto is are be it its this that these those ' +
    'i me my you your we our need want looking look find get buy some please would like can could ' +
    'price lower less than under below dollars dollar cheaper up then using use your task put take go ' +
    'click search next prev back item items product products s x'
  ).split(' '),
);

const stemCache = new Map<string, string>();
function stem(token: string): string {
  let s = stemCache.get(token);
  if (s === undefined) {
    s = /^[0-9.]+$/.test(token) ? token : stemmer(token);
    if (stemCache.size > 200_000) stemCache.clear();
    stemCache.set(token, s);
  }
  return s;
}

/** Stemmed content tokens (stopwords dropped). */
export function contentStems(tokens: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of tokens) if (!STOPWORDS.has(t)) out.push(stem(t));
  return out;
}

/** Bucket of a prefixed feature string, e.g. featureId('a|blue', buckets). */
export function featureId(feature: string, buckets: number): number {
  return hashString(feature) & (buckets - 1);
}

// FNV-1a is streaming: hashString(a + b) === hashString(b, hashString(a)), so a field's prefix is
// hashed once and tokens are hashed on from there, without building the feature strings.
const PREFIX_HASH = new Map<string, number>();
function prefixHash(prefix: string): number {
  let h = PREFIX_HASH.get(prefix);
  if (h === undefined) {
    h = hashString(prefix);
    PREFIX_HASH.set(prefix, h);
  }
  return h;
}
const SPACE_SEED = (h: number): number => hashString(' ', h);

// =============================================================================================
// Parsing observations and actions (strings only)
// =============================================================================================

const SEP = ' [SEP] ';
const ASIN_RE = /^b0[a-z0-9]{8}$/;
const NAV_CLICKS = new Set([
  'back to search',
  'next >',
  '< prev',
  'description',
  'features',
  'reviews',
  'attributes',
  'search',
]);
const PRICE_BOUND_RE =
  /(?:lower|less|cheaper|under|below|within|max(?:imum)?)\s+(?:than\s+)?\$?\s*([0-9]+(?:\.[0-9]+)?)/;
const NUMBER_RE = /[0-9]+(?:\.[0-9]+)?/;

export interface ParsedProduct {
  titleStems: string[];
  titleTokens: string[];
  price: number | null;
}

/** Per-state facts the row features need, computed once per state. */
interface ParsedState {
  page: PageType;
  instructionLower: string;
  instructionTokens: string[];
  instructionContent: Set<string>;
  instructionNumbers: Set<string>;
  priceBound: number | null;
  obsTokens: string[];
  obsContent: Set<string>;
  /** WebShop results page: asin (lower-case) → product. */
  products: Map<string, ParsedProduct>;
  /** WebShop item page: the product on show. */
  item: ParsedProduct | null;
  previousCounts: Map<string, number>;
  lastAction: string | null;
  /** Whole lower-case words of the instruction (for argument-type matches). */
  instructionWords: Set<string>;
  /** Household: the last 'take X' not followed by a put/move was of an object the instruction names. */
  holdingInstructionObject: boolean;
}

/**
 * Types of the two arguments of a household-style command ('take apple 1 from fridge 1' →
 * apple, fridge; 'go to desk 2' → desk, null); null for other actions. Numbers are dropped so
 * the type can be matched against the instruction ('put a clean apple in fridge').
 */
export function argumentTypes(actionLower: string): { first: string | null; second: string | null } {
  const m =
    /^(?:go to|take|put|move|open|close|heat|cool|clean|use|examine|slice|toggle)\s+(.+?)(?:\s+(?:from|in\/on|in|on|with|to)\s+(.+))?$/.exec(
      actionLower,
    );
  if (!m) return { first: null, second: null };
  const type = (text: string | undefined) => (text ? text.replace(/\s+\d+$/, '').trim() || null : null);
  return { first: type(m[1]), second: type(m[2]) };
}

/** "$12.50" or "$10.00 to $20.00" → the lower price. */
function parsePrice(text: string): number | null {
  const m = /\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)/.exec(text);
  return m ? Number(m[1].replace(/,/g, '')) : null;
}

export function pageType(observation: string, admissible: readonly string[]): PageType {
  const o = observation;
  if (o.startsWith('WebShop [SEP]') || o === 'WebShop') return 'webshop-search';
  if (o.includes('Thank you for shopping')) return 'webshop-done';
  if (o.includes(SEP)) {
    if (/\[SEP\] Page [0-9]+ \(Total results/.test(o)) return 'webshop-results';
    if (o.includes('[SEP] Buy Now')) return 'webshop-item';
    if (o.includes('Back to Search')) return 'webshop-subpage';
    return 'other';
  }
  for (const a of admissible) if (a.startsWith('go to ') || a === 'look' || a === 'inventory') return 'household';
  if (/You (are in the middle of a room|arrive at|pick up|put|open|close)/.test(o)) return 'household';
  return 'other';
}

function parseProduct(title: string, priceText: string | undefined, maxTitleTokens: number): ParsedProduct {
  const titleTokens = tokenize(title).slice(0, maxTitleTokens);
  return {
    titleTokens,
    titleStems: contentStems(titleTokens),
    price: priceText === undefined ? null : parsePrice(priceText),
  };
}

function parseState(state: PolicyState, config: FeatureConfig): ParsedState {
  const instructionLower = state.instruction.toLowerCase();
  const instructionTokens = tokenize(instructionLower).slice(0, config.maxInstructionTokens);
  const instructionContent = new Set(contentStems(instructionTokens));
  const instructionNumbers = new Set(instructionTokens.filter((t) => /^[0-9]/.test(t)));
  const boundMatch = PRICE_BOUND_RE.exec(instructionLower);
  const priceBound = boundMatch ? Number(boundMatch[1]) : null;
  const page = pageType(state.observation, state.admissible);

  // The observation without the instruction (WebShop repeats it on every page; household puts it
  // in the first observation), bounded to head + tail tokens.
  let obs = state.observation;
  if (state.instruction.length > 0) obs = obs.split(state.instruction).join(' ');
  const allObsTokens = tokenize(obs);
  const obsTokens =
    allObsTokens.length <= config.obsHeadTokens + config.obsTailTokens
      ? allObsTokens
      : allObsTokens
          .slice(0, config.obsHeadTokens)
          .concat(allObsTokens.slice(allObsTokens.length - config.obsTailTokens));
  const obsContent = new Set(contentStems(allObsTokens.length > 400 ? allObsTokens.slice(-400) : allObsTokens));

  const products = new Map<string, ParsedProduct>();
  let item: ParsedProduct | null = null;
  if (page === 'webshop-results' || page === 'webshop-item' || page === 'webshop-subpage') {
    const segments = state.observation.split(SEP);
    if (page === 'webshop-results') {
      for (let i = 0; i < segments.length; i++) {
        const seg = segments[i].trim();
        if (seg.length === 10 && ASIN_RE.test(seg.toLowerCase()) && i + 1 < segments.length) {
          products.set(seg.toLowerCase(), parseProduct(segments[i + 1], segments[i + 2], config.maxTitleTokens));
        }
      }
    } else {
      for (let i = 1; i < segments.length; i++) {
        if (segments[i].startsWith('Price:')) {
          item = parseProduct(segments[i - 1], segments[i], config.maxTitleTokens);
          break;
        }
      }
    }
  }

  const previousCounts = new Map<string, number>();
  const previous = state.previousActions ?? [];
  for (const a of previous) {
    const key = a.toLowerCase();
    previousCounts.set(key, (previousCounts.get(key) ?? 0) + 1);
  }
  const lastAction = previous.length ? previous[previous.length - 1].toLowerCase() : null;
  const instructionWords = new Set(instructionLower.split(/[^a-z0-9]+/).filter(Boolean));
  let holdingInstructionObject = false;
  for (const a of previous) {
    const lower = a.toLowerCase();
    if (lower.startsWith('take ')) holdingInstructionObject = instructionWords.has(argumentTypes(lower).first ?? '');
    else if (lower.startsWith('put ') || lower.startsWith('move ')) holdingInstructionObject = false;
  }
  return {
    page,
    instructionLower,
    instructionTokens,
    instructionContent,
    instructionNumbers,
    priceBound,
    obsTokens,
    obsContent,
    products,
    item,
    previousCounts,
    lastAction,
    instructionWords,
    holdingInstructionObject,
  };
}

const HOUSEHOLD_VERBS: [string, ActionType][] = [
  ['go to ', 'go to'],
  ['take ', 'take'],
  ['put ', 'put'],
  ['move ', 'put'],
  ['open ', 'open'],
  ['close ', 'close'],
  ['heat ', 'heat'],
  ['cool ', 'cool'],
  ['clean ', 'clean'],
  ['use ', 'use'],
  ['examine ', 'examine'],
];

/** Action type and its argument text ('click[blue]' → click-option, 'blue'). */
export function classifyAction(actionLower: string): { type: ActionType; argument: string } {
  const bracket = /^([a-z_ ]+)\[(.*)\]$/.exec(actionLower);
  if (bracket) {
    const verb = bracket[1].trim();
    const argument = bracket[2].trim();
    if (verb === 'search') return { type: 'search', argument };
    if (verb === 'click') {
      if (argument === 'buy now') return { type: 'click-buy', argument };
      if (NAV_CLICKS.has(argument)) return { type: 'click-nav', argument };
      if (ASIN_RE.test(argument)) return { type: 'click-product', argument };
      return { type: 'click-option', argument };
    }
    return { type: 'other', argument };
  }
  for (const [prefix, type] of HOUSEHOLD_VERBS) {
    if (actionLower.startsWith(prefix)) return { type, argument: actionLower.slice(prefix.length) };
  }
  return { type: 'other', argument: actionLower };
}

// =============================================================================================
// Encoded batch
// =============================================================================================

/**
 * A batch of states and their candidate actions as flat typed arrays. Rows are (state, action)
 * pairs, states' rows contiguous and in admissible order. Bags are (ids, segment ids) with
 * sorted segment ids; every bag has at least its bias id.
 */
export interface EncodedBatch {
  nStates: number;
  /** Σ actions over states. */
  nRows: number;
  /** max actions of any state (the padded width). */
  maxActions: number;
  buckets: number;
  /** Instruction bag: ids and their state index (sorted). */
  instrIds: Int32Array;
  instrSeg: Int32Array;
  /** 1/sqrt(bag size) per state [nStates]. */
  instrScale: Float32Array;
  obsIds: Int32Array;
  obsSeg: Int32Array;
  obsScale: Float32Array;
  /** Action bag: ids and their row index (sorted). */
  actIds: Int32Array;
  actSeg: Int32Array;
  /** 1/sqrt(bag size) per row [nRows]. */
  actScale: Float32Array;
  /** [nStates × STATE_DENSE_DIM] row-major. */
  stateDense: Float32Array;
  /** [nRows × ROW_DENSE_DIM] row-major. */
  rowDense: Float32Array;
  /** State index of each row [nRows]. */
  rowState: Int32Array;
  /** First row of each state [nStates] and its number of actions [nStates]. */
  rowOffset: Int32Array;
  actionCounts: Int32Array;
  /** Prior score of each row (0 without a prior) [nRows]. */
  prior: Float32Array;
  /** Padded layout: for each of nStates × maxActions slots, its row, or nRows for padding. */
  slotRow: Int32Array;
  /** 1 for real slots, 0 for padding [nStates × maxActions]. */
  slotMask: Float32Array;
}

class IntList {
  data: Int32Array;
  length = 0;
  constructor(capacity: number) {
    this.data = new Int32Array(Math.max(16, capacity));
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new Int32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
  toArray(): Int32Array {
    return this.data.slice(0, this.length);
  }
}

function pushBag(
  ids: IntList,
  seg: IntList,
  segment: number,
  prefix: string,
  tokens: readonly string[],
  bigrams: boolean,
  buckets: number,
): number {
  const mask = buckets - 1;
  const uni = prefixHash(prefix + '|'),
    bi = prefixHash(prefix + '2|');
  let n = 0;
  for (let i = 0; i < tokens.length; i++) {
    ids.push(hashString(tokens[i], uni) & mask);
    seg.push(segment);
    n++;
    if (bigrams && i + 1 < tokens.length) {
      ids.push(hashString(tokens[i + 1], SPACE_SEED(hashString(tokens[i], bi))) & mask);
      seg.push(segment);
      n++;
    }
  }
  return n;
}

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);

/**
 * Encode states (and optional per-state prior scores, one per admissible action) into an
 * `EncodedBatch`. States with no admissible actions are not allowed (nothing to choose).
 */
export function encodeStates(
  states: readonly PolicyState[],
  priors?: readonly (readonly number[] | null | undefined)[],
  config: FeatureConfig = DEFAULT_FEATURE_CONFIG,
): EncodedBatch {
  const B = config.buckets;
  if ((B & (B - 1)) !== 0) throw new Error(`FeatureConfig.buckets must be a power of two, got ${B}`);
  const nStates = states.length;
  let nRows = 0,
    maxActions = 0;
  for (let s = 0; s < nStates; s++) {
    const n = states[s].admissible.length;
    if (n === 0)
      throw new Error(`encodeStates: state ${s} has no admissible actions; drop finished states before acting`);
    nRows += n;
    if (n > maxActions) maxActions = n;
  }

  const instrIds = new IntList(nStates * 64),
    instrSeg = new IntList(nStates * 64);
  const obsIds = new IntList(nStates * 128),
    obsSeg = new IntList(nStates * 128);
  const actIds = new IntList(nRows * 16),
    actSeg = new IntList(nRows * 16);
  const instrScale = new Float32Array(nStates),
    obsScale = new Float32Array(nStates);
  const actScale = new Float32Array(nRows);
  const stateDense = new Float32Array(nStates * STATE_DENSE_DIM);
  const rowDense = new Float32Array(nRows * ROW_DENSE_DIM);
  const rowState = new Int32Array(nRows),
    rowOffset = new Int32Array(nStates),
    actionCounts = new Int32Array(nStates);
  const prior = new Float32Array(nRows);
  const slotRow = new Int32Array(nStates * maxActions).fill(nRows);
  const slotMask = new Float32Array(nStates * maxActions);

  const typeIndex = new Map<ActionType, number>(ACTION_TYPES.map((t, i) => [t, i]));
  // Ids that do not depend on text: biases, action type, action type × page type.
  const biasInstr = featureId('<i>', B),
    biasObs = featureId('<o>', B),
    biasAct = featureId('<a>', B);
  const typeIds = ACTION_TYPES.map((t) => featureId('at|' + t, B));
  const typePageIds = ACTION_TYPES.map((t) => PAGE_TYPES.map((pg) => featureId('ap|' + t + '@' + pg, B)));
  const fOverlap = ACTION_TYPES.length;
  const rankCounter = new Int32Array(ACTION_TYPES.length);

  let row = 0;
  for (let s = 0; s < nStates; s++) {
    const state = states[s];
    const p = parseState(state, config);
    const nA = state.admissible.length;
    rowOffset[s] = row;
    actionCounts[s] = nA;

    // ---- state bags ------------------------------------------------------------------------
    const pageIndex = PAGE_TYPES.indexOf(p.page);
    instrIds.push(biasInstr);
    instrSeg.push(s);
    const ni = 1 + pushBag(instrIds, instrSeg, s, 'i', p.instructionTokens, true, B);
    instrScale[s] = 1 / Math.sqrt(ni);
    obsIds.push(biasObs);
    obsSeg.push(s);
    const no = 1 + pushBag(obsIds, obsSeg, s, 'o', p.obsTokens, true, B);
    obsScale[s] = 1 / Math.sqrt(no);

    // ---- state dense -----------------------------------------------------------------------
    const sd = s * STATE_DENSE_DIM;
    stateDense[sd + pageIndex] = 1;
    let k = PAGE_TYPES.length;
    const step = state.step ?? 0;
    stateDense[sd + k++] = state.maxSteps ? clamp(step / state.maxSteps, 0, 1) : 0;
    stateDense[sd + k++] = Math.min(step, 50) / 50;
    stateDense[sd + k++] = Math.log(1 + nA) / Math.log(64);
    stateDense[sd + k++] = p.priceBound !== null ? 1 : 0;
    stateDense[sd + k++] = Math.log(1 + state.observation.length) / Math.log(10_000);
    stateDense[sd + k++] = Math.min(state.previousActions?.length ?? 0, 30) / 30;
    // eslint-disable-next-line no-useless-assignment -- every feature advances k, the last one too
    stateDense[sd + k++] = 1;

    // ---- rows ------------------------------------------------------------------------------
    const statePrior = priors?.[s];
    if (statePrior && statePrior.length !== nA) {
      throw new Error(
        `encodeStates: prior for state ${s} has ${statePrior.length} scores for ${nA} admissible actions`,
      );
    }
    rankCounter.fill(0);
    const instrContentSize = Math.max(1, p.instructionContent.size);
    for (let j = 0; j < nA; j++, row++) {
      rowState[row] = s;
      slotRow[s * maxActions + j] = row;
      slotMask[s * maxActions + j] = 1;
      if (statePrior) prior[row] = statePrior[j];

      const actionLower = state.admissible[j].toLowerCase().trim();
      const { type, argument } = classifyAction(actionLower);
      const ti = typeIndex.get(type)!;
      const argTokens = tokenize(argument).slice(0, config.maxActionTokens);
      const argContent = contentStems(argTokens);

      // action bag
      actIds.push(biasAct);
      actSeg.push(row);
      actIds.push(typeIds[ti]);
      actSeg.push(row);
      actIds.push(typePageIds[ti][pageIndex]);
      actSeg.push(row);
      let na = 3 + pushBag(actIds, actSeg, row, 'a', argTokens, true, B);

      // target title: the clicked product's, or the current item's for option / buy clicks
      let target: ParsedProduct | null = null;
      if (type === 'click-product') target = p.products.get(argument) ?? null;
      else if (type === 'click-option' || type === 'click-buy') target = p.item;
      if (target && type === 'click-product') na += pushBag(actIds, actSeg, row, 't', target.titleTokens, false, B);
      actScale[row] = 1 / Math.sqrt(na);

      // dense
      const rd = row * ROW_DENSE_DIM;
      rowDense[rd + ti] = 1;
      let overlap = 0,
        inObs = 0;
      for (const c of argContent) {
        if (p.instructionContent.has(c)) overlap++;
        if (p.obsContent.has(c)) inObs++;
      }
      let f = fOverlap;
      rowDense[rd + f++] = Math.min(overlap / 3, 2);
      rowDense[rd + f++] = argContent.length ? overlap / argContent.length : 0;
      rowDense[rd + f++] = overlap / instrContentSize;
      rowDense[rd + f++] = overlap > 0 ? 1 : 0;
      rowDense[rd + f++] = argument.length > 1 && type !== 'search' && p.instructionLower.includes(argument) ? 1 : 0;
      if (target) {
        let titleOverlap = 0;
        const seen = new Set<string>();
        for (const c of target.titleStems)
          if (!seen.has(c)) {
            seen.add(c);
            if (p.instructionContent.has(c)) titleOverlap++;
          }
        rowDense[rd + f++] = titleOverlap / instrContentSize;
        rowDense[rd + f++] = Math.min(titleOverlap / 5, 2);
        rowDense[rd + f++] = 1;
      } else f += 3;
      const price = target?.price ?? null;
      rowDense[rd + f++] = price !== null ? 1 : 0;
      rowDense[rd + f++] = price !== null && p.priceBound !== null && price <= p.priceBound ? 1 : 0;
      rowDense[rd + f++] = price !== null && p.priceBound !== null && price > p.priceBound ? 1 : 0;
      rowDense[rd + f++] = price !== null && p.priceBound ? Math.min(price / p.priceBound / 2, 1) : 0;
      const hasNumber = NUMBER_RE.test(argument) && type !== 'click-product';
      rowDense[rd + f++] = hasNumber ? 1 : 0;
      let numberMatch = 0;
      if (hasNumber)
        for (const t of argTokens)
          if (/^[0-9]/.test(t) && p.instructionNumbers.has(t)) {
            numberMatch = 1;
            break;
          }
      rowDense[rd + f++] = numberMatch;
      rowDense[rd + f++] = argContent.length ? inObs / argContent.length : 0;
      rowDense[rd + f++] = Math.min((p.previousCounts.get(actionLower) ?? 0) / 3, 1);
      rowDense[rd + f++] = p.lastAction === actionLower ? 1 : 0;
      rowDense[rd + f++] = Math.min(rankCounter[ti]++ / 10, 1);
      rowDense[rd + f++] = Math.min(argTokens.length / 10, 2);
      const roles = argumentTypes(actionLower);
      const arg1In = roles.first !== null && p.instructionWords.has(roles.first) ? 1 : 0;
      const arg2In = roles.second !== null && p.instructionWords.has(roles.second) ? 1 : 0;
      rowDense[rd + f++] = arg1In;
      rowDense[rd + f++] = arg2In;
      rowDense[rd + f++] = arg1In * arg2In;
      rowDense[rd + f++] = p.holdingInstructionObject ? 1 : 0;
      // eslint-disable-next-line no-useless-assignment -- every feature advances f, the last one too
      rowDense[rd + f++] = 1;
    }
  }

  return {
    nStates,
    nRows,
    maxActions,
    buckets: B,
    instrIds: instrIds.toArray(),
    instrSeg: instrSeg.toArray(),
    instrScale,
    obsIds: obsIds.toArray(),
    obsSeg: obsSeg.toArray(),
    obsScale,
    actIds: actIds.toArray(),
    actSeg: actSeg.toArray(),
    actScale,
    stateDense,
    rowDense,
    rowState,
    rowOffset,
    actionCounts,
    prior,
    slotRow,
    slotMask,
  };
}

/**
 * The sub-batch of the given states (in the given order), e.g. a PPO minibatch, without
 * re-encoding strings.
 */
export function sliceEncoded(batch: EncodedBatch, stateIndices: ArrayLike<number>): EncodedBatch {
  const nStates = stateIndices.length;
  let nRows = 0,
    maxActions = 0;
  for (let i = 0; i < nStates; i++) {
    const n = batch.actionCounts[stateIndices[i]];
    nRows += n;
    if (n > maxActions) maxActions = n;
  }
  // Bag ranges per segment (segments are sorted, so each bag is a contiguous range).
  const ranges = (seg: Int32Array, nSeg: number): Int32Array => {
    const start = new Int32Array(nSeg + 1);
    for (let j = 0; j < seg.length; j++) start[seg[j] + 1]++;
    for (let i = 0; i < nSeg; i++) start[i + 1] += start[i];
    return start;
  };
  const instrStart = ranges(batch.instrSeg, batch.nStates);
  const obsStart = ranges(batch.obsSeg, batch.nStates);
  const actStart = ranges(batch.actSeg, batch.nRows);

  const instrIds = new IntList(1024),
    instrSeg = new IntList(1024);
  const obsIds = new IntList(1024),
    obsSeg = new IntList(1024);
  const actIds = new IntList(4096),
    actSeg = new IntList(4096);
  const instrScale = new Float32Array(nStates),
    obsScale = new Float32Array(nStates),
    actScale = new Float32Array(nRows);
  const stateDense = new Float32Array(nStates * STATE_DENSE_DIM),
    rowDense = new Float32Array(nRows * ROW_DENSE_DIM);
  const rowState = new Int32Array(nRows),
    rowOffset = new Int32Array(nStates),
    actionCounts = new Int32Array(nStates);
  const prior = new Float32Array(nRows);
  const slotRow = new Int32Array(nStates * maxActions).fill(nRows),
    slotMask = new Float32Array(nStates * maxActions);

  let row = 0;
  for (let i = 0; i < nStates; i++) {
    const s = stateIndices[i];
    for (let j = instrStart[s]; j < instrStart[s + 1]; j++) {
      instrIds.push(batch.instrIds[j]);
      instrSeg.push(i);
    }
    for (let j = obsStart[s]; j < obsStart[s + 1]; j++) {
      obsIds.push(batch.obsIds[j]);
      obsSeg.push(i);
    }
    instrScale[i] = batch.instrScale[s];
    obsScale[i] = batch.obsScale[s];
    stateDense.set(batch.stateDense.subarray(s * STATE_DENSE_DIM, (s + 1) * STATE_DENSE_DIM), i * STATE_DENSE_DIM);
    const n = batch.actionCounts[s],
      r0 = batch.rowOffset[s];
    rowOffset[i] = row;
    actionCounts[i] = n;
    rowDense.set(batch.rowDense.subarray(r0 * ROW_DENSE_DIM, (r0 + n) * ROW_DENSE_DIM), row * ROW_DENSE_DIM);
    for (let j = 0; j < n; j++, row++) {
      const src = r0 + j;
      for (let q = actStart[src]; q < actStart[src + 1]; q++) {
        actIds.push(batch.actIds[q]);
        actSeg.push(row);
      }
      actScale[row] = batch.actScale[src];
      prior[row] = batch.prior[src];
      rowState[row] = i;
      slotRow[i * maxActions + j] = row;
      slotMask[i * maxActions + j] = 1;
    }
  }
  return {
    nStates,
    nRows,
    maxActions,
    buckets: batch.buckets,
    instrIds: instrIds.toArray(),
    instrSeg: instrSeg.toArray(),
    instrScale,
    obsIds: obsIds.toArray(),
    obsSeg: obsSeg.toArray(),
    obsScale,
    actIds: actIds.toArray(),
    actSeg: actSeg.toArray(),
    actScale,
    stateDense,
    rowDense,
    rowState,
    rowOffset,
    actionCounts,
    prior,
    slotRow,
    slotMask,
  };
}
