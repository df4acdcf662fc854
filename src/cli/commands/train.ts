/**
 * `dreamgym train` and `dreamgym eval`: real-environment policy-gradient training with
 * metrics.jsonl, summary.json, run.json (the run's identity) and a checkpoint after every iteration (resumable
 * with --resume). `--mode sft` is the SFT baseline (behaviour cloning of the offline expert
 * episodes, no RL); `--sft` starts a run from that policy. A final evaluation plays the dev
 * held-out tasks, or with `--split test` the test ones too (evaluate.ts).
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { initBackend } from '../../core/tfjs/backend';
import {
  ALGORITHMS,
  ConfigError,
  LLM_SETTING_NAMES,
  MODES,
  SETTING_NAMES,
  getPreset,
  presetNames,
  validateConfig,
  validateSettings,
  withDefaults,
  type TrainConfig,
} from '../../core/train/config';
import { Trainer, type IterationRecord, type TrainerDeps, type TrainerState } from '../../core/train/loop';
import { dreamWarnings } from '../../core/train/dream-health';
import { behaviourCloning, DEFAULT_SFT_CONFIG, sftExamples } from '../../core/train/sft';
import { EVAL_SPLITS, type EvalResult, type EvalSplit } from '../../core/train/evaluate';
import { rolloutSuccess } from '../../core/train/metrics';
import { EngineFailureError } from '../../core/experience/engine-failures';
import { buildRunParts } from '../../core/train/run-parts';
import { registeredEnvSchema } from '../../core/train/policy-schema';
import { ReplayBuffer } from '../../core/buffer/buffer';
import { FolderBufferStore } from '../../node/buffer-folder';
import { FolderCheckpointStore } from '../../node/checkpoint-folder';
import { describeRun, newRunIdentity, readRunIdentity, RUN_FILE, writeRunIdentity } from '../../node/run-identity';
import { nodeEngineDeps } from '../../node/edge';
import { UsageError, type CommandSpec, type ParsedArgs } from '../args';
import { printJsonLast, progressBar, round, terminalSafe } from '../output';
import { formatDuration, formatProgressLine, ProgressMeter } from '../../core/train/progress';
import { describeEstimate, estimateDreamCost, type EngineSpeed } from '../../core/train/estimate';
import { tryOneStep } from '../../core/experience/try-step';
import { bufferFromTrajectories } from '../../core/experience/seed-buffer';
import { datasetOption, LLM_OPTION_HELP, offlineTrajectories } from '../experience-options';
import { parseSettings } from '../settings';

/** The held-out split of a final evaluation (train's, eval's); training itself only ever evaluates on dev. */
const SPLIT_OPTION = {
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
    backend: { type: 'string', description: 'tfjs backend', choices: ['wasm', 'cpu'], default: 'wasm' },
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
    json: { type: 'boolean', description: 'print the summary as JSON on the last line' },
  },
};

type TrainOptions = {
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
function freshConfig(o: TrainOptions, settings: Record<string, unknown>): TrainConfig {
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
function resumedConfig(
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
  try {
    return validateConfig(config);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, trainCommand);
    throw error;
  }
}

/** The named preset; an unknown name (own keys only, never '__proto__') is a usage error with the list. */
function presetFor(name: string): TrainConfig {
  try {
    return getPreset(name);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, trainCommand);
    throw error;
  }
}

/**
 * Where a run lives: --out, else runs/<preset>-<mode>-<algo>-<seed> (of the options, or the preset's
 * defaults): a real run and a dream of the same seed get folders of their own.
 */
