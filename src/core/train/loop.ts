/**
 * The training loop in the real environment (the baseline row of the paper's Table 1):
 * each iteration rolls out G episodes of each of a batch of tasks — all episodes stepped
 * together so the policy scores every running state in one batched forward — then applies one
 * policy-gradient update (GRPO, PPO or REINFORCE) and logs the metrics of design.md §5.
 *
 * Every random stream is derived from (seed, purpose, iteration), so an iteration depends only
 * on the weights and optimizer state it starts from: resuming from a checkpoint continues
 * exactly as an uninterrupted run would.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../rng';
import type { Observation, Task } from '../types';
import type { EnvDefinition, GroundTruthEnv, TimeLimit } from '../envs/env';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import { CandidatePolicy, type PolicyWeights } from '../policy/policy';
import type { PolicyState } from '../policy/features';
import { makeOptimizer, type PolicyStep, type UpdateMetrics } from '../rl/batch';
import { grpoUpdate } from '../rl/grpo';
import { ppoUpdate } from '../rl/ppo';
import { reinforceUpdate } from '../rl/reinforce';
import { validateConfig, type TrainConfig } from './config';
import { evaluatePolicy, type EvalResult } from './evaluate';

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
  policy: PolicyWeights;
  optimizer: { name: string; shape: number[]; data: Float32Array }[];
}

export class CheckpointMismatchError extends Error {
  constructor(message: string) { super(message); this.name = 'CheckpointMismatchError'; }
}

interface RunningEpisode {
  env: TimeLimit<GroundTruthEnv>;
  obs: Observation;
  episodeId: string;
  groupId: string;
  steps: PolicyStep[];
  actions: string[];
  done: boolean;
  return: number;
  success: boolean;
}

export class Trainer {
  readonly config: TrainConfig;
  readonly definition: EnvDefinition<unknown>;
  readonly policy: CandidatePolicy;
  private optimizer: tf.Optimizer;
  iteration = 0;
  realSteps = 0;
  private readonly taskCache = new Map<number, Task>();
  private envs: TimeLimit<GroundTruthEnv>[] = [];

  constructor(config: TrainConfig) {
    this.config = validateConfig({ ...config });
    this.definition = getEnvDefinition(config.env);
    this.policy = new CandidatePolicy({ seed: config.seed });
    this.optimizer = makeOptimizer(config.learningRate);
  }

  get stepLimit(): number { return this.definition.defaultStepLimit; }
  get budgetLeft(): number { return this.config.realStepBudget - this.realSteps; }
  get finished(): boolean { return this.iteration >= this.config.iterations || this.budgetLeft <= 0; }

  /** Training task for a pool seed (cached: generation proves solvability, so it is not free). */
  task(seed: number): Task {
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
    const taskRng = Rng.fromSeed(config.seed, 'tasks', String(iteration));
    const sampleRng = Rng.fromSeed(config.seed, 'sample', String(iteration));
    const updateRng = Rng.fromSeed(config.seed, 'update', String(iteration));

    // ---- ROLLOUTS: tasksPerIteration tasks × groupSize episodes, stepped together ----------------
    const taskSeeds = Array.from({ length: config.tasksPerIteration }, () => taskRng.int(0, config.taskPool - 1));
    const needed = taskSeeds.length * config.groupSize;
    while (this.envs.length < needed) this.envs.push(makeEnv(config.env));
    const episodes: RunningEpisode[] = [];
    for (let t = 0; t < taskSeeds.length; t++) {
      const task = this.task(taskSeeds[t]);
      for (let g = 0; g < config.groupSize; g++) {
        const env = this.envs[episodes.length];
        const obs = await env.reset({ seed: taskSeeds[t], task });
        episodes.push({ env, obs, episodeId: `${iteration}/${t}/${g}`, groupId: `${iteration}/${t}`, steps: [], actions: [], done: false, return: 0, success: false });
      }
    }
    let stepsThisIteration = 0;
    for (let t = 0; ; t++) {
      let running = episodes.filter((e) => !e.done);
      if (running.length === 0) break;
      // The real-step budget is never exceeded: episodes that cannot take their step are cut here.
      const left = this.budgetLeft - stepsThisIteration;
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
        e.steps.push({
          state: states[i], action: acted.actionIndices[i], logProb: acted.logProbs[i], value: acted.values[i],
          prior: acted.priors[i], reward: result.reward, terminated: result.terminated, truncated: result.truncated,
          episodeId: e.episodeId, groupId: e.groupId,
        });
        e.actions = [...e.actions, acted.actions[i]];
        e.return += result.reward;
        e.obs = result;
        if (result.terminated || result.truncated) { e.done = true; e.success = result.info.success; }
      }
    }
    this.realSteps += stepsThisIteration;

    // ---- UPDATE ----------------------------------------------------------------------------------
    const batch = { steps: episodes.flatMap((e) => e.steps) };
    const losses = batch.steps.length > 0 ? await this.update(batch, updateRng) : {};

    // ---- METRICS ---------------------------------------------------------------------------------
    const n = episodes.length;
    const metrics: Metrics = {
      'charts/success_rate': episodes.filter((e) => e.success).length / n,
      'charts/episodic_return': episodes.reduce((s, e) => s + e.return, 0) / n,
      'charts/episode_length': episodes.reduce((s, e) => s + e.steps.length, 0) / n,
      ...losses,
      'budget/real_steps': this.realSteps,
      'budget/dream_steps': 0,
    };
    this.iteration = iteration;
    if (config.evalInterval > 0 && iteration % config.evalInterval === 0 && !this.finished) {
      const evaluation = await this.evaluate(config.evalEpisodes);
      metrics['eval/success_rate'] = evaluation.success;
      metrics['eval/score'] = evaluation.score;
    }
    return { iteration, metrics };
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
    return evaluatePolicy(this.policy, this.config.env, this.config.difficulty, episodes);
  }

  // ---- CHECKPOINTS -------------------------------------------------------------------------------

  async state(): Promise<TrainerState> {
    const named = await this.optimizer.getWeights();
    const optimizer = await Promise.all(named.map(async (w) => ({ name: w.name, shape: w.tensor.shape, data: Float32Array.from(await w.tensor.data()) })));
    return { format: 'dreamgym-checkpoint/1', config: this.config, iteration: this.iteration, realSteps: this.realSteps,
      policy: await this.policy.getWeights(), optimizer };
  }

  /** A trainer that continues from `state` (config overrides such as more iterations allowed). */
  static async restore(state: TrainerState, overrides: Partial<TrainConfig> = {}): Promise<Trainer> {
    if (state.format !== 'dreamgym-checkpoint/1') {
      throw new CheckpointMismatchError(`Not a DreamGym checkpoint (format '${String(state.format)}'); expected 'dreamgym-checkpoint/1'.`);
    }
    const trainer = new Trainer({ ...state.config, ...overrides });
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
    return trainer;
  }

  dispose(): void {
    this.policy.dispose();
    this.optimizer.dispose();
  }
}
