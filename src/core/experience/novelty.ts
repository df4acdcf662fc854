/**
 * How far a dreamed step is from every real transition of the replay buffer: the novelty that
 * MOReL's absorbing HALT reads (halting-model.ts). It knows no domain: words are named by the
 * role they play, mined from the step itself, never by what they are.
 *
 * Why roles: in one step's literal words a dream's false success looks as familiar as a real one
 * (the same verbs, objects and places). What is new is how the step relates to the instruction
 * and the episode: a place the instruction asks for that already shows the asked thing on arrival,
 * or a put of what that very place just gave. So each thing of the action and of what the next
 * state reveals (a word, with its number where it has one: `crate 1` is not `crate 2`) is tagged by
 * its roles:
 *   q  the instruction names its kind;
 *   s  the current state shows it (actions only);
 *   a  this action names it (revealed things only);
 *   l  the last action named it;
 *   h  an earlier action named it, or at the finest level [verbs]: which verbs did.
 * A step becomes four nested conjunctions (noveltyFeatures), and its novelty is one minus the
 * largest cosine to a real step's: the share of levels at which the two part, 0 to 1 in quarters.
 * Identical patterns share one entry, so a dream asks about a few hundred patterns, each once.
 *
 * The thresholds are calibrated on held-out real pairs: each real episode's steps are measured
 * with that episode left out of the search, and the threshold of each kind of step (ending in
 * success, in failure, or running) is a high quantile of its distances (0.99; 0.9 for successes),
 * so real-looking play halts at about the quantile's complement per step.
 */
import { singular } from '../text';
import type { Trajectory } from '../types';
import type { RecordedEpisode } from './learned/sft-data';

/** What the novelty of one step reads: what an experience model may see, and what it answered. */
export interface NoveltyStep {
  instruction: string;
  /** The episode's earlier valid actions, oldest first. */
  earlier: readonly string[];
  state: string;
  action: string;
  next: string;
  terminated: boolean;
  success: boolean;
  /** The actions the real state offered (its admissible list), where the data records them. */
  offered?: readonly string[];
}

/** Where actions are offered: the instruction, the episode's valid actions so far, and the state. */
export type OfferContext = Pick<NoveltyStep, 'instruction' | 'earlier' | 'state'>;

export interface NoveltyOptions {
  /** The share of held-out real steps that stay under the threshold (default 0.99). */
  quantile?: number;
  /**
   * The same for steps that end in success (default 0.9). Real successes are few and regular (most
   * at distance 0) and a dream's false ones far (one shipped env: median 0 against 0.85,
   * docs/results/honest-dream.md), so their threshold sits lower: a false success costs more than
   * a real one halted. At 0.9 a success must match a real one at every level where at least a tenth
   * of real successes do (a put of a thing only ever examined differs at the finest level alone).
   */
  successQuantile?: number;
}

export interface NoveltyCalibration {
  /** Real steps measured with their own episode left out. */
  steps: number;
  episodes: number;
  /** Distinct role patterns among them. */
  patterns: number;
  quantile: number;
  successQuantile: number;
  /** The threshold of each kind of step (how it ended: success, failure, or still running). */
  thresholds: Record<StepEnd, number>;
  /** The share of those held-out real steps above their threshold (about 1 − quantile, less with ties). */
  heldOutHaltRate: number;
}

/** How a step ended. Each kind has its own threshold: real endings are far more regular than real wandering. */
export type StepEnd = 'success' | 'failure' | 'running';

/** Fewest held-out real steps of a kind to calibrate its own threshold from (else the threshold of all steps). */
const MIN_CALIBRATION_STEPS = 20;

function endOf(step: Pick<NoveltyStep, 'terminated' | 'success'>): StepEnd {
  return step.terminated ? (step.success ? 'success' : 'failure') : 'running';
}

/** Fewest real episodes a dream can be measured against (each is left out of its own search). */
export const MIN_NOVELTY_EPISODES = 2;

