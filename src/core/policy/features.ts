/**
 * Features x(s, a) for the candidate-scoring policy (docs/architecture.md §3.8), built from strings and the domain's
 * feature schema (feature-schema.ts, mined from its recorded episodes), so one featuriser serves every domain:
 *
 * 1. Hashed token bags (ids into one embedding table of `buckets` rows, each field prefixed so
 *    the same word in different fields lands in different buckets):
 *    - instruction bag (per state):  `i|tok`, `i2|tok tok` (uni- and bigrams), bias `<i>`
 *    - observation bag (per state):  the observation with the instruction removed, bounded to
 *      its first `obsHeadTokens` and last `obsTailTokens` tokens: `o|tok`, `o2|tok tok`, bias `<o>`
 *    - action bag (per row):         the argument `a|tok`, `a2|tok tok`, the verb `v|verb`, the template `at|t`,
 *      template × observation kind `ap|t@k`, the env's own tokens `x|tok`, bias `<a>`
 * 2. Dense per-row features (`Featuriser.rowNames`): template one-hot; overlap between the instruction and the
 *    action's argument (count, ratios, phrase match); number cues; presence in the observation; repeats of earlier
 *    actions; the action's rank among actions of its template; whether its slots' types (index dropped) are named in
 *    the instruction; then the env's own row features (its definition's `policyFeatures`).
 * 3. Dense per-state features (`Featuriser.stateNames`): observation kind one-hot, the templates on offer
 *    (multi-hot), step index fraction, number of candidates, lengths; then the env's own state features.
 *
 * `encodeStates` turns a batch of states into flat typed arrays (`EncodedBatch`) ready for
 * tensors: variable-length bags as (ids, segment ids) pairs for `embeddingBag`, and the
 * [nStates, maxActions] padding layout. Everything is deterministic. The columns' names and the schema's lookups are
 * the `Featuriser`'s (featuriser.ts, re-exported here).
 */
import { hashString } from '../rng';
import type { ParsedAction } from './feature-schema';
import {
  DEFAULT_FEATURE_CONFIG,
  GENERIC_FEATURISER,
  type FeatureConfig,
  type Featuriser,
  type PolicyState,
} from './featuriser';
import { contentStems, tokenize } from './text';

export { contentStems, tokenize } from './text';
export {
  DEFAULT_FEATURE_CONFIG,
  Featuriser,
  GENERIC_FEATURISER,
  type ExtraRow,
  type FeatureConfig,
  type PolicyFeatureSet,
  type PolicyState,
} from './featuriser';

// =============================================================================================
// Per-state facts
// =============================================================================================

const NUMBER_START_RE = /^[0-9]/;

/** Per-state facts the row features need, computed once per state. */
interface ParsedState {
  kind: { index: number; key: string };
  instructionLower: string;
  instructionTokens: string[];
  instructionContent: Set<string>;
  instructionNumbers: Set<string>;
  obsTokens: string[];
  obsContent: Set<string>;
  previousCounts: Map<string, number>;
  lastAction: string | null;
  /** Whole lower-case words of the instruction (for slot-type matches). */
  instructionWords: Set<string>;
  actions: (ParsedAction & { index: number })[];
}

function parseState(state: PolicyState, config: FeatureConfig, f: Featuriser): ParsedState {
  const instructionLower = state.instruction.toLowerCase();
  const instructionTokens = tokenize(instructionLower).slice(0, config.maxInstructionTokens);
  const instructionContent = new Set(contentStems(instructionTokens, f.stopwords));
  const instructionNumbers = new Set(instructionTokens.filter((t) => NUMBER_START_RE.test(t)));

  // The observation without the instruction (many envs repeat it in every observation, or in the first), bounded to
  // head + tail tokens.
  let obs = state.observation;
  if (state.instruction.length > 0) obs = obs.split(state.instruction).join(' ');
  const allObsTokens = tokenize(obs);
  const obsTokens =
    allObsTokens.length <= config.obsHeadTokens + config.obsTailTokens
      ? allObsTokens
      : allObsTokens
          .slice(0, config.obsHeadTokens)
          .concat(allObsTokens.slice(allObsTokens.length - config.obsTailTokens));
  const obsContent = new Set(
    contentStems(allObsTokens.length > 400 ? allObsTokens.slice(-400) : allObsTokens, f.stopwords),
  );

  const previousCounts = new Map<string, number>();
  const previous = state.previousActions ?? [];
  for (const a of previous) {
    const key = a.toLowerCase();
    previousCounts.set(key, (previousCounts.get(key) ?? 0) + 1);
  }
  const lastAction = previous.length ? previous[previous.length - 1].toLowerCase() : null;
  return {
    kind: f.kindOf(state),
    instructionLower,
    instructionTokens,
    instructionContent,
    instructionNumbers,
    obsTokens,
    obsContent,
    previousCounts,
    lastAction,
    instructionWords: new Set(instructionLower.split(/[^a-z0-9]+/).filter(Boolean)),
    actions: state.admissible.map((a) => f.parseAction(a.toLowerCase().trim())),
  };
}

