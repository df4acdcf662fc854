/**
 * Candidate actions for the steps of an import that list none.
 *
 * ETO records, and AgentGym records outside ALFWorld, keep only the action the agent took, not
 * the actions it could have taken. Everything downstream needs such a list: the policy scores
 * candidates (design §3 Policy), a dreamed running state must list its actions (DreamEnv), the
 * learned model writes the next state's list, and action agreement is measured against chance
 * 1/|A|. So `domain import` gives each such step a list, built from the domain's own data:
 *
 *   - the action the step took (a demonstration is always admissible where it was taken);
 *   - the actions taken in the most similar recorded states of the TRAINING episodes (never the
 *     step's own episode, never a held-out one), weighted by similarity: the words of the
 *     observation, of the previous action, and (half weight) of the instruction, each word by its
 *     rarity (IDF), compared by cosine over an inverted index;
 *   - when that gives fewer than two, the domain's most frequent actions.
 *
 * At most `INFERRED_CANDIDATES` actions, sorted alphabetically, so the list's order never says
 * which one was demonstrated. Such a list is an estimate: an action other than the demonstrated
 * one may not exist in that state of the real application, and a real action may be missing. The
 * domain records how many steps got one (`DomainStats.inferredAdmissibleSteps`), and the action
 * agreement says its candidates were inferred. Deterministic: no randomness, no clock.
 *
 * Bounded work: a search reads the postings of its words, and in a large import of a small
 * vocabulary (household: 356 words) every list is long, so reading them all is quadratic (2,000
 * episodes took 168 s). When all the searches of an import would read more than
 * `POSTINGS_PER_STATE` entries per indexed state, a search reads at most C entries of each list
 * (C the longest that fits): the window around the searched state in an order where similar states
 * lie together (by a MinHash sketch of their words, so near-duplicates share a place). Below that
 * budget (every test domain, a few hundred episodes) every entry is read and the search is exact;
 * above it a state is compared with the nearby states of each of its words, the scores still
 * exact cosines.
 */
import { hashString } from '../rng';
import type { Step, Trajectory } from '../types';

/** Most candidates an inferred list holds (the demonstrated action and its neighbours' actions). */
export const INFERRED_CANDIDATES = 8;
/** Recorded states consulted for one list. */
const NEIGHBOURS = 24;
/**
 * Words in more than this share of recorded states are too common to tell states apart, and their
 * long posting lists make a search slow: left out of indexes of at least `COMMON_WORDS_FROM` states.
 */
const MAX_WORD_SHARE = 0.25;
const COMMON_WORDS_FROM = 200;
/** An inferred list holds at least this many actions (with one, the policy has nothing to choose). */
const MIN_CANDIDATES = 2;
/** Postings the searches of an import may read per indexed state before the lists are cut (file comment). */
export const POSTINGS_PER_STATE = 1000;
/** A posting list keeps every `SKIP`-th entry apart: a small array to search first (a long one misses the cache). */
const SKIP = 32;

/** Words of states, flat: state k's word ids (in the order it names them) are `ids[offsets[k] … offsets[k + 1])`. */
interface WordTable {
  offsets: Int32Array;
  ids: Int32Array;
  /** Weights before IDF: 1 for observation and previous-action words, 0.5 for instruction ones. */
  weights: Float64Array;
}

/** One state's words: a row of a word table. */
interface StateWords {
  table: WordTable;
  row: number;
}

/** One word's states (places in sketch order, ascending) and the word's weight in each (weight × IDF). */
interface Posting {
  states: Int32Array;
  weights: Float64Array;
  skips: Int32Array;
}

/**
 * The training episodes' states, searchable by words. States are kept in sketch order (similar
 * states, by a MinHash sketch of their words, lie together) and flat: a large import has many.
 */