type Features = Map<string, number>;

interface Pattern {
  features: Features;
  end: StepEnd;
  norm: number;
  /** The real episodes (their indices) that show this pattern. */
  episodes: Set<number>;
  steps: number;
}

/** A word, or a word and its number (`crate 1`): a thing of a kind and which one of them. */
const TOKEN = /[a-z]+(?: \d+)?/g;

/** Words, lower-cased, with a plural's s dropped (crates → crate), a word's number kept with it (`crate 1`). */
export function roleWords(text: string): string[] {
  return (text.toLowerCase().match(TOKEN) ?? []).map((t) => {
    const [word, number] = t.split(' ');
    return number === undefined ? singular(word) : `${singular(word)} ${number}`;
  });
}

/** A token's word, without its number (what an instruction can name). */
function kindOf(token: string): string {
  return token.split(' ')[0];
}

/** An action's verb: its first word. */
function verbOf(action: string): string {
  return kindOf(roleWords(action)[0] ?? '');
}

/** The verbs of earlier actions that named each token (the episode's history of a thing). */
function historyOfWords(earlier: readonly string[]): Map<string, Set<string>> {
  const named = new Map<string, Set<string>>();
  for (const action of earlier) {
    const verb = verbOf(action);
    for (const w of roleWords(action).slice(1)) {
      if (!named.has(w)) named.set(w, new Set());
      named.get(w)!.add(verb);
    }
  }
  return named;
}

/** A token's role tags, then, where `fine`, the verbs that named it earlier, else only whether any did (`h`). */
function rolesOf(w: string, tags: Array<[string, boolean]>, history: Map<string, Set<string>>, fine: boolean): string {
  const on = tags.flatMap(([tag, set]) => (set ? [tag] : [])).join('');
  const verbs = history.get(w);
  if (!verbs) return on;
  return fine ? `${on}[${[...verbs].sort().join('+')}]` : `${on}h`;
}

/**
 * The words that appear in at least `share` of the real steps' texts (`on`, `the`, `you`): they
 * play no role, whatever the instruction says, so they are left out of every role. Mined from the
 * data, so each domain gets its own.
 */
export function commonWords(episodes: readonly (readonly NoveltyStep[])[], share = 0.2): Set<string> {
  const counts = new Map<string, number>();
  const actionCounts = new Map<string, number>();
  let texts = 0;
  for (const step of episodes.flat()) {
    texts++;
    for (const w of new Set(roleWords(step.next))) counts.set(w, (counts.get(w) ?? 0) + 1);
    for (const w of new Set(roleWords(step.action).slice(1))) actionCounts.set(w, (actionCounts.get(w) ?? 0) + 1);
  }
  // An action's template words (`to`, `from`) are as common among the actions as `the` is among texts.
  const common = (tally: Map<string, number>) => [...tally].filter(([, n]) => n >= share * texts).map(([w]) => w);
  return new Set([...common(counts), ...common(actionCounts)]);
}

/** What the roles of a step's words are read against: the instruction, the state and the episode so far. */
function roleContext(context: OfferContext, common: ReadonlySet<string>) {
  const asked = new Set(roleWords(context.instruction).filter((w) => !common.has(w)));
  const shown = new Set(roleWords(context.state));
  const last = new Set(roleWords(context.earlier[context.earlier.length - 1] ?? '').slice(1));
  const history = historyOfWords(context.earlier);
  /** A word of an action: asked of its kind, shown by the state, named by the last action. */
  const actionTags = (w: string): Array<[string, boolean]> => [
    ['q', asked.has(kindOf(w))],
    ['s', shown.has(w)],
    ['l', last.has(w)],
  ];
  return { asked, shown, last, history, actionTags };
}

/**
 * The role features of one step (see the file comment), leaving out the domain's common words:
 * four nested conjunctions, each the one before it and more, so the distance to a real step says
 * at which level the two first part (0.25 a level):
 *   1. the verb and how the step ended;
 *   2. and the roles of what the action names (asked, shown, last named, named before at all);
 *   3. and the roles of what the next state reveals (nothing, for an ending: it is never acted on);
 *   4. and which verbs named each thing of the action before.
 */
