/**
 * A domain's feature schema, mined from its recorded episodes (docs/architecture.md §3.8): what the policy's
 * featuriser (features.ts) knows of a domain, with no domain named in the code.
 *
 * - Action templates. An action's first word is its verb. Among a verb's distinct actions, the words found in most of
 *   them (and brackets) are its connectors; the runs between them are slots, each with a word shape: `<id>` (one
 *   token of letters and digits interleaved), `<num>`, `<name#>` (words then an index) or `<text>`. So 'fold shirt 2'
 *   is `fold <name#>` and 'move box 1 onto shelf 3' is `move <name#> onto <name#>`. A whole action found in nearly
 *   every episode, with no number in it, is a control of its own (a fixed button): its own template.
 * - Observation kinds. Observations (the instruction cut out) as word shapes (digits → '#') form a prefix trie; a
 *   node whose few children cover nearly all its observations is structure and is followed, a node with many is
 *   content and ends the kind. The kinds are those ends.
 * - Stopwords. Instruction words found in most instructions are boilerplate: no task content.
 *
 * The K most frequent templates and kinds are kept (the rest are 'other'), a kind only if it holds a tenth of the
 * states (rarer ends are content, not a page). Mining is deterministic: counts, then ties broken by the key. The
 * schema is plain JSON, saved with a policy's checkpoint.
 */
import { tokenize } from './text';

export const FEATURE_SCHEMA_FORMAT = 'dreamgym-feature-schema/1';

export interface FeatureSchema {
  format: typeof FEATURE_SCHEMA_FORMAT;
  /** Each verb with its connectors (sorted), verbs sorted. */
  verbs: [string, string[]][];
  /** Whole actions that are controls of their own (lower case, sorted). */
  controls: string[];
  /** Template keys, most frequent first ('other' is implicit, after them). */
  templates: string[];
  /** Prefix-trie nodes that are followed (space-joined word shapes; '' is the root), sorted. */
  followed: string[];
  /** Observation kind keys, most frequent first ('other' is implicit, after them). */
  kinds: string[];
  /** Instruction words that carry no task content in this domain (sorted). */
  stopwords: string[];
  /** Names of the features the env adds (its definition's policyFeatures), in column order. */
  extras: { row: string[]; state: string[] };
}

/** What the miner reads of an episode: its instruction and steps (a Trajectory fits). */
export interface SchemaEpisode {
  instruction: string;
  steps: readonly { observation: string; admissible: readonly string[]; action: string }[];
}

export interface MineOptions {
  maxTemplates: number;
  maxKinds: number;
  /**
   * A kind holds at least this share of the recorded states. A page the domain keeps showing (a results page) is a
   * kind; a rare message after one action (an opened cupboard) is content: its many kinds split the policy's
   * template × kind tokens into too little data each (a built-in env's real GRPO lost 9 points over 3 seeds with 12).
   */
  minKindShare: number;
  /** A connector is in at least this share of its verb's distinct actions. */
  connectorShare: number;
  /** A verb needs this many distinct actions to have connectors (fewer: the rest is one slot). */
  minVerbActions: number;
  /** A control is in the admissible lists (or taken) in at least this share of the episodes… */
  controlShare: number;
  /** …of at least this many episodes. */
  minControlEpisodes: number;
  /** Word shapes of an observation's head the trie reads. */
  kindDepth: number;
  /** A trie node is followed when its `followBranches` largest children hold `followCover` of it. */
  followBranches: number;
  followCover: number;
  /** An instruction word in at least this share of the distinct instructions is a stopword… */
  stopwordShare: number;
  /** …of at least this many. */
  minStopwordInstructions: number;
}

export const DEFAULT_MINE_OPTIONS: Readonly<MineOptions> = Object.freeze({
  maxTemplates: 24,
  maxKinds: 12,
  minKindShare: 0.1,
  connectorShare: 0.8,
  minVerbActions: 3,
  controlShare: 0.9,
  minControlEpisodes: 5,
  kindDepth: 8,
  followBranches: 4,
  followCover: 0.9,
  stopwordShare: 0.4,
  minStopwordInstructions: 10,
});