function runFolder(o: TrainOptions): string {
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

function defaultRunFolder(config: { preset: string; mode: string; algo: string; seed: number }): string {
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
function settingsAsOptions(o: TrainOptions, given: Record<string, unknown>): [TrainOptions, Record<string, unknown>] {
  const refused = OWN_OPTION_SETTINGS.filter((key) => Object.hasOwn(given, key));
  if (refused.length > 0) throw new UsageError(refusedSettingText(refused[0], given[refused[0]]), trainCommand);
  const options: Record<string, unknown> = { ...o };
  const settings = { ...given };
  // A value --set gives for an option is checked first, as the option's would be (an --llm with a secret).
  const asOptions = Object.fromEntries(
    OPTION_SETTINGS.filter((k) => Object.hasOwn(settings, k)).map((k) => [k, settings[k]]),
  );
  try {
    validateSettings(asOptions, OPTION_SETTINGS);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, trainCommand);
    throw error;
  }
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

const SFT_FILE = 'sft.json';

/** What a run writes in its folder: a forced new run removes these (and nothing else) first. */
const RUN_ENTRIES = [
  RUN_FILE,
  'config.json',
  'metrics.jsonl',
  'perf.jsonl',
  'summary.json',
  SFT_FILE,
  'checkpoint',
  'buffer',
];

/**
 * A new run's folder must be new or empty: one holding a run is refused unless --force (then that
 * run's own files go), and one holding anything else is refused (train would write over it).
 */
function claimRunFolder(out: string, force: boolean): void {
  if (!existsSync(out) || !statSync(out).isDirectory()) return; // new, or a file (mkdir says what is wrong)
  const entries = readdirSync(out);
  if (entries.length === 0) return;
  const run = readRunIdentity(out);
  if (run === null && !entries.includes('checkpoint')) {
    const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? `, … (${entries.length - 5} more)` : '');
    throw new UsageError(
      `--out ${out} holds files that train did not write (${shown}); ` +
        `a run writes ${RUN_ENTRIES.slice(1, 4).join(', ')} ` +
        'and more there and would overwrite them. Pick a new or empty --out.',
      trainCommand,
    );
  }
  if (!force)
    throw new UsageError(
      `--out ${out} holds a run already (${run ? describeRun(run) : 'a checkpoint'}): continue it with --resume, ` +
        'start it over with --force (its checkpoint, buffer and metrics are replaced), or pick another --out.',
      trainCommand,
    );
  for (const entry of RUN_ENTRIES) rmSync(join(out, entry), { recursive: true, force: true });
}

export async function runTrain(args: ParsedArgs): Promise<void> {
  const [o, settings] = settingsAsOptions(
    args.options as TrainOptions,
    parseSettings((args.options as TrainOptions).set, SETTING_NAMES, trainCommand),
  );
  if (o.mode === 'sft') return runSftOnly(o, settings);
  if (o.sft && o.resume)
    throw new UsageError(
      '--sft starts a new run from the SFT policy; a resumed run keeps its own. Drop --sft.',
      trainCommand,
    );
  if (o.force && o.resume)
    throw new UsageError('--resume continues the run in OUT and --force starts it over: give one.', trainCommand);
  const fresh = o.resume ? null : freshConfig(o, settings);
  const out = fresh ? (o.out ?? defaultRunFolder(fresh)) : runFolder(o);
  if (fresh) claimRunFolder(out, o.force === true);
  // A new run gets a new identity (written with its first checkpoint); a resumed one checks its checkpoint's.
  const run = fresh ? newRunIdentity(fresh) : readRunIdentity(out);
  const store = new FolderCheckpointStore(join(out, 'checkpoint'), run ? { run } : {});
  const state = o.resume ? await store.load() : null;
  if (o.resume && !state)
    throw new UsageError(
      `--resume: no checkpoint in ${join(out, 'checkpoint')}. Start the run without --resume first.`,
      trainCommand,
    );
  const config = state ? resumedConfig(o, settings, state, store.dir) : fresh!;
  if (config.mode === 'real' && o.llm && !config.llmPrior)
    process.stderr.write(`--llm ${o.llm} is not used: a real run without llmPrior asks no language model.\n`);
  const backend = await initBackend(o.backend);
  process.stderr.write(`backend: ${backend.reason}\n`);
  if (o.dataset !== undefined && config.mode === 'real' && !o.sft)
    throw new UsageError(
      '--dataset seeds the replay buffer of a dream (or the cloning of --sft): ' +
        'use it with --mode dream or s2r, or --sft.',
      trainCommand,
    );
  if (o.dataset !== undefined && state)
    throw new UsageError(
      `--dataset seeds a new run's buffer; the run in ${out} has its buffer already. Drop --dataset to resume it.`,
      trainCommand,
    );
  if (o.estimate) {
    await estimateOnly(config, o.dataset, o.json === true);
    return;
  }
  if (config.mode !== 'real' && !state) {
    process.stderr.write(
      `${describeEstimate(estimateDreamCost(config), formatDuration)} Every figure is an estimate; --estimate measures the engine's speed first.\n`,
    );
  }
  mkdirSync(out, { recursive: true });
  if (fresh && run) writeRunIdentity(out, run);
  const deps = await trainerDeps(config, out, o.dataset);
  try {
    await trainAndSummarize(o, { config, state, store, out, deps, backend: backend.backend });
  } finally {
    await deps.buffer?.store.close(); // releases OUT/buffer's writer lock
  }
}

interface RunSetup {
  config: TrainConfig;
  state: TrainerState | null;
  store: FolderCheckpointStore;
  out: string;
  deps: TrainerDeps;
  backend: string;
}

/** Trains to the end (or the engine's stop), checkpointing every iteration, then evaluates and writes summary.json. */
async function trainAndSummarize(
  o: TrainOptions,
  { config, state, store, out, deps: given, backend }: RunSetup,
): Promise<void> {
  const metricsPath = join(out, 'metrics.jsonl');
  // Live progress inside an iteration (a language model can take minutes per iteration): a line on stderr.
  const meter = new ProgressMeter(() => performance.now(), config.iterations);
  const deps: TrainerDeps = { ...given, progress: meter };
  let trainer: Trainer;
  if (state) {
    trainer = await Trainer.restore(state, config, deps);
    // Keep the metrics of the iterations the checkpoint covers, drop any written after it.
    const kept = existsSync(metricsPath)
      ? readFileSync(metricsPath, 'utf8').split('\n').filter(Boolean).slice(0, state.iteration)
      : [];
    writeFileSync(metricsPath, kept.map((l) => l + '\n').join(''));
  } else {
    trainer = new Trainer(config, deps);
    if (o.sft) await cloneOffline(trainer, o.dataset, out);
    else rmSync(join(out, SFT_FILE), { force: true }); // a new run in an old folder did not start from its SFT
    writeFileSync(metricsPath, '');
    // Iteration 0 is a checkpoint too: a run stopped in its first iteration (the engine down) resumes from it.
    await store.save(await trainer.state());
  }
  writeFileSync(join(out, 'config.json'), JSON.stringify(trainer.config, null, 2) + '\n');
  const started = performance.now();
  const perfPath = join(out, 'perf.jsonl');
  const bar = progressBar(`train ${config.preset} ${trainer.config.algo}`);
  const live = liveLine(meter, o.progress ?? (process.stderr.isTTY ? 1 : 10));
  while (!trainer.finished) {
    live.iterating = true;
    const record = await trainer.runIteration().catch((error: unknown) => {
      live.stop();
      throw stoppedRun(error, trainer, out);
    });
    live.iterating = false;
    live.clear();
    // Wall-clock figures (perf/*) go to perf.jsonl so metrics.jsonl stays identical run to run.
    const { perf, rest } = splitPerf(record.metrics);
    appendFileSync(metricsPath, JSON.stringify({ iteration: record.iteration, ...roundAll(rest) }) + '\n');
    appendFileSync(perfPath, JSON.stringify({ iteration: record.iteration, ...perf }) + '\n');
    await store.save(await trainer.state());
    const evalText =
      record.metrics['eval/success_rate'] !== undefined
        ? ` eval ${record.metrics['eval/success_rate'].toFixed(2)}`
        : '';
    bar.update(
      record.iteration,
      Math.max(record.iteration, trainer.config.iterations),
      `${successText(record.metrics)}${evalText} real ${trainer.realSteps} dream ${trainer.dreamSteps}`,
    );
  }
  live.stop();
  bar.end();
  const { evaluation, dev } = await finalEvaluations(trainer, o.split);
  // A degenerate dream is never reported as a plain success (dream-health.ts): said on stderr and in the summary.
  const warnings = dreamWarnings(readHistory(metricsPath)).map((w) => w.message);
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  const summary = {
    preset: trainer.config.preset,
    mode: trainer.config.mode,
    algo: trainer.config.algo,
    seed: trainer.config.seed,
    real_steps: trainer.realSteps,
    dream_steps: trainer.dreamSteps,
    iterations: trainer.iteration,
    ...(trainer.config.mode !== 'real'
      ? {
          llm: trainer.config.llm,
          experience_model: deps.experienceModel?.label,
          invalid_rate: round(invalidRate(metricsPath), 4),
        }
      : {}),
    ...(o.dataset !== undefined ? { offline_dataset: o.dataset } : {}),
    ...(existsSync(join(out, SFT_FILE)) ? { started_from: JSON.parse(readFileSync(join(out, SFT_FILE), 'utf8')) } : {}),
    ...(deps.taskGenerator ? { task_generator: { label: deps.taskGenerator.label, ...deps.taskGenerator.stats } } : {}),
    eval: evalSummary(evaluation),
    ...(evaluation !== dev ? { eval_dev: evalSummary(dev) } : {}),
    wall_seconds: round((performance.now() - started) / 1000, 1),
    backend,
    out,
    ...(warnings.length > 0 ? { warnings } : {}),
    // What ran, every field: the preset, the options and --set, as the run used them.
    config: trainer.config,
  };
  writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  trainer.dispose();
  if (o.json) printJsonLast(summary);
  else
    console.log(
      `held-out success ${summary.eval.success} (score ${summary.eval.score}, ${summary.eval.episodes} tasks ` +
        `of the ${summary.eval.split} split) after ${summary.real_steps} real steps; run in ${out}`,
    );
}

/**
 * The run's own final evaluation (dev: the last iteration made it; a run resumed already finished
 * had none) and, with split test, one on the test tasks, made here after training is over.
 */
async function finalEvaluations(
  trainer: Trainer,
  split: EvalSplit,
): Promise<{ evaluation: EvalResult; dev: EvalResult }> {
  const episodes = trainer.config.finalEvalEpisodes;
  const dev = trainer.finalEvaluation?.result ?? (await trainer.evaluate(episodes));
  const evaluation = split === 'dev' ? dev : await trainer.source.evaluate(trainer.policy, episodes, split);
  return { evaluation, dev };
}

/** An evaluation as summary.json and `eval --json` write it: its split, rounded rates and its task count. */
function evalSummary(e: EvalResult): { split: EvalSplit; success: number; score: number; episodes: number } {
  return { split: e.split, success: round(e.success), score: round(e.score), episodes: e.episodes };
}

/**
 * Behaviour cloning of the trainer's policy on the offline expert episodes (sft.ts), written to
 * OUT/sft.json: what the run started from (a --sft run) or all it did (--mode sft).
 */
async function cloneOffline(trainer: Trainer, dataset: string | undefined, out: string) {
  const { config } = trainer;
  const sft = { ...DEFAULT_SFT_CONFIG, stepLimit: trainer.stepLimit, seed: config.seed };
  const examples = sftExamples(
    await offlineTrajectories(config.env, dataset, trainCommand),
    sft.sources,
    sft.stepLimit,
  );
  const bar = progressBar(`sft ${config.preset}`);
  const epochs = await behaviourCloning(trainer.policy, examples, sft, (r) =>
    bar.update(r.epoch, sft.epochs, `loss ${r.loss.toFixed(3)} accuracy ${r.accuracy.toFixed(3)}`),
  );
  bar.end();
  const last = epochs[epochs.length - 1];
  const record = {
    from: 'sft',
    sources: sft.sources,
    examples: examples.length,
    epochs: sft.epochs,
    learning_rate: sft.learningRate,
    loss: round(last.loss, 4),
    accuracy: round(last.accuracy, 4),
    ...(dataset !== undefined ? { offline_dataset: dataset } : {}),
  };
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, SFT_FILE), JSON.stringify(record, null, 2) + '\n');
  return record;
}

