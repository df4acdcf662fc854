/**
 * `dreamgym train`'s options, and how they, --set and a saved run become the run's TrainConfig: a fresh run's
 * config (the preset, then the options, then --set), a resumed run's (the saved config with only what --resume
 * may change), and the run folder they name. Every refusal is a usage error that says which option to use.
 */
import { join } from 'node:path';
import {
  ALGORITHMS,
  ConfigError,
  LLM_SETTING_NAMES,
  MODES,
  getPreset,
  presetNames,
  validateConfig,
  validateSettings,
  withDefaults,
  type TrainConfig,
} from '../../core/train/config';
import type { TrainerState } from '../../core/train/loop';
import { EVAL_SPLITS, type EvalSplit } from '../../core/train/evaluate';
import { UsageError, type CommandSpec } from '../args';
import { BACKEND_OPTION, jsonOption } from '../common-options';
import { datasetOption, LLM_OPTION_HELP } from '../experience-options';

/** The held-out split of a final evaluation (train's, eval's); training itself only ever evaluates on dev. */
export const SPLIT_OPTION = {
  type: 'string',
  description:
    "held-out tasks of the final evaluation: dev (seeds from 1e9; the run's own) " +
    'or test (seeds from 2e9; reported tables only, evaluated after training)',
  choices: EVAL_SPLITS,
  default: 'dev',
} as const;

export const trainCommand: CommandSpec = {
  name: 'train',
  summary: 'train the candidate-scoring policy with GRPO, PPO or REINFORCE',
  usage:
    'dreamgym train --preset P --mode real|dream|s2r|sft [--sft] ' +
    '[--llm oracle:EPS_R,EPS_P|openai:URL#MODEL|learned:PATH] [--algo grpo|ppo|reinforce] ' +
    '[--seed S] [--iterations N] ' +
    '[--set curriculumVariations=procedural|llm|both] [--dataset FILE] [--split dev|test] [--out DIR] ' +
    '[--resume|--force] [--json]',
  options: {
    preset: { type: 'string', description: `preset (${presetNames().join(', ')})` },
    mode: {
      type: 'string',
      description:
        'where experience comes from (default real; dream and s2r need --llm); sft: behaviour cloning of the ' +
        'offline expert episodes, no RL (the SFT baseline)',
      choices: [...MODES, 'sft'],
    },
    sft: {
      type: 'boolean',
      description: 'a new real, dream or s2r run starts from the SFT policy (cloned from the offline expert episodes)',
    },
    algo: { type: 'string', description: "policy-gradient algorithm (default: the preset's)", choices: ALGORITHMS },
    llm: {
      type: 'string',
      description:
        'experience model for dream/s2r: oracle:EPS_R,EPS_P, openai:BASE_URL#MODEL (key from DREAMGYM_API_KEY, else OPENAI_API_KEY) or learned:PATH',
    },
    curriculum: {
      type: 'boolean',
      description: 'curriculum task generator on (default on for dream/s2r, off for real)',
    },
    dataset: {
      ...datasetOption,
      description: `dream and s2r: ${datasetOption.description} (a new run only; a resumed run keeps its buffer)`,
    },
    seed: { type: 'integer', description: 'seed of everything random in the run', min: 0 },
    split: SPLIT_OPTION,
    iterations: { type: 'integer', description: "iterations (default: the preset's)", min: 1, max: 1_000_000 },
    set: { type: 'string', description: 'override config fields, e.g. --set learningRate=0.001,groupSize=4' },
    out: { type: 'string', description: 'run folder (default runs/<preset>-<mode>-<algo>-<seed>)' },
    resume: {
      type: 'boolean',
      description: 'continue from OUT/checkpoint (options that conflict with the saved run are refused)',
    },
    force: {
      type: 'boolean',
      description: 'start a new run in an OUT that holds a run already, replacing its checkpoint, buffer and metrics',
    },
    backend: BACKEND_OPTION,
    estimate: {
      type: 'boolean',
      description:
        "dream and s2r: try one step with the engine, print the dream's cost at its measured speed, and exit without training",
    },
    progress: {
      type: 'integer',
      description:
        'print a live progress line every N seconds while an iteration runs (default 1 on a terminal, 10 otherwise; 0 = off)',
      min: 0,
    },
    json: jsonOption('the summary'),
  },
};

