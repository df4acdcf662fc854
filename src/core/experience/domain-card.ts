/**
 * Domain cards: what the experience model is told about an environment — what it is, its action
 * grammar, its text format and its reward rule — plus the mapping between the env's concrete text
 * and the compact abstract states the model reads and writes, and the consistency rules every
 * dreamed next state keeps (checkConsistency).
 *
 * Abstract states (the paper, §4.1: "clean element listings … discarding irrelevant structural
 * artifacts") keep dreams cheap: output tokens decide the dream's speed (docs/architecture.md §4.2).
 * - a registered env writes its card in its own folder and hands it over through its definition
 *   (EnvDefinition.experienceCard): its text, globals and a StateAbstraction whose hooks drop what
 *   follows from the page kind and put it back, so a dreamed page looks like the env's own.
 * - imported domains (`deriveDomainCard`): whitespace collapsed, bounded; globals derived from
 *   the data (action kinds present in every state of every episode).
 * A card names its abstraction by a key (model files store it): 'generic', or the `kind` of a
 * registered env's abstraction, resolved here through the registry.
 */
import type { Trajectory } from '../types';
import type { StateAbstraction } from '../envs/env';
import { listEnvDefinitions } from '../envs/registry';

/** The abstraction key of a card with no env-written abstraction (an imported domain's). */
export const GENERIC_ABSTRACTION = 'generic';

export interface DomainCard {
  env: string;
  name: string;
  /** The description shown to the model (compact: it is part of every prompt). */
  text: string;
  /** How concrete text maps to abstract states and back: 'generic' or a registered env's abstraction kind. */
  abstraction: string;
  /**
   * Regular expression (source) of actions admissible in every state of an episode: they are
   * omitted from prompts and answers and re-added from the episode's first admissible list.
   */
  globalActions?: string;
  /** The env lists admissible actions sorted: re-sort after re-adding the globals. */
  sortedAdmissible?: boolean;
  /** Show the current state's admissible actions in the prompt (false: the env's page shows them). */
  showAdmissible: boolean;
  /**
   * The application recorded no admissible lists, so its import inferred every one from similar
   * recorded states (src/core/data/candidates.ts). A learned model then neither reads nor writes
   * lists, which are an estimate rather than a state's content: a dreamed state gets its list the
   * way a deployed agent does, inferred from the domain's episodes (LearnedModelOptions.inferAdmissible).
   */
  inferredAdmissible?: boolean;
}

/** The written card of one of our environments (its definition's), or undefined for an unknown (imported) env. */
export function builtInDomainCard(envId: string): DomainCard | undefined {
  const written = listEnvDefinitions().find((d) => d.id === envId)?.experienceCard;
  if (!written) return undefined;
  // Fields in this order, optional ones only when set: a model file stores the card as JSON.
  return {
    env: envId,
    name: written.name,
    abstraction: written.abstraction.kind,
    ...(written.globalActions !== undefined ? { globalActions: written.globalActions } : {}),
    ...(written.sortedAdmissible !== undefined ? { sortedAdmissible: written.sortedAdmissible } : {}),
    showAdmissible: written.showAdmissible,
    text: written.text,
  };
}