/**
 * `train --mode sft`: the SFT baseline. The policy is cloned from the offline expert episodes (no
 * RL, no environment steps), saved as a run's checkpoint (so `eval --run` plays it) and evaluated.
 */
async function runSftOnly(o: TrainOptions, settings: Record<string, unknown>): Promise<void> {
  const refused = ['resume', 'llm', 'estimate', 'sft', 'curriculum', 'algo'].filter(
    (k) => o[k as keyof TrainOptions] !== undefined,
  );
  if (refused.length)
    throw new UsageError(
      `--mode sft clones the offline data and trains nothing else: drop --${refused.join(', --')}.`,
      trainCommand,
    );
  const config = freshConfig({ ...o, mode: 'real', curriculum: false }, settings);
  const out = o.out ?? join('runs', `${config.preset}-sft-${config.seed}`);
  claimRunFolder(out, o.force === true);
  const backend = await initBackend(o.backend);
  process.stderr.write(`backend: ${backend.reason}\n`);
  mkdirSync(out, { recursive: true });
  const run = newRunIdentity(config);
  writeRunIdentity(out, run);
  const started = performance.now();
  const trainer = new Trainer(config, { featureSchema: await registeredEnvSchema(config.env) });
  try {
    const sft = await cloneOffline(trainer, o.dataset, out);
    await new FolderCheckpointStore(join(out, 'checkpoint'), { run }).save(await trainer.state());
    writeFileSync(join(out, 'config.json'), JSON.stringify(trainer.config, null, 2) + '\n');
    const { evaluation, dev } = await finalEvaluations(trainer, o.split);
    const summary = {
      ...{ preset: config.preset, mode: 'sft', seed: config.seed, real_steps: 0, dream_steps: 0, sft },
      eval: evalSummary(evaluation),
      ...(evaluation !== dev ? { eval_dev: evalSummary(dev) } : {}),
      ...{ wall_seconds: round((performance.now() - started) / 1000, 1), backend: backend.backend, out },
      config: trainer.config,
    };
    writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
    if (o.json) printJsonLast(summary);
    else
      console.log(
        `SFT: held-out success ${summary.eval.success} (score ${summary.eval.score}, ${summary.eval.episodes} tasks ` +
          `of the ${summary.eval.split} split), cloned from ${sft.examples} expert steps; run in ${out}`,
      );
  } finally {
    trainer.dispose();
  }
}