/** A slot's type: its words without a trailing index ('mug 2' → 'mug'); null for no slot. */
function slotType(slot: readonly string[] | undefined): string | null {
  if (!slot) return null;
  let end = slot.length;
  while (end > 1 && /^[0-9]+$/.test(slot[end - 1])) end--;
  return slot.slice(0, end).join(' ') || null;
}

// =============================================================================================
// Dense features
// =============================================================================================

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);

/** Env values into their columns, checked (an env's feature set must give one value a name). */
function writeExtras(dense: Float32Array, at: number, values: readonly number[], n: number, what: string): void {
  if (values.length !== n)
    throw new Error(`The env's policy features gave ${values.length} ${what} values for ${n} ${what} features.`);
  for (let i = 0; i < n; i++) dense[at + i] = values[i];
}

function writeStateDense(
  dense: Float32Array,
  at: number,
  state: PolicyState,
  p: ParsedState,
  f: Featuriser,
  extras: readonly number[],
): void {
  dense[at + p.kind.index] = 1;
  let k = at + f.kindCount;
  for (const a of p.actions) dense[k + a.index] = 1;
  k += f.templateCount;
  const step = state.step ?? 0;
  dense[k++] = state.maxSteps ? clamp(step / state.maxSteps, 0, 1) : 0;
  dense[k++] = Math.min(step, 50) / 50;
  dense[k++] = Math.log(1 + state.admissible.length) / Math.log(64);
  dense[k++] = Math.log(1 + state.observation.length) / Math.log(10_000);
  dense[k++] = Math.min(state.previousActions?.length ?? 0, 30) / 30;
  dense[k++] = 1;
  writeExtras(dense, k, extras, f.extras.state.length, 'state');
}

/** The generic row features from `at` on; returns the column after them. */
function writeRowDense(
  dense: Float32Array,
  at: number,
  action: string,
  parsed: ParsedAction,
  rank: number,
  argTokens: readonly string[],
  p: ParsedState,
  f: Featuriser,
): number {
  const argContent = contentStems(argTokens, f.stopwords);
  const actionLower = action.toLowerCase().trim();
  let overlap = 0,
    inObs = 0;
  for (const c of argContent) {
    if (p.instructionContent.has(c)) overlap++;
    if (p.obsContent.has(c)) inObs++;
  }
  const instrContentSize = Math.max(1, p.instructionContent.size);
  let k = at;
  dense[k++] = Math.min(overlap / 3, 2);
  dense[k++] = argContent.length ? overlap / argContent.length : 0;
  dense[k++] = overlap / instrContentSize;
  dense[k++] = overlap > 0 ? 1 : 0;
  const argument = parsed.argument.replace(/[[\](){}]/g, ' ').trim();
  dense[k++] = argument.length > 1 && p.instructionLower.includes(argument) ? 1 : 0;
  // Numbers in slots that are not ids (an id's digits are no quantity).
  const numbers = parsed.slots
    .flatMap((slot, i) => (parsed.shapes[i] === '<id>' ? [] : slot))
    .filter((t) => NUMBER_START_RE.test(t));
  dense[k++] = numbers.length > 0 ? 1 : 0;
  dense[k++] = numbers.some((t) => p.instructionNumbers.has(t)) ? 1 : 0;
  dense[k++] = argContent.length ? inObs / argContent.length : 0;
  dense[k++] = Math.min((p.previousCounts.get(actionLower) ?? 0) / 3, 1);
  dense[k++] = p.lastAction === actionLower ? 1 : 0;
  dense[k++] = Math.min(rank / 10, 1);
  dense[k++] = Math.min(argTokens.length / 10, 2);
  const first = slotType(parsed.slots[0]),
    second = slotType(parsed.slots[1]);
  const firstIn = first !== null && p.instructionWords.has(first) ? 1 : 0;
  const secondIn = second !== null && p.instructionWords.has(second) ? 1 : 0;
  dense[k++] = firstIn;
  dense[k++] = secondIn;
  dense[k++] = firstIn * secondIn;
  dense[k++] = 1;
  return k;
}