export type TrainOptions = {
  preset?: string;
  split: EvalSplit;
  sft?: boolean;
  mode?: string;
  algo?: string;
  llm?: string;
  curriculum?: boolean;
  seed?: number;
  iterations?: number;
  set?: string;
  dataset?: string;
  out?: string;
  resume?: boolean;
  force?: boolean;
  backend: 'wasm' | 'cpu';
  estimate?: boolean;
  progress?: number;
  json?: boolean;
};

/** A fresh run's config: the preset, then the options, then --set; dreaming needs --llm. */
export function freshConfig(o: TrainOptions, settings: Record<string, unknown>): TrainConfig {
  if (!o.preset) throw new UsageError(`train needs --preset (one of ${presetNames().join(', ')}).`, trainCommand);
  const mode = o.mode ?? 'real';
  if (mode !== 'real' && !o.llm && settings.llm === undefined) {
    throw new UsageError(
      `--mode ${mode} dreams, so it needs --llm (${LLM_OPTION_HELP}); e.g. --llm oracle:0,0 for the exact noisy oracle.`,
      trainCommand,
    );
  }
  return checkedConfig({
    ...presetFor(o.preset),
    mode,
    curriculum: o.curriculum ?? mode !== 'real',
    ...(o.algo ? { algo: o.algo } : {}),
    ...(o.llm ? { llm: o.llm } : {}),
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.iterations !== undefined ? { iterations: o.iterations } : {}),
    ...settings,
  });
}

/** What --resume may change: how far the run goes, and the engine's transport settings (they do not change what it learns). */
const RESUMABLE_SETTINGS: readonly string[] = ['iterations', ...LLM_SETTING_NAMES];

/**
 * The options of a --resume that differ from the saved run; a resumed run continues exactly, so
 * only RESUMABLE_SETTINGS may change.
 */
function resumeConflicts(o: TrainOptions, settings: Record<string, unknown>, saved: TrainConfig): string[] {
  const given: [string, string, unknown][] = [
    ['--preset', 'preset', o.preset],
    ['--mode', 'mode', o.mode],
    ['--algo', 'algo', o.algo],
    ['--llm', 'llm', o.llm],
    ['--seed', 'seed', o.seed],
    ['--curriculum', 'curriculum', o.curriculum],
    ...Object.entries(settings).map(([key, value]): [string, string, unknown] => [`--set ${key}`, key, value]),
  ];
  return given
    .filter(
      ([, key, value]) =>
        value !== undefined &&
        !RESUMABLE_SETTINGS.includes(key) &&
        value !== (saved as unknown as Record<string, unknown>)[key],
    )
    .map(
      ([option, key, value]) =>
        `${option} ${String(value)} (the saved run has ${key} ${JSON.stringify((saved as unknown as Record<string, unknown>)[key])})`,
    );
}

/** The saved run's config with what --resume may change; conflicting options are refused. */
export function resumedConfig(
  o: TrainOptions,
  settings: Record<string, unknown>,
  state: TrainerState,
  dir: string,
): TrainConfig {
  const saved = withDefaults(state.config);
  const conflicts = resumeConflicts(o, settings, saved);
  if (conflicts.length > 0) {
    throw new UsageError(
      `--resume continues the run saved in ${dir} exactly, so its settings cannot change; these options conflict:\n- ` +
        `${conflicts.join('\n- ')}\nDrop them to resume (only --iterations and --set ${LLM_SETTING_NAMES.join('|')} may change), ` +
        'or start a new run without --resume in another --out.',
      trainCommand,
    );
  }
  const overrides = Object.fromEntries(
    Object.entries({ ...settings, iterations: o.iterations }).filter(
      ([k, v]) => v !== undefined && RESUMABLE_SETTINGS.includes(k),
    ),
  );
  if (o.iterations !== undefined && o.iterations !== saved.iterations) {
    process.stderr.write(
      `--iterations ${o.iterations}: the resumed run goes to iteration ${o.iterations} (it was set to ${saved.iterations}; ${state.iteration} done).\n`,
    );
  }
  return checkedConfig({ ...saved, ...overrides });
}