/** The run's metric history as records (metrics.jsonl: one iteration a line). */
function readHistory(metricsPath: string): IterationRecord[] {
  return readFileSync(metricsPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const { iteration, ...metrics } = JSON.parse(line) as Record<string, number>;
      return { iteration, metrics };
    });
}

/** The progress bar's success figure, named by who judged it: the real env, or the dream (never both under one name). */
function successText(metrics: Record<string, number>): string {
  const success = rolloutSuccess(metrics);
  if (!success) return 'real success — (every episode cut by the budget)';
  return success.judge === 'dream'
    ? `dream-judged success ${success.value.toFixed(2)}`
    : `real success ${success.value.toFixed(2)}`;
}

/**
 * The live progress line: every `seconds` while an iteration runs, on stderr — rewritten in place
 * on a terminal, one line each time otherwise (a log).
 */
function liveLine(meter: ProgressMeter, seconds: number): { iterating: boolean; clear(): void; stop(): void } {
  const tty = process.stderr.isTTY;
  const state = {
    iterating: false,
    clear() {
      if (tty) process.stderr.write('\r\x1b[K');
    },
    stop() {
      if (timer) clearInterval(timer);
      state.clear();
    },
  };
  const timer =
    seconds > 0
      ? setInterval(() => {
          if (!state.iterating) return;
          const line = formatProgressLine(meter.snapshot());
          process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
        }, seconds * 1000)
      : null;
  timer?.unref();
  return state;
}

