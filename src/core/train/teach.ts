/**
 * Teach: one policy-gradient update taken apart, for the step-through page (REINFORCEjs /
 * TensorFlow Playground style: a pure core here, the page only renders it).
 *
 * A TeachSession wraps a real Trainer on a small preset (default 2 tasks × 4 rollouts). Each
 * `step()` runs one training iteration — rollouts, then the update of the chosen algorithm — and
 * returns a TeachUpdate that shows what happened inside it:
 *
 *   - the sampled groups: per task, the G rollouts with their actions, rewards, return and success;
 *   - the advantage every step got, computed with the very functions the update uses
 *     (grpoAdvantages: group-normalised returns; ppoAdvantages: GAE over the value head);
 *   - for every step, π(a|s) of each admissible action before the update and after it (the
 *     policy evaluated on the same states, with the same cached priors), and V(s) for PPO;
 *   - the update's losses and the iteration's metrics (docs/architecture.md §3.11 names).
 *
 * "Before" is read in the trainer's onBatch hook, which runs right before the update: the
 * forward pass is issued there, so its tensors hold the old weights' values whatever the backend.
 * In dream mode the experience model is wrapped to record its note for every step (the noisy
 * oracle says when it flipped an outcome or corrupted a next state). Deterministic given the seed.
 */
import * as tf from '@tensorflow/tfjs';
import type { CandidatePolicy } from '../policy/policy';
import type { Observation, Task } from '../types';
import type { DreamContext, ExperienceModel, Prediction } from '../experience/types';
import { encodeSteps, groupEpisodes, type PolicyStep, type RolloutBatch } from '../rl/batch';
import { grpoAdvantages } from '../rl/grpo';
import { ppoAdvantages } from '../rl/ppo';
import { experienceLabel } from '../llm/spec';
import type { TrainConfig } from './config';
import { Trainer, type Metrics } from './loop';
import { buildRunParts } from './run-parts';
import {
  teachConfig,
  validateTeachSettings,
  type TeachAlgorithm,
  type TeachMode,
  type TeachSettings,
} from './teach-settings';
import { DreamGymError } from '../errors';

export * from './teach-settings';

// =============================================================================================
// The update, taken apart
// =============================================================================================

export interface TeachActionProbability {
  action: string;
  /** π(a|s) with the weights the rollouts were sampled with. */
  before: number;
  /** π(a|s) after the update, same state. */
  after: number;
}

export interface TeachStep {
  /** 0-based step index in the episode. */
  t: number;
  observation: string;
  /** Index of the taken action in `probabilities`. */
  taken: number;
  reward: number;
  /** The advantage the update used for this step (PPO: GAE, before the per-minibatch normalisation). */
  advantage: number;
  /** PPO: V(s) when acting, the return target R_t = Â_t + V(s), and V(s) after the update. */
  value?: number;
  target?: number;
  valueAfter?: number;
  /** One entry per admissible action, in the env's order. */
  probabilities: TeachActionProbability[];
  /** Dream mode: what the experience model said about this step (the oracle names injected errors). */
  dreamNote?: string;
}

export interface TeachRollout {
  episodeId: string;
  /** 0-based index within its group. */
  index: number;
  actions: string[];
  /** Σ_t r_t. */
  return: number;
  /** The task ended the episode with reward 1 (WebShop: a perfect buy; household: goal reached). */
  success: boolean;
  steps: TeachStep[];
}

export interface TeachGroup {
  groupId: string;
  instruction: string;
  rollouts: TeachRollout[];
  /** Mean and population std of the rollouts' returns (GRPO's baseline and scale). */
  meanReturn: number;
  stdReturn: number;
}

export interface TeachUpdate {
  /** 1-based number of this update. */
  iteration: number;
  algo: TeachAlgorithm;
  mode: TeachMode;
  env: string;
  preset: string;
  /** Where experience came from, in words. */
  experience: string;
  groups: TeachGroup[];
  /** Steps in the batch. */
  stepCount: number;
  /** Steps whose advantage is not 0, and of them those whose taken action's π moved with the advantage's sign. */
  signedSteps: number;
  alignedSteps: number;
  /** `losses/…` of the update and the iteration's `charts/…`, `budget/…` metrics. */
  metrics: Metrics;
  /** The hyperparameters the update ran with. */
  hyper: {
    learningRate: number;
    clipEpsilon: number;
    updateEpochs: number;
    minibatches: number;
    entropyCoef: number;
    gamma: number;
    gaeLambda: number;
    valueCoef: number;
  };
}

/** Per-step advantages exactly as the update computes them (and PPO's return targets). */
export function teachAdvantages(
  batch: RolloutBatch,
  algo: TeachAlgorithm,
  config: Pick<TrainConfig, 'gamma' | 'gaeLambda'>,
): { advantages: number[]; targets?: number[] } {
  if (algo === 'grpo') return { advantages: grpoAdvantages(batch) };
  const { advantages, returns } = ppoAdvantages(batch, { gamma: config.gamma, gaeLambda: config.gaeLambda });
  return { advantages, targets: returns };
}

