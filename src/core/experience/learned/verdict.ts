/**
 * The verdict head: the learned model's reward at an episode's end, judged from a few comparison
 * features of the context instead of written by the generator.
 *
 * Why: the generator's reward token is one of ≈ 100 answer tokens, learned from the ≈ 200
 * terminal steps of a 240-episode set. It copies what the retrieved examples earned, so a
 * dream-trained policy finds states where that copy is wrong (a shop: buying an item without
 * choosing its options) and the dream calls them successes. A logistic regression over three
 * features has too few parameters to memorise examples; it can only learn how the comparison
 * between instruction and state bears on the outcome, and that holds on states no example shows.
 *
 * The features see only what an experience model may see (instruction, the shown history, the
 * state, the action) and know no env rules:
 * - pending: instruction words naming one of the state's own choices (admissible actions less
 *   the card's globals and page buttons) not taken in the shown history — an option never chosen;
 * - unmatched: the share of the instruction's words found neither in the state nor in the
 *   actions taken;
 * - and those the env's definition adds (EnvDefinition.verdictFeatures, read by name, written in
 *   the env's own folder). An imported domain has the two alone.
 *
 * Fitted by full-batch gradient descent on the real terminal steps (classes weighted equally,
 * a little L2), so it is deterministic.
 *
 * That is an 'outcome' head: it grades endings, in a domain where a failure ends an episode too
 * (a shop: a wrong buy). Where only the goal ends an episode (a room: a wrong placement just goes
 * on, with reward 0), there is no failed ending to grade; the question is whether a step ends the
 * episode at all. A 'goal' head answers it, for every step, before the generator writes anything:
 * its verdict is the answer's terminated token, and the generator writes the rest. For each verb
 * that ever ended an episode (placing, switching on, ...) it fits a regression over that verb's real steps,
 * ended or not, weighted as they occur; a verb that never ended one never ends one. The three
 * features are generic, over the words the domain's actions name (its vocabulary: the data's
 * action arguments, less verbs and numbers):
 * - missing: the instruction's vocabulary words that the action leaves out;
 * - extra: the words the action names (no verb, no numbers) that the instruction does not hold —
 *   a wrong object or place;
 * - untouched: the instruction's vocabulary words that no shown action named — the object never
 *   fetched.
 * Rules stand beside the regressions, because a dream offers steps the data never shows and so
 * cannot teach. None of these ends an episode (ruledOut; none vetoes a real goal of the data,
 * goal-head.test.ts):
 * - an action of a shape the data never shows (`lift crate 1 off rack crate 1`, a dream's garble),
 *   or with a kind the data knows in a slot it never fills (`lift crate 2 off crate 1`); nor does
 *   such a garble count as a move below;
 * - an action naming a word the data knows but its verb never names (`switch crate 1`, where
 *   only lamps are switched);
 * Two rules that restated one domain's physics (an undone move, a move of a thing never moved)
 * are gone: what a dream gets wrong beyond the data's own checks is the halt's to catch
 * (novelty.ts), and a success pays only where the ensemble agrees (below).
 * The outcome head suits a domain whose data holds failed endings; the goal head one whose data
 * holds none (fitHeadFor).
 *
 * Pessimism (Coste et al.'s worst case over reward models): a head is an ensemble of K members,
 * each the same regression fitted on a bootstrap resample of the episodes (its own seed). A step's
 * p(success) is the members' minimum, so a success pays only where every member grants it; the
 * spread (max − min) is the disagreement the dream reports. The minimum needs no λ to tune, and
 * with K ≈ 5 it is about as cautious as mean − 1.2·std; `mean − λ·std` stays an option.
 */
import { singular } from '../../text';
import { listEnvDefinitions } from '../../envs/registry';
import type { OutcomeFeature } from '../../envs/env';
import { abstractObservation, type DomainCard } from '../domain-card';
import { outcomeOf } from '../types';
import { Rng } from '../../rng';
import { openChoiceWords, shownSteps } from './format';
import type { RecordedEpisode } from './sft-data';