/** validateConfig, its refusal a usage error (exit 2): the options and --set made the config. */
function checkedConfig(config: Record<string, unknown>): TrainConfig {
  return asUsageError(() => validateConfig(config));
}

/** `check()`'s result; a ConfigError it throws becomes a usage error (exit 2, with train's usage). */
function asUsageError<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, trainCommand);
    throw error;
  }
}

/** The named preset; an unknown name (own keys only, never '__proto__') is a usage error with the list. */
function presetFor(name: string): TrainConfig {
  return asUsageError(() => getPreset(name));
}

/**
 * Where a run lives: --out, else runs/<preset>-<mode>-<algo>-<seed> (of the options, or the preset's
 * defaults): a real run and a dream of the same seed get folders of their own.
 */
export function runFolder(o: TrainOptions): string {
  if (o.out) return o.out;
  if (!o.preset) throw new UsageError('train needs --preset (or --out DIR of the run to resume).', trainCommand);
  const preset = presetFor(o.preset);
  return defaultRunFolder({
    preset: preset.preset,
    mode: o.mode ?? preset.mode,
    algo: o.algo ?? preset.algo,
    seed: o.seed ?? preset.seed,
  });
}

export function defaultRunFolder(config: { preset: string; mode: string; algo: string; seed: number }): string {
  return join('runs', `${config.preset}-${config.mode}-${config.algo}-${config.seed}`);
}

/** Settings that are options of their own: --set may not give them (they decide what else the run needs). */
const OWN_OPTION_SETTINGS: readonly string[] = ['preset', 'env', 'mode'];
/** Settings --set may give in place of their option: they go through the option's checks as if given there. */
const OPTION_SETTINGS = ['algo', 'llm', 'seed', 'iterations', 'curriculum'] as const;

/**
 * The options with --set's own-option settings moved into them; `preset`, `env` and `mode` in
 * --set are refused, naming the option to use (a --set mode=dream skipped the check for --llm).
 */
export function settingsAsOptions(
  o: TrainOptions,
  given: Record<string, unknown>,
): [TrainOptions, Record<string, unknown>] {
  const refused = OWN_OPTION_SETTINGS.filter((key) => Object.hasOwn(given, key));
  if (refused.length > 0) throw new UsageError(refusedSettingText(refused[0], given[refused[0]]), trainCommand);
  const options: Record<string, unknown> = { ...o };
  const settings = { ...given };
  // A value --set gives for an option is checked first, as the option's would be (an --llm with a secret).
  const asOptions = Object.fromEntries(
    OPTION_SETTINGS.filter((k) => Object.hasOwn(settings, k)).map((k) => [k, settings[k]]),
  );
  asUsageError(() => validateSettings(asOptions, OPTION_SETTINGS));
  for (const key of OPTION_SETTINGS) {
    if (!Object.hasOwn(settings, key)) continue;
    if (options[key] !== undefined && options[key] !== settings[key])
      throw new UsageError(
        `--${key} ${String(options[key])} and --set ${key}=${String(settings[key])} disagree: ` +
          `give it once, as --${key}.`,
        trainCommand,
      );
    options[key] = settings[key];
    delete settings[key];
  }
  return [options as TrainOptions, settings];
}

function refusedSettingText(key: string, value: unknown): string {
  const given = `--set ${key}=${String(value)}`;
  if (key === 'mode')
    return (
      `${given}: the mode has its own option, which checks what it needs (a dream needs --llm): ` +
      `use --mode ${String(value)}.`
    );
  if (key === 'preset') return `${given}: the preset has its own option: use --preset ${String(value)}.`;
  const presets = presetNames().filter((name) => getPreset(name).env === value);
  return (
    `${given}: the env comes with the preset (its tasks, step limit and label are the env's), ` +
    'so --set cannot change it: ' +
    (presets.length
      ? `use --preset ${presets.join(' or --preset ')}.`
      : `'${String(value)}' has no preset; see dreamgym envs.`)
  );
}
