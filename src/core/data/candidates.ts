/**
 * Candidate actions for the steps of an import that list none.
 *
 * ETO records, and AgentGym records outside ALFWorld, keep only the action the agent took, not
 * the actions it could have taken. Everything downstream needs such a list: the policy scores
 * candidates, a dreamed running state must list its actions (DreamEnv), and action agreement is
 * measured against chance 1/|A|. So `domain import` gives each such step a list, built from the
 * domain's own data. The same inference gives a dreamed state its list and a deployed agent its
 * candidates (`candidateInference`): the learned model neither reads nor writes such lists
 * (DomainCard.inferredAdmissible).
 *
 *   - the action the step took (a demonstration is always admissible where it was taken);
 *   - the actions taken in the most similar recorded states of the TRAINING episodes (never the
 *     step's own episode, never a held-out one), weighted by similarity: the words of the
 *     observation, of the previous action, and (half weight) of the instruction, each word by its
 *     rarity (IDF), compared by cosine over an inverted index;
 *   - when that gives fewer than two, the domain's most frequent actions.
 *
 * At most `INFERRED_CANDIDATES` actions, sorted alphabetically, so the list's order never says
 * which one was demonstrated. The size is a real application's: a policy cloned among 8 candidates
 * (nearly all of them good actions) never learned to pass over the many an application offers, and
 * reached 2 % of held-out tasks in the real household among its ~30; among 32 from the 64 most
 * similar states it reached 29 %, against 46 % for the same demonstrations with their recorded
 * lists (docs/results/imported-domains.md, dev split). Such a list is an estimate: an action other
 * than the demonstrated one may not exist in that state of the real application, and a real action
 * may be missing. The
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
 * exact cosines. Searches of the same words (a state repeated in many episodes: 20,000 household
 * episodes hold 57,000 distinct states in 443,000 steps) share one pass over the postings and one
 * ranking, from which each leaves out its own episode's states (searchGroup).
 */
import { hashString } from '../rng';
import type { Step, Trajectory } from '../types';

/** Most candidates an inferred list holds (the demonstrated action and its neighbours' actions). */
export const INFERRED_CANDIDATES = 32;
/** Recorded states consulted for one list (twice the list: neighbours often took the same action). */
export const NEIGHBOURS = 64;
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
  /** Every state's words as numbers, and each number's vocabulary id (-1: not in it; past the end: new). */
  stateRows: StateRows;
  vocabularyIds: Int32Array;
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
  /** Dot products of one search (all zero between searches), the states it touched, and a count by episode. */
  scratch?: { dot: Float64Array; touched: Int32Array; perEpisode: Int32Array };
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

/**
 * The words of states as numbers, given in order of first appearance, with each word's weight. A
 * state (instruction, page, previous action) met again is not split into words again: an import
 * repeats most of its states (20,000 household episodes: 57,000 distinct states in 443,000 steps).
 */
class StateRows {
  readonly numbers = new Map<string, number>();
  /** By word number: 1 for page and previous-action words, 0.5 for instruction ones (stateWords). */
  readonly weights: number[] = [];
  /** instruction → page → previous action → row. */
  private readonly rows = new Map<string, Map<string, Map<string, number[]>>>();

  /** The numbers of a state's words in stateWords' order (the array is shared by repeats: read only). */
  row(instruction: string, observation: string, previousAction: string | undefined): number[] {
    let byObservation = this.rows.get(instruction);
    if (!byObservation) this.rows.set(instruction, (byObservation = new Map()));
    let byPrevious = byObservation.get(observation);
    if (!byPrevious) byObservation.set(observation, (byPrevious = new Map()));
    const previous = previousAction ?? '<start>'; // what stateWords reads for none
    let row = byPrevious.get(previous);
    if (!row) byPrevious.set(previous, (row = this.numbered(stateWords(instruction, observation, previous))));
    return row;
  }

  private numbered(words: Map<string, number>): number[] {
    const row: number[] = [];
    for (const [w, weight] of words) {
      let n = this.numbers.get(w);
      if (n === undefined) {
        this.numbers.set(w, (n = this.weights.length));
        this.weights.push(weight);
      }
      row.push(n);
    }
    return row;
  }
}