/** The schema of a domain with no data: every action and observation is 'other'. */
export function emptyFeatureSchema(): FeatureSchema {
  return {
    format: FEATURE_SCHEMA_FORMAT,
    verbs: [],
    controls: [],
    templates: [],
    followed: [],
    kinds: [],
    stopwords: [],
    extras: { row: [], state: [] },
  };
}

// =============================================================================================
// Actions
// =============================================================================================

const BRACKET_RE = /^[[\](){}]$/;

/** An action's tokens: brackets on their own, other runs of non-space ('pick[a b]' → pick [ a b ]). */
export function actionTokens(action: string): string[] {
  return action.toLowerCase().match(/[[\](){}]|[^\s[\](){}]+/g) ?? [];
}

const hasDigit = (t: string): boolean => /[0-9]/.test(t);
const isNumber = (t: string): boolean => /^[0-9]+(?:[.,][0-9]+)*$/.test(t);

/** Runs of letters / digits / other in a token ('x7p42mq9' → 6, '16oz' → 2). */
function shapeRuns(token: string): number {
  let runs = 0,
    last = '';
  for (const ch of token) {
    const cls = /[0-9]/.test(ch) ? '0' : /[a-z]/.test(ch) ? 'a' : '-';
    if (cls !== last) runs++;
    last = cls;
  }
  return runs;
}

/** The word shape of a slot's filler. */
export function slotShape(filler: readonly string[]): string {
  if (filler.length === 1 && shapeRuns(filler[0]) >= 4) return '<id>';
  if (filler.every(isNumber)) return '<num>';
  const last = filler.length - 1;
  if (last > 0 && isNumber(filler[last]) && filler.slice(0, last).every((t) => !hasDigit(t))) return '<name#>';
  return '<text>';
}

/** An action read against a schema: its template, verb, slot fillers and argument (all after the verb). */
export interface ParsedAction {
  template: string;
  verb: string;
  slots: string[][];
  argument: string;
  /** Shapes of the slots, in order. */
  shapes: string[];
}

/** The structure of an action given its verb's connectors (before controls and the template cap). */
export function structureOf(tokens: readonly string[], connectors: ReadonlySet<string>): ParsedAction {
  const parts: string[] = tokens.length ? [tokens[0]] : [];
  const slots: string[][] = [];
  let slot: string[] | null = null;
  let firstSlotAt = tokens.length;
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i];
    if (BRACKET_RE.test(t) || connectors.has(t)) {
      if (slot) parts.push(slotShape(slot));
      slot = null;
      parts.push(t);
    } else {
      if (!slot) {
        slot = [];
        slots.push(slot);
        if (firstSlotAt === tokens.length) firstSlotAt = i;
      }
      slot.push(t);
    }
  }
  if (slot) parts.push(slotShape(slot));
  // The verb is every literal word before the first slot ('walk to'); a slotless action is its first word.
  const verbEnd = slots.length ? firstSlotAt : Math.min(1, tokens.length);
  return {
    template: parts.join(' '),
    verb: tokens.slice(0, verbEnd).join(' '),
    slots,
    argument: tokens.slice(verbEnd).join(' '),
    shapes: parts.filter((p) => p.startsWith('<')),
  };
}

// =============================================================================================
// Observations
// =============================================================================================

/** An observation's word shapes, the instruction cut out (digits → '#'), at most `depth`, then '$' if it ends. */
export function observationShapes(observation: string, instruction: string, depth: number): string[] {
  const text = instruction.length > 0 ? observation.split(instruction).join(' ') : observation;
  const shapes = tokenize(text)
    .slice(0, depth)
    .map((t) => (hasDigit(t) ? '#' : t));
  if (shapes.length < depth) shapes.push('$');
  return shapes;
}

// =============================================================================================
// Mining
// =============================================================================================

/** Top `k` keys of a count map, most frequent first, ties by key. */
function topKeys(counts: Map<string, number>, k: number): string[] {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, k)
    .map(([key]) => key);
}

