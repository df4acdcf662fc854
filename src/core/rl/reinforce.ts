/**
 * REINFORCE with a mean-return baseline (Williams 1992), for the candidate-scoring policy.
 *
 *     G_t = Σ_k γ^k r_{t+k}              per episode
 *     A_t = G_t − mean_batch(G)          (the baseline)
 *     L   = −mean_t[ log π_θ(a_t|s_t) · A_t ] − c_ent · mean_t[ H(π_θ(·|s_t)) ]
 *
 * One gradient step per batch of fresh on-policy episodes. Reads top to bottom (CleanRL style);
 * the shared helpers are in `batch.ts`.
 */
import * as tf from '@tensorflow/tfjs';
import type { CandidatePolicy } from '../policy/policy';
import { POLICY_GRADIENT_DEFAULTS, type PolicyGradientSettings } from './settings';
import { discountedReturns } from './advantages';
import {
  actionIndices,
  applyClippedGradients,
  encodeSteps,
  groupEpisodes,
  mean,
  readScalars,
  type RolloutBatch,
  type UpdateMetrics,
} from './batch';

// =============================================================================================
// Config
// =============================================================================================

/** REINFORCE's knobs, named as in rl/settings.ts (the learning rate is the optimizer's: makeOptimizer). */
export interface ReinforceConfig {
  /** Discount factor γ of the returns. */
  gamma: number;
  /** Entropy bonus coefficient. */
  entropyCoef: number;
  /** Global gradient-norm clip (Infinity or 0 = no clipping). */
  maxGradNorm: number;
  /** Divide the advantages by their std as well (after subtracting the baseline). */
  normalizeAdvantages: boolean;
  /** Measure losses/approx_kl with a second forward pass after the step (costs a forward). */
  measureKl: boolean;
}

/** REINFORCE's settings in a training config (the mean-return baseline only; approx_kl measured). */
export function reinforceConfigFrom(
  config: Pick<PolicyGradientSettings, 'gamma' | 'entropyCoef' | 'maxGradNorm'>,
): ReinforceConfig {
  return {
    gamma: config.gamma,
    entropyCoef: config.entropyCoef,
    maxGradNorm: config.maxGradNorm,
    normalizeAdvantages: false,
    measureKl: true,
  };
}

/** What a run uses unless its config says otherwise (the presets' settings). */
export const DEFAULT_REINFORCE_CONFIG: Readonly<ReinforceConfig> = Object.freeze(
  reinforceConfigFrom(POLICY_GRADIENT_DEFAULTS),
);

// =============================================================================================
// Loss (pure: log-prob tensors in, scalar out — gradient-checked in the tests)
// =============================================================================================

/** −mean(log π(a|s) · A). logProbs, advantages: [n]. */
export function reinforceLoss(logProbs: tf.Tensor1D, advantages: tf.Tensor1D): tf.Scalar {
  return tf.neg(tf.mean(tf.mul(logProbs, advantages))) as tf.Scalar;
}

/** Per-step advantages: discounted return minus the batch's mean return. */
export function reinforceAdvantages(
  batch: RolloutBatch,
  config: Pick<ReinforceConfig, 'gamma' | 'normalizeAdvantages'>,
): { returns: number[]; advantages: number[] } {
  const returns = new Array<number>(batch.steps.length);
  for (const episode of groupEpisodes(batch.steps)) {
    const g = discountedReturns(
      episode.indices.map((i) => batch.steps[i].reward),
      config.gamma,
    );
    episode.indices.forEach((i, k) => {
      returns[i] = g[k];
    });
  }
  const baseline = mean(returns);
  let advantages = returns.map((g) => g - baseline);
  if (config.normalizeAdvantages) {
    const std = Math.sqrt(mean(advantages.map((a) => a * a)));
    advantages = advantages.map((a) => a / (std + 1e-8));
  }
  return { returns, advantages };
}

// =============================================================================================
// Update
// =============================================================================================

/**
 * One REINFORCE step on a batch of complete episodes. Returns `losses/policy_loss`,
 * `losses/entropy` and `losses/approx_kl` (KL between the collecting and the updated policy).
 */
export async function reinforceUpdate(
  policy: CandidatePolicy,
  optimizer: tf.Optimizer,
  batch: RolloutBatch,
  config: Partial<ReinforceConfig> = {},
): Promise<UpdateMetrics> {
  const cfg = { ...DEFAULT_REINFORCE_CONFIG, ...config };
  const steps = batch.steps;
  if (steps.length === 0) throw new Error('reinforceUpdate: empty batch');

  // ---- ALGO LOGIC: returns and baseline -----------------------------------------------------
  const { advantages } = reinforceAdvantages(batch, cfg);

  // ---- encode once: strings → typed arrays ----------------------------------------------------
  const enc = encodeSteps(policy, steps);
  const actions = actionIndices(steps); // [nS]
  const advT = tf.tensor1d(advantages); // [nS]

  // ---- ALGO LOGIC: loss and gradient step -------------------------------------------------
  const kept: Record<string, tf.Tensor> = {};
  const { value: loss, grads } = tf.variableGrads(() => {
    const { logProbs, entropy } = policy.evaluate(enc, actions); // [nS], [nS]
    const pgLoss = reinforceLoss(logProbs, advT);
    const entropyMean = tf.mean(entropy);
    kept['losses/policy_loss'] = tf.keep(pgLoss);
    kept['losses/entropy'] = tf.keep(entropyMean);
    return tf.sub(pgLoss, tf.mul(cfg.entropyCoef, entropyMean)) as tf.Scalar;
  }, policy.policyVariables);
  applyClippedGradients(optimizer, grads, cfg.maxGradNorm);
  loss.dispose();
  advT.dispose();

  // ---- diagnostics: approx_kl(old → new) = mean((r − 1) − log r) (CleanRL) -------------------
  if (cfg.measureKl) {
    kept['losses/approx_kl'] = tf.tidy(() => {
      const newLogProbs = policy.evaluate(enc, actions).logProbs;
      const logRatio = tf.sub(newLogProbs, tf.tensor1d(Float32Array.from(steps, (s) => s.logProb)));
      return tf.mean(tf.sub(tf.sub(tf.exp(logRatio), 1), logRatio));
    });
  }
  return readScalars(kept);
}
