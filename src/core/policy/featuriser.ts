/**
 * The policy's featuriser (docs/architecture.md §3.8): what the policy sees at one decision point (`PolicyState`), the
 * feature sizes, the features an env adds through its definition, and `Featuriser`, a domain's mined schema
 * (feature-schema.ts) made ready for encoding: its template and kind lookups and the names of the dense columns.
 * features.ts encodes states with it.
 */
import {
  actionTokens,
  emptyFeatureSchema,
  featureSchemaProblem,
  kindEnd,
  observationShapes,
  structureOf,
  type FeatureSchema,
  type ParsedAction,
} from './feature-schema';

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
}

export const DEFAULT_FEATURE_CONFIG: Readonly<FeatureConfig> = Object.freeze({
  buckets: 1 << 14,
  maxInstructionTokens: 48,
  obsHeadTokens: 16,
  obsTailTokens: 48,
  maxActionTokens: 16,
});

// =============================================================================================
// Features an env adds (its definition's policyFeatures)
// =============================================================================================

/** One candidate's env features: values in the set's row order, and tokens for the action bag. */
export interface ExtraRow {
  values: readonly number[];
  bag?: readonly string[];
}

/**
 * Features an env adds to the policy's, by name (envs/<name>/ definitions supply them; the schema saves the names).
 * Structure an env knows and its data cannot teach stays in the env's folder, never in the policy's code.
 */
export interface PolicyFeatureSet {
  readonly row: readonly string[];
  readonly state: readonly string[];
  /** Per state: its state values (in `state` order) and each candidate's row values. */
  prepare(state: PolicyState): { state: readonly number[]; row(action: string, index: number): ExtraRow };
}

const NO_EXTRAS: PolicyFeatureSet = {
  row: [],
  state: [],
  prepare: () => ({ state: [], row: () => ({ values: [] }) }),
};

// =============================================================================================
// The featuriser: a schema bound to the env's features
// =============================================================================================

const GENERIC_ROW_NAMES = [
  'overlap_count', // |content(argument) ∩ content(instruction)| / 3, capped at 2
  'overlap_ratio_action', // … / |content(argument)|
  'overlap_ratio_instruction', // … / |content(instruction)|
  'overlap_any',
  'phrase_in_instruction', // the argument appears verbatim in the instruction
  'action_has_number', // a slot (not id-shaped) holds a number
  'action_number_in_instruction',
  'action_in_observation', // share of the argument's content tokens present in the observation
  'repeat_count', // times taken before / 3, capped at 1
  'repeat_last', // equals the previous action
  'rank_in_template', // index among candidates of the same template / 10, capped at 1
  'action_length', // argument tokens / 10, capped at 2
  'slot1_in_instruction', // the first slot's type (its index dropped) is a word of the instruction
  'slot2_in_instruction', // … the second slot's
  'slots_both_in_instruction',
  'bias',
] as const;

const GENERIC_STATE_NAMES = [
  'step_fraction', // step / maxSteps (0 when unknown)
  'step_scaled', // min(step, 50) / 50
  'num_actions_log', // log(1 + n) / log(64)
  'observation_length_log',
  'history_length', // min(previous actions, 30) / 30
  'bias',
] as const;

/** A schema made ready for encoding: lookups, the env's features, and the dense columns' names. */
export class Featuriser {
  readonly schema: FeatureSchema;
  readonly rowNames: readonly string[];
  readonly stateNames: readonly string[];
  readonly extras: PolicyFeatureSet;
  private readonly connectors: Map<string, Set<string>>;
  private readonly controls: Set<string>;
  private readonly templateIndex: Map<string, number>;
  private readonly followed: Set<string>;
  private readonly kindIndex: Map<string, number>;
  readonly stopwords: Set<string>;
  private readonly kindDepth: number;
  /** Parsed actions by their text (candidates repeat across states and iterations). */
  private readonly parsed = new Map<string, ParsedAction & { index: number }>();

  constructor(schema: FeatureSchema = emptyFeatureSchema(), extras: PolicyFeatureSet = NO_EXTRAS) {
    const problem = featureSchemaProblem(schema);
    if (problem) throw new Error(`Featuriser: ${problem}.`);
    checkExtras(schema, extras);
    this.schema = schema;
    this.extras = extras;
    this.connectors = new Map(schema.verbs.map(([v, c]) => [v, new Set(c)]));
    this.controls = new Set(schema.controls);
    this.templateIndex = new Map(schema.templates.map((t, i) => [t, i]));
    this.followed = new Set(schema.followed);
    this.kindIndex = new Map(schema.kinds.map((k, i) => [k, i]));
    this.stopwords = new Set(schema.stopwords);
    this.kindDepth = Math.max(1, ...schema.kinds.map((k) => k.split(' ').length));
    const templates = [...schema.templates, 'other'];
    this.rowNames = [
      ...templates.map((t) => `template=${t}`),
      ...GENERIC_ROW_NAMES,
      ...extras.row.map((n) => `env:${n}`),
    ];
    this.stateNames = [
      ...[...schema.kinds, 'other'].map((k) => `kind=${k}`),
      ...templates.map((t) => `offered=${t}`),
      ...GENERIC_STATE_NAMES,
      ...extras.state.map((n) => `env:${n}`),
    ];
  }

  get rowDim(): number {
    return this.rowNames.length;
  }
  get stateDim(): number {
    return this.stateNames.length;
  }
  /** Templates kept plus 'other' (the one-hot block). */
  get templateCount(): number {
    return this.schema.templates.length + 1;
  }
  get kindCount(): number {
    return this.schema.kinds.length + 1;
  }

  /** An action's template index (templateCount − 1: other), verb, slots and argument (read once, then cached). */
  parseAction(actionLower: string): ParsedAction & { index: number } {
    let parsed = this.parsed.get(actionLower);
    if (!parsed) {
      if (this.parsed.size > 100_000) this.parsed.clear();
      parsed = this.readAction(actionLower);
      this.parsed.set(actionLower, parsed);
    }
    return parsed;
  }

  private readAction(actionLower: string): ParsedAction & { index: number } {
    const tokens = actionTokens(actionLower);
    const parsed = structureOf(tokens, this.connectors.get(tokens[0] ?? '') ?? EMPTY_SET);
    const key = this.controls.has(tokens.join(' ')) ? tokens.join(' ') : parsed.template;
    return { ...parsed, template: key, index: this.templateIndex.get(key) ?? this.schema.templates.length };
  }

  /** The observation's kind index (kindCount − 1: other) and key. */
  kindOf(state: PolicyState): { index: number; key: string } {
    const end = kindEnd(observationShapes(state.observation, state.instruction, this.kindDepth), this.followed);
    const index = this.kindIndex.get(end);
    return index === undefined ? { index: this.schema.kinds.length, key: 'other' } : { index, key: end };
  }
}

const EMPTY_SET: ReadonlySet<string> = new Set();

function checkExtras(schema: FeatureSchema, extras: PolicyFeatureSet): void {
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (same(schema.extras.row, extras.row) && same(schema.extras.state, extras.state)) return;
  const list = (x: { row: readonly string[]; state: readonly string[] }) =>
    `row [${x.row.join(', ')}], state [${x.state.join(', ')}]`;
  throw new Error(
    `The feature schema names the env features ${list(schema.extras)}, and the features given are ${list(extras)}: ` +
      "build the policy with the features of the env the schema was mined for (its definition's policyFeatures).",
  );
}

/** The featuriser of a domain with no schema: generic features only (every template and kind 'other'). */
export const GENERIC_FEATURISER = new Featuriser();
