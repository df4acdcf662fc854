/**
 * The DreamGym training loop, one loop for the three modes: 'real' (the baseline row of the
 * paper's Table 1: rollouts in the ground-truth env), 'dream' (rollouts in a DreamEnv over the
 * experience model: zero real training steps) and 's2r' (dream first, then real with a small
 * budget). An iteration reads top to bottom in `runIteration`: choose tasks → roll out (all
 * episodes stepped together, rollout.ts) → keep the experience (buffer, traces, curriculum) →
 * update (GRPO, PPO or REINFORCE) → evaluate when due (and always after the last iteration), and
 * the metrics of docs/architecture.md §3.11 (metrics.ts). Held-out evaluation is always in the real
 * env; the real-step budget is never exceeded; dreamed steps whose answer was unusable are never
 * learned from (a failed engine call is such a step; EngineFailureError stops the run when the
 * engine is down, engine-failures.ts).
 *
 * Tasks and envs come from a TaskSource (task-source.ts): a registered env by default, or an
 * imported domain's dreams (src/core/domain/trainer.ts). The loop is the same for both.
 *
 * Every random stream is derived from (seed, purpose, iteration), so an iteration depends only
 * on the weights and optimizer state it starts from: resuming from a checkpoint continues
 * exactly as an uninterrupted run would.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../rng';
import type { Task } from '../types';
import type { Curriculum, GroupOutcome } from '../curriculum/curriculum';
import type { LlmTaskGenerator } from '../curriculum/llm-variations';
import type { ExperienceModel } from '../experience/types';
import { EngineFailureGuard } from '../experience/engine-failures';
import type { ReplayBuffer } from '../buffer/buffer';
import type { BufferEpisode, BufferTransition } from '../buffer/types';
import { CandidatePolicy, type ActionPrior, type PolicyWeights } from '../policy/policy';
import type { FeatureSchema } from '../policy/feature-schema';
import { makeOptimizer, ResumableAdam, scheduledLearningRate, type PolicyStep, type UpdateMetrics } from '../rl/batch';
import { grpoConfigFrom, grpoUpdate } from '../rl/grpo';
import { ppoConfigFrom, ppoUpdate } from '../rl/ppo';
import { reinforceConfigFrom, reinforceUpdate } from '../rl/reinforce';
import type { CurriculumState } from '../curriculum/curriculum';
import { ConfigError, validateConfig, withDefaults, type Phase, type TrainConfig } from './config';
import type { EvalResult } from './evaluate';
import { iterationMetrics, type Metrics } from './metrics';
import { EnvPool, startEpisodes, stepEpisodes, type Episode, type RolloutTally } from './rollout';
import {
  claimedSuccesses,
  correctionRound,
  correctionRoundAt,
  roundAllowance,
  type CorrectionRecord,
} from './dream-correction';
import { checkSourceConfig, RegisteredEnvSource, type TaskSource } from './task-source';
import { envPolicyFeatures, unminedSchema } from './policy-schema';
import type { IterationProgressHook } from './progress';
import type { EpisodeTrace } from './trace';
import { DreamGymError } from '../errors';

export type { Metrics, Phase };

export interface IterationRecord {
  iteration: number;
  metrics: Metrics;
}

/** Everything needed to continue a run exactly (tfjs tensors as plain typed arrays). */
export interface TrainerState {
  format: 'dreamgym-checkpoint/2';
  config: TrainConfig;
  /** The policy's feature schema (policy/feature-schema.ts): its features, so its weights, depend on it. */
  featureSchema: FeatureSchema;
  /** Iterations completed. */
  iteration: number;
  realSteps: number;
  dreamSteps?: number;
  /** S2R correction rounds so far (dream-correction.ts): replayed again on resume to rebuild the corrected model. */
  corrections?: CorrectionRecord[];
  curriculum?: CurriculumState;
  policy: PolicyWeights;
  optimizer: { name: string; shape: number[]; data: Float32Array }[];
}

export class CheckpointMismatchError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'checkpoint-mismatch',
      fix: 'Resume with the environment and config the checkpoint was saved with, or start the run again.',
    });
    this.name = 'CheckpointMismatchError';
  }
}

