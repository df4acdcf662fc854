/**
 * The DreamGym training loop, one loop for the three modes: 'real' (the baseline row of the
 * paper's Table 1: rollouts in the ground-truth env), 'dream' (rollouts in a DreamEnv over the
 * experience model: zero real training steps) and 's2r' (dream first, then real with a small
 * budget). Each iteration rolls out G episodes of each of a batch of tasks — all episodes stepped
 * together so the policy scores every running state in one batched forward — then applies one
 * policy-gradient update (GRPO, PPO or REINFORCE) and logs the metrics of design.md §5.
 * Held-out evaluation is always in the real env; the real-step budget is never exceeded; dreamed
 * steps whose answer was unusable are never learned from.
 *
 * Every random stream is derived from (seed, purpose, iteration), so an iteration depends only
 * on the weights and optimizer state it starts from: resuming from a checkpoint continues
 * exactly as an uninterrupted run would.
 *
 * A `DreamWorld` (deps.world) replaces the registered env for an imported domain, which has no
 * real env and no task generator: the world gives each iteration's tasks and its envs (DreamEnvs
 * over the domain's experience model). It is dream mode only: no real phase, no curriculum, no
 * held-out real evaluation. The loop itself is the same; the world differs only where the
 * tasks and the envs come from.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../rng';
import type { Observation, Task } from '../types';
import type { Env, EnvDefinition } from '../envs/env';
import { Curriculum, isDreamOnly, type CurriculumState, type GroupOutcome } from '../curriculum/curriculum';
import type { LlmTaskGenerator } from '../curriculum/llm-variations';
import { ExperienceModelError } from '../experience/types';
import type { ExperienceModel } from '../experience/types';
import { makeDreamEnv, type DreamStepInfo } from '../experience/dream-env';
import type { ReplayBuffer } from '../buffer/buffer';
import type { BufferTransition } from '../buffer/types';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import { CandidatePolicy, type ActionPrior, type PolicyWeights } from '../policy/policy';
import type { PolicyState } from '../policy/features';
import { makeOptimizer, type PolicyStep, type UpdateMetrics } from '../rl/batch';
import { grpoUpdate } from '../rl/grpo';
import { ppoUpdate } from '../rl/ppo';
import { reinforceUpdate } from '../rl/reinforce';
import { ConfigError, validateConfig, withDefaults, type TrainConfig } from './config';
import { evaluatePolicy, type EvalResult } from './evaluate';
import type { EpisodeTrace, TraceStep } from './trace';

/** Seeds at or above this are held out for evaluation (never trained on). */
export const HELD_OUT_SEED_BASE = 1_000_000_000;

export type Metrics = Record<string, number>;

export interface IterationRecord {
  iteration: number;
  metrics: Metrics;
}

/** Everything needed to continue a run exactly (tfjs tensors as plain typed arrays). */
export interface TrainerState {
  format: 'dreamgym-checkpoint/1';
  config: TrainConfig;
  /** Iterations completed. */
  iteration: number;
  realSteps: number;
  dreamSteps?: number;
  curriculum?: CurriculumState;
  policy: PolicyWeights;
  optimizer: { name: string; shape: number[]; data: Float32Array }[];
}

export class CheckpointMismatchError extends Error {
  constructor(message: string) { super(message); this.name = 'CheckpointMismatchError'; }
}

export type Phase = 'real' | 'dream';

/**
 * Where a trainer dreams when there is no registered env (an imported domain): the tasks and the
 * envs of its episodes. Dream mode only (no real env exists to evaluate or train in).
 */
export interface DreamWorld {
  /** The env id of its tasks, observations and buffer records; must equal config.env. */
  envId: string;
  /** Step limit of its episodes (its envs end them there; the policy sees it). */
  stepLimit: number;
  /** The `count` tasks of iteration `iteration` (1-based), drawn with the iteration's task stream. */
  tasks(iteration: number, count: number, rng: Rng): Task[];
  /** A fresh env of the world (e.g. a DreamEnv over the domain's experience model, under the step limit). */
  makeEnv(): Env;
}