export interface CandidateIndex {
  /** Word → id, for the words that tell states apart; their IDF and posting list by id. */
  vocabulary: Map<string, number>;
  idf: Float64Array;
  postings: Posting[];
  /** By place in sketch order: each state's words, episode, action, norm, sketch and training step. */
  words: WordTable;
  episodes: Int32Array;
  actions: string[];
  norms: Float64Array;
  sketches: Float64Array;
  steps: Int32Array;
  /** Each training step's place. */
  places: Int32Array;
  /** Entries a search reads of one list (Infinity: all of them, the search is exact). */
  postingCap: number;
  /** Actions by how often they were taken (most first, then alphabetical). */
  frequent: string[];
  /** Dot products of one search (all zero between searches), and the states it touched. */
  scratch?: { dot: Float64Array; touched: Int32Array };
  /** Posting entries read by the searches so far: the work the budget bounds. */
  postingsRead: number;
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** A state's words: observation, previous action (marked), instruction (marked, half weight). */
function stateWords(instruction: string, observation: string, previousAction: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const w of words(observation)) out.set(w, 1);
  for (const w of words(previousAction ?? '<start>')) out.set(`a:${w}`, 1);
  for (const w of words(instruction)) out.set(`i:${w}`, 0.5);
  return out;
}

/** A table of the words of `states` that the vocabulary holds, in order (the others weigh nothing in a cosine). */
function wordTable(states: readonly Map<string, number>[], vocabulary: Map<string, number>): WordTable {
  const offsets = new Int32Array(states.length + 1);
  const ids: number[] = [];
  const weights: number[] = [];
  states.forEach((words, row) => {
    for (const [w, weight] of words) {
      const id = vocabulary.get(w);
      if (id === undefined) continue;
      ids.push(id);
      weights.push(weight);
    }
    offsets[row + 1] = ids.length;
  });
  return { offsets, ids: Int32Array.from(ids), weights: Float64Array.from(weights) };
}

/** The rows of `table` in the order `rows` names them. */
function reordered(table: WordTable, rows: Int32Array): WordTable {
  const offsets = new Int32Array(rows.length + 1);
  const ids = new Int32Array(table.ids.length);
  const weights = new Float64Array(table.weights.length);
  rows.forEach((row, k) => {
    const from = table.offsets[row];
    const to = table.offsets[row + 1];
    ids.set(table.ids.subarray(from, to), offsets[k]);
    weights.set(table.weights.subarray(from, to), offsets[k]);
    offsets[k + 1] = offsets[k] + to - from;
  });
  return { offsets, ids, weights };
}

function normOf({ table, row }: StateWords, idf: Float64Array): number {
  let sum = 0;
  for (let k = table.offsets[row]; k < table.offsets[row + 1]; k++) {
    const x = table.weights[k] * idf[table.ids[k]];
    sum += x * x;
  }
  return Math.sqrt(sum);
}

/**
 * Two MinHash values of a state's words in one number (the first in the high bits): states that
 * share most words are likely to share the first, then the second, so sketch order puts
 * near-duplicates side by side.
 */
function sketch({ table, row }: StateWords, hashes: Uint32Array): number {
  let first = 0xffffffff;
  let second = 0xffffffff;
  for (let k = table.offsets[row]; k < table.offsets[row + 1]; k++) {
    const id = table.ids[k];
    first = Math.min(first, hashes[2 * id]);
    second = Math.min(second, hashes[2 * id + 1]);
  }
  return first * 2 ** 20 + (second >>> 12);
}

/** Two hashes of every word of the vocabulary (by id), the sketch's hash functions. */
function wordHashes(vocabulary: Map<string, number>): Uint32Array {
  const hashes = new Uint32Array(2 * vocabulary.size);
  for (const [w, id] of vocabulary) {
    hashes[2 * id] = hashString(w, 0x9e3779b9);
    hashes[2 * id + 1] = hashString(w, 0x85ebca6b);
  }
  return hashes;
}