/**
 * `train --estimate`: one step tried with the engine (on a held-out task, as Setup's "Try one
 * step"), then the dream's cost at the measured speed; nothing is trained or written.
 */
async function estimateOnly(config: TrainConfig, dataset: string | undefined, json: boolean): Promise<void> {
  if (config.mode === 'real')
    throw new UsageError('--estimate sizes a dream: use it with --mode dream or s2r.', trainCommand);
  const buffer =
    config.retrievalK > 0
      ? await bufferFromTrajectories(await offlineTrajectories(config.env, dataset, trainCommand))
      : undefined;
  const { experienceModel } = await buildRunParts(
    { ...config, mode: 'dream', llmPrior: false, curriculumVariations: 'procedural' },
    { ...nodeEngineDeps(), ...(buffer ? { buffer } : {}) },
  );
  const tried = await tryOneStep(experienceModel!, { envId: config.env, clock: () => performance.now() });
  experienceModel!.dispose?.();
  const p = tried.prediction;
  const measured = p.attempts > 0 && !p.cached;
  const chat = config.llm.startsWith('openai:');
  const speed: EngineSpeed | undefined = measured
    ? {
        secondsPerTransition: tried.ms / 1000,
        parallel: chat ? config.llmConcurrency : 1,
        measured: true,
        source: `measured: one step took ${Math.round(tried.ms)} ms${chat ? `; ${config.llmConcurrency} at once if the server batches them (llmConcurrency)` : ''}`,
      }
    : undefined;
  const tokens = tried.tokens.prompt + tried.tokens.completion;
  const estimate = estimateDreamCost(config, {
    ...(speed ? { speed } : {}),
    ...(measured && chat && tokens > 0 ? { tokensPerTransition: tokens } : {}),
  });
  const verdict = p.valid
    ? `predicted ${p.actionValid ? 'a valid' : 'an invalid'} action, reward ${p.reward}${p.terminated ? ', terminated' : ''}`
    : `unusable answer (${p.invalidReason ?? 'no reason'})`;
  process.stderr.write(
    `try one step (${terminalSafe(tried.label)}): '${terminalSafe(tried.action)}' on task '${terminalSafe(tried.task.instruction)}': ${terminalSafe(verdict)}; ` +
      `the real env: ${tried.real.valid ? 'valid' : 'invalid'}, reward ${tried.real.reward}; ${tried.tokens.prompt} prompt + ${tried.tokens.completion} answer tokens, ${Math.round(tried.ms)} ms.\n`,
  );
  const text = `${describeEstimate(estimate, formatDuration)} Every figure is an estimate.`;
  if (json)
    printJsonLast({
      estimate,
      try_step: { action: tried.action, valid: p.valid, ms: Math.round(tried.ms), tokens: tried.tokens },
    });
  else console.log(text);
}