const bump = (m: Map<string, number>, key: string, by = 1): void => {
  m.set(key, (m.get(key) ?? 0) + by);
};

/** The distinct actions of the data (admissible and taken), and how many episodes list each. */
function actionCounts(episodes: readonly SchemaEpisode[]): {
  states: Map<string, number>;
  episodes: Map<string, number>;
} {
  const states = new Map<string, number>(),
    inEpisodes = new Map<string, number>();
  for (const e of episodes) {
    const seen = new Set<string>();
    for (const s of e.steps) {
      const here = new Set([...s.admissible, s.action].map((a) => a.toLowerCase().trim()).filter(Boolean));
      for (const a of here) {
        bump(states, a);
        seen.add(a);
      }
    }
    for (const a of seen) bump(inEpisodes, a);
  }
  return { states, episodes: inEpisodes };
}

/** Each verb's connectors: the non-numeric words in at least `connectorShare` of its distinct actions. */
function mineVerbs(actions: Iterable<string>, o: MineOptions): Map<string, Set<string>> {
  const byVerb = new Map<string, string[][]>();
  for (const a of actions) {
    const tokens = actionTokens(a);
    if (!tokens.length) continue;
    const list = byVerb.get(tokens[0]) ?? [];
    list.push(tokens);
    byVerb.set(tokens[0], list);
  }
  const verbs = new Map<string, Set<string>>();
  for (const [verb, list] of byVerb) {
    const connectors = new Set<string>();
    if (list.length >= o.minVerbActions) {
      const df = new Map<string, number>();
      for (const tokens of list) for (const t of new Set(tokens.slice(1))) bump(df, t);
      for (const [t, n] of df)
        if (!hasDigit(t) && !BRACKET_RE.test(t) && n >= o.connectorShare * list.length) connectors.add(t);
    }
    verbs.set(verb, connectors);
  }
  return verbs;
}

/** Controls: in `controlShare` of the episodes, no number, and slots under their verb (else already a template). */
function mineControls(
  perEpisode: Map<string, number>,
  nEpisodes: number,
  verbs: Map<string, Set<string>>,
  o: MineOptions,
): string[] {
  if (nEpisodes < o.minControlEpisodes) return [];
  const controls: string[] = [];
  for (const [action, n] of perEpisode) {
    if (n < o.controlShare * nEpisodes) continue;
    const tokens = actionTokens(action);
    if (tokens.some(hasDigit)) continue;
    if (structureOf(tokens, verbs.get(tokens[0]) ?? new Set()).slots.length > 0) controls.push(tokens.join(' '));
  }
  return controls.sort();
}

/** The observation kinds: the followed trie nodes and the K most frequent ends that hold minKindShare of the states. */
function mineKinds(episodes: readonly SchemaEpisode[], o: MineOptions): { followed: string[]; kinds: string[] } {
  const paths: string[][] = [];
  const count = new Map<string, number>();
  const children = new Map<string, Map<string, number>>();
  for (const e of episodes)
    for (const s of e.steps) {
      const shapes = observationShapes(s.observation, e.instruction, o.kindDepth);
      paths.push(shapes);
      let key = '';
      bump(count, key);
      for (const t of shapes) {
        const kids = children.get(key) ?? new Map<string, number>();
        bump(kids, t);
        children.set(key, kids);
        key = key ? `${key} ${t}` : t;
        bump(count, key);
      }
    }
  const followedAll = new Set<string>();
  for (const [key, kids] of children) {
    const sizes = [...kids.values()].sort((a, b) => b - a).slice(0, o.followBranches);
    if (sizes.reduce((a, b) => a + b, 0) >= o.followCover * count.get(key)!) followedAll.add(key);
  }
  const ends = new Map<string, number>();
  for (const shapes of paths) bump(ends, kindEnd(shapes, followedAll));
  const kinds = topKeys(ends, o.maxKinds).filter((kind) => ends.get(kind)! >= o.minKindShare * paths.length);
  // Only the followed nodes on the way to a kept kind are needed to find it again.
  const followed = new Set<string>();
  for (const kind of kinds) {
    const parts = kind ? kind.split(' ') : [];
    for (let i = 0; i < parts.length; i++) followed.add(parts.slice(0, i).join(' '));
  }
  return { followed: [...followed].sort(), kinds };
}