/** The padded log-π [nSteps, maxActions] (and V [nSteps]) of the steps' states: tensors the caller disposes. */
export function forwardSteps(
  policy: CandidatePolicy,
  steps: readonly PolicyStep[],
  value: boolean,
): { logProbs: tf.Tensor2D; values?: tf.Tensor1D } {
  const enc = encodeSteps(policy, steps);
  return tf.tidy(() => {
    const f = policy.forward(enc, { value });
    return value ? { logProbs: f.logProbs, values: f.values! } : { logProbs: f.logProbs };
  });
}

/** Reads and disposes forwardSteps' tensors: π(·|s) per step over its admissible actions, and V(s). */
export async function readProbabilities(
  steps: readonly PolicyStep[],
  out: { logProbs: tf.Tensor2D; values?: tf.Tensor1D },
): Promise<{ probs: number[][]; values?: number[] }> {
  try {
    const width = out.logProbs.shape[1];
    const lp = await out.logProbs.data();
    const values = out.values ? Array.from(await out.values.data()) : undefined;
    const probs = steps.map((s, i) => s.state.admissible.map((_, j) => Math.exp(lp[i * width + j])));
    return values ? { probs, values } : { probs };
  } finally {
    out.logProbs.dispose();
    out.values?.dispose();
  }
}

/** π(·|s) (and V(s)) of each step's state under the policy's current weights. */
export async function stepProbabilities(
  policy: CandidatePolicy,
  steps: readonly PolicyStep[],
  value = false,
): Promise<{ probs: number[][]; values?: number[] }> {
  if (steps.length === 0) return { probs: [], ...(value ? { values: [] } : {}) };
  return readProbabilities(steps, forwardSteps(policy, steps, value));
}

/** Assemble the update's view from the batch, its advantages and the before/after probabilities. */
export function describeUpdate(input: {
  steps: readonly PolicyStep[];
  algo: TeachAlgorithm;
  advantages: number[];
  targets?: number[];
  before: { probs: number[][]; values?: number[] };
  after: { probs: number[][]; values?: number[] };
  dreamNotes?: (string | undefined)[];
}): { groups: TeachGroup[]; signedSteps: number; alignedSteps: number } {
  const { steps, advantages } = input;
  const groups = new Map<string, TeachGroup>();
  let signedSteps = 0,
    alignedSteps = 0;
  for (const episode of groupEpisodes(steps)) {
    const key = episode.groupId ?? `episode:${episode.episodeId}`;
    const first = steps[episode.indices[0]];
    let group = groups.get(key);
    if (!group) {
      group = { groupId: key, instruction: first.state.instruction, rollouts: [], meanReturn: 0, stdReturn: 0 };
      groups.set(key, group);
    }
    const teachSteps = episode.indices.map((i, t): TeachStep => {
      const s = steps[i];
      const before = input.before.probs[i],
        after = input.after.probs[i];
      const advantage = advantages[i];
      if (advantage !== 0 && Number.isFinite(advantage)) {
        signedSteps++;
        const moved = after[s.action] - before[s.action];
        if (Math.sign(moved) === Math.sign(advantage)) alignedSteps++;
      }
      return {
        t,
        observation: s.state.observation,
        taken: s.action,
        reward: s.reward,
        advantage,
        ...(input.targets
          ? {
              value: input.before.values?.[i] ?? s.value,
              target: input.targets[i],
              valueAfter: input.after.values?.[i],
            }
          : {}),
        probabilities: s.state.admissible.map((action, j) => ({ action, before: before[j], after: after[j] })),
        ...(input.dreamNotes?.[i] ? { dreamNote: input.dreamNotes[i] } : {}),
      };
    });
    const last = steps[episode.indices[episode.indices.length - 1]];
    group.rollouts.push({
      episodeId: episode.episodeId,
      index: group.rollouts.length,
      actions: teachSteps.map((s) => s.probabilities[s.taken].action),
      return: episode.indices.reduce((sum, i) => sum + steps[i].reward, 0),
      success: last.terminated && last.reward >= 1,
      steps: teachSteps,
    });
  }
  for (const g of groups.values()) {
    const returns = g.rollouts.map((r) => r.return);
    g.meanReturn = returns.reduce((a, b) => a + b, 0) / returns.length;
    g.stdReturn = Math.sqrt(returns.reduce((a, r) => a + (r - g.meanReturn) ** 2, 0) / returns.length);
  }
  return { groups: [...groups.values()], signedSteps, alignedSteps };
}

// =============================================================================================
// Dream notes: the experience model's word on each step
// =============================================================================================

/** Key of a dreamed step: the task's instruction, the actions so far and the action. */
function dreamKey(instruction: string, history: readonly string[], action: string): string {
  return `${instruction}\u0000${history.join('\u0001')}\u0000${action}`;
}

