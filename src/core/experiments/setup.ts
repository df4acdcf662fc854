/**
 * What every table's plan shares: the preset of an env at a size, a row's training config, the
 * setup a table prints, the seeds and the held-out split of a request, and a row's statistics.
 */
import { parseLlmSpec } from '../llm/spec';
import { PRESETS, type TrainConfig } from '../train/config';
import { EVAL_SPLITS, heldOutSeed, type EvalSplit } from '../train/evaluate';
import { stat } from '../train/stats';
import {
  ExperimentError,
  type EnvSetup,
  type ExperimentOptions,
  type ExperimentSize,
  type JobOutcome,
  type RowResult,
} from './types';

// ---- presets and configs ----------------------------------------------------------------------

// ---- presets and configs ----------------------------------------------------------------------

/** What --quick changes: a smoke run, not a result. */
export const QUICK_OVERRIDES: Partial<TrainConfig> = {
  iterations: 4,
  tasksPerIteration: 4,
  groupSize: 4,
  finalEvalEpisodes: 30,
  realStepBudget: 2000,
};

/** The env's preset of a size (webshop-lite-v0 → webshop-easy or webshop-llm-demo, household-v0 → household-…). */
export function presetForEnv(envId: string, size: ExperimentSize = 'easy'): TrainConfig {
  const preset = Object.values(PRESETS).find((p) => p.env === envId && p.preset.endsWith(`-${size}`));
  if (!preset) {
    const valid = Object.values(PRESETS)
      .filter((p) => p.preset.endsWith(`-${size}`))
      .map((p) => p.env);
    throw new ExperimentError(
      `No ${size} preset for environment '${envId}'. Valid envs: ${[...new Set(valid)].join(', ')}.`,
    );
  }
  return { ...preset };
}

export function baseConfig(envId: string, options: ExperimentOptions): TrainConfig {
  return {
    ...presetForEnv(envId, options.size),
    ...(options.quick ? QUICK_OVERRIDES : {}),
    ...(options.overrides ?? {}),
    evalInterval: 0,
  };
}

export function setupOf(config: TrainConfig, split: EvalSplit): EnvSetup {
  return {
    env: config.env,
    preset: config.preset,
    difficulty: config.difficulty,
    split,
    heldOutTasks: config.finalEvalEpisodes,
    iterations: config.iterations,
    tasksPerIteration: config.tasksPerIteration,
    groupSize: config.groupSize,
    realStepBudget: config.realStepBudget,
    s2rRealBudget: Math.round(config.s2rRealFraction * config.realStepBudget),
  };
}

export function seedList(options: ExperimentOptions): number[] {
  if (!Number.isInteger(options.seeds) || options.seeds < 1)
    throw new ExperimentError(`seeds must be a positive integer; got ${options.seeds}.`);
  return Array.from({ length: options.seeds }, (_, i) => i + 1);
}

/** The held-out split of the final evaluations (dev unless the request names test). */
export function splitOf(options: Pick<ExperimentOptions, 'split'>): EvalSplit {
  const split = options.split ?? 'dev';
  if (!EVAL_SPLITS.includes(split))
    throw new ExperimentError(`split must be ${EVAL_SPLITS.join(' or ')}; got '${String(split)}'.`);
  return split;
}

export function checkOptions(options: ExperimentOptions): void {
  if (options.envs.length === 0) throw new ExperimentError('No environments given.');
  for (const env of options.envs) presetForEnv(env, options.size);
  parseLlmSpec(options.llm);
  seedList(options);
  splitOf(options);
}

/** A training config of a row: preset (+quick, +overrides), then the row's own settings. */
export function rowConfig(
  envId: string,
  options: ExperimentOptions,
  seed: number,
  settings: Partial<TrainConfig>,
): TrainConfig {
  const mode = settings.mode ?? 'real';
  return {
    ...baseConfig(envId, options),
    llm: options.llm,
    curriculum: mode !== 'real',
    ...settings,
    seed,
    evalInterval: 0,
  };
}

/** Sum of the runs' wall times (compute seconds; with several workers, more than the elapsed time). */
export function computeSeconds(outcomes: JobOutcome[]): number {
  return outcomes.reduce((a, o) => a + o.wallSeconds, 0);
}

export function rowFrom(
  base: Omit<RowResult, 'success' | 'score' | 'realSteps' | 'dreamSteps' | 'wallSeconds' | 'seeds'>,
  outcomes: JobOutcome[],
  seeds: number[],
): RowResult {
  const invalid = outcomes.map((o) => o.invalidRate).filter((x): x is number => typeof x === 'number');
  return {
    ...base,
    success: stat(outcomes.map((o) => o.success)),
    score: stat(outcomes.map((o) => o.score)),
    realSteps: stat(outcomes.map((o) => o.realSteps)),
    dreamSteps: stat(outcomes.map((o) => o.dreamSteps)),
    wallSeconds: stat(outcomes.map((o) => o.wallSeconds)),
    ...(invalid.length ? { invalidRate: stat(invalid) } : {}),
    seeds,
  };
}

/** Which held-out tasks the table's numbers come from, and what that split is for (docs/architecture.md §7.1). */
export function splitNote(options: Pick<ExperimentOptions, 'split'>): string {
  const split = splitOf(options);
  const first = heldOutSeed(split, 0);
  return split === 'test'
    ? `Split: test — held-out tasks from seed ${first}, used only for reported tables: no training run, ` +
        'curriculum or recipe choice ever saw them; each run was evaluated on them after its last iteration ' +
        '(an S2R run also when its dream phase ends, for the dream row; nothing in training reads it).'
    : `Split: dev — held-out tasks from seed ${first}, the ones recipes are tuned on and the page and audit ` +
        'use; a reported table uses --split test.';
}