/** What a trainer needs beyond its config (built at the edge: CLI, worker). */
export interface TrainerDeps {
  /** The experience model of the dream phases (required for 'dream' and 's2r'). */
  experienceModel?: ExperienceModel;
  /** Dreamed and real transitions are added here (the experience model retrieves from it). */
  buffer?: ReplayBuffer;
  /** Timestamps of buffer records (core never reads the clock itself). */
  now?: () => number;
  /** The agent's prior (the LLM's preference among the admissible actions); none = f_θ alone. */
  prior?: ActionPrior;
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
   * Writes curriculum variations with an LLM (config.curriculumVariations 'llm' or 'both'; build
   * it with createTaskGenerator(config)). Its tasks are dream-only: never played in a real env.
   */
  taskGenerator?: LlmTaskGenerator;
  /** Train in this world instead of the registered env config.env (see DreamWorld). */
  world?: DreamWorld;
}

interface RecordedStep extends Omit<TraceStep, 'observation' | 'admissible'> { observation: string; admissible: string[]; next: Observation }

interface RunningEpisode {
  env: Env;
  task: Task;
  obs: Observation;
  episodeId: string;
  groupId: string;
  steps: PolicyStep[];
  actions: string[];
  done: boolean;
  return: number;
  success: boolean;
  record: RecordedStep[];
}

export class Trainer {
  readonly config: TrainConfig;
  /** The registered env's definition (null when the trainer dreams in deps.world). */
  readonly definition: EnvDefinition<unknown> | null;
  readonly policy: CandidatePolicy;
  private optimizer: tf.Optimizer;
  iteration = 0;
  realSteps = 0;
  dreamSteps = 0;
  readonly curriculum: Curriculum | null;
  private readonly taskCache = new Map<number, Task>();
  private readonly envs: Record<Phase, Env[]> = { real: [], dream: [] };

  constructor(config: TrainConfig, readonly deps: TrainerDeps = {}) {
    this.config = validateConfig({ ...config });
    if (deps.world) checkWorldConfig(this.config, deps.world);
    this.definition = deps.world ? null : getEnvDefinition(config.env);
    if (this.config.mode !== 'real' && !deps.experienceModel && !deps.world) {
      throw new Error(`Mode '${this.config.mode}' dreams: the trainer needs an experience model (config.llm = '${this.config.llm}'); build one with createExperienceModel().`);
    }
    this.curriculum = this.config.curriculum && this.definition ? new Curriculum(this.definition, {
      lambda: this.config.lambda, seedsPerIteration: this.config.curriculumSeeds, difficulty: this.config.difficulty,
      taskPool: this.config.taskPool, seed: this.config.seed, enabled: true,
      grouping: this.config.curriculumGrouping, clusters: this.config.curriculumClusters,
      variations: this.config.curriculumVariations ?? 'procedural',
    }) : null;
    if (this.curriculum?.usesLlm && !deps.taskGenerator) {
      throw new Error(`config.curriculumVariations is '${this.config.curriculumVariations}' but no task generator was given: build one with createTaskGenerator(config) (it needs an LLM, not the oracle).`);
    }
    if (this.config.llmPrior && !deps.prior) {
      throw new Error("config.llmPrior is on but no prior was given: build one with createActionPrior(config) (it needs an LLM, not the oracle).");
    }
    this.policy = new CandidatePolicy({ seed: config.seed }, ...(deps.prior ? [deps.prior] : []));
    this.optimizer = makeOptimizer(config.learningRate);
  }

  get stepLimit(): number { return this.deps.world ? this.deps.world.stepLimit : this.definition!.defaultStepLimit; }
  /** Real training steps allowed in this run (s2r: the real phase's share of the real-mode budget). */
  get realBudget(): number {
    return this.config.mode === 's2r' ? Math.round(this.config.s2rRealFraction * this.config.realStepBudget)
      : this.config.mode === 'dream' ? 0 : this.config.realStepBudget;
  }
  get budgetLeft(): number { return this.realBudget - this.realSteps; }
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

  private envFor(phase: Phase, index: number): Env {
    const pool = this.envs[phase];
    while (pool.length <= index) {
      pool.push(phase === 'real' ? makeEnv(this.config.env)
        : this.deps.world ? this.deps.world.makeEnv()
        : makeDreamEnv(this.deps.experienceModel!, { envId: this.config.env, difficulty: this.config.difficulty }));
    }
    return pool[index];
  }