/** The generic features of an outcome head (it grades endings); an env may add its own (outcomeFeatureNames). */
export const GENERIC_OUTCOME_FEATURES = ['pending', 'unmatched'] as const;
/** The features of a goal head (it decides which steps end an episode). */
export const GOAL_FEATURES = ['missing', 'extra', 'untouched'] as const;

export type VerdictKind = 'outcome' | 'goal';

/** A fitted head, as stored in model.json. */
export interface VerdictHead {
  features: readonly string[];
  weights: number[];
  bias: number;
  /**
   * A goal head's regression for each verb that ended an episode in the data (its own weights and
   * bias over GOAL_FEATURES; the head's `weights` are empty): a verb not listed never ends one.
   */
  byVerb?: Record<string, VerbRegression>;
  /** A goal head's words that name things: those of the data's actions, less verbs and numbers. */
  vocabulary?: string[];
  /**
   * A goal head's action shapes in the data (`lift # off #`), with the kinds that fill each slot
   * (merged with alike slots, as verbs' words are): a move of another shape, or with a kind the
   * data knows in a slot it never fills (`lift crate 2 off crate 1`), moves nothing.
   */
  slots?: Record<string, string[][]>;
  /** The steps it was fitted on, and its accuracy there (balanced: the mean of both classes'). */
  fittedOn: { successes: number; failures: number; balancedAccuracy: number };
  /**
   * The ensemble: the same regressions fitted on bootstrap resamples of the episodes (the head's
   * own weights are those of all the data, reported in summaries). A step's p is the members'
   * minimum (or mean − λ·std, `judgeStep`).
   */
  members: VerdictMember[];
}

/** One member of a head's ensemble: an outcome regression, or a goal head's per-verb regressions. */
export interface VerdictMember {
  weights: number[];
  bias: number;
  byVerb?: Record<string, Pick<VerdictHead, 'weights' | 'bias'>>;
}

/** Members fitted into a head's ensemble (bootstrap resamples of the episodes); a run uses the first N. */
export const DEFAULT_ENSEMBLE_SIZE = 8;

/** One ending verb's regression in a goal head, and the words the data's actions of that verb name. */
export interface VerbRegression extends Pick<VerdictHead, 'weights' | 'bias' | 'fittedOn'> {
  words: string[];
}

export interface VerdictInput {
  instruction: string;
  /** The actions taken before this one, as shown to the model (its last H valid steps). */
  history: readonly string[];
  /** The page each of those actions was taken on (same order), where known. */
  historyPages?: readonly string[];
  /** Every valid action of the episode before this one (the cache keys on it too), where known. */
  episode?: readonly string[];
  state: { text: string; admissible: readonly string[] };
  action: string;
}

export interface VerdictExample {
  input: VerdictInput;
  success: boolean;
}

/** Fewest terminal steps of each outcome to fit a head from. */
export const MIN_VERDICT_EXAMPLES = 5;

const WORD = /[a-z0-9]+(?:\.[0-9]+)?/g;

function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

function argumentOf(action: string): string {
  return /^\w+\[(.*)\]$/.exec(action)?.[1] ?? action;
}

/** The features an env adds to its outcome heads (none for an env the registry does not know). */
function envFeatures(env: string): readonly OutcomeFeature[] {
  return listEnvDefinitions().find((d) => d.id === env)?.verdictFeatures ?? [];
}

/** The names of an outcome head's features for a domain: the generic ones, then its env's. */
export function outcomeFeatureNames(env: string): string[] {
  return [...GENERIC_OUTCOME_FEATURES, ...envFeatures(env).map((f) => f.name)];
}