export function noveltyFeatures(step: NoveltyStep, common: ReadonlySet<string> = new Set()): Features {
  const { asked, shown, last, history, actionTags } = roleContext(step, common);
  const [verbToken = '', ...tokens] = roleWords(step.action);
  const args = tokens.filter((w) => !common.has(w));
  const acted = new Set(args);
  const coarse = args.map((w) => rolesOf(w, actionTags(w), history, false)).join(' ');
  const fine = args.map((w) => rolesOf(w, actionTags(w), history, true)).join(' ');
  const revealedTags = (w: string): Array<[string, boolean]> => [
    ['q', asked.has(kindOf(w))],
    ['a', acted.has(w)],
    ['l', last.has(w)],
  ];
  // An ending's next state is never acted on: what it reveals plays no role (a dream may word it otherwise).
  const revealed = [...new Set(step.terminated ? [] : roleWords(step.next))]
    .filter((w) => !shown.has(w) && !common.has(w))
    .map((w) => rolesOf(w, revealedTags(w), history, false))
    .filter(Boolean);
  const level1 = `${kindOf(verbToken)}|${endOf(step)}`;
  const level2 = `${level1}|${coarse}`;
  const level3 = `${level2}|${[...new Set(revealed)].sort().join(' ')}`;
  const level4 = `${level3}|${fine}`;
  return new Map([level1, level2, level3, level4].map((value, i) => [`${i + 1}:${value}`, 1]));
}

/**
 * The offer patterns of actions in one context: each action's verb and the roles of what it names
 * (level 2 of noveltyFeatures, without the ending, which an offer does not have yet). A real state
 * offers `take` only of what it shows; a dreamed state that offers a take of an unshown thing offers
 * a pattern no real state did (MOReL: keep the agent where the data reaches).
 */
export function offerPatterns(
  context: OfferContext,
  actions: readonly string[],
  common: ReadonlySet<string> = new Set(),
): string[] {
  const { history, actionTags } = roleContext(context, common);
  return actions.map((action) => {
    const [verbToken = '', ...tokens] = roleWords(action);
    const roles = tokens.filter((w) => !common.has(w)).map((w) => rolesOf(w, actionTags(w), history, false));
    return `${kindOf(verbToken)}|${roles.join(' ')}`;
  });
}

function cosine(features: Features, pattern: Pattern): number {
  let dot = 0;
  for (const [f, w] of features) dot += w * (pattern.features.get(f) ?? 0);
  return dot / (normOf(features) * pattern.norm);
}

function quantileOf(values: readonly number[], quantile: number): number {
  if (values.length === 0) return 0;
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))];
}

function keyOf(features: Features): string {
  return [...features.keys()].join('\u0001');
}

function normOf(features: Features): number {
  let sum = 0;
  for (const w of features.values()) sum += w * w;
  return Math.sqrt(sum);
}

/** One real step as it was recorded: the state, the action, what followed. */
interface RecordedStep {
  valid: boolean;
  observation: string;
  admissible?: readonly string[];
  action: string;
  next: string;
  reward: number;
  terminated: boolean;
}

function noveltySteps(instruction: string, steps: readonly RecordedStep[]): NoveltyStep[] {
  const out: NoveltyStep[] = [];
  const earlier: string[] = [];
  for (const t of steps) {
    if (!t.valid) continue;
    const success = t.terminated && t.reward >= 1;
    const { action, next, terminated } = t;
    const offered = t.admissible?.length ? { offered: t.admissible } : {};
    out.push({
      instruction,
      earlier: earlier.slice(),
      state: t.observation,
      action,
      next,
      terminated,
      success,
      ...offered,
    });
    earlier.push(t.action);
  }
  return out;
}