  /** Training task for a pool seed (cached: generation proves solvability, so it is not free). */
  task(seed: number): Task {
    if (!this.definition) throw new Error(`The dream world '${this.config.env}' has no seeded task pool: its tasks come from world.tasks().`);
    let task = this.taskCache.get(seed);
    if (!task) {
      task = this.definition.generateTask(seed, this.config.difficulty);
      this.taskCache.set(seed, task);
    }
    return task;
  }

  /** One iteration: rollouts, update, metrics. */
  async runIteration(): Promise<IterationRecord> {
    const { config } = this;
    const iteration = this.iteration + 1;
    const phase = this.phaseOf(iteration);
    const taskRng = Rng.fromSeed(config.seed, 'tasks', String(iteration));
    const sampleRng = Rng.fromSeed(config.seed, 'sample', String(iteration));
    const updateRng = Rng.fromSeed(config.seed, 'update', String(iteration));

    // ---- TASKS: the world's, the curriculum's batch (≤ λ synthetic), or the fixed pool -----------
    const batchTasks = this.deps.world ? this.worldTasks(iteration, taskRng)
      : this.curriculum ? this.curriculum.nextBatch(iteration, config.tasksPerIteration, { realEnv: phase === 'real' }).tasks
      : Array.from({ length: config.tasksPerIteration }, () => this.task(taskRng.int(0, config.taskPool - 1)));
    // Dream-only tasks (LLM-written: no spec) never reach a real env, whatever queued them.
    if (phase === 'real') {
      for (let t = 0; t < batchTasks.length; t++) if (isDreamOnly(batchTasks[t])) batchTasks[t] = this.task(taskRng.int(0, config.taskPool - 1));
    }

    // ---- ROLLOUTS: tasksPerIteration tasks × groupSize episodes, stepped together ----------------
    const episodes: RunningEpisode[] = [];
    let llmStartFailed = 0;
    for (let t = 0; t < batchTasks.length; t++) {
      let task = batchTasks[t];
      for (let g = 0; g < config.groupSize; g++) {
        const env = this.envFor(phase, episodes.length);
        let obs: Observation;
        try {
          obs = await env.reset({ seed: task.seed ?? 0, task });
        } catch (error) {
          // The experience model wrote no usable first state for an LLM task: a pool task plays instead
          // (a world has no pool: its error stands).
          if (g > 0 || phase !== 'dream' || this.deps.world || !isDreamOnly(task) || !(error instanceof ExperienceModelError)) throw error;
          task = batchTasks[t] = this.task(taskRng.int(0, config.taskPool - 1));
          llmStartFailed++;
          obs = await env.reset({ seed: task.seed ?? 0, task });
        }
        // A start with nothing to choose from (a dreamed first state can be one) ends at once.
        episodes.push({ env, task, obs, episodeId: `${iteration}/${t}/${g}`, groupId: `${iteration}/${t}`, steps: [], actions: [],
          done: obs.admissible.length === 0, return: 0, success: false, record: [] });
      }
    }
    let stepsThisIteration = 0;
    let dreamPredictions = 0, dreamInvalid = 0, dreamTokens = 0;
    for (let t = 0; ; t++) {
      let running = episodes.filter((e) => !e.done);
      if (running.length === 0) break;
      // The real-step budget is never exceeded: episodes that cannot take their step are cut here.
      const left = phase === 'real' ? this.budgetLeft - stepsThisIteration : Infinity;
      if (left < running.length) {
        for (const e of running.slice(Math.max(0, left))) this.cut(e);
        running = running.slice(0, Math.max(0, left));
        if (running.length === 0) break;
      }
      const states: PolicyState[] = running.map((e) => ({
        instruction: e.obs.task.instruction, observation: e.obs.text, admissible: e.obs.admissible,
        step: t, maxSteps: this.stepLimit, previousActions: e.actions,
      }));
      const acted = await this.policy.act(states, sampleRng);
      for (let i = 0; i < running.length; i++) {
        const e = running[i];
        const result = await e.env.step(acted.actions[i]);
        stepsThisIteration++;
        const info = result.info as DreamStepInfo;
        if (phase === 'dream' && info.reasoning !== undefined) {
          dreamPredictions++;
          const usage = (e.env as unknown as { unwrapped?: { lastPrediction?: { usage?: { promptTokens: number; completionTokens: number } } | null } }).unwrapped?.lastPrediction?.usage;
          if (usage) dreamTokens += usage.promptTokens + usage.completionTokens;
        }
        // A dreamed step whose answer was unusable is kept for inspection, never learned from.
        const unusable = phase === 'dream' && info.dreamInvalid === true;
        if (unusable) dreamInvalid++;
        e.record.push({ observation: e.obs.text, admissible: e.obs.admissible, action: acted.actions[i], next: result,
          actionIndex: acted.actionIndices[i], probabilities: acted.probs[i],
          reward: result.reward, terminated: result.terminated, truncated: result.truncated, valid: !unusable && info.valid,
          ...(unusable ? { dreamInvalid: true, ...(info.invalidReason ? { invalidReason: info.invalidReason } : {}) } : {}),
          ...(info.cached ? { cached: true } : {}),
          ...(info.reasoning ? { reasoning: info.reasoning } : {}) });
        if (!unusable) {
          e.steps.push({
            state: states[i], action: acted.actionIndices[i], logProb: acted.logProbs[i], value: acted.values[i],
            prior: acted.priors[i], reward: result.reward, terminated: result.terminated, truncated: result.truncated,
            episodeId: e.episodeId, groupId: e.groupId,
          });
        } else if (result.truncated && e.steps.length > 0) {
          e.steps[e.steps.length - 1].truncated = true;
        }
        e.actions = [...e.actions, acted.actions[i]];
        e.return += result.reward;
        e.obs = result;
        if (result.terminated || result.truncated) { e.done = true; e.success = result.info.success; }
        else if (result.admissible.length === 0) e.done = true; // nothing to choose from: the episode cannot go on
      }
    }
    if (phase === 'real') this.realSteps += stepsThisIteration;
    else this.dreamSteps += stepsThisIteration;

    // ---- BUFFER: fresh transitions enrich the replay buffer (source real or dream) --------------
    if (this.deps.buffer) await this.deps.buffer.add(this.bufferRecords(episodes, phase, iteration));
    if (this.deps.onEpisodes) await this.deps.onEpisodes(this.traces(episodes, phase, iteration), phase, iteration);

    // ---- CURRICULUM: reward variance of each task's group picks the next seeds ------------------
    if (this.curriculum) {
      const groups: GroupOutcome[] = [];
      for (let t = 0; t < batchTasks.length; t++) {
        const group = episodes.slice(t * config.groupSize, (t + 1) * config.groupSize);
        groups.push({ task: batchTasks[t], successes: group.filter((e) => e.success).length, rollouts: group.length });
      }
      this.curriculum.record(iteration, groups);
      // LLM variations of this iteration's seeds (dream phases only: a real phase cannot play them).
      if (this.curriculum.usesLlm && phase === 'dream' && this.deps.taskGenerator) await this.curriculum.generateLlmVariations(iteration, this.deps.taskGenerator);
      else { this.curriculum.lastLlmQueued = 0; this.curriculum.lastLlmInvalid = 0; }
    }

    // ---- UPDATE ----------------------------------------------------------------------------------
    const batch = { steps: episodes.flatMap((e) => e.steps) };
    this.deps.onBatch?.(batch, phase, iteration);
    const losses = batch.steps.length > 0 ? await this.update(batch, updateRng) : {};

    // ---- METRICS ---------------------------------------------------------------------------------
    const n = episodes.length;
    const metrics: Metrics = {
      'charts/success_rate': episodes.filter((e) => e.success).length / n,
      'charts/episodic_return': episodes.reduce((s, e) => s + e.return, 0) / n,
      'charts/episode_length': episodes.reduce((s, e) => s + e.steps.length, 0) / n,
      ...losses,
      'budget/real_steps': this.realSteps,
      'budget/dream_steps': this.dreamSteps,
      ...(phase === 'dream' ? {
        'dream/invalid_rate': dreamPredictions ? dreamInvalid / dreamPredictions : 0,
        'dream/tokens_per_transition': dreamPredictions ? dreamTokens / dreamPredictions : 0,
      } : {}),
      ...(this.curriculum ? {
        'curriculum/mean_variance': this.curriculum.lastMeanVariance,
        'curriculum/synthetic_share': this.curriculum.lastSyntheticShare,
        ...(this.curriculum.usesLlm ? {
          'curriculum/llm_variations': this.curriculum.lastLlmQueued,
          'curriculum/llm_invalid': this.curriculum.lastLlmInvalid,
          'curriculum/llm_start_failed': llmStartFailed,
        } : {}),
      } : {}),
    };
    this.iteration = iteration;
    if (config.evalInterval > 0 && iteration % config.evalInterval === 0 && !this.finished) {
      const evaluation = await this.evaluate(config.evalEpisodes);
      metrics['eval/success_rate'] = evaluation.success;
      metrics['eval/score'] = evaluation.score;
    }
    return { iteration, metrics };
  }