/** What a trainer needs beyond its config (built at the edge: CLI, worker; see buildRunParts). */
export interface TrainerDeps {
  /** The experience model of the dream phases (required for 'dream' and 's2r' with a registered env). */
  experienceModel?: ExperienceModel;
  /** Where tasks and envs come from (default: the registered env config.env, see task-source.ts). */
  source?: TaskSource;
  /** Dreamed and real transitions are added here (the experience model retrieves from it). */
  buffer?: ReplayBuffer;
  /** Timestamps of buffer records, ms since epoch (core never reads the clock itself). */
  now?: () => number;
  /** A monotonic clock in ms: with it every iteration reports perf/* (wall-clock, so not reproducible). */
  clock?: () => number;
  /** The agent's prior (the LLM's preference among the admissible actions); none = f_θ alone. */
  prior?: ActionPrior;
  /**
   * The policy's feature schema, mined from the run's offline data (buildRunParts does it; policy-schema.ts). None:
   * generic features and the env's own only. A restored trainer uses its checkpoint's.
   */
  featureSchema?: FeatureSchema;
  /** Sees each batch right before the update (inspection, teaching views, tests). */
  onBatch?: (batch: { steps: PolicyStep[] }, phase: Phase, iteration: number) => void;
  /**
   * Sees every episode of an iteration, step by step (the Inspect view), once per iteration after
   * the rollouts and before the update; awaited, so a store can write them before the checkpoint.
   */
  onEpisodes?: (episodes: EpisodeTrace[], phase: Phase, iteration: number) => void | Promise<void>;
  /** Run id of the buffer records (default `preset/mode/algo/seed`; the page gives each run its own). */
  runId?: string;
  /**
   * Writes curriculum variations with an LLM (config.curriculumVariations 'llm' or 'both'; built by
   * buildRunParts). Its tasks are dream-only: never played in a real env.
   */
  taskGenerator?: LlmTaskGenerator;
  /** Watches each iteration as it goes (live progress: progress.ts ProgressMeter); it changes nothing. */
  progress?: IterationProgressHook;
}

/** The iteration's random streams, derived from (seed, purpose, iteration). */
function iterationStreams(seed: number, iteration: number): { tasks: Rng; sample: Rng; update: Rng; starts: Rng } {
  return {
    tasks: Rng.fromSeed(seed, 'tasks', String(iteration)),
    sample: Rng.fromSeed(seed, 'sample', String(iteration)),
    update: Rng.fromSeed(seed, 'update', String(iteration)),
    starts: Rng.fromSeed(seed, 'real-starts', String(iteration)),
  };
}

export class Trainer {
  readonly config: TrainConfig;
  readonly source: TaskSource;
  readonly policy: CandidatePolicy;
  private optimizer: tf.Optimizer;
  /** GRPO's KL anchor: the initial policy, rebuilt from the seed (so a resumed run has the same one). */
  private readonly reference: CandidatePolicy | null;
  private readonly envs: EnvPool;
  /** Failed engine calls of dreamed steps, across iterations (a run stops when the engine is down). */
  private readonly failures: EngineFailureGuard;
  iteration = 0;
  realSteps = 0;
  dreamSteps = 0;
  /** The S2R correction rounds so far (dream-correction.ts). */
  private corrections: CorrectionRecord[] = [];
  /** The held-out evaluation of the last iteration (set when the run finishes; see scheduledEvaluation). */
  finalEvaluation: { iteration: number; result: EvalResult } | null = null;

  constructor(
    config: TrainConfig,
    readonly deps: TrainerDeps = {},
  ) {
    this.config = validateConfig({ ...config });
    this.source = deps.source ?? new RegisteredEnvSource(this.config, deps.experienceModel);
    checkSourceConfig(this.config, this.source);
    checkDeps(this.config, this.source, deps);
    const schema = deps.featureSchema ?? unminedSchema(this.config.env);
    const envFeatures = envPolicyFeatures(this.config.env);
    this.policy = new CandidatePolicy({ seed: config.seed, schema }, deps.prior, envFeatures);
    this.reference =
      this.config.klCoef > 0 ? new CandidatePolicy({ seed: config.seed, schema }, undefined, envFeatures) : null;
    this.optimizer = makeOptimizer(config.learningRate);
    this.envs = new EnvPool((phase) => this.source.makeEnv(phase));
    this.failures = new EngineFailureGuard(this.config.llmMaxFailures);
  }