/** An index over every step of `train` (the states the candidates are drawn from). */
export function candidateIndex(train: readonly Trajectory[]): CandidateIndex {
  const all: { episode: number; action: string; words: Map<string, number> }[] = [];
  const counts = new Map<string, number>();
  train.forEach((t, episode) =>
    t.steps.forEach((s, i) => {
      all.push({
        episode,
        action: s.action,
        words: stateWords(t.task.instruction, s.observation, t.steps[i - 1]?.action),
      });
      counts.set(s.action, (counts.get(s.action) ?? 0) + 1);
    }),
  );
  const { vocabulary, idf } = vocabularyOf(all.map((s) => s.words));
  const hashes = wordHashes(vocabulary);
  const byStep = wordTable(
    all.map((s) => s.words),
    vocabulary,
  );
  const sketchOf = Float64Array.from(all, (_, row) => sketch({ table: byStep, row }, hashes));
  // Sketch order: a search's window of each list holds the states most like it, close in memory too.
  const steps = Int32Array.from(all, (_, step) => step).sort((a, b) => sketchOf[a] - sketchOf[b] || a - b);
  const table = reordered(byStep, steps);
  const index: CandidateIndex = {
    vocabulary,
    idf,
    postings: postingsOf(table, idf),
    words: table,
    episodes: Int32Array.from(steps, (step) => all[step].episode),
    actions: Array.from(steps, (step) => all[step].action),
    norms: Float64Array.from(steps, (_, row) => normOf({ table, row }, idf)),
    sketches: Float64Array.from(steps, (step) => sketchOf[step]),
    steps,
    places: new Int32Array(steps.length),
    postingCap: Infinity,
    frequent: [...counts.entries()].sort((a, b) => b[1] - a[1] || compare(a[0], b[0])).map(([a]) => a),
    postingsRead: 0,
  };
  steps.forEach((step, place) => (index.places[step] = place));
  index.postingCap = postingCap(
    index.postings.map((p) => p.states.length),
    steps.length,
  );
  return index;
}