/** A table of the words of `rows` that the vocabulary holds, in order (the others weigh nothing in a cosine). */
function wordTable(rows: readonly number[][], stateRows: StateRows, vocabularyIds: Int32Array): WordTable {
  const offsets = new Int32Array(rows.length + 1);
  const ids: number[] = [];
  const weights: number[] = [];
  rows.forEach((row, k) => {
    for (const n of row) {
      const id = n < vocabularyIds.length ? vocabularyIds[n] : -1; // past the end: a word new to the index
      if (id < 0) continue;
      ids.push(id);
      weights.push(stateRows.weights[n]);
    }
    offsets[k + 1] = ids.length;
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
  const stateRows = new StateRows();
  const rows: number[][] = [];
  const episodeOf: number[] = [];
  const actionOf: string[] = [];
  const counts = new Map<string, number>();
  train.forEach((t, episode) =>
    t.steps.forEach((s, i) => {
      rows.push(stateRows.row(t.task.instruction, s.observation, t.steps[i - 1]?.action));
      episodeOf.push(episode);
      actionOf.push(s.action);
      counts.set(s.action, (counts.get(s.action) ?? 0) + 1);
    }),
  );
  const { vocabulary, vocabularyIds, idf } = vocabularyOf(stateRows, rows);
  const hashes = wordHashes(vocabulary);
  const byStep = wordTable(rows, stateRows, vocabularyIds);
  const sketchOf = Float64Array.from(rows, (_, row) => sketch({ table: byStep, row }, hashes));
  // Sketch order: a search's window of each list holds the states most like it, close in memory too.
  const steps = Int32Array.from(rows, (_, step) => step).sort((a, b) => sketchOf[a] - sketchOf[b] || a - b);
  const table = reordered(byStep, steps);
  const index: CandidateIndex = {
    vocabulary,
    stateRows,
    vocabularyIds,
    idf,
    postings: postingsOf(table, idf),
    words: table,
    episodes: Int32Array.from(steps, (step) => episodeOf[step]),
    actions: Array.from(steps, (step) => actionOf[step]),
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

/**
 * The words that tell states apart (those in most states are left out: see MAX_WORD_SHARE), ids in
 * order of first appearance, with their IDF; `vocabularyIds`: each word number's id, or -1.
 */
function vocabularyOf(stateRows: StateRows, rows: readonly number[][]) {
  const df = new Int32Array(stateRows.weights.length);
  for (const row of rows) for (const n of row) df[n]++;
  const vocabulary = new Map<string, number>();
  const vocabularyIds = new Int32Array(df.length).fill(-1);
  const idf: number[] = [];
  for (const [w, n] of stateRows.numbers) {
    if (rows.length >= COMMON_WORDS_FROM && df[n] > MAX_WORD_SHARE * rows.length) continue;
    vocabularyIds[n] = idf.length;
    vocabulary.set(w, idf.length);
    idf.push(Math.log(1 + rows.length / df[n]));
  }
  return { vocabulary, vocabularyIds, idf: Float64Array.from(idf) };
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
 * One search: a state's words, its place when it is indexed (else -1), its episode's index in the
 * training episodes (that episode's states are left out; -1 for none) and its demonstrated action.
 */
interface Search {
  query: StateWords;
  place: number;
  excludeEpisode: number;
  taken: string | undefined;
}

/** A touched state of a search, by place, with its training step (ties go to the earlier) and cosine. */
interface Ranked {
  i: number;
  step: number;
  score: number;
}

/**
 * Adds the query's dot product with every state its postings reach (each list read whole, or its
 * window: see the file comment) into the scratch array, and notes the states it touched; the
 * query's norm is 0 when none of its words is indexed (nothing touched). `place`: the query's own
 * place when it is an indexed state (its norm and sketch are known), else -1.
 */
function accumulate(index: CandidateIndex, query: StateWords, place: number): { touchedCount: number; norm: number } {
  const { dot, touched } = scratchOf(index);
  const norm = place >= 0 ? index.norms[place] : normOf(query, index.idf);
  if (norm === 0) return { touchedCount: 0, norm };
  const size = index.steps.length;
  let touchedCount = 0;
  const cut = Number.isFinite(index.postingCap);
  const querySketch = place >= 0 ? index.sketches[place] : sketch(query, hashesOf(index));
  const at = cut ? lowerBound(index.sketches, querySketch, 0, size) : 0;
  const { table, row } = query;
  for (let k = table.offsets[row]; k < table.offsets[row + 1]; k++) {
    const posting = index.postings[table.ids[k]];
    const queryWeight = table.weights[k] * index.idf[table.ids[k]];
    const { states, weights } = posting;
    const [from, to] = window(index.postingCap, posting, at);
    index.postingsRead += to - from;
    for (let j = from; j < to; j++) {
      const i = states[j];
      if (dot[i] === 0) touched[touchedCount++] = i;
      dot[i] += queryWeight * weights[j];
    }
  }
  return { touchedCount, norm };
}

function scratchOf(index: CandidateIndex): NonNullable<CandidateIndex['scratch']> {
  if (index.scratch) return index.scratch;
  const size = index.steps.length;
  const episodes = index.episodes.reduce((most, e) => Math.max(most, e + 1), 0);
  return (index.scratch = {
    dot: new Float64Array(size),
    touched: new Int32Array(size),
    perEpisode: new Int32Array(episodes),
  });
}

/** Zeroes the dot products of the touched states for the next search. */
function clearTouched(index: CandidateIndex, touchedCount: number): void {
  const { dot, touched } = index.scratch!;
  for (let t = 0; t < touchedCount; t++) dot[touched[t]] = 0;
}

/**
 * The best `limit` touched states outside episode `exclude` (-1: none left out), best first. Kept by
 * insertion, with no sort of every touched state: an import of 20,000 episodes asks 550,000 times.
 */
function best(index: CandidateIndex, touchedCount: number, norm: number, limit: number, exclude: number): Ranked[] {
  const { dot, touched } = index.scratch!;
  const kept: Ranked[] = [];
  for (let t = 0; t < touchedCount; t++) {
    const i = touched[t];
    if (index.episodes[i] === exclude) continue;
    const score = dot[i] / (norm * index.norms[i]);
    if (kept.length === limit && score < kept[limit - 1].score) continue; // the common case, cheaply
    const step = index.steps[i];
    if (kept.length === limit && !better(score, step, kept[limit - 1])) continue;
    let at = kept.length === limit ? limit - 1 : kept.length;
    while (at > 0 && better(score, step, kept[at - 1])) {
      kept[at] = kept[at - 1];
      at--;
    }
    kept[at] = { i, step, score };
  }
  return kept;
}

/**
 * How many of the touched states lie in each search's own episode. A search's `NEIGHBOURS` best,
 * its own episode left out, are among the `NEIGHBOURS` + that many best of all touched states.
 */
function ownTouched(index: CandidateIndex, touchedCount: number, group: readonly Search[]): number[] {
  const { touched, perEpisode } = index.scratch!;
  for (let t = 0; t < touchedCount; t++) perEpisode[index.episodes[touched[t]]]++;
  const own = group.map((s) => (s.excludeEpisode >= 0 ? perEpisode[s.excludeEpisode] : 0));
  for (let t = 0; t < touchedCount; t++) perEpisode[index.episodes[touched[t]]] = 0;
  return own;
}

/**
 * The candidate lists of searches of the same words (one state in many episodes: many users doing
 * the same task). They score every state alike, so one pass over the postings serves them all.
 */
function searchGroup(index: CandidateIndex, group: readonly Search[]): string[][] {
  const { query, place, excludeEpisode, taken } = group[0];
  const { touchedCount, norm } = accumulate(index, query, place);
  const lists =
    group.length === 1
      ? [candidatesFrom(index, best(index, touchedCount, norm, NEIGHBOURS, excludeEpisode), taken)]
      : sharedRanking(index, group, touchedCount, norm);
  clearTouched(index, touchedCount);
  return lists;
}

/**
 * The lists of a group of searches from one ranking of the touched states: each cuts its
 * `NEIGHBOURS` from it, leaving out its own episode's states. A search whose episode holds many of
 * the touched states ranks on its own (so the shared ranking stays short).
 */
function sharedRanking(
  index: CandidateIndex,
  group: readonly Search[],
  touchedCount: number,
  norm: number,
): string[][] {
  const own = ownTouched(index, touchedCount, group);
  const sharedOwn = own.reduce((most, n) => (n <= NEIGHBOURS ? Math.max(most, n) : most), -1);
  const shared = sharedOwn >= 0 ? best(index, touchedCount, norm, NEIGHBOURS + sharedOwn, -1) : [];
  const sharedTop = shared.slice(0, NEIGHBOURS);
  let sharedVotes: string[] | undefined; // of the searches whose episode has no state among the shared best
  return group.map(({ taken, excludeEpisode }, member) => {
    if (own[member] > NEIGHBOURS) {
      return candidatesFrom(index, best(index, touchedCount, norm, NEIGHBOURS, excludeEpisode), taken);
    }
    if (sharedTop.some(({ i }) => index.episodes[i] === excludeEpisode)) {
      const ranked = shared.filter(({ i }) => index.episodes[i] !== excludeEpisode).slice(0, NEIGHBOURS);
      return candidatesFrom(index, ranked, taken);
    }
    sharedVotes ??= actionsByVotes(index, sharedTop, undefined);
    return listOf(index, sharedVotes, taken);
  });
}

/**
 * The candidate lists of `searches`, in their order. Searches of the same words in the same order
 * (a word's weight follows from its kind, so the ids say it all) are made once (searchGroup).
 */
function searchAll(index: CandidateIndex, searches: readonly Search[]): string[][] {
  const groups = new Map<string, number[]>();
  searches.forEach(({ query: { table, row } }, k) => {
    let key = '';
    for (let w = table.offsets[row]; w < table.offsets[row + 1]; w++) key += `${table.ids[w]},`;
    const group = groups.get(key);
    if (group) group.push(k);
    else groups.set(key, [k]);
  });
  const lists: string[][] = new Array(searches.length);
  for (const members of groups.values()) {
    const found = searchGroup(
      index,
      members.map((k) => searches[k]),
    );
    members.forEach((k, j) => (lists[k] = found[j]));
  }
  return lists;
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
  const row = index.stateRows.row(state.instruction, state.observation, state.previousAction);
  const query = { table: wordTable([row], index.stateRows, index.vocabularyIds), row: 0 };
  return searchGroup(index, [{ query, place: -1, excludeEpisode, taken }])[0];
}

/**
 * Candidates of any state of the domain, as a deployed agent and a dream get them: no demonstrated
 * action, no episode left out. The index is built at the first call.
 */
export function candidateInference(
  train: readonly Trajectory[],
): (state: { instruction: string; observation: string; previousAction?: string }) => string[] {
  let index: CandidateIndex | undefined;
  return (state) => inferCandidates((index ??= candidateIndex(train)), state, undefined);
}

/**
 * The actions of ranked neighbours by the votes of their scores, most first (then by name), `skip`
 * left out. Votes sum in rank order, in small arrays, not maps: this runs for most steps.
 */
function actionsByVotes(index: CandidateIndex, ranked: readonly Ranked[], skip: string | undefined): string[] {
  const actions: string[] = [];
  const votes: number[] = [];
  for (const { i, score } of ranked) {
    const action = index.actions[i];
    if (action === skip) continue;
    const k = actions.indexOf(action);
    if (k < 0) {
      actions.push(action);
      votes.push(score);
    } else votes[k] += score;
  }
  const order = actions.map((_, k) => k).sort((a, b) => votes[b] - votes[a] || compare(actions[a], actions[b]));
  return order.map((k) => actions[k]);
}

/**
 * A state's list: `taken`, then the actions its neighbours vote for most (`taken` left out: an
 * action's votes never depend on another's), topped up with the most frequent; alphabetical.
 */
function listOf(index: CandidateIndex, byVotes: readonly string[], taken: string | undefined): string[] {
  const chosen = taken !== undefined ? [taken] : [];
  for (const action of byVotes) {
    if (chosen.length >= INFERRED_CANDIDATES) break;
    if (action !== taken) chosen.push(action);
  }
  for (const action of index.frequent) {
    if (chosen.length >= MIN_CANDIDATES) break;
    if (!chosen.includes(action)) chosen.push(action);
  }
  return chosen.sort(); // by UTF-16 code units: the order of `compare`, natively
}

function candidatesFrom(index: CandidateIndex, ranked: readonly Ranked[], taken: string | undefined): string[] {
  return listOf(index, actionsByVotes(index, ranked, taken), taken);
}

/** The searches of the steps that list no candidates: training ones (indexed: their words are not made again). */
function trainingSearches(index: CandidateIndex, train: readonly Trajectory[]): Search[] {
  const searches: Search[] = [];
  let firstStep = 0;
  train.forEach((t, episode) => {
    t.steps.forEach((s, i) => {
      if (s.admissible.length > 0) return;
      const place = index.places[firstStep + i];
      searches.push({ query: { table: index.words, row: place }, place, excludeEpisode: episode, taken: s.action });
    });
    firstStep += t.steps.length;
  });
  return searches;
}

/** The searches of the held-out steps that list no candidates (their words in one table). */
function heldOutSearches(index: CandidateIndex, heldOut: readonly Trajectory[]): Search[] {
  const rows: number[][] = [];
  const taken: string[] = [];
  for (const t of heldOut) {
    t.steps.forEach((s, i) => {
      if (s.admissible.length > 0) return;
      rows.push(index.stateRows.row(t.task.instruction, s.observation, t.steps[i - 1]?.action));
      taken.push(s.action);
    });
  }
  const table = wordTable(rows, index.stateRows, index.vocabularyIds);
  return taken.map((action, row) => ({ query: { table, row }, place: -1, excludeEpisode: -1, taken: action }));
}

/** The episodes with `lists` (from `from` on, in step order) given to the steps that list none. */
function filledWith(episodes: readonly Trajectory[], lists: readonly string[][], from: number): Trajectory[] {
  let next = from;
  return episodes.map((t) => {
    if (t.steps.every((s) => s.admissible.length > 0)) return t;
    const steps: Step[] = t.steps.map((s) => (s.admissible.length > 0 ? s : { ...s, admissible: lists[next++] }));
    return { ...t, steps };
  });
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
  const trainSearches = trainingSearches(index, train);
  const searches = trainSearches.concat(heldOutSearches(index, heldOut));
  const lists = searchAll(index, searches);
  return {
    train: filledWith(train, lists, 0),
    heldOut: filledWith(heldOut, lists, trainSearches.length),
    inferredSteps: searches.length,
    postingsRead: index.postingsRead,
  };
}