// =============================================================================================
// Tokens and hashing
// =============================================================================================

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
  /** Dense columns per state and per row (the featuriser's stateDim and rowDim). */
  stateDim: number;
  rowDim: number;
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
  /** [nStates × stateDim] row-major. */
  stateDense: Float32Array;
  /** [nRows × rowDim] row-major. */
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

/**
 * Encode states (and optional per-state prior scores, one per admissible action) into an
 * `EncodedBatch` with a domain's featuriser. States with no admissible actions are not allowed (nothing to choose).
 */
export function encodeStates(
  states: readonly PolicyState[],
  priors?: readonly (readonly number[] | null | undefined)[],
  config: FeatureConfig = DEFAULT_FEATURE_CONFIG,
  featuriser: Featuriser = GENERIC_FEATURISER,
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
    const prior = priors?.[s];
    if (prior && prior.length !== n)
      throw new Error(`encodeStates: prior for state ${s} has ${prior.length} scores for ${n} admissible actions`);
  }
  const out = new BatchBuilder(nStates, nRows, maxActions, featuriser, B);
  let row = 0;
  for (let s = 0; s < nStates; s++) {
    encodeState(out, s, row, states[s], priors?.[s], config, featuriser);
    row += states[s].admissible.length;
  }
  return out.finish();
}

/** The growing arrays of a batch being encoded. */
class BatchBuilder {
  readonly instrIds: IntList;
  readonly instrSeg: IntList;
  readonly obsIds: IntList;
  readonly obsSeg: IntList;
  readonly actIds: IntList;
  readonly actSeg: IntList;
  readonly instrScale: Float32Array;
  readonly obsScale: Float32Array;
  readonly actScale: Float32Array;
  readonly stateDense: Float32Array;
  readonly rowDense: Float32Array;
  readonly rowState: Int32Array;
  readonly rowOffset: Int32Array;
  readonly actionCounts: Int32Array;
  readonly prior: Float32Array;
  readonly slotRow: Int32Array;
  readonly slotMask: Float32Array;
  /** Ids that do not depend on text: biases, templates. */
  readonly biasInstr: number;
  readonly biasObs: number;
  readonly biasAct: number;
  readonly templateIds: number[];

  constructor(
    readonly nStates: number,
    readonly nRows: number,
    readonly maxActions: number,
    readonly featuriser: Featuriser,
    readonly buckets: number,
  ) {
    this.instrIds = new IntList(nStates * 64);
    this.instrSeg = new IntList(nStates * 64);
    this.obsIds = new IntList(nStates * 128);
    this.obsSeg = new IntList(nStates * 128);
    this.actIds = new IntList(nRows * 16);
    this.actSeg = new IntList(nRows * 16);
    this.instrScale = new Float32Array(nStates);
    this.obsScale = new Float32Array(nStates);
    this.actScale = new Float32Array(nRows);
    this.stateDense = new Float32Array(nStates * featuriser.stateDim);
    this.rowDense = new Float32Array(nRows * featuriser.rowDim);
    this.rowState = new Int32Array(nRows);
    this.rowOffset = new Int32Array(nStates);
    this.actionCounts = new Int32Array(nStates);
    this.prior = new Float32Array(nRows);
    this.slotRow = new Int32Array(nStates * maxActions).fill(nRows);
    this.slotMask = new Float32Array(nStates * maxActions);
    this.biasInstr = featureId('<i>', buckets);
    this.biasObs = featureId('<o>', buckets);
    this.biasAct = featureId('<a>', buckets);
    this.templateIds = [...featuriser.schema.templates, 'other'].map((t) => featureId('at|' + t, buckets));
  }