/** Where an observation's shapes end in the trie: the first node not followed. */
export function kindEnd(shapes: readonly string[], followed: ReadonlySet<string>): string {
  let key = '';
  for (const t of shapes) {
    if (!followed.has(key)) break;
    key = key ? `${key} ${t}` : t;
  }
  return key;
}

/** Instruction words in at least `stopwordShare` of the distinct instructions (no numbers). */
function mineStopwords(episodes: readonly SchemaEpisode[], o: MineOptions): string[] {
  const instructions = new Set(episodes.map((e) => e.instruction));
  if (instructions.size < o.minStopwordInstructions) return [];
  const df = new Map<string, number>();
  for (const text of instructions) for (const t of new Set(tokenize(text))) if (!hasDigit(t)) bump(df, t);
  return [...df.entries()]
    .filter(([, n]) => n >= o.stopwordShare * instructions.size)
    .map(([t]) => t)
    .sort();
}

/**
 * The schema of a domain from its recorded episodes (deterministic). `extras` are the names of the features its
 * env adds (none for an imported domain).
 */
export function mineFeatureSchema(
  episodes: readonly SchemaEpisode[],
  options: Partial<MineOptions> = {},
  extras: { row: readonly string[]; state: readonly string[] } = { row: [], state: [] },
): FeatureSchema {
  const o = { ...DEFAULT_MINE_OPTIONS, ...options };
  const counted = actionCounts(episodes);
  const verbs = mineVerbs(counted.states.keys(), o);
  const controls = mineControls(counted.episodes, episodes.length, verbs, o);
  const controlSet = new Set(controls);
  const templateCounts = new Map<string, number>();
  for (const [action, n] of counted.states) {
    const tokens = actionTokens(action);
    const key = controlSet.has(tokens.join(' '))
      ? tokens.join(' ')
      : structureOf(tokens, verbs.get(tokens[0]) ?? new Set()).template;
    bump(templateCounts, key, n);
  }
  const { followed, kinds } = mineKinds(episodes, o);
  return {
    format: FEATURE_SCHEMA_FORMAT,
    verbs: [...verbs.entries()]
      .filter(([, c]) => c.size > 0)
      .map(([v, c]): [string, string[]] => [v, [...c].sort()])
      .sort((a, b) => (a[0] < b[0] ? -1 : 1)),
    controls,
    templates: topKeys(templateCounts, o.maxTemplates),
    followed,
    kinds,
    stopwords: mineStopwords(episodes, o),
    extras: { row: [...extras.row], state: [...extras.state] },
  };
}

// =============================================================================================
// Checking a saved schema
// =============================================================================================

const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');

/** What is wrong with a schema read from a file (null: nothing). */
export function featureSchemaProblem(x: unknown): string | null {
  const s = x as Partial<FeatureSchema> | null;
  if (typeof s !== 'object' || s === null) return 'the feature schema is missing';
  if (s.format !== FEATURE_SCHEMA_FORMAT)
    return `the feature schema's format is '${String(s.format)}', expected '${FEATURE_SCHEMA_FORMAT}'`;
  if (!Array.isArray(s.verbs) || !s.verbs.every((v) => Array.isArray(v) && typeof v[0] === 'string' && isStrings(v[1])))
    return "the feature schema's 'verbs' must be a list of [verb, connectors]";
  for (const key of ['controls', 'templates', 'followed', 'kinds', 'stopwords'] as const)
    if (!isStrings(s[key])) return `the feature schema's '${key}' must be a list of strings`;
  if (!isStrings(s.extras?.row) || !isStrings(s.extras?.state))
    return "the feature schema's 'extras' must be { row: names, state: names }";
  return null;
}