  /** The world's tasks of an iteration (checked: an iteration without tasks has nothing to learn from). */
  private worldTasks(iteration: number, taskRng: Rng): Task[] {
    const tasks = this.deps.world!.tasks(iteration, this.config.tasksPerIteration, taskRng);
    if (tasks.length === 0) throw new Error(`The dream world '${this.config.env}' gave no tasks for iteration ${iteration}; it needs at least one training task.`);
    return tasks;
  }

  /** The iteration's episodes as plain traces (copies: the hook may keep them). */
  private traces(episodes: RunningEpisode[], phase: Phase, iteration: number): EpisodeTrace[] {
    const label = phase === 'dream' ? this.deps.experienceModel?.label : undefined;
    return episodes.map((e, index): EpisodeTrace => ({
      format: 'dreamgym-episode-trace/1', iteration, index, episodeId: e.episodeId, groupId: e.groupId, phase,
      ...(label ? { experienceModel: label } : {}), task: e.task, success: e.success, return: e.return,
      steps: e.record.map(({ next: _next, ...step }) => ({ ...step, admissible: step.admissible.slice(), probabilities: step.probabilities.slice() })),
      final: { observation: e.obs.text, admissible: e.obs.admissible.slice() },
    }));
  }

  private bufferRecords(episodes: RunningEpisode[], phase: Phase, iteration: number): BufferTransition[] {
    const createdAt = this.deps.now?.() ?? 0;
    const runId = this.deps.runId ?? `${this.config.preset}/${this.config.mode}/${this.config.algo}/${this.config.seed}`;
    return episodes.flatMap((e) => e.record.map((r, i): BufferTransition => ({
      id: `${runId}/${iteration}/${e.episodeId}#${i}`, env: this.config.env, taskId: e.task.id, instruction: e.task.instruction,
      episodeId: `${runId}/${e.episodeId}`, stepIndex: i, observation: r.observation, admissible: r.admissible, action: r.action,
      nextObservation: r.next.text, nextAdmissible: r.next.admissible, reward: r.reward, terminated: r.terminated,
      truncated: r.truncated, source: phase, valid: r.valid, ...(r.reasoning ? { reasoning: r.reasoning } : {}), createdAt, runId,
    })));
  }

