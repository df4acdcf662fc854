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
 */
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

interface IndexedState {
  episode: number;
  action: string;
  /** Word → weight before IDF (1 for observation and previous-action words, 0.5 for instruction ones). */
  words: Map<string, number>;
  norm: number;
}

/** The training episodes' states, searchable by words. */
export interface CandidateIndex {
  states: IndexedState[];
  postings: Map<string, number[]>;
  idf: Map<string, number>;
  /** Actions by how often they were taken (most first, then alphabetical). */
  frequent: string[];
  /** Dot products of one search (all zero between searches). */
  scratch?: Float64Array;
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

function normOf(stateWords: Map<string, number>, idf: Map<string, number>): number {
  let sum = 0;
  for (const [w, weight] of stateWords) {
    const x = weight * (idf.get(w) ?? 0);
    sum += x * x;
  }
  return Math.sqrt(sum);
}

/** An index over every step of `train` (the states the candidates are drawn from). */
export function candidateIndex(train: readonly Trajectory[]): CandidateIndex {
  const states: IndexedState[] = [];
  const counts = new Map<string, number>();
  train.forEach((t, episode) =>
    t.steps.forEach((s, i) => {
      const stateWordsOf = stateWords(t.task.instruction, s.observation, t.steps[i - 1]?.action);
      states.push({ episode, action: s.action, words: stateWordsOf, norm: 0 });
      counts.set(s.action, (counts.get(s.action) ?? 0) + 1);
    }),
  );
  const df = new Map<string, number>();
  for (const s of states) for (const w of s.words.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const idf = new Map<string, number>();
  const postings = new Map<string, number[]>();
  for (const [w, n] of df) {
    if (states.length >= COMMON_WORDS_FROM && n > MAX_WORD_SHARE * states.length) continue;
    idf.set(w, Math.log(1 + states.length / n));
    postings.set(w, []);
  }
  states.forEach((s, i) => {
    s.norm = normOf(s.words, idf);
    for (const w of s.words.keys()) postings.get(w)?.push(i);
  });
  const frequent = [...counts.entries()].sort((a, b) => b[1] - a[1] || compare(a[0], b[0])).map(([a]) => a);
  return { states, postings, idf, frequent };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The most similar indexed states (cosine of IDF-weighted words), the excluded episode left out.
 * Dot products accumulate in one array over the query words' postings; the best `NEIGHBOURS` are
 * kept by insertion (no sort of every touched state: an import of 1,000 episodes asks 13,000 times).
 */
function neighbours(
  index: CandidateIndex,
  query: Map<string, number>,
  excludeEpisode: number,
): { state: IndexedState; score: number }[] {
  const norm = normOf(query, index.idf);
  if (norm === 0) return [];
  const dot = (index.scratch ??= new Float64Array(index.states.length));
  const touched: number[] = [];
  for (const [w, weight] of query) {
    const list = index.postings.get(w);
    if (!list) continue;
    const idf = index.idf.get(w)!;
    for (const i of list) {
      const s = index.states[i];
      if (s.episode === excludeEpisode) continue;
      if (dot[i] === 0) touched.push(i);
      dot[i] += weight * idf * (s.words.get(w)! * idf);
    }
  }
  const best: { i: number; score: number }[] = [];
  for (const i of touched) {
    const score = dot[i] / (norm * index.states[i].norm);
    dot[i] = 0;
    if (best.length === NEIGHBOURS && !better(score, i, best[best.length - 1])) continue;
    let at = best.length === NEIGHBOURS ? best.length - 1 : best.length;
    while (at > 0 && better(score, i, best[at - 1])) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = { i, score };
  }
  return best.map(({ i, score }) => ({ state: index.states[i], score }));
}

/** Higher score first; the earlier state on a tie (deterministic). */
function better(score: number, i: number, than: { i: number; score: number }): boolean {
  return score > than.score || (score === than.score && i < than.i);
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
  const votes = new Map<string, number>();
  const query = stateWords(state.instruction, state.observation, state.previousAction);
  for (const { state: s, score } of neighbours(index, query, excludeEpisode)) {
    if (s.action !== taken) votes.set(s.action, (votes.get(s.action) ?? 0) + score);
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
  return [...chosen].sort(compare);
}

function fillEpisode(index: CandidateIndex, t: Trajectory, excludeEpisode: number): { t: Trajectory; filled: number } {
  let filled = 0;
  const steps: Step[] = t.steps.map((s, i) => {
    if (s.admissible.length > 0) return s;
    filled++;
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
 * The episodes with an inferred list on every step that lists none (see the file comment), and
 * how many steps got one. Lists recorded in the data are kept as they are.
 */
export function withInferredCandidates(
  train: readonly Trajectory[],
  heldOut: readonly Trajectory[],
): { train: Trajectory[]; heldOut: Trajectory[]; inferredSteps: number } {
  const missing = [...train, ...heldOut].some((t) => t.steps.some((s) => s.admissible.length === 0));
  if (!missing) return { train: train.slice(), heldOut: heldOut.slice(), inferredSteps: 0 };
  const index = candidateIndex(train);
  let inferredSteps = 0;
  const fill = (t: Trajectory, episode: number) => {
    const out = fillEpisode(index, t, episode);
    inferredSteps += out.filled;
    return out.t;
  };
  return {
    train: train.map((t, i) => fill(t, i)),
    heldOut: heldOut.map((t) => fill(t, -1)),
    inferredSteps,
  };
}