/** The features of one terminal step (see the file comment): the generic two, then the env's. */
export function verdictFeatures(card: DomainCard, input: VerdictInput): number[] {
  const taken = new Set([...input.history, input.action]);
  const open = openChoiceWords(card, input.state.admissible, taken, (a) => words(argumentOf(a)));
  const asked = new Set(words(input.instruction));
  const pending = [...asked].filter((w) => open.has(w)).length;
  const state = abstractObservation(card, input.state.text);
  const seen = new Set([...words(state), ...[...taken].flatMap((a) => words(argumentOf(a)))]);
  const unmatched = asked.size ? [...asked].filter((w) => !seen.has(w)).length / asked.size : 0;
  const view = {
    instruction: input.instruction,
    history: input.history,
    historyPages: (input.historyPages ?? []).map((page) => abstractObservation(card, page)),
    state,
    action: input.action,
  };
  return [Math.min(pending, 3), unmatched, ...envFeatures(card.env).map((f) => f.compute(view))];
}

function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

/** p(success) of a step from its features (an outcome head, or one verb's regression of a goal head). */
export function verdictProbability(head: Pick<VerdictHead, 'weights' | 'bias'>, features: readonly number[]): number {
  return sigmoid(head.bias + head.weights.reduce((sum, w, i) => sum + w * features[i], 0));
}

/** Fits an outcome head to real terminal steps, or null when either outcome has too few of them. */
export function fitVerdictHead(
  card: DomainCard,
  examples: readonly VerdictExample[],
  options: FitOptions = {},
): VerdictHead | null {
  const successes = examples.filter((e) => e.success).length;
  const failures = examples.length - successes;
  if (successes < MIN_VERDICT_EXAMPLES || failures < MIN_VERDICT_EXAMPLES) return null;
  const rows = examples.map((e) => ({
    x: verdictFeatures(card, e.input),
    y: e.success ? 1 : 0,
    w: 0.5 / (e.success ? successes : failures),
  }));
  return fitLogistic(rows, outcomeFeatureNames(card.env), options);
}

interface FitOptions {
  iterations?: number;
  l2?: number;
  learningRate?: number;
}

interface Row {
  x: number[];
  y: number;
  /** Its weight in the loss (each class sums to 0.5). */
  w: number;
}

/** A logistic regression by full-batch gradient descent (deterministic), with its balanced accuracy. */
function fitLogistic(rows: readonly Row[], names: readonly string[], options: FitOptions): VerdictHead {
  const { iterations = 3000, l2 = 1e-3, learningRate = 1 } = options;
  const weights = names.map(() => 0);
  let bias = 0;
  for (let it = 0; it < iterations; it++) {
    const grad = weights.map((w) => l2 * w);
    let gradBias = 0;
    for (const r of rows) {
      const error = (sigmoid(bias + weights.reduce((s, w, i) => s + w * r.x[i], 0)) - r.y) * r.w;
      r.x.forEach((x, i) => {
        grad[i] += error * x;
      });
      gradBias += error;
    }
    weights.forEach((_, i) => {
      weights[i] -= learningRate * grad[i];
    });
    bias -= learningRate * gradBias;
  }
  const successes = rows.filter((r) => r.y === 1).length;
  const failures = rows.length - successes;
  const head: VerdictHead = {
    features: [...names],
    weights,
    bias,
    fittedOn: { successes, failures, balancedAccuracy: 0 },
    members: [{ weights: weights.slice(), bias }],
  };
  const right = (want: boolean) =>
    rows.filter((r) => (r.y === 1) === want && verdictProbability(head, r.x) >= 0.5 === want).length;
  const shares = [successes && right(true) / successes, failures && right(false) / failures];
  head.fittedOn.balancedAccuracy = successes && failures ? (shares[0] + shares[1]) / 2 : shares[0] || shares[1];
  return head;
}

/** The real terminal steps of recorded episodes, with what the model's context showed before each. */
export function verdictExamples(episodes: readonly RecordedEpisode[], historyLength: number): VerdictExample[] {
  return stepExamples(episodes, historyLength, (t) => t.terminated);
}

