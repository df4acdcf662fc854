/**
 * The paper's result tables in miniature (DreamGym, arXiv 2511.03773), run end to end on our envs:
 *
 * - Table 1: per env, the random and expert policies and real / dream / S2R training with
 *   GRPO and PPO, each evaluated on the same held-out real tasks, with the real training steps
 *   each row used (dream: 0; S2R: its real phase) and its dreamed steps.
 * - Table 2: full DreamGym (dream GRPO) against its ablations.
 * - The transfer-bound grid (the paper's Lemma 1, Appendix B): dream GRPO over a grid of the
 *   noisy oracle's (ε_R, ε_P).
 * - Cross-domain transfer (the paper's Fig. 3): a policy dreamed in one env, evaluated in the other's real env.
 *
 * Pure core (no node:fs, no clock of its own): the edge hands in the shipped offline datasets, a
 * clock and a progress callback; the CLI renders the results as markdown (src/cli/experiment-report.ts). Every training row gets its own Trainer (evalInterval 0, the
 * preset's finalEvalEpisodes held-out tasks) and, for dream/s2r, a fresh in-memory replay buffer
 * seeded from the env's dataset; every trainer is disposed. Rows that dream over the noisy oracle
 * are labelled `oracle (ε_R=…, ε_P=…)` everywhere, so they are never mistaken for a learned model.
 * The held-out tasks are the dev split unless the request asks for `split: 'test'` (a reported
 * table): then each run, once trained, is evaluated on the test tasks (evaluate.ts, docs/architecture.md §7.1).
 */
import type { Trajectory } from '../types';
import { ReplayBuffer } from '../buffer/buffer';
import { MemoryBufferStore } from '../buffer/stores/memory';
import { makeBaselinePolicy, rolloutEpisode } from '../data/rollout';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import { llmSpecLabel, parseLlmSpec, type LlmSpecText } from '../llm/spec';
import { PRESETS, validateConfig, type Algorithm, type Mode, type TrainConfig } from './config';
import { EVAL_SPLITS, evaluatePolicy, heldOutSeed, type EvalResult, type EvalSplit } from './evaluate';
import { Trainer } from './loop';
import { rolloutSuccess } from './metrics';
import { behaviourCloning, DEFAULT_SFT_CONFIG, sftExamples } from './sft';
import { CandidatePolicy } from '../policy/policy';
import { buildRunParts, type RunPartsDeps } from './run-parts';
import { ratioOfMeans, stat, type Ratio, type Stat } from './stats';

export type { Stat } from './stats';

// ---- options, dependencies, results -----------------------------------------------------------

/** Which preset of each env the rows run: `<short>-easy`, or the small `<short>-llm-demo` (for slow experience models). */
export type ExperimentSize = 'easy' | 'llm-demo';
export const EXPERIMENT_SIZES: readonly ExperimentSize[] = ['easy', 'llm-demo'];

export interface ExperimentOptions {
  /** Environment ids; each runs its `<short>-<size>` preset (webshop-easy, household-easy by default). */
  envs: string[];
  /**
   * 'easy' (default), or 'llm-demo': a few thousand dreamed transitions a run (PPO's demo
   * settings, config.ts), what a language model or a learned model can dream in minutes.
   */
  size?: ExperimentSize;
  /** Experience model of the dream/s2r rows: 'oracle:EPS_R,EPS_P' or 'openai:BASE_URL#MODEL'. */
  llm: LlmSpecText;
  /** Seeds 1..seeds per row (mean ± std over them). */
  seeds: number;
  /** Smoke run: few iterations, small batches, few held-out tasks, small real budget. */
  quick?: boolean;
  /**
   * The held-out split every row's final evaluation plays: 'dev' (default; tuning) or 'test'
   * (reported tables only). Training itself never sees the test split: with 'test', each run is
   * evaluated on it once, after its last iteration.
   */
  split?: EvalSplit;
  /** Applied to every training config after the preset (and `quick`); tests use it for tiny runs. */
  overrides?: Partial<TrainConfig>;
  /**
   * Table 2 with the noisy oracle: re-run the retrieval / reasoning / history ablations anyway
   * (they are inert for the oracle, so by default their rows repeat the full row without a run).
   */
  rerunInertAblations?: boolean;
  /**
   * Table 2 with a learned experience model: `learned:` specs of models trained without a part
   * of the context (the CLI trains them), by row; a row without one is not applicable.
   */
  retrainedModels?: Partial<Record<RetrainedRow, LlmSpecText>>;
  /**
   * Table 2's rows: 'paper' (default; the paper's ablations of the dream's context, the curriculum
   * and the verdict) or 'pessimism' (the ensemble, the halt and real starts, each removed or varied).
   */
  ablations?: AblationSet;
}

export type AblationSet = 'paper' | 'pessimism';
export const ABLATION_SETS: readonly AblationSet[] = ['paper', 'pessimism'];

export interface ExperimentDeps {
  /** The env's shipped offline trajectories (seed of each dream/s2r row's fresh buffer); null: none shipped. */
  loadDataset?: (envId: string) => Promise<readonly Trajectory[] | null> | readonly Trajectory[] | null;
  /** What the edge hands the run builder (the API key of openai: specs, a learned-model loader). */
  engine?: Pick<RunPartsDeps, 'apiKey' | 'loadLearnedModel'>;
  /** Clock in milliseconds (wall times, buffer timestamps); without it wall times read 0. */
  now?: () => number;
  onProgress?: (event: ExperimentProgress) => void;
}

export type ExperimentProgress =
  | { kind: 'start'; job: number; jobs: number; label: string }
  | {
      kind: 'iteration';
      job: number;
      jobs: number;
      label: string;
      iteration: number;
      iterations: number;
      phase: 'real' | 'dream';
      /** The rollouts' success as their judge saw it: the real env in a real phase, the dream in a dream phase; null when the budget cut every episode. */
      success: number | null;
      realSteps: number;
      dreamSteps: number;
    }
  | {
      kind: 'done';
      job: number;
      jobs: number;
      label: string;
      /** The held-out split of success and score. */
      split: EvalSplit;
      success: number;
      score: number;
      realSteps: number;
      dreamSteps: number;
      wallSeconds: number;
    };

export interface RowResult {
  id: string;
  label: string;
  kind: 'baseline' | 'train' | 'not-applicable';
  mode?: Mode;
  algo?: Algorithm;
  /** Experience model label of dream/s2r rows (`oracle (ε_R=…, ε_P=…)` or `openai MODEL @ URL`). */
  experienceModel?: string;
  /** The config fields this row sets on top of the preset (Table 2: the ablation). */
  changes?: Partial<TrainConfig>;
  /** Held-out success rate and score, 0..1. */
  success: Stat;
  score: Stat;
  realSteps: Stat;
  dreamSteps: Stat;
  wallSeconds: Stat;
  /** Mean share of dreamed steps whose prediction was unusable (dream/s2r rows). */
  invalidRate?: Stat;
  seeds: number[];
  /** Why a row was not run, or repeats another row. */
  note?: string;
  /** Table 2: the id of the row whose numbers this row repeats (inert ablation, not re-run). */
  sameAs?: string;
}

export interface EnvSetup {
  env: string;
  preset: string;
  difficulty: number;
  /** The held-out split the rows were evaluated on, and how many of its tasks. */
  split: EvalSplit;
  heldOutTasks: number;
  iterations: number;
  tasksPerIteration: number;
  groupSize: number;
  realStepBudget: number;
  s2rRealBudget: number;
}

export interface EnvTable {
  setup: EnvSetup;
  rows: RowResult[];
  /** Table 1: each dream (or S2R) row's mean success over its real row's, with a 95 % interval. */
  ratios?: RowRatio[];
}