  get curriculum(): Curriculum | null {
    return this.source.curriculum;
  }
  get stepLimit(): number {
    return this.source.stepLimit;
  }
  /** Real training steps allowed in this run (s2r: the real phase's share of the real-mode budget). */
  get realBudget(): number {
    return this.config.mode === 's2r'
      ? Math.round(this.config.s2rRealFraction * this.config.realStepBudget)
      : this.config.mode === 'dream'
        ? 0
        : this.config.realStepBudget;
  }
  get budgetLeft(): number {
    return this.realBudget - this.realSteps;
  }
  /** The phase iteration `i` (1-based) runs in. */
  phaseOf(iteration: number): Phase {
    if (this.config.mode === 'real') return 'real';
    if (this.config.mode === 'dream') return 'dream';
    return iteration <= this.config.iterations ? 'dream' : 'real';
  }
  get finished(): boolean {
    const { mode, iterations } = this.config;
    if (mode === 'dream') return this.iteration >= iterations;
    if (mode === 'real') return this.iteration >= iterations || this.budgetLeft <= 0;
    // s2r: all dream iterations, then real ones until the real budget is spent (with a safety cap).
    return this.iteration >= iterations && (this.budgetLeft <= 0 || this.iteration >= iterations * 20);
  }

  /** One iteration: choose tasks → roll out → keep the experience → update → evaluate when due. */
  async runIteration(options: { signal?: AbortSignal } = {}): Promise<IterationRecord> {
    const started = this.deps.clock?.();
    const iteration = this.iteration + 1;
    const phase = this.phaseOf(iteration);
    const streams = iterationStreams(this.config.seed, iteration);
    const progress = this.deps.progress;
    progress?.startIteration(iteration, phase);
    const tasks = this.chooseTasks(iteration, phase, streams.tasks);
    const { episodes, startFailed, rollout } = await this.rollOut(tasks, iteration, phase, streams, options.signal);
    progress?.stage('update');
    await this.keepExperience(episodes, tasks, phase, iteration);
    const losses = await this.learn(episodes, phase, iteration, streams.update);
    const correction = phase === 'dream' ? await this.correctDream(iteration, episodes) : undefined;
    this.iteration = iteration;
    progress?.stage('evaluation');
    const evaluation = await this.scheduledEvaluation(iteration);
    progress?.endIteration();
    const seconds = started === undefined ? undefined : (this.deps.clock!() - started) / 1000;
    return {
      iteration,
      metrics: iterationMetrics({
        phase,
        episodes,
        losses,
        realSteps: this.realSteps,
        dreamSteps: this.dreamSteps,
        rollout,
        ...(correction ? { correction } : {}),
        curriculum: this.curriculum,
        startFailed,
        evaluation,
        seconds,
      }),
    };
  }

  // ---- TASKS -----------------------------------------------------------------------------------

  private chooseTasks(iteration: number, phase: Phase, rng: Rng): Task[] {
    const tasks = this.source.chooseTasks(iteration, this.config.tasksPerIteration, phase, rng);
    if (tasks.length === 0)
      throw new Error(
        `The task source '${this.config.env}' gave no tasks for iteration ${iteration}; it needs at least one training task.`,
      );
    return tasks;
  }

  // ---- ROLLOUTS: tasksPerIteration tasks × groupSize episodes, stepped together -----------------

  private async rollOut(
    tasks: Task[],
    iteration: number,
    phase: Phase,
    streams: { tasks: Rng; sample: Rng; starts: Rng },
    signal?: AbortSignal,
  ): Promise<{ episodes: Episode[]; startFailed: number; rollout: RolloutTally }> {
    const pool = this.deps.experienceModel?.realStarts;
    const { episodes, startFailed } = await startEpisodes(tasks, {
      iteration,
      groupSize: this.config.groupSize,
      phase,
      source: this.source,
      envs: this.envs,
      rng: streams.tasks,
      ...(pool && this.config.realStartShare > 0
        ? {
            realStarts: {
              pool,
              share: this.config.realStartShare,
              horizon: this.config.realStartHorizon,
              stepLimit: this.stepLimit,
              rng: streams.starts,
            },
          }
        : {}),
    });
    const rollout = await stepEpisodes(episodes, {
      policy: this.policy,
      rng: streams.sample,
      phase,
      stepLimit: this.stepLimit,
      stepBudget: phase === 'real' ? this.budgetLeft : Infinity,
      failures: this.failures,
      ...(this.deps.progress ? { progress: this.deps.progress } : {}),
      ...(signal ? { signal } : {}),
    });
    if (phase === 'real') this.realSteps += rollout.steps;
    else this.dreamSteps += rollout.steps;
    return { episodes, startFailed, rollout };
  }

  // ---- EXPERIENCE: buffer (source real or dream), traces, the curriculum's reward variance ----