/** The steps of a buffer's real episode, as novelty reads them (valid steps only). */
export function recordedNoveltySteps(episode: RecordedEpisode): NoveltyStep[] {
  return noveltySteps(
    episode.instruction,
    episode.steps.map((t) => ({ ...t, next: t.nextObservation })),
  );
}

/** The steps of a trajectory (a domain's recorded episode), as novelty reads them. */
export function trajectoryNoveltySteps(trajectory: Trajectory): NoveltyStep[] {
  const steps = trajectory.steps.map((t, i) => ({
    ...t,
    next: trajectory.steps[i + 1]?.observation ?? trajectory.final_observation,
  }));
  return noveltySteps(trajectory.task.instruction, steps);
}

/** Real steps' role patterns, searched by feature (an inverted index), and the calibrated threshold. */
export class NoveltyIndex {
  readonly calibration: NoveltyCalibration;
  private readonly patterns: Pattern[] = [];
  private readonly byKey = new Map<string, number>();
  private readonly byFeature = new Map<string, number[]>();
  private readonly memo = new Map<string, number>();
  /** The domain's common words (commonWords), left out of every role. */
  private readonly common: ReadonlySet<string>;
  /** Real episodes indexed (each step's pattern knows which episodes show it). */
  private episodeCount: number;
  /** The offer patterns real states showed: their admissible lists and the actions taken (offerPatterns). */
  private readonly offers = new Set<string>();

  private constructor(episodes: readonly (readonly NoveltyStep[])[], options: NoveltyOptions) {
    this.common = commonWords(episodes);
    this.episodeCount = episodes.length;
    episodes.forEach((steps, index) => {
      for (const step of steps) this.addReal(noveltyFeatures(step, this.common), endOf(step), index);
      this.addOffers(steps);
    });
    this.calibration = this.calibrate(options.quantile ?? 0.99, options.successQuantile ?? 0.9, episodes.length);
  }

  /**
   * More real episodes (a corrected dream's real replays, train/dream-correction.ts): their steps
   * join the search, and the thresholds stay as calibrated, so a step can only grow more familiar.
   * Added in one call or several, the index answers the same.
   */
  addEpisodes(episodes: readonly (readonly NoveltyStep[])[]): void {
    for (const steps of episodes) {
      const index = this.episodeCount++;
      for (const step of steps) this.addReal(noveltyFeatures(step, this.common), endOf(step), index);
      this.addOffers(steps);
    }
    this.memo.clear();
  }

  /** An index of real episodes' steps (MIN_NOVELTY_EPISODES at least, so each can be left out of its own search). */
  static fromEpisodes(episodes: readonly (readonly NoveltyStep[])[], options: NoveltyOptions = {}): NoveltyIndex {
    if (episodes.length < MIN_NOVELTY_EPISODES)
      throw new Error(
        `Novelty needs real episodes to measure a dream against, and the buffer holds ${episodes.length}. ` +
          'Seed the buffer with real or offline episodes of the domain, or turn the halt off (halt=false).',
      );
    return new NoveltyIndex(episodes, options);
  }

  /** The threshold of steps that end as this one does (by default that of running steps). */
  threshold(step?: Pick<NoveltyStep, 'terminated' | 'success'>): number {
    return this.calibration.thresholds[step ? endOf(step) : 'running'];
  }

  private addReal(features: Features, end: StepEnd, episode: number): void {
    const key = keyOf(features);
    let id = this.byKey.get(key);
    if (id === undefined) {
      id = this.patterns.length;
      this.patterns.push({ features, end, norm: normOf(features), episodes: new Set(), steps: 0 });
      this.byKey.set(key, id);
      for (const f of features.keys()) {
        if (!this.byFeature.has(f)) this.byFeature.set(f, []);
        this.byFeature.get(f)!.push(id);
      }
    }
    this.patterns[id].episodes.add(episode);
    this.patterns[id].steps++;
  }

