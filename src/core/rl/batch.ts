/**
 * The records the trainer collects for a policy update, and the few helpers every algorithm
 * file shares (grouping steps into episodes, encoding once, the Adam optimizer with gradient
 * clipping by global norm — CleanRL's `nn.utils.clip_grad_norm_`).
 *
 * The training loop over environments lives in `src/core/train/`; it fills `PolicyStep`s from
 * `CandidatePolicy.act` results and env steps.
 */
import * as tf from '@tensorflow/tfjs';
import type { CandidatePolicy } from '../policy/policy';
import type { EncodedBatch, PolicyState } from '../policy/features';

/** One decision of the policy and its outcome. */
export interface PolicyStep {
  /** What the policy saw (instruction, observation, admissible actions, step index). */
  state: PolicyState;
  /** Index of the taken action in `state.admissible`. */
  action: number;
  /** log π_old(a | s) when the action was taken (from `act`). */
  logProb: number;
  /** V_old(s) when the action was taken (from `act`; PPO needs it). */
  value?: number;
  /** Prior scores used when acting, one per admissible action (from `act`; null/absent = none). */
  prior?: number[] | null;
  /** Reward received for this step. */
  reward: number;
  /** The task ended the episode after this step (no bootstrap). */
  terminated: boolean;
  /** The step limit ended the episode after this step (PPO bootstraps with `bootstrapValue`). */
  truncated: boolean;
  /** V(s_{t+1}) for the last collected step of a truncated or unfinished episode (default 0). */
  bootstrapValue?: number;
  /** Steps of one episode share it and are given in time order. */
  episodeId: string;
  /** GRPO: the rollouts of the same task share it. */
  groupId?: string;
}

/** A batch of collected steps, in any episode order (each episode's steps in time order). */
export interface RolloutBatch {
  steps: PolicyStep[];
}

/** Metrics keyed as docs/architecture.md §3.11 (`losses/policy_loss`, …). */
export type UpdateMetrics = Record<string, number>;

export interface EpisodeSlice {
  episodeId: string;
  groupId: string | undefined;
  /** Indices into the batch's steps, in time order. */
  indices: number[];
}

/** Steps grouped by episode, episodes in order of first appearance. */
export function groupEpisodes(steps: readonly PolicyStep[]): EpisodeSlice[] {
  const byId = new Map<string, EpisodeSlice>();
  steps.forEach((step, i) => {
    let e = byId.get(step.episodeId);
    if (!e) {
      e = { episodeId: step.episodeId, groupId: step.groupId, indices: [] };
      byId.set(step.episodeId, e);
    }
    e.indices.push(i);
  });
  return [...byId.values()];
}

/** Encode every step's state once (strings → typed arrays), with its cached prior. */
export function encodeSteps(policy: CandidatePolicy, steps: readonly PolicyStep[]): EncodedBatch {
  return policy.encode(
    steps.map((s) => s.state),
    steps.map((s) => s.prior ?? null),
  );
}

/** Indices of the taken actions, [nSteps]. */
export function actionIndices(steps: readonly PolicyStep[]): Int32Array {
  return Int32Array.from(steps, (s) => s.action);
}

/**
 * The learning rate of iteration `iteration` (1-based) of `iterations`: constant, or decayed from
 * `base` to base/10 at the last iteration along a cosine or a line (later iterations, e.g. the
 * real phase of S2R, keep the last value). A function of the iteration alone, so a resumed run
 * follows the same schedule.
 */
export function scheduledLearningRate(
  base: number,
  schedule: 'constant' | 'cosine' | 'linear',
  iteration: number,
  iterations: number,
): number {
  if (schedule === 'constant') return base;
  const progress = iterations <= 1 ? 1 : Math.min(1, Math.max(0, (iteration - 1) / (iterations - 1)));
  const floor = base / 10;
  const shape = schedule === 'cosine' ? (1 + Math.cos(Math.PI * progress)) / 2 : 1 - progress;
  return floor + (base - floor) * shape;
}

/** The optimizer every algorithm uses: Adam (ε = 1e-5 as CleanRL). */
export function makeOptimizer(learningRate: number): tf.Optimizer {
  return new ResumableAdam(learningRate, 0.9, 0.999, 1e-5);
}

/**
 * tf's Adam, whose saved state also carries the running β₁ᵗ and β₂ᵗ products. tf's own
 * setWeights recomputes them as pow(β, t + 1), which differs from the running product in the
 * last float bits — enough to make a resumed run drift from an uninterrupted one.
 */
type NamedTensor = Awaited<ReturnType<tf.Optimizer['getWeights']>>[number];

export class ResumableAdam extends tf.AdamOptimizer {
  /** Sets the step size of the next updates (a learning-rate schedule; Adam's moments are kept). */
  setLearningRate(learningRate: number): void {
    (this as unknown as { learningRate: number }).learningRate = learningRate;
  }

  private get powers(): [tf.Variable, tf.Variable] {
    const self = this as unknown as { accBeta1: tf.Variable; accBeta2: tf.Variable };
    return [self.accBeta1, self.accBeta2];
  }

  async getWeights(): Promise<NamedTensor[]> {
    const weights = await super.getWeights();
    const [b1, b2] = this.powers;
    return [...weights, { name: 'adam/accBeta1', tensor: b1 }, { name: 'adam/accBeta2', tensor: b2 }];
  }

  async setWeights(weightValues: NamedTensor[]): Promise<void> {
    const powers = weightValues.filter((w) => w.name === 'adam/accBeta1' || w.name === 'adam/accBeta2');
    await super.setWeights(weightValues.filter((w) => !powers.includes(w)));
    const [b1, b2] = this.powers;
    for (const w of powers) (w.name === 'adam/accBeta1' ? b1 : b2).assign(w.tensor as tf.Scalar);
  }
}

/**
 * Scale gradients so their global L2 norm is at most `maxGradNorm`, apply them, and dispose
 * them. No data leaves the device (the scale is a tensor).
 */
export function applyClippedGradients(optimizer: tf.Optimizer, grads: tf.NamedTensorMap, maxGradNorm: number): void {
  tf.tidy(() => {
    const names = Object.keys(grads);
    let clipped: tf.NamedTensorMap = grads;
    if (Number.isFinite(maxGradNorm) && maxGradNorm > 0) {
      const norm = tf.sqrt(tf.addN(names.map((n) => tf.sum(tf.square(grads[n])))));
      const scale = tf.minimum(1, tf.div(maxGradNorm, tf.add(norm, 1e-6)));
      clipped = {};
      for (const n of names) clipped[n] = tf.mul(grads[n], scale);
    }
    optimizer.applyGradients(clipped);
  });
  tf.dispose(grads);
}

/** Mean of a plain array (0 when empty). */
export function mean(xs: ArrayLike<number>): number {
  if (xs.length === 0) return 0;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s / xs.length;
}

/** Read scalar tensors into numbers and dispose them. */
export async function readScalars(scalars: Record<string, tf.Tensor>): Promise<Record<string, number>> {
  const names = Object.keys(scalars);
  if (names.length === 0) return {};
  const stacked = tf.stack(names.map((n) => scalars[n]));
  const values = await stacked.data();
  stacked.dispose();
  tf.dispose(Object.values(scalars));
  const out: Record<string, number> = {};
  names.forEach((n, i) => {
    out[n] = values[i];
  });
  return out;
}