  private async keepExperience(episodes: Episode[], tasks: Task[], phase: Phase, iteration: number): Promise<void> {
    if (this.deps.buffer)
      await this.deps.buffer.add(this.bufferRecords(episodes, phase, iteration), this.bufferEpisodes(episodes, phase));
    if (this.deps.onEpisodes) await this.deps.onEpisodes(this.traces(episodes, phase, iteration), phase, iteration);
    const size = this.config.groupSize;
    // A group begun at a real state plays a recorded task from its middle: it says nothing of the task's difficulty.
    const groups: GroupOutcome[] = tasks
      .map((task, t) => ({ task, group: episodes.slice(t * size, (t + 1) * size) }))
      .filter(({ group }) => !group[0]?.realStart)
      .map(({ task, group }) => ({ task, successes: group.filter((e) => e.success).length, rollouts: group.length }));
    await this.source.recordOutcomes(iteration, phase, groups, this.deps.taskGenerator);
  }

  /** The iteration's episodes as plain traces (copies: the hook may keep them). */
  private traces(episodes: Episode[], phase: Phase, iteration: number): EpisodeTrace[] {
    const label = phase === 'dream' ? this.deps.experienceModel?.label : undefined;
    return episodes.map((e, index): EpisodeTrace => ({
      format: 'dreamgym-episode-trace/1',
      iteration,
      index,
      episodeId: e.episodeId,
      groupId: e.groupId,
      phase,
      ...(label ? { experienceModel: label } : {}),
      task: e.task,
      success: e.success,
      return: e.return,
      steps: e.record.map(({ next: _next, ...step }) => ({
        ...step,
        admissible: step.admissible.slice(),
        probabilities: step.probabilities.slice(),
        ...(step.prior ? { prior: step.prior.slice() } : {}),
      })),
      ...(e.realStart
        ? { realStart: { fromStep: e.realStart.fromStep, prefix: e.realStart.prefix.map((s) => ({ ...s })) } }
        : {}),
      final: { observation: e.obs.text, admissible: e.obs.admissible.slice() },
    }));
  }

  private get bufferRunId(): string {
    return this.deps.runId ?? `${this.config.preset}/${this.config.mode}/${this.config.algo}/${this.config.seed}`;
  }

  /** One episode record per episode with steps (the buffer's episode count then agrees with its transitions). */
  private bufferEpisodes(episodes: Episode[], phase: Phase): BufferEpisode[] {
    const createdAt = this.deps.now?.() ?? 0;
    const runId = this.bufferRunId;
    return episodes
      .filter((e) => e.record.length > 0)
      .map((e): BufferEpisode => ({
        id: `${runId}/${e.episodeId}`,
        env: this.config.env,
        taskId: e.task.id,
        source: phase,
        steps: e.record.length,
        return: e.return,
        success: e.success,
        createdAt,
        runId,
      }));
  }

  private bufferRecords(episodes: Episode[], phase: Phase, iteration: number): BufferTransition[] {
    const createdAt = this.deps.now?.() ?? 0;
    const runId = this.bufferRunId;
    return episodes.flatMap((e) =>
      e.record.map((r, i): BufferTransition => ({
        id: `${runId}/${iteration}/${e.episodeId}#${i}`,
        env: this.config.env,
        taskId: e.task.id,
        instruction: e.task.instruction,
        episodeId: `${runId}/${e.episodeId}`,
        stepIndex: i,
        observation: r.observation,
        admissible: r.admissible,
        action: r.action,
        nextObservation: r.next.text,
        nextAdmissible: r.next.admissible,
        reward: r.reward,
        terminated: r.terminated,
        truncated: r.truncated,
        source: phase,
        valid: r.valid,
        ...(r.reasoning ? { reasoning: r.reasoning } : {}),
        createdAt,
        runId,
      })),
    );
  }

  // ---- UPDATE ------------------------------------------------------------------------------------

  private async learn(episodes: Episode[], phase: Phase, iteration: number, rng: Rng): Promise<UpdateMetrics> {
    const batch = { steps: episodes.flatMap((e) => e.steps) };
    this.deps.onBatch?.(batch, phase, iteration);
    return batch.steps.length > 0 ? this.update(batch, iteration, rng) : {};
  }