  private addOffers(steps: readonly NoveltyStep[]): void {
    for (const step of steps)
      for (const pattern of offerPatterns(step, [step.action, ...(step.offered ?? [])], this.common))
        this.offers.add(pattern);
  }

  /** The actions among `actions` whose offer pattern some real state showed, in their order. */
  offerable(context: OfferContext, actions: readonly string[]): string[] {
    const patterns = offerPatterns(context, actions, this.common);
    return actions.filter((_, i) => this.offers.has(patterns[i]));
  }

  /** A step's role features and those of its nearest real pattern (for inspection: why a step halted). */
  explain(step: NoveltyStep): { distance: number; features: string[]; nearest: string[] } {
    const features = noveltyFeatures(step, this.common);
    const distance = this.nearest(features);
    const nearest = this.patterns.find((p) => Math.abs(1 - cosine(features, p) - distance) < 1e-9);
    return { distance, features: [...features.keys()], nearest: [...(nearest?.features.keys() ?? [])] };
  }

  /** 1 − the largest cosine to a real pattern, leaving out patterns seen only in episode `leftOut`. */
  private nearest(features: Features, leftOut = -1): number {
    const dots = new Map<number, number>();
    for (const [f, w] of features)
      for (const id of this.byFeature.get(f) ?? [])
        dots.set(id, (dots.get(id) ?? 0) + w * this.patterns[id].features.get(f)!);
    const norm = normOf(features);
    let best = 0;
    for (const [id, dot] of dots) {
      const p = this.patterns[id];
      if (p.episodes.size === 1 && p.episodes.has(leftOut)) continue;
      best = Math.max(best, dot / (norm * p.norm));
    }
    return Math.max(0, 1 - best);
  }

  private calibrate(quantile: number, successQuantile: number, episodes: number): NoveltyCalibration {
    const distances: Record<StepEnd, number[]> = { success: [], failure: [], running: [] };
    for (const p of this.patterns) {
      // A pattern seen in two episodes is at distance 0 from each of its steps, whichever is left out.
      const distance = p.episodes.size > 1 ? 0 : this.nearest(p.features, [...p.episodes][0]);
      for (let i = 0; i < p.steps; i++) distances[p.end].push(distance);
    }
    const all = Object.values(distances).flat();
    const own = (end: StepEnd) =>
      quantileOf(
        distances[end].length >= MIN_CALIBRATION_STEPS ? distances[end] : all,
        end === 'success' ? successQuantile : quantile,
      );
    const thresholds = { success: own('success'), failure: own('failure'), running: own('running') };
    const ends = Object.keys(distances) as StepEnd[];
    const above = ends.reduce((n, end) => n + distances[end].filter((d) => d > thresholds[end]).length, 0);
    return {
      steps: all.length,
      episodes,
      patterns: this.patterns.length,
      quantile,
      successQuantile,
      thresholds,
      heldOutHaltRate: all.length ? above / all.length : 0,
    };
  }

  /** A step's novelty: 0 for a pattern the real data shows, up to 1 for one sharing nothing with it. */
  distance(step: NoveltyStep): number {
    const features = noveltyFeatures(step, this.common);
    const key = keyOf(features);
    let d = this.memo.get(key);
    if (d === undefined) {
      d = this.byKey.has(key) ? 0 : this.nearest(features);
      this.memo.set(key, d);
    }
    return d;
  }

  /** A real step's novelty with its own episode (its index among those indexed) left out of the search. */
  heldOutDistance(step: NoveltyStep, episode: number): number {
    const features = noveltyFeatures(step, this.common);
    const p = this.patterns[this.byKey.get(keyOf(features)) ?? -1];
    if (p && (p.episodes.size > 1 || !p.episodes.has(episode))) return 0;
    return this.nearest(features, episode);
  }

  /** Whether a step is beyond the calibrated threshold (the dream should halt there). */
  isNovel(step: NoveltyStep): boolean {
    return this.distance(step) > this.threshold(step);
  }
}