/** The valid steps of recorded episodes that `keep` selects, with what the model's context showed before each. */
function stepExamples(
  episodes: readonly RecordedEpisode[],
  historyLength: number,
  keep: (step: RecordedEpisode['steps'][number]) => boolean,
): VerdictExample[] {
  const out: VerdictExample[] = [];
  for (const e of episodes) {
    e.steps.forEach((t, i) => {
      if (!t.valid || !keep(t)) return;
      const shown = shownSteps(e.steps.slice(0, i), historyLength);
      out.push({
        input: {
          instruction: e.instruction,
          history: shown.map((s) => s.action),
          historyPages: shown.map((s) => s.observation),
          episode: e.steps.slice(0, i).flatMap((s) => (s.valid ? [s.action] : [])),
          state: { text: t.observation, admissible: t.admissible },
          action: t.action,
        },
        success: t.terminated && outcomeOf(t.reward) === 1,
      });
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Goal heads
// ---------------------------------------------------------------------------------------------

// The numbered things a text names (`stack crate 1 on rack 6` → crate 1, rack 6): how a goal head reads
// the shapes and slots of the data's actions.

const NUMBERED = /\b([a-z]+) (\d+)\b/g;

/** The numbered things a text names, in order (`crate 1`, `rack 6`). */
export function numberedThings(text: string): string[] {
  return [...text.toLowerCase().matchAll(NUMBERED)].map((m) => `${m[1]} ${m[2]}`);
}

/** The kinds of the numbered things a text names (crate, rack): all that an instruction's words can ask for. */
export function kindsOf(text: string): string[] {
  return numberedThings(text).map((thing) => thing.split(' ')[0]);
}

/** An action's shape: each numbered thing a `#` (`lift crate 1 off rack 6` → `lift # off #`). */
export function shapeOf(action: string): string {
  return action.toLowerCase().trim().replace(NUMBERED, '#');
}

/** An action's verb: its first word (`stack crate 1 on rack 2` → stack, `pick[red]` → pick). */
export function verbOf(action: string): string {
  return /^[A-Za-z_-]+/.exec(action.trim())?.[0].toLowerCase() ?? '';
}

/** Words, with a plural's s dropped (apples → apple), so an instruction and an action name things alike. */
function stems(text: string): string[] {
  return words(text).map(singular);
}

/** The words of what an action names: all but its verb. */
function argumentStems(action: string): string[] {
  return stems(action.trim().slice(verbOf(action).length));
}

/** The three features of a goal head's step (see the file comment). */
export function goalFeatures(vocabulary: ReadonlySet<string>, input: VerdictInput): number[] {
  const asked = new Set(stems(input.instruction).filter((w) => vocabulary.has(w)));
  const acted = new Set(argumentStems(input.action));
  const touched = new Set([...input.history, input.action].flatMap(argumentStems));
  const missing = [...asked].filter((w) => !acted.has(w)).length;
  const extra = [...acted].filter((w) => !/\d/.test(w) && !asked.has(w)).length;
  const untouched = [...asked].filter((w) => !touched.has(w)).length;
  return [Math.min(missing, 4), Math.min(extra, 4), Math.min(untouched, 4)];
}

const vocabularies = new WeakMap<VerdictHead, ReadonlySet<string>>();

/** A goal head's vocabulary as a set, made once per head (every dreamed step reads it). */
function vocabularyOf(head: VerdictHead): ReadonlySet<string> {
  let set = vocabularies.get(head);
  if (!set) vocabularies.set(head, (set = new Set(head.vocabulary)));
  return set;
}

/** Whether an action has a shape of the data, each slot filled by a kind the data puts there or does not know. */
export function fitsItsSlots(head: VerdictHead, action: string): boolean {
  const slots = head.slots?.[shapeOf(action)];
  if (!slots) return false;
  const vocabulary = vocabularyOf(head);
  return kindsOf(action).every((kind, i) => !vocabulary.has(kind) || slots[i]?.includes(kind));
}

/** Which of the goal head's rules says a step cannot reach the goal, or null (its verb's regression decides). */
export function ruledOut(head: VerdictHead, input: VerdictInput): string | null {
  const verdict = head.byVerb?.[verbOf(input.action)];
  if (!verdict) return 'a verb that never ended an episode';
  if (!fitsItsSlots(head, input.action)) return 'a shape or slot the data never shows';
  if (namesMisusedWord(head, verdict, input.action)) return 'a word its verb never names';
  return null;
}

const verbWordSets = new WeakMap<VerbRegression, ReadonlySet<string>>();

/**
 * Whether an action names a word that the data knows but its verb (or a verb naming mostly the
 * same words) never names (`switch crate 1`, where only lamps are ever switched): not an action of
 * the real domain, whatever a dream offers. A word the data never shows says nothing either way.
 */
function namesMisusedWord(head: VerdictHead, verdict: VerbRegression, action: string): boolean {
  let known = verbWordSets.get(verdict);
  if (!known) verbWordSets.set(verdict, (known = new Set(verdict.words)));
  const vocabulary = vocabularyOf(head);
  return argumentStems(action).some((w) => vocabulary.has(w) && !known.has(w));
}

/**
 * A goal head's p(this step reaches the goal) for each member: 0 where a rule rules it out or the
 * member never saw its verb end an episode, else that member's regression of the verb.
 */
function goalMemberProbabilities(head: VerdictHead, input: VerdictInput, features: readonly number[]): number[] {
  if (ruledOut(head, input) !== null) return head.members.map(() => 0);
  const verb = verbOf(input.action);
  return head.members.map((m) => (m.byVerb?.[verb] ? verdictProbability(m.byVerb[verb], features) : 0));
}

/** A goal head's pessimistic p(this step reaches the goal): the minimum over its members. */
export function goalProbability(head: VerdictHead, input: VerdictInput): number {
  return pessimistic(goalMemberProbabilities(head, input, goalFeatures(vocabularyOf(head), input)));
}

/** The words, other than verbs and numbers, that the recorded actions and admissible lists name. */
function argumentVocabulary(episodes: readonly RecordedEpisode[]): string[] {
  return [...new Set(Object.values(wordsByVerb(episodes)).flat())].sort();
}

/** Each verb's words (no numbers) in the recorded actions and admissible lists. */
function wordsByVerb(episodes: readonly RecordedEpisode[]): Record<string, string[]> {
  const named = new Map<string, Set<string>>();
  for (const t of episodes.flatMap((e) => e.steps))
    for (const action of [t.action, ...t.admissible]) {
      const verb = verbOf(action);
      if (!named.has(verb)) named.set(verb, new Set());
      for (const w of argumentStems(action)) if (!/\d/.test(w)) named.get(verb)!.add(w);
    }
  return Object.fromEntries([...named].map(([verb, words]) => [verb, [...words].sort()]));
}

/**
 * The words a verb may name: its own, and those of every verb naming mostly the same words
 * (Jaccard ≥ ½: lifting and stacking name the same objects and places, so an object the data only
 * ever lifted may still be stacked; a verb naming two lamps is nothing like one naming everything).
 */
function verbWords(byVerb: Record<string, string[]>, verb: string): string[] {
  const own = new Set(byVerb[verb] ?? []);
  const alike = Object.values(byVerb).filter((other) => jaccard(own, other) >= 0.5);
  return [...new Set([...own, ...alike.flat()])].sort();
}

/** Each action shape's slots, with the kinds the data puts in each, widened by alike slots (Jaccard ≥ ½). */
function slotKinds(episodes: readonly RecordedEpisode[]): Record<string, string[][]> {
  const seen = new Map<string, Set<string>[]>();
  for (const t of episodes.flatMap((e) => e.steps))
    for (const action of [t.action, ...t.admissible]) {
      const kinds = kindsOf(action);
      const slots = seen.get(shapeOf(action)) ?? kinds.map(() => new Set<string>());
      kinds.forEach((kind, i) => slots[i].add(kind));
      seen.set(shapeOf(action), slots);
    }
  const all = [...seen.values()].flat().map((set) => [...set]);
  const widened = ([shape, slots]: [string, Set<string>[]]) => [
    shape,
    slots.map((set) => {
      const alike = all.filter((other) => jaccard(set, other) >= 0.5);
      return [...new Set([...set, ...alike.flat()])].sort();
    }),
  ];
  return Object.fromEntries([...seen].sort(([a], [b]) => (a < b ? -1 : 1)).map(widened));
}

function jaccard(own: ReadonlySet<string>, other: readonly string[]): number {
  const shared = other.filter((w) => own.has(w)).length;
  return shared / (own.size + other.length - shared || 1);
}

/**
 * A goal head from recorded episodes: for each verb that ever ended one with success, a
 * regression over its steps (ended or not), weighted as they occur, so its p is the chance that
 * such a step ends the episode (a move almost never, a placing when it names what was asked). Null
 * when the data holds too few goal endings or too few goal-like steps that did not end.
 */
export function fitGoalHead(
  episodes: readonly RecordedEpisode[],
  historyLength: number,
  options: FitOptions = {},
): VerdictHead | null {
  const vocabulary = argumentVocabulary(episodes);
  const verbs = wordsByVerb(episodes);
  const words = new Set(vocabulary);
  const examples = stepExamples(episodes, historyLength, () => true);
  const endingVerbs = [...new Set(examples.filter((e) => e.success).map((e) => verbOf(e.input.action)))].sort();
  const goalLike = examples.filter((e) => endingVerbs.includes(verbOf(e.input.action)));
  const successes = goalLike.filter((e) => e.success).length;
  if (successes < MIN_VERDICT_EXAMPLES || goalLike.length - successes < MIN_VERDICT_EXAMPLES) return null;
  const byVerb: Record<string, VerbRegression> = {};
  for (const verb of endingVerbs) {
    const steps = goalLike.filter((e) => verbOf(e.input.action) === verb);
    const rows = steps.map((e) => ({ x: goalFeatures(words, e.input), y: e.success ? 1 : 0, w: 1 / steps.length }));
    const { weights, bias, fittedOn } = fitLogistic(rows, GOAL_FEATURES, options);
    byVerb[verb] = { weights, bias, fittedOn, words: verbWords(verbs, verb) };
  }
  const head: VerdictHead = {
    features: [...GOAL_FEATURES],
    weights: [],
    bias: 0,
    byVerb,
    vocabulary,
    slots: slotKinds(episodes),
    fittedOn: { successes, failures: goalLike.length - successes, balancedAccuracy: 0 },
    members: [],
  };
  head.members = [memberOf(head)];
  const right = (want: boolean) =>
    goalLike.filter((e) => e.success === want && goalProbability(head, e.input) >= 0.5 === want).length;
  head.fittedOn.balancedAccuracy = (right(true) / successes + right(false) / head.fittedOn.failures) / 2;
  return head;
}

/**
 * The head a domain's recorded episodes support: an outcome head where failures end episodes
 * too, a goal head where no recorded episode ended in failure (only the goal ends one); null
 * when the data holds too few examples of either (a few failed endings: too few to grade, yet
 * proof that failures do end episodes there).
 */
export function fitHeadFor(
  card: DomainCard,
  episodes: readonly RecordedEpisode[],
  historyLength: number,
  ensemble: EnsembleOptions = {},
  // A refit keeps its head's kind (a corrected dream's replays may add endings of another kind).
  kind: VerdictKind = verdictExamples(episodes, historyLength).some((e) => !e.success) ? 'outcome' : 'goal',
): VerdictHead | null {
  const head = fitKind(kind, card, episodes, historyLength);
  if (!head) return null;
  head.members = bootstrapMembers(kind, card, episodes, historyLength, ensemble);
  return head;
}

export interface EnsembleOptions {
  /** Members (default DEFAULT_ENSEMBLE_SIZE; 1: the head alone, no resampling). */
  size?: number;
  /** Seed of the resamples. */
  seed?: number;
}

function fitKind(
  kind: VerdictKind,
  card: DomainCard,
  episodes: readonly RecordedEpisode[],
  historyLength: number,
): VerdictHead | null {
  if (kind === 'goal') return fitGoalHead(episodes, historyLength);
  return fitVerdictHead(card, verdictExamples(episodes, historyLength));
}

/** A head's regressions as an ensemble member. */
function memberOf(head: VerdictHead): VerdictMember {
  if (!head.byVerb) return { weights: head.weights.slice(), bias: head.bias };
  const byVerb = Object.entries(head.byVerb).map(([verb, r]) => [verb, { weights: r.weights.slice(), bias: r.bias }]);
  return { weights: [], bias: 0, byVerb: Object.fromEntries(byVerb) };
}

/**
 * K members, each the head of one kind fitted on a bootstrap resample of the episodes (drawn with
 * replacement from its own seeded stream). A resample too thin to fit is drawn again, up to 3K draws.
 */
function bootstrapMembers(
  kind: VerdictKind,
  card: DomainCard,
  episodes: readonly RecordedEpisode[],
  historyLength: number,
  { size = DEFAULT_ENSEMBLE_SIZE, seed = 0 }: EnsembleOptions,
): VerdictMember[] {
  const whole = fitKind(kind, card, episodes, historyLength)!;
  if (size <= 1) return [memberOf(whole)];
  const members: VerdictMember[] = [];
  for (let draw = 0; members.length < size && draw < 3 * size; draw++) {
    const rng = Rng.fromSeed(seed, 'verdict-bootstrap', String(draw));
    const sample = episodes.map(() => episodes[rng.int(0, episodes.length - 1)]);
    const fitted = fitKind(kind, card, sample, historyLength);
    if (fitted) members.push(memberOf(fitted));
  }
  return members.length > 0 ? members : [memberOf(whole)];
}

/** Which question a head answers: how an ending went (outcome), or whether a step ends at all (goal). */
export function verdictKind(head: VerdictHead): VerdictKind {
  return sameNames(head.features, GOAL_FEATURES) ? 'goal' : 'outcome';
}

/** A step's verdict: the pessimistic p(success), the features read, each member's p, and their spread. */
export interface Judgement {
  p: number;
  features: number[];
  members: number[];
  /** max − min of the members' p. */
  disagreement: number;
}

/**
 * A head's p(success) of one step: the members' minimum, or with `lambda` their mean − λ·std
 * (clamped to [0, 1]); with the features it read, each member's p and their disagreement.
 */
export function judgeStep(card: DomainCard, head: VerdictHead, input: VerdictInput, lambda?: number): Judgement {
  const outcome = verdictKind(head) === 'outcome';
  const features = outcome ? verdictFeatures(card, input) : goalFeatures(vocabularyOf(head), input);
  const members = outcome
    ? head.members.map((m) => verdictProbability(m, features))
    : goalMemberProbabilities(head, input, features);
  return { p: pessimistic(members, lambda), features, members, disagreement: spread(members) };
}

/** The members' minimum, or their mean − λ·std (sample std) clamped to [0, 1]. */
export function pessimistic(members: readonly number[], lambda?: number): number {
  if (members.length === 0) return 0;
  if (lambda === undefined) return Math.min(...members);
  const mean = members.reduce((a, b) => a + b, 0) / members.length;
  const variance = members.length > 1 ? members.reduce((a, b) => a + (b - mean) ** 2, 0) / (members.length - 1) : 0;
  return Math.min(1, Math.max(0, mean - lambda * Math.sqrt(variance)));
}

function spread(members: readonly number[]): number {
  return members.length ? Math.max(...members) - Math.min(...members) : 0;
}

function sameNames(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a?.length === b.length && a.every((f, i) => f === b[i]);
}

/** Why a stored head of a model of `env` cannot be used, or null when it can (model-file.ts checks it on load). */
export function verdictHeadProblem(head: VerdictHead, env: string): string | null {
  const goal = sameNames(head.features, GOAL_FEATURES);
  const outcome = outcomeFeatureNames(env);
  if (!goal && !sameNames(head.features, outcome))
    return (
      `its verdict head reads features [${String(head.features)}], and this version computes ` +
      `[${outcome.join(', ')}] or [${GOAL_FEATURES.join(', ')}] for ${env}`
    );
  const regressions = goal ? Object.values(head.byVerb ?? {}) : [head];
  const usable = (r: Pick<VerdictHead, 'weights' | 'bias'>) =>
    r.weights?.length === head.features.length && [...r.weights, r.bias].every(Number.isFinite);
  if (regressions.length === 0 || !regressions.every(usable))
    return "its verdict head's weights are missing or not finite";
  const wordList = (list: unknown) => Array.isArray(list) && list.every((w) => typeof w === 'string');
  const complete = (r: VerbRegression) => wordList(r.words);
  const slotLists = (slots: unknown) =>
    typeof slots === 'object' &&
    slots !== null &&
    Object.values(slots).every((l) => Array.isArray(l) && l.every(wordList));
  if (goal && !(wordList(head.vocabulary) && slotLists(head.slots) && Object.values(head.byVerb!).every(complete)))
    return "its goal head's vocabulary, slots, or a verb's words are missing";
  const memberUsable = (m: VerdictMember) =>
    goal ? Object.values(m.byVerb ?? {}).every(usable) && m.byVerb !== undefined : usable(m);
  if (!Array.isArray(head.members) || head.members.length === 0 || !head.members.every(memberUsable))
    return "its verdict head has no ensemble members, or a member's weights are missing or not finite";
  return null;
}

/** What a head is and was fitted on, in one line. */
export function describeHead(head: VerdictHead): string {
  const { successes, failures, balancedAccuracy } = head.fittedOn;
  const weights = (r: Pick<VerdictHead, 'weights' | 'bias'>) =>
    `${head.features.map((f, i) => `${f} ${r.weights[i].toFixed(2)}`).join(', ')}, bias ${r.bias.toFixed(2)}`;
  if (verdictKind(head) === 'outcome')
    return (
      `an outcome head fitted on ${successes} successful and ${failures} failed endings ` +
      `(balanced accuracy ${balancedAccuracy.toFixed(3)}): ${weights(head)}`
    );
  const verbs = Object.entries(head.byVerb ?? {}).map(([verb, r]) => `${verb}: ${weights(r)}`);
  return (
    `a goal head fitted on ${successes} goal endings and ${failures} goal-like steps that did not end ` +
    `(balanced accuracy ${balancedAccuracy.toFixed(3)}); per verb ${verbs.join('; ')}`
  );
}

/** A head for a JSON summary: its kind, what it was fitted on, and its weights. */
export function headSummary(head: VerdictHead): Record<string, unknown> {
  const round = (x: number) => Math.round(x * 1e4) / 1e4;
  const regression = (r: Pick<VerdictHead, 'weights' | 'bias'>) => ({
    weights: r.weights.map(round),
    bias: round(r.bias),
  });
  const byVerb = Object.entries(head.byVerb ?? {}).map(([verb, r]) => [verb, regression(r)]);
  return {
    kind: verdictKind(head),
    features: head.features,
    ...head.fittedOn,
    ...(verdictKind(head) === 'goal' ? { by_verb: Object.fromEntries(byVerb) } : regression(head)),
  };
}