  private update(batch: { steps: PolicyStep[] }, iteration: number, rng: Rng): Promise<UpdateMetrics> {
    const c = this.config;
    if (this.optimizer instanceof ResumableAdam) {
      this.optimizer.setLearningRate(
        scheduledLearningRate(c.learningRate, c.learningRateSchedule, iteration, c.iterations),
      );
    }
    switch (c.algo) {
      case 'grpo':
        return grpoUpdate(this.policy, this.optimizer, batch, grpoConfigFrom(c), {
          rng,
          ...(this.reference ? { reference: this.reference } : {}),
        });
      case 'ppo':
        return ppoUpdate(this.policy, this.optimizer, batch, ppoConfigFrom(c), { rng });
      case 'reinforce':
        return reinforceUpdate(this.policy, this.optimizer, batch, reinforceConfigFrom(c));
    }
  }

  // ---- S2R CORRECTION: replay the dream's claimed successes in the real env (dream-correction.ts) ----

  /** A correction round where one is due: replays charged to the real budget, then the model corrected. */
  private async correctDream(
    iteration: number,
    episodes: Episode[],
  ): Promise<{ replayed: number; misses: number; steps: number } | undefined> {
    const round = correctionRoundAt(this.config, iteration);
    if (round === 0) return undefined;
    const spent = this.corrections.reduce((sum, r) => sum + r.steps, 0);
    const budget = Math.min(this.budgetLeft, roundAllowance(this.config, this.realBudget, round) - spent);
    const plans = claimedSuccesses(episodes);
    const env = this.source.makeEnv('real');
    const result = await correctionRound(plans, { env, budget, iteration, runId: this.bufferRunId });
    this.realSteps += result.record.steps;
    this.corrections.push(result.record);
    // Nothing replayed: nothing new to learn, so the model (and its transition cache) stays as it is.
    if (result.replays.length > 0)
      await this.deps.experienceModel!.correct!({
        episodes: result.replays.map((r) => r.episode),
        ...(this.deps.buffer ? { buffer: this.deps.buffer } : {}),
      });
    return { replayed: result.replays.length, misses: result.misses, steps: result.record.steps };
  }

  /** A resumed run's model, corrected again with every round's replays (the real env replays them alike). */
  private async replayCorrections(): Promise<void> {
    const env = this.source.makeEnv('real');
    const replays = [];
    for (const record of this.corrections) {
      const { iteration, plans } = record;
      const again = await correctionRound(plans, {
        env,
        budget: 0,
        iteration,
        runId: this.bufferRunId,
        replayAll: true,
      });
      if (again.record.steps !== record.steps)
        throw new CheckpointMismatchError(
          `The S2R correction of iteration ${iteration} spent ${record.steps} real steps and replays with ` +
            `${again.record.steps} now: the real env is not the one the run was saved with.`,
        );
      replays.push(...again.replays.map((r) => r.episode));
    }
    if (replays.length === 0) return;
    await this.deps.experienceModel!.correct!({
      episodes: replays,
      ...(this.deps.buffer ? { buffer: this.deps.buffer } : {}),
    });
  }

  // ---- EVALUATION --------------------------------------------------------------------------------

  /**
   * Every evalInterval iterations, and always after the last one: the final policy is evaluated
   * on finalEvalEpisodes held-out tasks, so the eval curve ends at the last iteration and the run's
   * summary is that point (finalEvaluation). A source without a real env has no held-out real
   * tasks (an imported domain evaluates its own way).
   */
  private async scheduledEvaluation(iteration: number): Promise<EvalResult | undefined> {
    const { evalInterval, evalEpisodes, finalEvalEpisodes } = this.config;
    if (!this.source.hasRealEnv) return undefined;
    if (this.finished) {
      this.finalEvaluation = { iteration, result: await this.evaluate(finalEvalEpisodes) };
      return this.finalEvaluation.result;
    }
    return evalInterval > 0 && iteration % evalInterval === 0 ? this.evaluate(evalEpisodes) : undefined;
  }

  /**
   * Iteration 0: the untrained policy on held-out real tasks (evalEpisodes of them), so every run's
   * curve starts from the same point. It changes nothing: greedy, no random stream, no update.
   * Null for a source without a real env.
   */
  async initialRecord(): Promise<IterationRecord | null> {
    if (!this.source.hasRealEnv || this.iteration !== 0) return null;
    const result = await this.evaluate(this.config.evalEpisodes);
    return {
      iteration: 0,
      metrics: {
        'budget/real_steps': 0,
        'budget/dream_steps': 0,
        'eval/success_rate': result.success,
        'eval/score': result.score,
      },
    };
  }

  /** Greedy evaluation on held-out real tasks (seeds ≥ HELD_OUT_SEED_BASE); not counted in the real budget. */
  evaluate(episodes: number): Promise<EvalResult> {
    return this.source.evaluate(this.policy, episodes);
  }