/** An engine that stopped answering ends the run with its checkpoint named (the last finished iteration's). */
function stoppedRun(error: unknown, trainer: Trainer, out: string): unknown {
  if (!(error instanceof EngineFailureError)) return error;
  trainer.dispose();
  return new Error(
    `${error.message}\nThe run stopped in iteration ${trainer.iteration + 1}; the checkpoint of iteration ${trainer.iteration} is in ` +
      `${join(out, 'checkpoint')}: once the server answers, continue with \`dreamgym train --resume --out ${out}\` ` +
      '(--set llmTimeoutMs=…,llmRetries=…,llmMaxFailures=… may change on resume).',
    { cause: error },
  );
}

/** Mean dream/invalid_rate over the run's dream iterations (0 when none). */
function invalidRate(metricsPath: string): number {
  const rates = readFileSync(metricsPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l)['dream/invalid_rate'])
    .filter((x) => typeof x === 'number');
  return rates.length ? rates.reduce((a: number, b: number) => a + b, 0) / rates.length : 0;
}

/**
 * The run's parts (buildRunParts) and, for dream and s2r runs, a replay buffer in OUT/buffer
 * (seeded once from the env's shipped offline dataset, or `dataset`; dreamed and real transitions
 * are added as the run goes). The clock gives the perf/* metrics.
 */
export async function trainerDeps(config: TrainConfig, out: string, dataset?: string): Promise<TrainerDeps> {
  const buffer = config.mode === 'real' ? undefined : await runBuffer(config.env, out, dataset);
  const parts = await buildRunParts(config, { ...nodeEngineDeps(), ...(buffer ? { buffer } : {}) });
  return { ...parts, ...(buffer ? { buffer, now: () => Date.now() } : {}), clock: () => performance.now() };
}