  /** Ends an episode the budget cannot pay for: its last step counts as truncated. */
  private cut(e: RunningEpisode): void {
    e.done = true;
    const last = e.steps[e.steps.length - 1];
    if (last) last.truncated = true;
  }

  private async update(batch: { steps: PolicyStep[] }, rng: Rng): Promise<UpdateMetrics> {
    const c = this.config;
    switch (c.algo) {
      case 'grpo':
        return grpoUpdate(this.policy, this.optimizer, batch, {
          learningRate: c.learningRate, clipCoef: c.clipEpsilon, klCoef: 0, entropyCoef: c.entropyCoef,
          updateEpochs: c.updateEpochs, numMinibatches: 1, maxGradNorm: c.maxGradNorm,
        }, { rng });
      case 'ppo':
        return ppoUpdate(this.policy, this.optimizer, batch, {
          learningRate: c.learningRate, gamma: c.gamma, gaeLambda: c.gaeLambda, updateEpochs: c.updateEpochs,
          numMinibatches: c.minibatches, clipCoef: c.clipEpsilon, entCoef: c.entropyCoef, vfCoef: c.valueCoef,
          maxGradNorm: c.maxGradNorm,
        }, { rng });
      case 'reinforce':
        return reinforceUpdate(this.policy, this.optimizer, batch, {
          learningRate: c.learningRate, gamma: c.gamma, entropyCoef: c.entropyCoef, maxGradNorm: c.maxGradNorm,
        });
    }
  }