  // ---- CHECKPOINTS -------------------------------------------------------------------------------

  async state(): Promise<TrainerState> {
    const named = await this.optimizer.getWeights();
    const optimizer = await Promise.all(
      named.map(async (w) => ({ name: w.name, shape: w.tensor.shape, data: Float32Array.from(await w.tensor.data()) })),
    );
    return {
      format: 'dreamgym-checkpoint/2',
      config: this.config,
      featureSchema: this.policy.config.schema,
      iteration: this.iteration,
      realSteps: this.realSteps,
      dreamSteps: this.dreamSteps,
      ...(this.corrections.length > 0 ? { corrections: structuredClone(this.corrections) } : {}),
      ...(this.curriculum ? { curriculum: this.curriculum.state() } : {}),
      policy: await this.policy.getWeights(),
      optimizer,
    };
  }

  /** A trainer that continues from `state` (config overrides such as more iterations allowed). */
  static async restore(
    state: TrainerState,
    overrides: Partial<TrainConfig> = {},
    deps: TrainerDeps = {},
  ): Promise<Trainer> {
    if (state.format !== 'dreamgym-checkpoint/2') {
      throw new CheckpointMismatchError(
        `Not a DreamGym checkpoint of this version (format '${String(state.format)}'); expected ` +
          "'dreamgym-checkpoint/2' (its policy's features are the mined schema saved with it): start the run again.",
      );
    }
    const config = withDefaults({ ...state.config, ...overrides });
    const trainer = new Trainer(config, { ...deps, featureSchema: state.featureSchema });
    try {
      trainer.policy.setWeights(state.policy);
    } catch (error) {
      trainer.dispose();
      throw new CheckpointMismatchError(
        `The checkpoint's policy does not fit this policy: ${(error as Error).message}`,
      );
    }
    if (state.optimizer.length > 0) {
      const tensors = state.optimizer.map((w) => ({ name: w.name, tensor: tf.tensor(w.data, w.shape) }));
      await trainer.optimizer.setWeights(tensors);
      for (const t of tensors) t.tensor.dispose();
    }
    trainer.iteration = state.iteration;
    trainer.realSteps = state.realSteps;
    trainer.dreamSteps = state.dreamSteps ?? 0;
    trainer.corrections = structuredClone(state.corrections ?? []);
    // Corrected models matter only while the run still dreams.
    if (trainer.corrections.length > 0 && trainer.iteration < trainer.config.iterations)
      await trainer.replayCorrections();
    if (state.curriculum && trainer.curriculum) trainer.curriculum.restore(state.curriculum);
    return trainer;
  }

  /**
   * The KL term's reference π_ref becomes the policy as it is now: a policy that starts from
   * demonstrations (behaviour cloning) is held near them, as the paper's agents are near their
   * instruct model. Without a KL term (klCoef 0) there is no reference, and nothing to do.
   */
  async anchorReference(): Promise<void> {
    if (this.reference) this.reference.setWeights(await this.policy.getWeights());
  }

  dispose(): void {
    this.policy.dispose();
    this.reference?.dispose();
    this.optimizer.dispose();
  }
}

/** Parts the config asks for that were not handed in (buildRunParts builds them from the config). */
function checkDeps(config: TrainConfig, source: TaskSource, deps: TrainerDeps): void {
  if (config.mode === 's2r' && config.s2rCorrectFraction > 0) {
    if (!source.hasRealEnv)
      throw new ConfigError(
        `'s2rCorrectFraction' replays dreamed successes in a real env, and '${config.env}' has none.`,
      );
    if (!deps.experienceModel?.correct)
      throw new ConfigError(
        `'s2rCorrectFraction' ${config.s2rCorrectFraction} corrects the dream, and the experience model ` +
          `'${deps.experienceModel?.label ?? 'none'}' cannot be corrected (it has no correct()): ` +
          'use a learned model (--llm learned:PATH), or s2rCorrectFraction 0.',
      );
  }
  if (source.curriculum?.usesLlm && !deps.taskGenerator) {
    throw new Error(
      `config.curriculumVariations is '${config.curriculumVariations}' but no task generator was given: build one with buildRunParts(config) (it needs an LLM, not the oracle).`,
    );
  }
  if (config.llmPrior && !deps.prior) {
    throw new Error(
      'config.llmPrior is on but no prior was given: build one with buildRunParts(config) (it needs an LLM, not the oracle).',
    );
  }
}