async function runBuffer(envId: string, out: string, dataset: string | undefined): Promise<ReplayBuffer> {
  mkdirSync(out, { recursive: true });
  // A bad --dataset is refused before the run's buffer folder is made.
  const given = dataset === undefined ? null : await offlineTrajectories(envId, dataset, trainCommand);
  const buffer = new ReplayBuffer(await FolderBufferStore.open(join(out, 'buffer')));
  if ((await buffer.stats()).transitions === 0) {
    await buffer.importTrajectories(given ?? (await offlineTrajectories(envId, undefined, trainCommand)), {
      source: 'offline',
      createdAt: Date.now(),
    });
  }
  return buffer;
}

/** perf/* (wall-clock, rounded for reading) apart from the reproducible metrics. */
function splitPerf(metrics: Record<string, number>): { perf: Record<string, number>; rest: Record<string, number> } {
  const perf: Record<string, number> = {},
    rest: Record<string, number> = {};
  for (const [key, value] of Object.entries(metrics)) {
    if (key.startsWith('perf/')) perf[key] = round(value, key === 'perf/iteration_seconds' ? 3 : 1);
    else rest[key] = value;
  }
  return { perf, rest };
}

function roundAll(metrics: Record<string, number>): Record<string, number | null> {
  return Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, Number.isFinite(v) ? round(v, 6) : null]));
}

export const evalCommand: CommandSpec = {
  name: 'eval',
  summary: "evaluate a run's checkpoint on held-out real tasks",
  usage: 'dreamgym eval --run DIR [--episodes N] [--split dev|test] [--json]',
  options: {
    run: { type: 'string', description: 'run folder written by train' },
    split: SPLIT_OPTION,
    episodes: { type: 'integer', description: 'held-out tasks', default: 200, min: 1, max: 100_000 },
    backend: { type: 'string', description: 'tfjs backend', choices: ['wasm', 'cpu'], default: 'wasm' },
    json: { type: 'boolean', description: 'print the result as JSON on the last line' },
  },
};

export async function runEval(args: ParsedArgs): Promise<void> {
  const o = args.options as {
    run?: string;
    episodes: number;
    split: EvalSplit;
    backend: 'wasm' | 'cpu';
    json?: boolean;
  };
  if (!o.run) throw new UsageError('eval needs --run DIR (a folder written by train).', evalCommand);
  await initBackend(o.backend);
  const agent = await loadRunAgent(o.run);
  const { trainer } = agent;
  const evaluation = await trainer.source.evaluate(trainer.policy, o.episodes, o.split).finally(() => agent.close());
  const { config, iteration } = agent.trainer;
  const result = {
    run: o.run,
    preset: config.preset,
    algo: config.algo,
    iteration,
    eval: evalSummary(evaluation),
  };
  if (o.json) printJsonLast(result);
  else
    console.log(
      `${o.run}: held-out success ${result.eval.success}, score ${result.eval.score} ` +
        `over ${result.eval.episodes} tasks of the ${result.eval.split} split`,
    );
}

/** The greedy agent of a run folder's checkpoint, for playing real episodes (eval, the on-policy audit). */
export async function loadRunAgent(run: string): Promise<{ trainer: Trainer; close(): Promise<void> }> {
  const identity = readRunIdentity(run);
  const state = await new FolderCheckpointStore(join(run, 'checkpoint'), identity ? { run: identity } : {}).load();
  if (!state) throw new Error(`No checkpoint in ${join(run, 'checkpoint')}: train first, or check the folder.`);
  // The agent plays the real env (with its LLM prior, if it trained with one): no dream, no task generation.
  const asReal = { mode: 'real', curriculumVariations: 'procedural' } as const;
  const deps = await trainerDeps({ ...state.config, ...asReal }, run);
  const trainer = await Trainer.restore(state, asReal, deps);
  return {
    trainer,
    close: async () => {
      trainer.dispose();
      await deps.buffer?.store.close();
    },
  };
}
