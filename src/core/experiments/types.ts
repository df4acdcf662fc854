/**
 * The experiments' vocabulary: what a request asks for (options), what the edge hands in (deps),
 * the progress events, the results of each table, and the jobs and plans the tables are made of.
 * Plain data: a job's outcome crosses process boundaries as JSON (the CLI's worker processes).
 */
import type { Trajectory } from '../types';
import type { LlmSpecText } from '../llm/spec';
import type { Algorithm, Mode, TrainConfig } from '../train/config';
import type { EvalResult, EvalSplit } from '../train/evaluate';
import type { RunPartsDeps } from '../train/run-parts';
import type { Ratio, Stat } from '../train/stats';
import { DreamGymError } from '../errors';

export type { Stat } from '../train/stats';

// ---- options, dependencies, results -----------------------------------------------------------

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

export class ExperimentError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'experiment-invalid',
      fix: "Correct the experiment's option the message names, or run the experiment again.",
    });
    this.name = 'ExperimentError';
  }
}

/** The Table 2 rows that dream with a learned model trained without a part of its context. */
export type RetrainedRow = 'no-retrieval-trained' | 'no-history-trained';

export interface GridOptions extends Omit<ExperimentOptions, 'llm'> {
  /** Error levels of both axes (default 0, 0.1, 0.3); the verdict compares the largest. */
  epsilons?: readonly number[];
}

// ---- jobs and plans ---------------------------------------------------------------------------

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
export type IterationReport = Omit<
  Extract<ExperimentProgress, { kind: 'iteration' }>,
  'kind' | 'job' | 'jobs' | 'label'
>;

export interface Job {
  label: string;
  /** What fixes the job's outcome (its kind, config, split): equal keys, equal outcomes. */
  key: string;
  /** Relative cost estimate (for scheduling across workers and for ETAs). */
  cost: number;
  /** The experience model it dreams with (an llm spec), when it dreams. */
  llm?: LlmSpecText;
  run(report: (e: IterationReport) => void): Promise<JobOutcome>;
}

export interface Plan<T> {
  jobs: Job[];
  assemble(outcomes: JobOutcome[]): T;
}

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