/** Wraps an experience model and remembers its reasoning per (task, history, action). */
class RecordingExperienceModel implements ExperienceModel {
  readonly notes = new Map<string, string>();
  readonly label: string;
  constructor(private readonly inner: ExperienceModel) {
    this.label = inner.label;
  }
  initial(task: Task, signal?: AbortSignal): Promise<Observation> {
    return this.inner.initial(task, signal);
  }
  async next(ctx: DreamContext): Promise<Prediction> {
    const prediction = await this.inner.next(ctx);
    this.notes.set(
      dreamKey(
        ctx.task.instruction,
        ctx.history.map((s) => s.action),
        ctx.action,
      ),
      prediction.reasoning,
    );
    return prediction;
  }
}

// =============================================================================================
// The session
// =============================================================================================

interface Captured {
  steps: PolicyStep[];
  before: ReturnType<typeof forwardSteps> | null;
}

export class TeachFinishedError extends DreamGymError {
  constructor(message: string) {
    super(message, { code: 'teach-finished', fix: 'Press Reset to start a new teach session.' });
    this.name = 'TeachFinishedError';
  }
}

export class TeachSession {
  readonly settings: TeachSettings;
  readonly config: TrainConfig;
  readonly experience: string;
  private readonly trainer: Trainer;
  private readonly recorder: RecordingExperienceModel | null;
  private captured: Captured | null = null;

  /** A session for these settings (its experience model from the one run builder). */
  static async create(settings: TeachSettings): Promise<TeachSession> {
    const valid = { ...validateTeachSettings(settings) };
    const config = teachConfig(valid);
    const { experienceModel } = await buildRunParts(config);
    return new TeachSession(valid, config, experienceModel);
  }

  private constructor(settings: TeachSettings, config: TrainConfig, experienceModel: ExperienceModel | undefined) {
    this.settings = settings;
    this.config = config;
    this.experience = experienceLabel(this.config);
    this.recorder = experienceModel ? new RecordingExperienceModel(experienceModel) : null;
    this.trainer = new Trainer(this.config, {
      ...(this.recorder ? { experienceModel: this.recorder } : {}),
      // Right before the update: issue the forward pass on the old weights (read later).
      onBatch: (batch) => {
        const steps = batch.steps;
        this.captured = {
          steps,
          before: steps.length > 0 ? forwardSteps(this.trainer.policy, steps, this.config.algo === 'ppo') : null,
        };
      },
    });
  }

  get iteration(): number {
    return this.trainer.iteration;
  }

  /** One update (rollouts + the algorithm's update), taken apart. */
  async step(): Promise<TeachUpdate> {
    if (this.trainer.finished) {
      throw new TeachFinishedError(
        `This session has spent its real-step budget (${this.trainer.realSteps} steps). Press Reset to start again.`,
      );
    }
    this.recorder?.notes.clear();
    this.captured = null;
    const record = await this.trainer.runIteration();
    const captured = this.captured as Captured | null;
    this.captured = null;
    if (!captured) throw new Error('The trainer did not report its batch (onBatch was not called).');
    const { steps } = captured;
    const value = this.config.algo === 'ppo';
    const before = captured.before ? await readProbabilities(steps, captured.before) : { probs: [] };
    const after = await stepProbabilities(this.trainer.policy, steps, value);
    const { advantages, targets } = teachAdvantages({ steps }, this.config.algo as TeachAlgorithm, this.config);
    const notes = this.recorder
      ? steps.map((s) =>
          this.recorder!.notes.get(
            dreamKey(s.state.instruction, s.state.previousActions ?? [], s.state.admissible[s.action]),
          ),
        )
      : undefined;
    const view = describeUpdate({
      steps,
      algo: this.config.algo as TeachAlgorithm,
      advantages,
      targets,
      before,
      after,
      dreamNotes: notes,
    });
    const c = this.config;
    return {
      iteration: record.iteration,
      algo: c.algo as TeachAlgorithm,
      mode: c.mode as TeachMode,
      env: c.env,
      preset: c.preset,
      experience: this.experience,
      ...view,
      stepCount: steps.length,
      metrics: record.metrics,
      hyper: {
        learningRate: c.learningRate,
        clipEpsilon: c.clipEpsilon,
        updateEpochs: c.updateEpochs,
        minibatches: c.algo === 'ppo' ? c.minibatches : 1,
        entropyCoef: c.entropyCoef,
        gamma: c.gamma,
        gaeLambda: c.gaeLambda,
        valueCoef: c.valueCoef,
      },
    };
  }

  dispose(): void {
    if (this.captured?.before) disposeForward(this.captured.before);
    this.captured = null;
    this.trainer.dispose();
  }
}

function disposeForward(out: { logProbs: tf.Tensor2D; values?: tf.Tensor1D }): void {
  out.logProbs.dispose();
  out.values?.dispose();
}