/** The card a prompt shows for `envId`: its built-in one, or a minimal generic card for an env it does not know. */
export function promptCardFor(envId: string): DomainCard {
  return (
    builtInDomainCard(envId) ?? {
      env: envId,
      name: envId,
      text: 'A text environment: the agent reads an observation and picks one of the admissible actions.',
      abstraction: 'generic',
      showAdmissible: true,
    }
  );
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

export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Cuts to `maxChars` characters, ending with '…' when cut. */
export function bound(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return maxChars <= 1 ? text.slice(0, Math.max(0, maxChars)) : `${text.slice(0, maxChars - 1).trimEnd()}…`;
}

/** Whitespace collapsed, nothing dropped: the abstraction of an imported domain (and of an unknown key). */
const GENERIC: StateAbstraction = { kind: GENERIC_ABSTRACTION, abstract: collapse };

/** The abstraction a card names: a registered env's, by its kind, else the generic one. */
export function abstractionOf(card: DomainCard): StateAbstraction {
  if (card.abstraction === GENERIC_ABSTRACTION) return GENERIC;
  for (const d of listEnvDefinitions()) {
    const abstraction = d.experienceCard?.abstraction;
    if (abstraction?.kind === card.abstraction) return abstraction;
  }
  return GENERIC;
}

/**
 * The compact abstract form of a concrete observation, at most `maxChars` characters (the
 * experience model reads these, and its examples show it what to write).
 */
export function abstractObservation(card: DomainCard, text: string, maxChars = Infinity): string {
  return bound(abstractionOf(card).abstract(text), maxChars);
}

/** The env's own text for an abstract state (what a DreamEnv shows the policy). */
export function concreteObservation(card: DomainCard, abstract: string, instruction: string): string {
  const text = collapse(abstract);
  const abstraction = abstractionOf(card);
  return abstraction.concrete ? abstraction.concrete(text, instruction) : text;
}

function globalPattern(card: DomainCard): RegExp | null {
  return card.globalActions ? new RegExp(card.globalActions) : null;
}

/** The admissible actions of the episode that hold in every state (from its first admissible list). */
export function globalActionsOf(card: DomainCard, firstAdmissible: readonly string[]): string[] {
  const pattern = globalPattern(card);
  return pattern ? firstAdmissible.filter((a) => pattern.test(a)) : [];
}

/** The state-specific admissible actions (the card's globals, or what the page implies, left out). */
/** The admissible actions a learned model reads and writes of a state: none where the card's lists are inferred. */
export function modelledAdmissible(card: DomainCard, admissible: readonly string[]): string[] {
  return card.inferredAdmissible ? [] : abstractAdmissible(card, admissible);
}

export function abstractAdmissible(card: DomainCard, admissible: readonly string[]): string[] {
  const abstraction = abstractionOf(card);
  if (abstraction.abstractAdmissible) return abstraction.abstractAdmissible(admissible);
  const pattern = globalPattern(card);
  return pattern ? admissible.filter((a) => !pattern.test(a)) : admissible.slice();
}

/**
 * The full admissible list of a next state: the model's state-specific actions plus the
 * episode's globals, de-duplicated, in the env's order (or the abstraction's own list, built from
 * the concrete page text). Global-looking actions in `local` are dropped (the episode's own
 * globals are authoritative) unless `dropGlobalsFromLocal` is false (a first state, whose list
 * defines the globals).
 */
export function concreteAdmissible(
  card: DomainCard,
  local: readonly string[],
  globals: readonly string[],
  concreteText = '',
  dropGlobalsFromLocal = true,
): string[] {
  const abstraction = abstractionOf(card);
  if (abstraction.concreteAdmissible) return abstraction.concreteAdmissible(local, concreteText);
  const pattern = globalPattern(card);
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (raw: string) => {
    const a = collapse(raw);
    if (a.length === 0 || seen.has(a)) return;
    seen.add(a);
    out.push(a);
  };
  for (const a of pattern && dropGlobalsFromLocal ? local.filter((x) => !pattern.test(collapse(x))) : local) add(a);
  for (const g of globals) add(g);
  return card.sortedAdmissible ? out.sort() : out;
}

// =============================================================================================
// The rules a dreamed next state keeps
// =============================================================================================

/** A next step as an experience model answers it, before it becomes a Prediction (experience/types.ts). */
export interface DreamedAnswer {
  valid: boolean;
  observation: string;
  admissible: string[];
  reward: number;
  terminated: boolean;
}

/**
 * The consistency rules of a next-state answer; `null` when it is consistent. `fullAdmissible`
 * is the next state's complete list (the answer's plus the implied globals / page buttons, see
 * concreteAdmissible); without it the answer's own list is checked. Every model that writes a next
 * state keeps these (the reasoning model and the learned model).
 */
export function checkConsistency(a: DreamedAnswer, fullAdmissible: readonly string[] = a.admissible): string | null {
  if (a.reward !== 0 && a.reward !== 1) return `reward must be 0 or 1, got ${a.reward}`;
  if (!a.valid) {
    if (a.reward !== 0) return 'an invalid action earns reward 0';
    if (a.terminated) return 'an invalid action does not end the episode';
    return null;
  }
  if (a.observation.length === 0) return 'the next observation is empty';
  if (a.reward === 1 && !a.terminated) return 'reward 1 is only given on the final step (terminated true)';
  if (!a.terminated && fullAdmissible.length === 0) return 'a running episode needs admissible actions';
  return null;
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

/** `actionKind`, remembered by action: a large import repeats a few thousand actions half a million times. */
function actionKinds(): (action: string) => string {
  const known = new Map<string, string>();
  return (action) => {
    let kind = known.get(action);
    if (kind === undefined) known.set(action, (kind = actionKind(action)));
    return kind;
  };
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
  const kindOf = actionKinds();
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
      const kind = kindOf(s.action);
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
 * Action kinds admissible in every state of every episode that lists them (moving somewhere,
 * looking around): each such kind becomes part of the card's `globalActions`.
 */
function deriveGlobalKinds(trajectories: readonly Trajectory[]): string[] {
  const everywhere = new Map<string, boolean>();
  const kindOf = actionKinds();
  for (const t of trajectories) {
    const states = t.steps.filter((s) => s.admissible.length > 0);
    if (states.length < 2) continue;
    // An action is in every state when it is in as many states as there are (one pass, not all pairs).
    const statesWith = new Map<string, { count: number; last: number }>(); // last: the state that counted it
    states.forEach(({ admissible }, state) => {
      for (const a of admissible) {
        const seen = statesWith.get(a);
        if (!seen) statesWith.set(a, { count: 1, last: state });
        else if (seen.last !== state) {
          seen.count++;
          seen.last = state;
        }
      }
    });
    for (const [a, { count }] of statesWith) {
      const kind = kindOf(a);
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
  options: { name?: string; maxChars?: number; inferredAdmissible?: boolean } = {},
): DomainCard {
  if (trajectories.length === 0) throw new Error('deriveDomainCard needs at least one trajectory of the domain.');
  const env = trajectories[0].env;
  const stats = domainStats(trajectories);
  // Inferred lists hold the same common actions everywhere; they are not the application's globals.
  const globalKinds = options.inferredAdmissible ? [] : deriveGlobalKinds(trajectories);
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
    options.inferredAdmissible ? 'The application lists no admissible actions.' : '',
  ]
    .filter(Boolean)
    .join(' ');
  const sorted = trajectories.every((t) =>
    t.steps.every((s) => s.admissible.every((a, i) => i === 0 || s.admissible[i - 1] <= a)),
  );
  return {
    env,
    name: options.name ?? env,
    abstraction: GENERIC_ABSTRACTION,
    showAdmissible: true,
    text: bound(text, options.maxChars ?? 900),
    ...(globalKinds.length
      ? {
          globalActions: `^(?:${globalKinds.map((k) => `${escapeRegExp(k)}${k.endsWith('[') ? '' : '\\b'}`).join('|')})`,
        }
      : {}),
    ...(sorted ? { sortedAdmissible: true } : {}),
    ...(options.inferredAdmissible ? { inferredAdmissible: true } : {}),
  };
}