  /** Greedy evaluation on held-out real tasks (seeds ≥ 1e9); not counted in the real budget. */
  evaluate(episodes: number): Promise<EvalResult> {
    if (this.deps.world) {
      return Promise.reject(new Error(`Held-out evaluation plays real tasks, and the dream world '${this.config.env}' has no real env; ` +
        'evaluate it its own way (an imported domain: DomainTrainer.evaluate(), i.e. dream success, action agreement and the audit).'));
    }
    return evaluatePolicy(this.policy, this.config.env, this.config.difficulty, episodes);
  }

  // ---- CHECKPOINTS -------------------------------------------------------------------------------

  async state(): Promise<TrainerState> {
    const named = await this.optimizer.getWeights();
    const optimizer = await Promise.all(named.map(async (w) => ({ name: w.name, shape: w.tensor.shape, data: Float32Array.from(await w.tensor.data()) })));
    return { format: 'dreamgym-checkpoint/1', config: this.config, iteration: this.iteration, realSteps: this.realSteps,
      dreamSteps: this.dreamSteps, ...(this.curriculum ? { curriculum: this.curriculum.state() } : {}),
      policy: await this.policy.getWeights(), optimizer };
  }

  /** A trainer that continues from `state` (config overrides such as more iterations allowed). */
  static async restore(state: TrainerState, overrides: Partial<TrainConfig> = {}, deps: TrainerDeps = {}): Promise<Trainer> {
    if (state.format !== 'dreamgym-checkpoint/1') {
      throw new CheckpointMismatchError(`Not a DreamGym checkpoint (format '${String(state.format)}'); expected 'dreamgym-checkpoint/1'.`);
    }
    const trainer = new Trainer(withDefaults({ ...state.config, ...overrides }), deps);
    try {
      trainer.policy.setWeights(state.policy);
    } catch (error) {
      trainer.dispose();
      throw new CheckpointMismatchError(`The checkpoint's policy does not fit this policy: ${(error as Error).message}`);
    }
    if (state.optimizer.length > 0) {
      const tensors = state.optimizer.map((w) => ({ name: w.name, tensor: tf.tensor(w.data, w.shape) }));
      await trainer.optimizer.setWeights(tensors);
      for (const t of tensors) t.tensor.dispose();
    }
    trainer.iteration = state.iteration;
    trainer.realSteps = state.realSteps;
    trainer.dreamSteps = state.dreamSteps ?? 0;
    if (state.curriculum && trainer.curriculum) trainer.curriculum.restore(state.curriculum);
    return trainer;
  }

  dispose(): void {
    this.policy.dispose();
    this.optimizer.dispose();
  }
}

/** A world has no real env: only dream mode, no curriculum (it varies registered tasks), no held-out real evaluation. */
function checkWorldConfig(config: TrainConfig, world: DreamWorld): void {
  const problems: string[] = [];
  if (config.env !== world.envId) problems.push(`'env' must be the world's env id '${world.envId}'; got '${config.env}'`);
  if (config.mode !== 'dream') problems.push(`'mode' ${config.mode} trains in a real env, and the world has none; use mode dream`);
  if (config.curriculum) problems.push("'curriculum' builds variations with a registered env's task generator, and the world has none; set curriculum false");
  if (config.evalInterval !== 0) problems.push(`'evalInterval' ${config.evalInterval} evaluates on held-out real tasks, and the world has no real env; set evalInterval 0`);
  if (!Number.isInteger(world.stepLimit) || world.stepLimit < 1) problems.push(`the world's stepLimit must be a positive integer; got ${world.stepLimit}`);
  if (problems.length) throw new ConfigError(`Invalid training config for the dream world '${world.envId}':\n- ${problems.join('\n- ')}`);
}