/** `row`'s mean held-out success over `against`'s (ratioOfMeans, stats.ts). */
export interface RowRatio extends Ratio {
  row: string;
  against: string;
}

export interface TableResult {
  table: 1 | 2;
  /** Table 2's row set. */
  ablations?: AblationSet;
  split: EvalSplit;
  llm: string;
  experienceModel: string;
  oracle: boolean;
  seeds: number[];
  quick: boolean;
  envs: EnvTable[];
  notes: string[];
  /** Sum of the wall times of this part's runs (with several workers: more than the elapsed time). */
  computeSeconds: number;
}

export const GRID_EPSILONS = [0, 0.1, 0.3] as const;

export interface GridCell {
  epsilonReward: number;
  epsilonTransition: number;
  label: string;
  success: Stat;
  score: Stat;
  dreamSteps: Stat;
}

export interface GridEnvResult {
  setup: EnvSetup;
  /** cells[i][j]: ε_R = epsilons[i], ε_P = epsilons[j]. */
  cells: GridCell[][];
  /** Mean final success of the ε_R = max row and of the ε_P = max column, and of the two pure cells. */
  rewardRowMean: number;
  transitionColumnMean: number;
  rewardOnly: number;
  transitionOnly: number;
  clean: number;
  /** ≈ 2 binomial standard errors of the row-vs-column difference (held-out evaluation noise only). */
  tolerance: number;
  verdict: 'reward error hurts more' | 'transition error hurts more' | 'no clear difference';
}

export interface GridResult {
  split: EvalSplit;
  epsilons: number[];
  seeds: number[];
  quick: boolean;
  envs: GridEnvResult[];
  notes: string[];
  computeSeconds: number;
}

export interface TransferResult {
  split: EvalSplit;
  llm: string;
  experienceModel: string;
  seeds: number[];
  quick: boolean;
  /** Target envs (columns) and their setups. */
  targets: EnvSetup[];
  /** One row per training env: held-out success/score in every target env (the diagonal is in-domain). */
  rows: {
    trainedIn: string;
    label: string;
    success: Record<string, Stat>;
    score: Record<string, Stat>;
    dreamSteps: Stat;
  }[];
  /** The random policy in each target env, for reference. */
  random: { success: Record<string, Stat>; score: Record<string, Stat> };
  notes: string[];
  /** Sum of the wall times of this part's runs (with several workers: more than the elapsed time). */
  computeSeconds: number;
}

export class ExperimentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExperimentError';
  }
}

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

function baseConfig(envId: string, options: ExperimentOptions): TrainConfig {
  return {
    ...presetForEnv(envId, options.size),
    ...(options.quick ? QUICK_OVERRIDES : {}),
    ...(options.overrides ?? {}),
    evalInterval: 0,
  };
}

