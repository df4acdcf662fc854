/**
 * The verdict head: the learned model's reward at an episode's end, judged from a few comparison
 * features of the context instead of written by the generator.
 *
 * Why: the generator's reward token is one of ≈ 100 answer tokens, learned from the ≈ 200
 * terminal steps of a 240-episode set. It copies what the retrieved examples earned, so a
 * dream-trained policy finds states where that copy is wrong (WebShop: buying a product without
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
 * - over: the price of what is bought exceeds the instruction's bound: the smallest decimal of the
 *   listing the item was chosen from (the text after the last clicked name on the page it was
 *   clicked on — what the agent saw when it chose), else of the state, above the instruction's
 *   largest decimal. In real data the two agree; in a dream the listing is what the policy chose
 *   by, so the reward follows the choice rather than whatever price the next page was written with.
 *
 * Fitted by full-batch gradient descent on the real terminal steps (classes weighted equally,
 * a little L2), so it is deterministic. A domain whose episodes only end in one outcome
 * (household: the goal ends it) gets no head, and the generator's reward stands.
 */
import { abstractObservation, type DomainCard } from '../domain-card';
import { outcomeOf } from '../types';
import { openChoiceWords, shownSteps } from './format';
import type { RecordedEpisode } from './sft-data';

export const VERDICT_FEATURES = ['pending', 'unmatched', 'over_chosen'] as const;

/** A fitted head, as stored in model.json. */
export interface VerdictHead {
  features: readonly string[];
  weights: number[];
  bias: number;
  /** The terminal steps it was fitted on, and its accuracy there (balanced: the mean of both classes'). */
  fittedOn: { successes: number; failures: number; balancedAccuracy: number };
}

export interface VerdictInput {
  instruction: string;
  /** The actions taken before this one, as shown to the model (its last H valid steps). */
  history: readonly string[];
  /** The page each of those actions was taken on (same order), where known. */
  historyPages?: readonly string[];
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
const DECIMAL = /\d+\.\d+/g;

function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

function argumentOf(action: string): string {
  return /^\w+\[(.*)\]$/.exec(action)?.[1] ?? action;
}

function decimals(text: string): number[] {
  return (text.match(DECIMAL) ?? []).map(Number);
}

/** The three features of one terminal step (see the file comment). */
export function verdictFeatures(card: DomainCard, input: VerdictInput): number[] {
  const taken = new Set([...input.history, input.action]);
  const open = openChoiceWords(card, input.state.admissible, taken, (a) => words(argumentOf(a)));
  const asked = new Set(words(input.instruction));
  const pending = [...asked].filter((w) => open.has(w)).length;
  const state = abstractObservation(card, input.state.text);
  const seen = new Set([...words(state), ...[...taken].flatMap((a) => words(argumentOf(a)))]);
  const unmatched = asked.size ? [...asked].filter((w) => !seen.has(w)).length / asked.size : 0;
  const bound = Math.max(-Infinity, ...decimals(input.instruction));
  const chosen = chosenListing(card, input);
  const shown = decimals(chosen !== null && decimals(chosen).length > 0 ? chosen : state);
  const over = shown.length > 0 && Number.isFinite(bound) && Math.min(...shown) > bound ? 1 : 0;
  return [Math.min(pending, 3), unmatched, over];
}

/** An id-like word: a letter, then five or more letters or digits, at least one a digit (`b0eub84qr9`). */
const ID_LIKE = /\b(?=[a-z0-9]*\d)[a-z][a-z0-9]{5,}\b/;

/**
 * The listing of the last item clicked by name: on the page the click was taken on, the text
 * after that name up to the next id-like word (the next item), or null when no shown click
 * names something its page lists.
 */
function chosenListing(card: DomainCard, input: VerdictInput): string | null {
  const pages = input.historyPages ?? [];
  for (let i = Math.min(input.history.length, pages.length) - 1; i >= 0; i--) {
    const name = argumentOf(input.history[i]).toLowerCase();
    if (!/\d/.test(name)) continue;
    const page = abstractObservation(card, pages[i]).toLowerCase();
    const at = page.indexOf(name);
    if (at < 0) continue;
    const rest = page.slice(at + name.length);
    const end = rest.search(ID_LIKE);
    return end < 0 ? rest : rest.slice(0, end);
  }
  return null;
}

function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

/** p(success) of a terminal step. */
export function verdictProbability(head: VerdictHead, features: readonly number[]): number {
  return sigmoid(head.bias + head.weights.reduce((sum, w, i) => sum + w * features[i], 0));
}

/** Fits a head to real terminal steps, or null when either outcome has too few of them. */
export function fitVerdictHead(
  card: DomainCard,
  examples: readonly VerdictExample[],
  options: { iterations?: number; l2?: number; learningRate?: number } = {},
): VerdictHead | null {
  const successes = examples.filter((e) => e.success).length;
  const failures = examples.length - successes;
  if (successes < MIN_VERDICT_EXAMPLES || failures < MIN_VERDICT_EXAMPLES) return null;
  const rows = examples.map((e) => ({
    x: verdictFeatures(card, e.input),
    y: e.success ? 1 : 0,
    w: 0.5 / (e.success ? successes : failures),
  }));
  const { iterations = 3000, l2 = 1e-3, learningRate = 1 } = options;
  const weights = VERDICT_FEATURES.map(() => 0);
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
  const head: VerdictHead = {
    features: [...VERDICT_FEATURES],
    weights,
    bias,
    fittedOn: { successes, failures, balancedAccuracy: 0 },
  };
  const right = (want: boolean) =>
    rows.filter((r) => (r.y === 1) === want && verdictProbability(head, r.x) >= 0.5 === want).length;
  head.fittedOn.balancedAccuracy = (right(true) / successes + right(false) / failures) / 2;
  return head;
}

/** The real terminal steps of recorded episodes, with what the model's context showed before each. */
export function verdictExamples(episodes: readonly RecordedEpisode[], historyLength: number): VerdictExample[] {
  const out: VerdictExample[] = [];
  for (const e of episodes) {
    e.steps.forEach((t, i) => {
      if (!t.valid || !t.terminated) return;
      const shown = shownSteps(e.steps.slice(0, i), historyLength);
      out.push({
        input: {
          instruction: e.instruction,
          history: shown.map((s) => s.action),
          historyPages: shown.map((s) => s.observation),
          state: { text: t.observation, admissible: t.admissible },
          action: t.action,
        },
        success: outcomeOf(t.reward) === 1,
      });
    });
  }
  return out;
}

/** Why a stored head cannot be used, or null when it can (model-file.ts checks it on load). */
export function verdictHeadProblem(head: VerdictHead): string | null {
  const same =
    head.features?.length === VERDICT_FEATURES.length && head.features.every((f, i) => f === VERDICT_FEATURES[i]);
  if (!same)
    return `its verdict head reads features [${String(head.features)}], and this version computes [${VERDICT_FEATURES.join(', ')}]`;
  if (head.weights?.length !== VERDICT_FEATURES.length || ![...head.weights, head.bias].every(Number.isFinite))
    return "its verdict head's weights are missing or not finite";
  return null;
}