/** The words that tell states apart (those in most states are left out: see MAX_WORD_SHARE), with their IDF. */
function vocabularyOf(states: readonly Map<string, number>[]): { vocabulary: Map<string, number>; idf: Float64Array } {
  const df = new Map<string, number>();
  for (const s of states) for (const w of s.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const vocabulary = new Map<string, number>();
  const idf: number[] = [];
  for (const [w, n] of df) {
    if (states.length >= COMMON_WORDS_FROM && n > MAX_WORD_SHARE * states.length) continue;
    vocabulary.set(w, idf.length);
    idf.push(Math.log(1 + states.length / n));
  }
  return { vocabulary, idf: Float64Array.from(idf) };
}

/** Each word's posting list over the states of `table` (in its order). */
function postingsOf(table: WordTable, idf: Float64Array): Posting[] {
  const lengths = new Int32Array(idf.length);
  for (const id of table.ids) lengths[id]++;
  const lists = Array.from(lengths, (n) => ({ states: new Int32Array(n), weights: new Float64Array(n), size: 0 }));
  for (let row = 0; row + 1 < table.offsets.length; row++) {
    for (let k = table.offsets[row]; k < table.offsets[row + 1]; k++) {
      const list = lists[table.ids[k]];
      list.states[list.size] = row;
      list.weights[list.size++] = table.weights[k] * idf[table.ids[k]];
    }
  }
  return lists.map(({ states, weights }) => ({
    states,
    weights,
    skips: Int32Array.from({ length: Math.ceil(states.length / SKIP) }, (_, k) => states[k * SKIP]),
  }));
}

/**
 * The longest length C to cut every posting list to so that the searches of all indexed states
 * read at most `POSTINGS_PER_STATE` entries per state (a word in n states is searched n times,
 * reading min(n, C) each time); Infinity when the uncut lists fit.
 */
export function postingCap(listLengths: readonly number[], states: number): number {
  const budget = POSTINGS_PER_STATE * states;
  const work = (cap: number) => listLengths.reduce((sum, n) => sum + n * Math.min(n, cap), 0);
  const longest = Math.max(0, ...listLengths);
  if (work(longest) <= budget) return Infinity;
  let low = 1; // work(1) is every word of every state: always spent
  let high = longest;
  while (low + 1 < high) {
    const mid = Math.floor((low + high) / 2);
    if (work(mid) <= budget) low = mid;
    else high = mid;
  }
  return low;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The most similar indexed states (cosine of IDF-weighted words), the excluded episode left out.
 * Dot products accumulate in one array over the query words' postings (each read whole, or its
 * window: see the file comment); the best `NEIGHBOURS` are kept by insertion (no sort of every
 * touched state: an import of 1,000 episodes asks 13,000 times). `place`: the query's own place
 * when it is an indexed state (its norm and sketch are known).
 */
function neighbours(
  index: CandidateIndex,
  query: StateWords,
  excludeEpisode: number,
  place?: number,
): { action: string; score: number }[] {
  const norm = place !== undefined ? index.norms[place] : normOf(query, index.idf);
  if (norm === 0) return [];
  const size = index.steps.length;
  const { dot, touched } = (index.scratch ??= { dot: new Float64Array(size), touched: new Int32Array(size) });
  const { episodes, idf } = index;
  let touchedCount = 0;
  const cut = Number.isFinite(index.postingCap);
  const querySketch = place !== undefined ? index.sketches[place] : sketch(query, hashesOf(index));
  const at = cut ? lowerBound(index.sketches, querySketch, 0, size) : 0;
  const { table, row } = query;
  for (let k = table.offsets[row]; k < table.offsets[row + 1]; k++) {
    const posting = index.postings[table.ids[k]];
    const queryWeight = table.weights[k] * idf[table.ids[k]];
    const { states, weights } = posting;
    const [from, to] = window(index.postingCap, posting, at);
    index.postingsRead += to - from;
    for (let j = from; j < to; j++) {
      const i = states[j];
      if (episodes[i] === excludeEpisode) continue;
      if (dot[i] === 0) touched[touchedCount++] = i;
      dot[i] += queryWeight * weights[j];
    }
  }
  return best(index, touchedCount, norm);
}

/** The best `NEIGHBOURS` of the touched states (clearing their dot products for the next search). */
function best(index: CandidateIndex, touchedCount: number, norm: number): { action: string; score: number }[] {
  const { dot, touched } = index.scratch!;
  const kept: { i: number; step: number; score: number }[] = [];
  for (let t = 0; t < touchedCount; t++) {
    const i = touched[t];
    const score = dot[i] / (norm * index.norms[i]);
    dot[i] = 0;
    if (kept.length === NEIGHBOURS && score < kept[NEIGHBOURS - 1].score) continue; // the common case, cheaply
    const step = index.steps[i];
    if (kept.length === NEIGHBOURS && !better(score, step, kept[NEIGHBOURS - 1])) continue;
    let at = kept.length === NEIGHBOURS ? NEIGHBOURS - 1 : kept.length;
    while (at > 0 && better(score, step, kept[at - 1])) {
      kept[at] = kept[at - 1];
      at--;
    }
    kept[at] = { i, step, score };
  }
  return kept.map(({ i, score }) => ({ action: index.actions[i], score }));
}

const hashCache = new WeakMap<CandidateIndex, Uint32Array>();
function hashesOf(index: CandidateIndex): Uint32Array {
  let hashes = hashCache.get(index);
  if (!hashes) hashCache.set(index, (hashes = wordHashes(index.vocabulary)));
  return hashes;
}

/** The entries of a list a search reads: all, or the `cap` nearest to `place` in sketch order. */
function window(cap: number, { states, skips }: Posting, place: number): [number, number] {
  if (states.length <= cap) return [0, states.length];
  const block = lowerBound(skips, place, 0, skips.length);
  const at = lowerBound(states, place, Math.max(0, (block - 1) * SKIP), Math.min(states.length, block * SKIP));
  const from = Math.min(Math.max(0, at - Math.floor(cap / 2)), states.length - cap);
  return [from, from + cap];
}

/** The first position in ascending `sorted[low, high)` whose value is not below `value` (`high` if none). */
function lowerBound(sorted: Int32Array | Float64Array, value: number, low: number, high: number): number {
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid] < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Higher score first; the earlier training step on a tie (deterministic). */
function better(score: number, step: number, than: { step: number; score: number }): boolean {
  return score > than.score || (score === than.score && step < than.step);
}

/**
 * The inferred candidates of one state: `taken` (the demonstrated action, when known) and the
 * actions of similar training states, sorted alphabetically. `excludeEpisode`: the index in the
 * training episodes of the state's own episode (-1 for a held-out one).
 */
export function inferCandidates(
  index: CandidateIndex,
  state: { instruction: string; observation: string; previousAction?: string },
  taken: string | undefined,
  excludeEpisode = -1,
): string[] {
  const words = stateWords(state.instruction, state.observation, state.previousAction);
  const query = { table: wordTable([words], index.vocabulary), row: 0 };
  return candidatesOf(index, query, taken, excludeEpisode);
}

/** `inferCandidates` of a state's words; `place`: the state's own place when it is indexed. */
function candidatesOf(
  index: CandidateIndex,
  query: StateWords,
  taken: string | undefined,
  excludeEpisode: number,
  place?: number,
): string[] {
  const votes = new Map<string, number>();
  for (const { action, score } of neighbours(index, query, excludeEpisode, place)) {
    if (action !== taken) votes.set(action, (votes.get(action) ?? 0) + score);
  }
  const chosen = new Set(taken !== undefined ? [taken] : []);
  const ranked = [...votes.entries()].sort((a, b) => b[1] - a[1] || compare(a[0], b[0]));
  for (const [action] of ranked) {
    if (chosen.size >= INFERRED_CANDIDATES) break;
    chosen.add(action);
  }
  for (const action of index.frequent) {
    if (chosen.size >= MIN_CANDIDATES) break;
    chosen.add(action);
  }
  return [...chosen].sort(); // by UTF-16 code units: the order of `compare`, natively
}

/**
 * `t` with candidates on every step that lists none. `firstStep`: the place of its first step among
 * the training steps (its states are in the index: their words are not made again), or -1.
 */
function fillEpisode(
  index: CandidateIndex,
  t: Trajectory,
  excludeEpisode: number,
  firstStep: number,
): { t: Trajectory; filled: number } {
  let filled = 0;
  const steps: Step[] = t.steps.map((s, i) => {
    if (s.admissible.length > 0) return s;
    filled++;
    if (firstStep >= 0) {
      const place = index.places[firstStep + i];
      const admissible = candidatesOf(index, { table: index.words, row: place }, s.action, excludeEpisode, place);
      return { ...s, admissible };
    }
    const state = {
      instruction: t.task.instruction,
      observation: s.observation,
      previousAction: t.steps[i - 1]?.action,
    };
    return { ...s, admissible: inferCandidates(index, state, s.action, excludeEpisode) };
  });
  return { t: filled > 0 ? { ...t, steps } : t, filled };
}

/**
 * The episodes with an inferred list on every step that lists none (see the file comment), how
 * many steps got one, and the posting entries their searches read (the work the budget bounds).
 * Lists recorded in the data are kept as they are.
 */
export function withInferredCandidates(
  train: readonly Trajectory[],
  heldOut: readonly Trajectory[],
): { train: Trajectory[]; heldOut: Trajectory[]; inferredSteps: number; postingsRead: number } {
  const missing = [...train, ...heldOut].some((t) => t.steps.some((s) => s.admissible.length === 0));
  if (!missing) return { train: train.slice(), heldOut: heldOut.slice(), inferredSteps: 0, postingsRead: 0 };
  const index = candidateIndex(train);
  let inferredSteps = 0;
  let firstStep = 0;
  const fill = (t: Trajectory, episode: number) => {
    const out = fillEpisode(index, t, episode, episode >= 0 ? firstStep : -1);
    if (episode >= 0) firstStep += t.steps.length;
    inferredSteps += out.filled;
    return out.t;
  };
  const filled = { train: train.map((t, i) => fill(t, i)), heldOut: heldOut.map((t) => fill(t, -1)) };
  return { ...filled, inferredSteps, postingsRead: index.postingsRead };
}