  finish(): EncodedBatch {
    const { nStates, nRows, maxActions, buckets } = this;
    return {
      nStates,
      nRows,
      maxActions,
      buckets,
      stateDim: this.featuriser.stateDim,
      rowDim: this.featuriser.rowDim,
      instrIds: this.instrIds.toArray(),
      instrSeg: this.instrSeg.toArray(),
      instrScale: this.instrScale,
      obsIds: this.obsIds.toArray(),
      obsSeg: this.obsSeg.toArray(),
      obsScale: this.obsScale,
      actIds: this.actIds.toArray(),
      actSeg: this.actSeg.toArray(),
      actScale: this.actScale,
      stateDense: this.stateDense,
      rowDense: this.rowDense,
      rowState: this.rowState,
      rowOffset: this.rowOffset,
      actionCounts: this.actionCounts,
      prior: this.prior,
      slotRow: this.slotRow,
      slotMask: this.slotMask,
    };
  }
}

/** One state's bags and dense features, and its rows from `row` on. */
function encodeState(
  out: BatchBuilder,
  s: number,
  firstRow: number,
  state: PolicyState,
  statePrior: readonly number[] | null | undefined,
  config: FeatureConfig,
  f: Featuriser,
): void {
  const B = out.buckets;
  const p = parseState(state, config, f);
  const nA = state.admissible.length;
  out.rowOffset[s] = firstRow;
  out.actionCounts[s] = nA;
  out.instrIds.push(out.biasInstr);
  out.instrSeg.push(s);
  out.instrScale[s] = 1 / Math.sqrt(1 + pushBag(out.instrIds, out.instrSeg, s, 'i', p.instructionTokens, true, B));
  out.obsIds.push(out.biasObs);
  out.obsSeg.push(s);
  out.obsScale[s] = 1 / Math.sqrt(1 + pushBag(out.obsIds, out.obsSeg, s, 'o', p.obsTokens, true, B));
  const extras = f.extras.prepare(state);
  writeStateDense(out.stateDense, s * f.stateDim, state, p, f, extras.state);

  const rankCounter = new Int32Array(f.templateCount);
  for (let j = 0; j < nA; j++) {
    const row = firstRow + j;
    out.rowState[row] = s;
    out.slotRow[s * out.maxActions + j] = row;
    out.slotMask[s * out.maxActions + j] = 1;
    if (statePrior) out.prior[row] = statePrior[j];
    const action = p.actions[j];
    const extra = extras.row(state.admissible[j], j);
    const argTokens = tokenize(action.argument).slice(0, config.maxActionTokens);
    out.actScale[row] = 1 / Math.sqrt(pushActionBag(out, row, action, p.kind.key, argTokens, extra.bag ?? []));
    const rd = row * f.rowDim;
    out.rowDense[rd + action.index] = 1;
    const rank = rankCounter[action.index]++;
    const next = writeRowDense(out.rowDense, rd + f.templateCount, state.admissible[j], action, rank, argTokens, p, f);
    writeExtras(out.rowDense, next, extra.values, f.extras.row.length, 'row');
  }
}

/** The action bag of a row; returns its size. */
function pushActionBag(
  out: BatchBuilder,
  row: number,
  action: ParsedAction & { index: number },
  kindKey: string,
  argTokens: readonly string[],
  extraBag: readonly string[],
): number {
  const B = out.buckets;
  const template = out.featuriser.schema.templates[action.index] ?? 'other';
  for (const id of [
    out.biasAct,
    out.templateIds[action.index],
    featureId('ap|' + template + '@' + kindKey, B),
    featureId('v|' + action.verb, B),
  ]) {
    out.actIds.push(id);
    out.actSeg.push(row);
  }
  return (
    4 +
    pushBag(out.actIds, out.actSeg, row, 'a', argTokens, true, B) +
    pushBag(out.actIds, out.actSeg, row, 'x', extraBag, false, B)
  );
}

/**
 * The sub-batch of the given states (in the given order), e.g. a PPO minibatch, without
 * re-encoding strings.
 */
export function sliceEncoded(batch: EncodedBatch, stateIndices: ArrayLike<number>): EncodedBatch {
  const { stateDim, rowDim } = batch;
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
  const stateDense = new Float32Array(nStates * stateDim),
    rowDense = new Float32Array(nRows * rowDim);
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
    stateDense.set(batch.stateDense.subarray(s * stateDim, (s + 1) * stateDim), i * stateDim);
    const n = batch.actionCounts[s],
      r0 = batch.rowOffset[s];
    rowOffset[i] = row;
    actionCounts[i] = n;
    rowDense.set(batch.rowDense.subarray(r0 * rowDim, (r0 + n) * rowDim), row * rowDim);
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
    stateDim,
    rowDim,
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