function setupOf(config: TrainConfig, split: EvalSplit): EnvSetup {
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

function seedList(options: ExperimentOptions): number[] {
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

function checkOptions(options: ExperimentOptions): void {
  if (options.envs.length === 0) throw new ExperimentError('No environments given.');
  for (const env of options.envs) presetForEnv(env, options.size);
  parseLlmSpec(options.llm);
  seedList(options);
  splitOf(options);
}

// ---- statistics and jobs ----------------------------------------------------------------------

/** What one job (a baseline evaluation or a training run, one seed) hands back; plain JSON. */
export interface JobOutcome {
  /** The held-out split of success and score (and of the evaluations elsewhere). */
  split: EvalSplit;
  success: number;
  score: number;
  realSteps: number;
  dreamSteps: number;
  wallSeconds: number;
  invalidRate?: number;
  /** Evaluations in further envs (transfer), by env id. */
  elsewhere?: Record<string, EvalResult>;
  /**
   * An S2R run's policy at the end of its dream phase, evaluated as the dream row's is: the same
   * policy a dream run of the same config and seed ends with (the phases share every stream).
   */
  dreamPhase?: Omit<JobOutcome, 'dreamPhase' | 'elsewhere'>;
}
type Outcome = JobOutcome;

type IterationReport = Omit<Extract<ExperimentProgress, { kind: 'iteration' }>, 'kind' | 'job' | 'jobs' | 'label'>;

interface Job {
  label: string;
  /** What fixes the job's outcome (its kind, config, split): equal keys, equal outcomes. */
  key: string;
  /** Relative cost estimate (for scheduling across workers and for ETAs). */
  cost: number;
  /** The experience model it dreams with (an llm spec), when it dreams. */
  llm?: LlmSpecText;
  run(report: (e: IterationReport) => void): Promise<Outcome>;
}

interface Plan<T> {
  jobs: Job[];
  assemble(outcomes: Outcome[]): T;
}

class Context {
  private readonly datasets = new Map<string, Promise<readonly Trajectory[] | null>>();
  constructor(readonly deps: ExperimentDeps) {}
  now(): number {
    return this.deps.now?.() ?? 0;
  }

  /** The env's shipped offline dataset (parsed once per env); null: none handed in. */
  dataset(envId: string): Promise<readonly Trajectory[] | null> {
    let data = this.datasets.get(envId);
    if (!data) {
      data = Promise.resolve(this.deps.loadDataset?.(envId) ?? null);
      this.datasets.set(envId, data);
    }
    return data;
  }

  /** A fresh in-memory buffer seeded from the env's shipped dataset. */
  async freshBuffer(envId: string): Promise<ReplayBuffer> {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const trajectories = await this.dataset(envId);
    if (trajectories?.length)
      await buffer.importTrajectories(trajectories, { source: 'offline', createdAt: this.now() });
    return buffer;
  }
}

/** Sum of the runs' wall times (compute seconds; with several workers, more than the elapsed time). */
function computeSeconds(outcomes: Outcome[]): number {
  return outcomes.reduce((a, o) => a + o.wallSeconds, 0);
}

/** The random or expert policy on the held-out tasks (of a split) a trained policy is evaluated on. */
export async function evaluateBaseline(
  name: 'random' | 'expert',
  envId: string,
  difficulty: number,
  episodes: number,
  seed: number,
  split: EvalSplit = 'dev',
): Promise<EvalResult> {
  const definition = getEnvDefinition(envId);
  const env = makeEnv(envId);
  const policy = makeBaselinePolicy(name);
  let successes = 0,
    score = 0,
    steps = 0;
  for (let i = 0; i < episodes; i++) {
    const taskSeed = heldOutSeed(split, i);
    const t = await rolloutEpisode(env, policy, {
      seed: taskSeed + seed * 7919,
      task: definition.generateTask(taskSeed, difficulty),
    });
    if (t.result.success) successes++;
    score += t.result.score;
    steps += t.result.steps;
  }
  return { split, success: successes / episodes, score: score / episodes, episodes, meanSteps: steps / episodes };
}

/** The outcome of a row that takes no env steps (random, expert, SFT): its evaluation only. */
function untrainedOutcome(r: { success: number; score: number }, split: EvalSplit, wallSeconds: number) {
  return { split, success: r.success, score: r.score, realSteps: 0, dreamSteps: 0, wallSeconds };
}

/** Relative cost of training with `config` (rollout steps at the step limit; dreaming costs about twice a real step). */
function trainCost(config: TrainConfig, split: EvalSplit): number {
  const stepLimit = getEnvDefinition(config.env).defaultStepLimit;
  const rollouts = config.iterations * config.tasksPerIteration * config.groupSize * stepLimit;
  const factor = config.mode === 'real' ? 1 : config.mode === 'dream' ? 2 : 2 + config.s2rRealFraction;
  const evaluations = split === 'dev' ? 1 : 2; // the run's own (dev), then the test split's
  return rollouts * factor + evaluations * config.finalEvalEpisodes * stepLimit;
}

function baselineJob(
  ctx: Context,
  name: 'random' | 'expert',
  config: TrainConfig,
  seed: number,
  split: EvalSplit,
): Job {
  return {
    label: `${config.env} ${name} policy seed ${seed}`,
    key: jobKey('baseline', {
      name,
      env: config.env,
      difficulty: config.difficulty,
      seed,
      split,
      episodes: config.finalEvalEpisodes,
    }),
    cost: config.finalEvalEpisodes * getEnvDefinition(config.env).defaultStepLimit,
    async run() {
      const started = ctx.now();
      const r = await evaluateBaseline(name, config.env, config.difficulty, config.finalEvalEpisodes, seed, split);
      return untrainedOutcome(r, split, (ctx.now() - started) / 1000);
    },
  };
}

/**
 * Behaviour cloning of `policy` on the env's offline expert episodes (sft.ts): the SFT row, and the
 * start of the SFT-then-dream row (its trainer's policy, the same initial weights as the SFT row's).
 */
async function cloneExpert(ctx: Context, policy: CandidatePolicy, config: TrainConfig, epochs: number): Promise<void> {
  const data = await ctx.dataset(config.env);
  if (!data?.length)
    throw new ExperimentError(
      `The SFT rows clone the offline dataset of ${config.env}, and none was handed in: ` +
        'give ExperimentDeps.loadDataset.',
    );
  const stepLimit = getEnvDefinition(config.env).defaultStepLimit;
  const sft = { ...DEFAULT_SFT_CONFIG, epochs, stepLimit, seed: config.seed };
  await behaviourCloning(policy, sftExamples(data, sft.sources, stepLimit), sft);
}

/** The SFT baseline: the policy cloned from the expert episodes, no RL, evaluated as every row is. */
function sftJob(ctx: Context, config: TrainConfig, split: EvalSplit, epochs: number): Job {
  return {
    label: `${config.env} SFT (behaviour cloning) seed ${config.seed}`,
    key: jobKey('sft', { config, split, epochs }),
    cost: 2 * config.finalEvalEpisodes * getEnvDefinition(config.env).defaultStepLimit,
    async run() {
      const started = ctx.now();
      const policy = new CandidatePolicy({ seed: config.seed }); // the initial policy of every row's trainer
      try {
        await cloneExpert(ctx, policy, config, epochs);
        const r = await evaluatePolicy(policy, config.env, config.difficulty, config.finalEvalEpisodes, { split });
        return untrainedOutcome(r, split, (ctx.now() - started) / 1000);
      } finally {
        policy.dispose();
      }
    },
  };
}

/**
 * The final evaluation of a trained policy on a split. Dev: the one the run made after its last
 * iteration. Test: a fresh one on the test tasks, made only here, after training is over.
 */
async function finalEvaluation(trainer: Trainer, config: TrainConfig, split: EvalSplit): Promise<EvalResult> {
  // The last iteration evaluated the final policy on finalEvalEpisodes dev tasks.
  if (split === 'dev') return trainer.finalEvaluation?.result ?? (await trainer.evaluate(config.finalEvalEpisodes));
  return trainer.source.evaluate(trainer.policy, config.finalEvalEpisodes, split);
}

/** One training run: a fresh Trainer (and buffer for dream/s2r), trained to the end, evaluated, disposed. */
function trainJob(
  ctx: Context,
  label: string,
  config: TrainConfig,
  split: EvalSplit,
  evalElsewhere: TrainConfig[] = [],
  /** Epochs of behaviour cloning the policy starts from (SFT, then dream); null: the untrained policy. */
  sftEpochs: number | null = null,
): Job {
  return {
    label,
    key: jobKey('train', {
      config,
      split,
      sftEpochs,
      elsewhere: evalElsewhere.map((t) => [t.env, t.difficulty, t.finalEvalEpisodes]),
    }),
    cost:
      trainCost(config, split) +
      evalElsewhere.reduce((a, t) => a + t.finalEvalEpisodes * getEnvDefinition(t.env).defaultStepLimit, 0),
    ...(config.mode !== 'real' ? { llm: config.llm } : {}),
    async run(report) {
      const started = ctx.now();
      const valid = validateConfig({ ...config });
      const dreams = valid.mode !== 'real';
      const buffer = dreams ? await ctx.freshBuffer(valid.env) : undefined;
      const parts = await buildRunParts(valid, { ...ctx.deps.engine, ...(buffer ? { buffer } : {}) });
      const trainer = new Trainer(valid, { ...parts, ...(buffer ? { buffer, now: () => ctx.now() } : {}) });
      try {
        if (sftEpochs !== null) await cloneExpert(ctx, trainer.policy, valid, sftEpochs);
        const invalid: number[] = [];
        let dreamPhase: JobOutcome['dreamPhase'];
        while (!trainer.finished) {
          const record = await trainer.runIteration();
          const rate = record.metrics['dream/invalid_rate'];
          if (typeof rate === 'number') invalid.push(rate);
          report({
            iteration: record.iteration,
            iterations: Math.max(record.iteration, valid.iterations),
            phase: trainer.phaseOf(record.iteration),
            success: rolloutSuccess(record.metrics)?.value ?? null,
            realSteps: trainer.realSteps,
            dreamSteps: trainer.dreamSteps,
          });
          if (valid.mode === 's2r' && record.iteration === valid.iterations) {
            const atSwitch = await trainer.source.evaluate(trainer.policy, valid.finalEvalEpisodes, split);
            dreamPhase = phaseOutcome(atSwitch, trainer, split, (ctx.now() - started) / 1000, invalid);
          }
        }
        const evaluation = await finalEvaluation(trainer, valid, split);
        const elsewhere: Record<string, EvalResult> = {};
        for (const target of evalElsewhere) {
          elsewhere[target.env] = await evaluatePolicy(
            trainer.policy,
            target.env,
            target.difficulty,
            target.finalEvalEpisodes,
            { split },
          );
        }
        return {
          split,
          success: evaluation.success,
          score: evaluation.score,
          realSteps: trainer.realSteps,
          dreamSteps: trainer.dreamSteps,
          wallSeconds: (ctx.now() - started) / 1000,
          ...(dreams ? { invalidRate: meanOr0(invalid) } : {}),
          ...(evalElsewhere.length ? { elsewhere } : {}),
          ...(dreamPhase ? { dreamPhase } : {}),
        };
      } finally {
        trainer.dispose();
        parts.experienceModel?.dispose?.();
        await buffer?.store.close();
      }
    },
  };
}

const meanOr0 = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** The outcome of an S2R run's dream phase: its evaluation at the switch, 0 real steps so far. */
function phaseOutcome(
  evaluation: EvalResult,
  trainer: Trainer,
  split: EvalSplit,
  wallSeconds: number,
  invalid: number[],
): NonNullable<JobOutcome['dreamPhase']> {
  const { success, score } = evaluation;
  const { realSteps, dreamSteps } = trainer;
  return { split, success, score, realSteps, dreamSteps, wallSeconds, invalidRate: meanOr0(invalid) };
}

/** A job's identity as stable JSON (a config's keys sorted, so equal settings give equal keys). */
function jobKey(kind: string, parts: Record<string, unknown>): string {
  const sorted = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
        )
      : Array.isArray(v)
        ? v.map(sorted)
        : v;
  return JSON.stringify(sorted({ job: kind, ...parts }));
}

function rowFrom(
  base: Omit<RowResult, 'success' | 'score' | 'realSteps' | 'dreamSteps' | 'wallSeconds' | 'seeds'>,
  outcomes: Outcome[],
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

// ---- Table 1 ----------------------------------------------------------------------------------

export const TABLE1_ROWS = [
  'random',
  'expert',
  'sft',
  'real-grpo',
  'real-ppo',
  'dream-grpo',
  'dream-ppo',
  'sft-dream-grpo',
  's2r-grpo',
  's2r-ppo',
] as const;

const MODE_NAMES: Record<Mode, string> = {
  real: 'Traditional (real env)',
  dream: 'DreamGym (dream only)',
  s2r: 'DreamGym-S2R (dream, then real)',
};

/** Epochs of the SFT rows' cloning: the tuned default, or 3 in a --quick smoke run. */
function sftEpochs(options: ExperimentOptions): number {
  return options.quick ? 3 : DEFAULT_SFT_CONFIG.epochs;
}

/** The SFT rows: behaviour cloning on the offline expert episodes, alone and as the dream's start. */
const SFT_ROW = {
  id: 'sft',
  label: 'SFT — behaviour cloning of the offline expert episodes (no RL)',
  kind: 'train',
  experience: 'offline expert episodes',
} as const;
const SFT_DREAM_ROW = {
  id: 'sft-dream-grpo',
  label: `GRPO — SFT, then ${MODE_NAMES.dream}`,
  kind: 'train',
  mode: 'dream',
  algo: 'grpo',
} as const;

/** A training config of a row: preset (+quick, +overrides), then the row's own settings. */
function rowConfig(
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

/** A Table 1 row as planned: which jobs give its outcomes, and whether it reads their dream phase. */
interface PlannedRow {
  id: string;
  label: string;
  kind: RowResult['kind'];
  mode?: Mode;
  algo?: Algorithm;
  experience?: string;
  jobs: number[];
  /** The dream rows read the S2R runs' dream phase (JobOutcome.dreamPhase). */
  phase?: 'dream';
}

/** The rows compared as dream (or S2R) over real, with a ratio and its interval. */
const TABLE1_RATIOS: [string, string][] = [
  ['dream-grpo', 'real-grpo'],
  ['dream-ppo', 'real-ppo'],
  ['sft-dream-grpo', 'real-grpo'],
  ['s2r-grpo', 'real-grpo'],
  ['s2r-ppo', 'real-ppo'],
];

function planTable1(ctx: Context, options: ExperimentOptions): Plan<TableResult> {
  checkOptions(options);
  const seeds = seedList(options);
  const split = splitOf(options);
  const label = llmSpecLabel(options.llm);
  const jobs: Job[] = [];
  const add = (made: Job[]) => made.map((job) => jobs.push(job) - 1);
  const layout: { setup: EnvSetup; rows: PlannedRow[] }[] = [];
  for (const env of options.envs) {
    const base = baseConfig(env, options);
    const rows: PlannedRow[] = [];
    for (const name of ['random', 'expert'] as const) {
      const label =
        name === 'random'
          ? 'Random policy (uniform over admissible actions)'
          : 'Expert policy (scripted, reads the true state)';
      const made = seeds.map((seed) => baselineJob(ctx, name, base, seed, split));
      rows.push({ id: name, label, kind: 'baseline', jobs: add(made) });
    }
    const sft = seeds.map((seed) => sftJob(ctx, rowConfig(env, options, seed, {}), split, sftEpochs(options)));
    rows.push({ ...SFT_ROW, jobs: add(sft) });
    const s2r: Record<string, number[]> = {};
    for (const mode of ['real', 's2r'] as const) {
      for (const algo of ['grpo', 'ppo'] as const) {
        const made = seeds.map((seed) => {
          const what = `${env} ${mode} ${algo.toUpperCase()}${mode === 'real' ? '' : ` [${label}]`} seed ${seed}`;
          return trainJob(ctx, what, rowConfig(env, options, seed, { mode, algo }), split);
        });
        const indices = add(made);
        if (mode === 's2r') s2r[algo] = indices;
        rows.push({
          id: `${mode}-${algo}`,
          label: `${algo.toUpperCase()} — ${MODE_NAMES[mode]}`,
          kind: 'train',
          mode,
          algo,
          jobs: indices,
        });
      }
    }
    for (const algo of ['grpo', 'ppo'] as const) {
      const rowLabel = `${algo.toUpperCase()} — ${MODE_NAMES.dream}`;
      rows.push({
        id: `dream-${algo}`,
        label: rowLabel,
        kind: 'train',
        mode: 'dream',
        algo,
        jobs: s2r[algo],
        phase: 'dream',
      });
    }
    const sftDream = seeds.map((seed) => {
      const config = rowConfig(env, options, seed, { mode: 'dream', algo: 'grpo' });
      return trainJob(
        ctx,
        `${env} SFT, then dream GRPO [${label}] seed ${seed}`,
        config,
        split,
        [],
        sftEpochs(options),
      );
    });
    rows.push({ ...SFT_DREAM_ROW, jobs: add(sftDream) });
    const order = (r: PlannedRow) => (TABLE1_ROWS as readonly string[]).indexOf(r.id);
    layout.push({ setup: setupOf(base, split), rows: rows.sort((a, b) => order(a) - order(b)) });
  }
  return {
    jobs,
    assemble(outcomes) {
      const envs: EnvTable[] = layout.map(({ setup, rows }) => {
        const results = rows.map((r) => plannedRowResult(r, outcomes, seeds, label));
        return { setup, rows: results, ratios: ratiosOf(results) };
      });
      return {
        table: 1,
        split,
        llm: options.llm,
        experienceModel: label,
        oracle: parseLlmSpec(options.llm).kind === 'oracle',
        seeds,
        quick: !!options.quick,
        envs,
        notes: table1Notes(options),
        computeSeconds: computeSeconds(outcomes),
      };
    },
  };
}

function plannedRowResult(r: PlannedRow, outcomes: Outcome[], seeds: number[], model: string): RowResult {
  const picked = r.jobs.map((i) => {
    const outcome = r.phase === 'dream' ? outcomes[i].dreamPhase : outcomes[i];
    if (!outcome) throw new ExperimentError(`Job ${i} of row ${r.id} has no ${r.phase ?? ''} outcome.`);
    return outcome;
  });
  const base = {
    id: r.id,
    label: r.label,
    kind: r.kind,
    ...(r.mode ? { mode: r.mode, algo: r.algo } : {}),
    ...(r.mode && r.mode !== 'real' ? { experienceModel: model } : {}),
    ...(r.experience ? { experienceModel: r.experience } : {}),
    ...(r.phase ? { note: 'the S2R runs of the same seeds, evaluated at the end of their dream phase' } : {}),
  };
  return rowFrom(base, picked, seeds);
}

/** Dream (and S2R) over real: the ratio of mean held-out success with its 95 % interval. */
function ratiosOf(rows: RowResult[]): RowRatio[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return TABLE1_RATIOS.flatMap(([row, against]) => {
    const a = byId.get(row);
    const b = byId.get(against);
    return a && b ? [{ row, against, ...ratioOfMeans(a.success.values, b.success.values) }] : [];
  });
}

/** Which held-out tasks the table's numbers come from, and what that split is for (docs/architecture.md §7.1). */
function splitNote(options: Pick<ExperimentOptions, 'split'>): string {
  const split = splitOf(options);
  const first = heldOutSeed(split, 0);
  return split === 'test'
    ? `Split: test — held-out tasks from seed ${first}, used only for reported tables: no training run, ` +
        'curriculum or recipe choice ever saw them; each run was evaluated on them after its last iteration ' +
        '(an S2R run also when its dream phase ends, for the dream row; nothing in training reads it).'
    : `Split: dev — held-out tasks from seed ${first}, the ones recipes are tuned on and the page and audit ` +
        'use; a reported table uses --split test.';
}

function table1Notes(options: ExperimentOptions): string[] {
  const oracle = parseLlmSpec(options.llm).kind === 'oracle';
  return [
    'Held-out success and score: greedy policy on the same held-out real tasks (never trained on) for every row; ' +
      'random and expert play those same tasks.',
    splitNote(options),
    'Real train steps: real-environment steps used for training (evaluation not counted). Dream rows use 0; S2R rows count only their real phase (s2rRealFraction × the real-mode budget). Dream steps: transitions produced by the experience model.',
    'Real rows train without the curriculum (the fixed task pool); dream and S2R rows with it, as the CLI does by default.',
    'The dream rows are the S2R runs of the same seeds, evaluated when their dream phase ends: S2R dreams ' +
      'exactly as a dream run of the same config and seed does (same streams), so one run gives both rows.',
    'Spread: mean ± sample std (n − 1) over seeds, a 95 % Student-t interval of the mean (cut to 0–100 %), ' +
      'and each seed’s value. Ratios: mean over mean, with a 95 % interval by the delta method (rows taken ' +
      'as independent, t with the smaller n − 1 degrees of freedom).',
    'SFT: the same policy trained by maximum likelihood on the offline dataset’s expert episodes ' +
      `(behaviour cloning, ${sftEpochs(options)} epochs; no RL, no environment steps). SFT, then dream: ` +
      'the dream GRPO row started from that policy instead of the untrained one (the paper’s agents start from ' +
      'an instruct model).',
    ...(oracle
      ? [
          `The experience model of the dream and S2R rows is the noisy oracle, ${llmSpecLabel(options.llm)}: the real environment with dialled reward and transition errors. It is a control instrument, not a learned model, so these rows measure how training copes with a known model error, not how good an LLM experience model is.`,
        ]
      : []),
    ...(options.quick ? ['QUICK run (--quick): few iterations and held-out tasks; a smoke test, not a result.'] : []),
  ];
}

export async function runTable1(options: ExperimentOptions, deps: ExperimentDeps = {}): Promise<TableResult> {
  const ctx = new Context(deps);
  const plan = planTable1(ctx, options);
  return plan.assemble(await runJobs(ctx, plan.jobs));
}

// ---- Table 2 ----------------------------------------------------------------------------------

export const TABLE2_ROWS = [
  'full',
  'no-verdict',
  'no-retrieval',
  'no-retrieval-trained',
  'no-reasoning',
  'no-history',
  'no-history-trained',
  'no-curriculum',
  'no-llm-prior',
  'real-s2r-steps',
] as const;

/** Table 2 with `ablations: 'pessimism'`: what keeps the dream honest, each part removed or at two other values. */
export const PESSIMISM_ROWS = [
  'full',
  'no-ensemble',
  'ensemble-3',
  'ensemble-8',
  'no-halt',
  'halt-success-0.8',
  'halt-success-0.95',
  'no-real-starts',
] as const;

type EngineKind = ReturnType<typeof parseLlmSpec>['kind'];

/** The Table 2 rows that dream with a learned model trained without a part of its context. */
export type RetrainedRow = 'no-retrieval-trained' | 'no-history-trained';

/** Where a retrained row's model comes from, for its not-applicable note. */
const RETRAINED_HOW = "the CLI's experiment --table 2 --llm learned:DIR trains one into OUT/models/<row>";

const NOT_TRAINED_HERE = {
  kinds: ['oracle', 'openai', 'webllm', 'wllama'] as EngineKind[],
  why: 'an LLM experience model is not trained here, so the row above (its prompt without the part) is the whole ablation',
};

/**
 * The ablations of the dream GRPO row: the config fields each one changes; `llmOnly`: the noisy
 * oracle ignores them (its rows repeat the full row unless re-run); `notFor`: engines without the
 * part at all (the row is not applicable there).
 */
interface Ablation {
  id: (typeof TABLE2_ROWS)[number] | (typeof PESSIMISM_ROWS)[number];
  label: string;
  changes: Partial<TrainConfig>;
  llmOnly: boolean;
  notFor?: { kinds: EngineKind[]; why: string };
  /** Dreams with the model of `retrainedModels[id]`, trained without the part. */
  retrained?: RetrainedRow;
}

const ABLATIONS: Ablation[] = [
  {
    id: 'full',
    label: 'DreamGym (full): dream GRPO, curriculum, retrieval, reasoning, history',
    changes: {},
    llmOnly: false,
  },
  {
    id: 'no-verdict',
    label: "w/o verdict head (the generator's own reward and ending)",
    changes: { verdictHead: false },
    llmOnly: false,
    notFor: {
      kinds: ['oracle', 'openai', 'webllm', 'wllama'],
      why: 'only a learned experience model has a verdict head',
    },
  },
  { id: 'no-retrieval', label: 'w/o experience replay (retrieval)', changes: { retrievalK: 0 }, llmOnly: true },
  {
    id: 'no-retrieval-trained',
    label: 'w/o experience replay, trained and dreamed with k = 0',
    changes: { retrievalK: 0 },
    llmOnly: true,
    notFor: NOT_TRAINED_HERE,
    retrained: 'no-retrieval-trained',
  },
  {
    id: 'no-reasoning',
    label: 'w/o experience reasoning',
    changes: { reasoning: false },
    llmOnly: true,
    notFor: { kinds: ['learned'], why: 'the learned experience model writes no reasoning step' },
  },
  { id: 'no-history', label: 'w/o history', changes: { historyLength: 0 }, llmOnly: true },
  {
    id: 'no-history-trained',
    label: 'w/o history, trained and dreamed with H = 0',
    changes: { historyLength: 0 },
    llmOnly: true,
    notFor: NOT_TRAINED_HERE,
    retrained: 'no-history-trained',
  },
  { id: 'no-curriculum', label: 'w/o task generation (curriculum)', changes: { curriculum: false }, llmOnly: false },
];

const ONLY_LEARNED = {
  kinds: ['oracle', 'openai', 'webllm', 'wllama'] as EngineKind[],
  why: 'only a learned experience model has a verdict ensemble',
};
const NOT_ORACLE = { kinds: ['oracle'] as EngineKind[], why: 'the noisy oracle is the real env: nothing halts it' };

/** The pessimism rows (config.ts defaults: 5 members, the halt at success quantile 0.9, half the tasks from real states). */
const PESSIMISM_ABLATIONS: Ablation[] = [
  { id: 'full', label: 'DreamGym (full): ensemble of 5, halt, real starts', changes: {}, llmOnly: false },
  {
    id: 'no-ensemble',
    label: 'w/o verdict ensemble (1 member)',
    changes: { verdictMembers: 1 },
    llmOnly: false,
    notFor: ONLY_LEARNED,
  },
  {
    id: 'ensemble-3',
    label: 'verdict ensemble of 3',
    changes: { verdictMembers: 3 },
    llmOnly: false,
    notFor: ONLY_LEARNED,
  },
  {
    id: 'ensemble-8',
    label: 'verdict ensemble of 8',
    changes: { verdictMembers: 8 },
    llmOnly: false,
    notFor: ONLY_LEARNED,
  },
  {
    id: 'no-halt',
    label: 'w/o halt (nor its offers filter)',
    changes: { halt: false },
    llmOnly: false,
    notFor: NOT_ORACLE,
  },
  {
    id: 'halt-success-0.8',
    label: 'halt, success quantile 0.8',
    changes: { haltSuccessQuantile: 0.8 },
    llmOnly: false,
    notFor: NOT_ORACLE,
  },
  {
    id: 'halt-success-0.95',
    label: 'halt, success quantile 0.95',
    changes: { haltSuccessQuantile: 0.95 },
    llmOnly: false,
    notFor: NOT_ORACLE,
  },
  {
    id: 'no-real-starts',
    label: 'w/o real starts (every task from its first state)',
    changes: { realStartShare: 0 },
    llmOnly: false,
  },
];

/** A Table 2 row as planned: run (its jobs), repeating the full row (inert), or not applicable. */
type PlannedAblation =
  | {
      id: string;
      label: string;
      changes: Partial<TrainConfig>;
      how: 'run';
      jobs: number[];
      phase?: 'dream';
      /** The experience model it dreams with, when not the table's. */
      model?: string;
    }
  | { id: string; label: string; changes: Partial<TrainConfig>; how: 'inert' }
  | { id: string; label: string; changes: Partial<TrainConfig>; how: 'n/a'; why: string };

function planTable2(ctx: Context, options: ExperimentOptions): Plan<TableResult> {
  checkOptions(options);
  const seeds = seedList(options);
  const split = splitOf(options);
  const label = llmSpecLabel(options.llm);
  const engine = parseLlmSpec(options.llm).kind;
  const jobs: Job[] = [];
  const add = (made: Job[]) => made.map((job) => jobs.push(job) - 1);
  const layout: { setup: EnvSetup; rows: PlannedAblation[] }[] = [];
  for (const env of options.envs) {
    const rows: PlannedAblation[] = [];
    const pessimism = options.ablations === 'pessimism';
    for (const { id, label: rowLabel, changes, llmOnly, notFor, retrained } of pessimism
      ? PESSIMISM_ABLATIONS
      : ABLATIONS) {
      const row = { id, label: rowLabel, changes };
      const llm = retrained ? options.retrainedModels?.[retrained] : options.llm;
      if (notFor?.kinds.includes(engine)) rows.push({ ...row, how: 'n/a', why: notFor.why });
      else if (!llm) rows.push({ ...row, how: 'n/a', why: `it needs a model trained that way (${RETRAINED_HOW})` });
      else if (engine === 'oracle' && llmOnly && !options.rerunInertAblations) rows.push({ ...row, how: 'inert' });
      else {
        // The full row is Table 1's S2R run read at the end of its dream phase: one run serves both tables.
        const mode = id === 'full' ? 's2r' : 'dream';
        const made = seeds.map((seed) => {
          const config = rowConfig(env, options, seed, { mode, algo: 'grpo', curriculum: true, ...changes, llm });
          return trainJob(ctx, `${env} dream GRPO ${id} [${llmSpecLabel(llm)}] seed ${seed}`, config, split);
        });
        const own = retrained ? { model: llmSpecLabel(llm) } : {};
        rows.push({
          ...row,
          how: 'run',
          jobs: add(made),
          ...(id === 'full' ? { phase: 'dream' as const } : {}),
          ...own,
        });
      }
    }
    const base = baseConfig(env, options);
    if (!pessimism) rows.push(llmPriorRow(engine), realS2rStepsRow(ctx, env, options, base, add));
    layout.push({ setup: setupOf(base, split), rows });
  }
  return {
    jobs,
    assemble(outcomes) {
      const envs: EnvTable[] = layout.map(({ setup, rows }) => ({
        setup,
        rows: assembleAblations(rows, outcomes, seeds, label),
      }));
      return {
        table: 2,
        ablations: options.ablations ?? 'paper',
        split,
        llm: options.llm,
        experienceModel: label,
        oracle: engine === 'oracle',
        seeds,
        quick: !!options.quick,
        envs,
        notes: table2Notes(options, engine),
        computeSeconds: computeSeconds(outcomes),
      };
    },
  };
}

/** Real GRPO given only the real steps S2R's real phase gets: what those steps buy alone. */
function realS2rStepsRow(
  ctx: Context,
  env: string,
  options: ExperimentOptions,
  base: TrainConfig,
  add: (made: Job[]) => number[],
): PlannedAblation {
  const realBudget = Math.round(base.s2rRealFraction * base.realStepBudget);
  const changes: Partial<TrainConfig> = { mode: 'real', realStepBudget: realBudget };
  const real = seedList(options).map((seed) =>
    trainJob(
      ctx,
      `${env} real GRPO, S2R's ${realBudget} real steps, seed ${seed}`,
      rowConfig(env, options, seed, { algo: 'grpo', ...changes }),
      splitOf(options),
    ),
  );
  return {
    id: 'real-s2r-steps',
    label: "Real GRPO with S2R's real steps only (no dream)",
    changes,
    how: 'run',
    jobs: add(real),
  };
}

function llmPriorRow(engine: EngineKind): PlannedAblation {
  return {
    id: 'no-llm-prior',
    label: 'w/o LLM action prior',
    changes: { llmPrior: false },
    how: 'n/a',
    why:
      engine === 'oracle'
        ? 'there is no LLM here (noisy oracle), so there is no LLM prior to remove'
        : "the trainer's policy has no LLM action prior (β·prior term off), so there is nothing to remove",
  };
}

function assembleAblations(rows: PlannedAblation[], outcomes: Outcome[], seeds: number[], model: string): RowResult[] {
  const results: RowResult[] = [];
  for (const row of rows) {
    const real = row.changes.mode === 'real';
    const base = {
      id: row.id,
      label: row.label,
      mode: real ? ('real' as const) : ('dream' as const),
      algo: 'grpo' as const,
      ...(real ? {} : { experienceModel: model }),
      changes: row.changes,
    };
    if (row.how === 'run') {
      const picked = row.jobs.map((i) => (row.phase === 'dream' ? outcomes[i].dreamPhase! : outcomes[i]));
      const note = row.phase
        ? 'the S2R GRPO runs of Table 1 (same seeds), read at the end of their dream phase'
        : row.model && `dreams with the ${row.model}, trained by the same recipe with the part removed`;
      const own = row.model ? { experienceModel: row.model } : {};
      results.push(rowFrom({ ...base, ...own, kind: 'train', ...(note ? { note } : {}) }, picked, seeds));
    } else if (row.how === 'inert') {
      const full = results.find((r) => r.id === 'full')!;
      const ignored = Object.keys(row.changes).join(', ');
      const note = `identical to the full row by construction: the noisy oracle ignores ${ignored} (not re-run)`;
      results.push({ ...full, ...base, kind: 'train', sameAs: 'full', wallSeconds: stat(seeds.map(() => 0)), note });
    } else {
      const none = stat([]);
      const empty = { success: none, score: none, realSteps: none, dreamSteps: none, wallSeconds: none };
      results.push({ ...base, kind: 'not-applicable', ...empty, seeds, note: `not applicable: ${row.why}` });
    }
  }
  return results;
}

function pessimismNotes(options: ExperimentOptions): string[] {
  return [
    'Every row: dream GRPO (zero real training steps), evaluated on the same held-out real tasks; Δ is the change ' +
      'in held-out success against the full row, in percentage points.',
    splitNote(options),
    'The full row is the dream of config.ts defaults: a verdict ensemble of 5 (a success pays only where every ' +
      'member grants it), the halt at quantile 0.99 of held-out real steps (0.9 for successes) with offers backed ' +
      "by data and 3 redraws, and half of each iteration's tasks begun at a real state for at most 10 steps.",
    'An ensemble row uses the first N of the verdict members the model stores. The halt rows move the success ' +
      'quantile, the threshold that decides which claimed successes are unlike every real one.',
    'The hand-written rules the pessimism replaced are code, not a setting: they are measured at their own ' +
      'commit (docs/results/honest-dream.md), not here.',
    ...(options.quick ? ['QUICK run (--quick): few iterations and held-out tasks; a smoke test, not a result.'] : []),
  ];
}

function table2Notes(options: ExperimentOptions, engine: EngineKind): string[] {
  if (options.ablations === 'pessimism') return pessimismNotes(options);
  const oracle = engine === 'oracle';
  const prompt =
    engine === 'learned'
      ? 'For the learned experience model, the plain retrieval and history rows change what it is shown at dream ' +
        'time only (the model was trained with its own k and H): how far the dream leans on them. The ' +
        '"trained and dreamed" rows dream with a model trained with k = 0 (H = 0) by the base model\'s recipe ' +
        "(its manifest's network, format, seed and epochs; default fit settings): the model without the part. " +
        'It writes no reasoning step, so that row is not applicable. The full row is the verdict head ' +
        "judging the generator's pages."
      : "The retrieval, reasoning and history ablations change the LLM experience model's prompt " +
        '(retrieved transitions, the reasoning step, the recent history).';
  return [
    'Every row but the last: dream GRPO (zero real training steps), evaluated on the same held-out real tasks; ' +
      'Δ is the change in held-out success against the full row, in percentage points.',
    "The last row is real GRPO given only the real steps S2R's real phase gets (s2rRealFraction × the real " +
      'budget), with no dream: what those steps buy alone.',
    splitNote(options),
    oracle
      ? `With the noisy oracle (${llmSpecLabel(options.llm)}) the retrieval, reasoning and history ablations change nothing: retrieved buffer transitions, the reasoning step and the recent history only feed an LLM experience model's prompt, and the oracle reads none of them. Those rows repeat the full row${options.rerunInertAblations ? ' (re-run here: the numbers are identical)' : ' (not re-run)'}; to measure them, run with --llm openai:BASE_URL#MODEL.`
      : prompt,
    "w/o verdict head: a learned model's endings and rewards come from its generator alone (verdictHead = false).",
    oracle
      ? '"w/o LLM prior" is not applicable without an LLM: there is no prior to remove.'
      : '"w/o LLM prior" is not applicable: the trainer\'s policy runs without an LLM action prior.',
    'The curriculum ablation is real for every experience model: without it the tasks come from the fixed pool.',
    "The paper's Table 2 has no history row; history is ablated only in its quality study (Fig. 4).",
    ...(options.quick ? ['QUICK run (--quick): few iterations and held-out tasks; a smoke test, not a result.'] : []),
  ];
}

export async function runTable2(options: ExperimentOptions, deps: ExperimentDeps = {}): Promise<TableResult> {
  const ctx = new Context(deps);
  const plan = planTable2(ctx, options);
  return plan.assemble(await runJobs(ctx, plan.jobs));
}

// ---- the (ε_R, ε_P) grid ----------------------------------------------------------------------

export interface GridOptions extends Omit<ExperimentOptions, 'llm'> {
  /** Error levels of both axes (default 0, 0.1, 0.3); the verdict compares the largest. */
  epsilons?: readonly number[];
}

function planGrid(ctx: Context, options: GridOptions): Plan<GridResult> {
  const epsilons = [...(options.epsilons ?? GRID_EPSILONS)];
  checkOptions({ ...options, llm: 'oracle:0,0' });
  const seeds = seedList({ ...options, llm: 'oracle:0,0' });
  const split = splitOf(options);
  const jobs: Job[] = [];
  const setups: EnvSetup[] = [];
  for (const env of options.envs) {
    setups.push(setupOf(baseConfig(env, { ...options, llm: 'oracle:0,0' }), split));
    for (const er of epsilons)
      for (const ep of epsilons)
        for (const seed of seeds) {
          const llm: LlmSpecText = `oracle:${er},${ep}`;
          const config = rowConfig(env, { ...options, llm }, seed, { mode: 'dream', algo: 'grpo', curriculum: true });
          jobs.push(trainJob(ctx, `${env} grid dream GRPO [${llmSpecLabel(llm)}] seed ${seed}`, config, split));
        }
  }
  return {
    jobs,
    assemble(outcomes) {
      let at = 0;
      const envs = setups.map((setup): GridEnvResult => {
        const cells = epsilons.map((er) =>
          epsilons.map((ep): GridCell => {
            const slice = outcomes.slice(at, at + seeds.length);
            at += seeds.length;
            return {
              epsilonReward: er,
              epsilonTransition: ep,
              label: llmSpecLabel(`oracle:${er},${ep}`),
              success: stat(slice.map((o) => o.success)),
              score: stat(slice.map((o) => o.score)),
              dreamSteps: stat(slice.map((o) => o.dreamSteps)),
            };
          }),
        );
        return { setup, cells, ...gridVerdict(cells, setup.heldOutTasks * seeds.length) };
      });
      return {
        split,
        epsilons,
        seeds,
        quick: !!options.quick,
        envs,
        notes: gridNotes(epsilons, options),
        computeSeconds: computeSeconds(outcomes),
      };
    },
  };
}

function gridVerdict(
  cells: GridCell[][],
  evalsPerCell: number,
): Pick<
  GridEnvResult,
  'rewardRowMean' | 'transitionColumnMean' | 'rewardOnly' | 'transitionOnly' | 'clean' | 'tolerance' | 'verdict'
> {
  const last = cells.length - 1;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const rewardRowMean = mean(cells[last].map((c) => c.success.mean));
  const transitionColumnMean = mean(cells.map((row) => row[last].success.mean));
  const n = evalsPerCell * cells.length;
  const variance = (p: number) => Math.max(p * (1 - p), 0.25 / n) / n;
  const tolerance = 2 * Math.sqrt(variance(rewardRowMean) + variance(transitionColumnMean));
  const gap = transitionColumnMean - rewardRowMean;
  return {
    rewardRowMean,
    transitionColumnMean,
    rewardOnly: cells[last][0].success.mean,
    transitionOnly: cells[0][last].success.mean,
    clean: cells[0][0].success.mean,
    tolerance,
    verdict:
      Math.abs(gap) <= tolerance
        ? 'no clear difference'
        : gap > 0
          ? 'reward error hurts more'
          : 'transition error hurts more',
  };
}

function gridNotes(epsilons: number[], options: GridOptions): string[] {
  const top = epsilons[epsilons.length - 1];
  return [
    'Each cell: dream GRPO (with the curriculum) over the noisy oracle with that (ε_R, ε_P) — the real environment with dialled errors, a control instrument, not a learned model — then the final held-out success in the REAL environment (zero real training steps).',
    splitNote(options),
    "ε_R: chance that an episode's outcome-bearing step reports the wrong outcome. ε_P: chance that a valid step's next state is corrupted (an admissible action dropped or swapped, or the observation spliced).",
    `Which error hurts more: the mean of the ε_R = ${top} row against the mean of the ε_P = ${top} column (they share the (${top}, ${top}) cell); a gap within ≈ 2 binomial standard errors of the held-out evaluation (training noise across seeds not included) counts as no clear difference.`,
    'Theory (Lemma 1, §7.7): |J_M(π) − J_M̂(π)| ≤ ε_R/(1−γ) + 2γ R_max ε_P/(1−γ)², so the bound weighs ε_P by 2γ/(1−γ) ≈ 198 times more than ε_R at γ = 0.99. It is a worst-case bound, and the two ε here are per-event probabilities rather than the sup-norm errors of the theorem, so the measured ordering need not follow it.',
    ...(options.quick ? ['QUICK run (--quick): few iterations and held-out tasks; a smoke test, not a result.'] : []),
  ];
}

export async function runGrid(options: GridOptions, deps: ExperimentDeps = {}): Promise<GridResult> {
  const ctx = new Context(deps);
  const plan = planGrid(ctx, options);
  return plan.assemble(await runJobs(ctx, plan.jobs));
}

// ---- cross-domain transfer --------------------------------------------------------------------

function planTransfer(ctx: Context, options: ExperimentOptions): Plan<TransferResult> {
  checkOptions(options);
  if (options.envs.length < 2)
    throw new ExperimentError(`Cross-domain transfer needs at least two environments; got ${options.envs.join(', ')}.`);
  const seeds = seedList(options);
  const split = splitOf(options);
  const label = llmSpecLabel(options.llm);
  const targets = options.envs.map((env) => baseConfig(env, options));
  const jobs: Job[] = [];
  for (const target of targets) for (const seed of seeds) jobs.push(baselineJob(ctx, 'random', target, seed, split));
  for (const source of options.envs) {
    for (const seed of seeds) {
      const config = rowConfig(source, options, seed, { mode: 'dream', algo: 'grpo', curriculum: true });
      jobs.push(
        trainJob(
          ctx,
          `${source} dream GRPO [${label}] seed ${seed}, evaluated in every env`,
          config,
          split,
          targets.filter((t) => t.env !== source),
        ),
      );
    }
  }
  return {
    jobs,
    assemble(outcomes) {
      let at = 0;
      const random = { success: {} as Record<string, Stat>, score: {} as Record<string, Stat> };
      for (const target of targets) {
        const slice = outcomes.slice(at, at + seeds.length);
        at += seeds.length;
        random.success[target.env] = stat(slice.map((o) => o.success));
        random.score[target.env] = stat(slice.map((o) => o.score));
      }
      const rows = options.envs.map((source) => {
        const slice = outcomes.slice(at, at + seeds.length);
        at += seeds.length;
        const success: Record<string, Stat> = {},
          score: Record<string, Stat> = {};
        for (const target of targets) {
          const pick = (o: Outcome) =>
            target.env === source ? { success: o.success, score: o.score } : o.elsewhere![target.env];
          success[target.env] = stat(slice.map((o) => pick(o).success));
          score[target.env] = stat(slice.map((o) => pick(o).score));
        }
        return {
          trainedIn: source,
          label: `dream GRPO trained in ${source} [${label}]`,
          success,
          score,
          dreamSteps: stat(slice.map((o) => o.dreamSteps)),
        };
      });
      return {
        split,
        llm: options.llm,
        experienceModel: label,
        seeds,
        quick: !!options.quick,
        targets: targets.map((t) => setupOf(t, split)),
        rows,
        random,
        notes: transferNotes(options),
        computeSeconds: computeSeconds(outcomes),
      };
    },
  };
}

function transferNotes(options: ExperimentOptions): string[] {
  return [
    'Each policy is trained only in the dream of its source env (dream GRPO, zero real steps), then evaluated greedily on the held-out real tasks of every env; the diagonal is in-domain, the rest is cross-domain transfer. The random policy is shown for reference.',
    splitNote(options),
    'The candidate-scoring policy sees only generic text features of (instruction, observation, candidate action), so it can run in any env; but the two envs share almost no action vocabulary or task structure, so little is expected to carry over, and a transfer result near zero (or near random) is the honest outcome, not a bug.',
    'The paper (§7.4) reports transfer between its two web domains and a significant drop when the gap is as large as web → ALFWorld; webshop-lite ↔ household is that large-gap case.',
    ...(parseLlmSpec(options.llm).kind === 'oracle'
      ? [`The dream is the noisy oracle (${llmSpecLabel(options.llm)}), a control instrument, not a learned model.`]
      : []),
    ...(options.quick ? ['QUICK run (--quick): few iterations and held-out tasks; a smoke test, not a result.'] : []),
  ];
}

export async function runTransfer(options: ExperimentOptions, deps: ExperimentDeps = {}): Promise<TransferResult> {
  const ctx = new Context(deps);
  const plan = planTransfer(ctx, options);
  return plan.assemble(await runJobs(ctx, plan.jobs));
}

// ---- everything at once -----------------------------------------------------------------------

export interface ExperimentRequest extends ExperimentOptions {
  table?: 1 | 2;
  grid?: boolean;
  transfer?: boolean;
}

export interface ExperimentResult {
  table?: TableResult;
  grid?: GridResult;
  transfer?: TransferResult;
}

/** The requested parts as one list of jobs: run them here (runExperiment) or spread them over worker processes. */
export interface ExperimentPlan {
  /** `llm`: the experience model a job dreams with (its files belong in a cache fingerprint). */
  jobs: { index: number; label: string; key: string; cost: number; llm?: LlmSpecText }[];
  /** Runs job `index`; progress goes to deps.onProgress, numbered within the whole plan. */
  runJob(index: number): Promise<JobOutcome>;
  /** The results from every job's outcome, in job order. */
  assemble(outcomes: JobOutcome[]): ExperimentResult;
}

/**
 * Plans the requested parts. Every job is deterministic given the request (its seeds fix the
 * policy, the tasks, the sampling and the oracle's errors), so the same request planned in
 * another process runs the same job to the same outcome — which is what lets the CLI spread the
 * jobs over worker processes.
 */
export function planExperiment(request: ExperimentRequest, deps: ExperimentDeps = {}): ExperimentPlan {
  const ctx = new Context(deps);
  const parts: { key: keyof ExperimentResult; plan: Plan<unknown> }[] = [];
  if (request.table === 1) parts.push({ key: 'table', plan: planTable1(ctx, request) as Plan<unknown> });
  else if (request.table === 2) parts.push({ key: 'table', plan: planTable2(ctx, request) as Plan<unknown> });
  else if (request.table !== undefined)
    throw new ExperimentError(`table must be 1 or 2; got ${String(request.table)}.`);
  if (request.grid) parts.push({ key: 'grid', plan: planGrid(ctx, request) as Plan<unknown> });
  if (request.transfer) parts.push({ key: 'transfer', plan: planTransfer(ctx, request) as Plan<unknown> });
  if (parts.length === 0)
    throw new ExperimentError('Nothing to run: ask for a table (1 or 2), the grid, or the transfer study.');
  const jobs = parts.flatMap((p) => p.plan.jobs);
  return {
    jobs: jobs.map((j, index) => ({ index, label: j.label, key: j.key, cost: j.cost, llm: j.llm })),
    runJob: (index) => {
      if (!(index >= 0 && index < jobs.length))
        throw new ExperimentError(`No job ${index}; the plan has ${jobs.length}.`);
      return runOne(ctx, jobs[index], index, jobs.length);
    },
    assemble(outcomes) {
      if (outcomes.length !== jobs.length)
        throw new ExperimentError(`Expected ${jobs.length} job outcomes, got ${outcomes.length}.`);
      const result: ExperimentResult = {};
      let at = 0;
      for (const { key, plan } of parts) {
        (result as Record<string, unknown>)[key] = plan.assemble(outcomes.slice(at, at + plan.jobs.length));
        at += plan.jobs.length;
      }
      return result;
    },
  };
}

/** The requested parts, every job in this process, one after another. */
export async function runExperiment(request: ExperimentRequest, deps: ExperimentDeps = {}): Promise<ExperimentResult> {
  const plan = planExperiment(request, deps);
  const outcomes: JobOutcome[] = [];
  for (const job of plan.jobs) outcomes.push(await plan.runJob(job.index));
  return plan.assemble(outcomes);
}

async function runOne(ctx: Context, job: Job, index: number, jobs: number): Promise<Outcome> {
  const at = index + 1;
  ctx.deps.onProgress?.({ kind: 'start', job: at, jobs, label: job.label });
  const outcome = await job.run((e) =>
    ctx.deps.onProgress?.({ kind: 'iteration', job: at, jobs, label: job.label, ...e }),
  );
  ctx.deps.onProgress?.({
    kind: 'done',
    job: at,
    jobs,
    label: job.label,
    split: outcome.split,
    success: outcome.success,
    score: outcome.score,
    realSteps: outcome.realSteps,
    dreamSteps: outcome.dreamSteps,
    wallSeconds: outcome.wallSeconds,
  });
  return outcome;
}

async function runJobs(ctx: Context, jobs: Job[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < jobs.length; i++) outcomes.push(await runOne(ctx, jobs[i], i, jobs.length));
  return outcomes;
}
