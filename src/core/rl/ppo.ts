/**
 * PPO with a clipped objective and a value head (Schulman et al. 2017), following CleanRL's
 * `ppo.py` (vwxyzjn/cleanrl) for the candidate-scoring policy.
 *
 *     δ_t   = r_t + γ V_old(s_{t+1}) (1 − done_t) − V_old(s_t)
 *     Â_t   = GAE(γ, λ) per episode;  R_t = Â_t + V_old(s_t)
 *     ρ_t   = π_θ(a_t|s_t) / π_old(a_t|s_t)
 *     L_pg  = −mean_t[ min(ρ_t Â_t, clip(ρ_t, 1 ± ε) Â_t) ]     (Â normalised per minibatch)
 *     L_v   = ½ mean_t[ max((V_θ − R)², (V_old + clip(V_θ − V_old, ±ε) − R)²) ]   (clipped)
 *     L     = L_pg − c_ent · mean H(π_θ) + c_v · L_v
 *
 * Epochs × minibatches with a seeded shuffle; diagnostics approx_kl, clipfrac and explained
 * variance as CleanRL logs them. Episodes end either by termination (no bootstrap) or by
 * truncation / collection cut-off (bootstrap with the step's `bootstrapValue`).
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../rng';
import type { CandidatePolicy } from '../policy/policy';
import { sliceEncoded } from '../policy/features';
import { DEFAULT_SEED, POLICY_GRADIENT_DEFAULTS, type PolicyGradientSettings } from './settings';
import { gae } from './advantages';
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

/** PPO's knobs, named as in rl/settings.ts (the learning rate is the optimizer's: makeOptimizer). */
export interface PpoConfig {
  /** Discount factor γ. */
  gamma: number;
  /** GAE λ (bias–variance trade-off; not the curriculum's λ). */
  gaeLambda: number;
  /** Passes over the batch. */
  updateEpochs: number;
  /** Minibatches per epoch. */
  minibatches: number;
  /** Normalise advantages within each minibatch. */
  normAdv: boolean;
  /** Surrogate clipping coefficient ε (also clips the value loss when clipVloss). */
  clipEpsilon: number;
  /** Clip the value loss around the old values as well. */
  clipVloss: boolean;
  /** Entropy bonus coefficient. */
  entropyCoef: number;
  /** Value loss coefficient. */
  valueCoef: number;
  /** Global gradient-norm clip (Infinity or 0 = no clipping). */
  maxGradNorm: number;
  /** Stop the epochs early once approx_kl exceeds this (null = never). */
  targetKl: number | null;
  /** Seed of the minibatch shuffle when no rng is given. */
  seed: number;
}

/** PPO's settings in a training config (advantage normalisation and the clipped value loss always on, as CleanRL). */
export function ppoConfigFrom(
  config: Pick<
    PolicyGradientSettings,
    'gamma' | 'gaeLambda' | 'updateEpochs' | 'minibatches' | 'clipEpsilon' | 'entropyCoef' | 'valueCoef' | 'maxGradNorm'
  > & { seed: number },
): PpoConfig {
  return {
    gamma: config.gamma,
    gaeLambda: config.gaeLambda,
    updateEpochs: config.updateEpochs,
    minibatches: config.minibatches,
    normAdv: true,
    clipEpsilon: config.clipEpsilon,
    clipVloss: true,
    entropyCoef: config.entropyCoef,
    valueCoef: config.valueCoef,
    maxGradNorm: config.maxGradNorm,
    targetKl: null,
    seed: config.seed,
  };
}

/** What a run uses unless its config says otherwise (the presets' settings). */
export const DEFAULT_PPO_CONFIG: Readonly<PpoConfig> = Object.freeze(
  ppoConfigFrom({ ...POLICY_GRADIENT_DEFAULTS, seed: DEFAULT_SEED }),
);

// =============================================================================================
// Losses (pure: tensors in, scalar out — tested for the clip cases)
// =============================================================================================

/** −mean(min(ρA, clip(ρ, 1±ε)A)), ρ = exp(logProbs − oldLogProbs). All [n]. */
export function ppoPolicyLoss(
  logProbs: tf.Tensor1D,
  oldLogProbs: tf.Tensor1D,
  advantages: tf.Tensor1D,
  clipEpsilon: number,
): tf.Scalar {
  return tf.tidy(() => {
    const ratio = tf.exp(tf.sub(logProbs, oldLogProbs));
    const pg1 = tf.mul(tf.neg(advantages), ratio);
    const pg2 = tf.mul(tf.neg(advantages), tf.clipByValue(ratio, 1 - clipEpsilon, 1 + clipEpsilon));
    return tf.mean(tf.maximum(pg1, pg2)) as tf.Scalar;
  });
}

/** ½ mean((V − R)²), or the clipped form around the old values when clipEpsilon is a number. All [n]. */
export function ppoValueLoss(
  values: tf.Tensor1D,
  oldValues: tf.Tensor1D,
  returns: tf.Tensor1D,
  clipEpsilon: number | null,
): tf.Scalar {
  return tf.tidy(() => {
    const unclipped = tf.square(tf.sub(values, returns));
    if (clipEpsilon === null) return tf.mul(0.5, tf.mean(unclipped)) as tf.Scalar;
    const clippedValues = tf.add(oldValues, tf.clipByValue(tf.sub(values, oldValues), -clipEpsilon, clipEpsilon));
    const clipped = tf.square(tf.sub(clippedValues, returns));
    return tf.mul(0.5, tf.mean(tf.maximum(unclipped, clipped))) as tf.Scalar;
  });
}

/** 1 − Var(y − ŷ) / Var(y); NaN when Var(y) = 0 (as CleanRL). */
export function explainedVariance(predicted: ArrayLike<number>, target: ArrayLike<number>): number {
  const y = Array.from(target),
    diff = y.map((v, i) => v - predicted[i]);
  const variance = (xs: number[]): number => {
    const m = mean(xs);
    return mean(xs.map((x) => (x - m) * (x - m)));
  };
  const varY = variance(y);
  return varY === 0 ? NaN : 1 - variance(diff) / varY;
}

/** Per-step GAE advantages and returns, computed episode by episode. */
export function ppoAdvantages(
  batch: RolloutBatch,
  config: Pick<PpoConfig, 'gamma' | 'gaeLambda'>,
): { advantages: number[]; returns: number[] } {
  const n = batch.steps.length;
  const advantages = new Array<number>(n),
    returns = new Array<number>(n);
  for (const episode of groupEpisodes(batch.steps)) {
    const steps = episode.indices.map((i) => batch.steps[i]);
    const values = steps.map((s, k) => {
      if (s.value === undefined)
        throw new Error(
          `ppo: step ${episode.indices[k]} has no value; store ActResult.values in PolicyStep.value when collecting`,
        );
      return s.value;
    });
    const last = steps[steps.length - 1];
    // A terminated episode has no future; a truncated or cut-off one bootstraps from V(s_T).
    const dones = steps.map((s) => s.terminated);
    const lastValue = last.terminated ? 0 : (last.bootstrapValue ?? 0);
    const r = gae(
      steps.map((s) => s.reward),
      values,
      dones,
      lastValue,
      config.gamma,
      config.gaeLambda,
    );
    episode.indices.forEach((i, k) => {
      advantages[i] = r.advantages[k];
      returns[i] = r.returns[k];
    });
  }
  return { advantages, returns };
}

// =============================================================================================
// Update
// =============================================================================================

/**
 * PPO update. Returns `losses/policy_loss`, `losses/value_loss`, `losses/entropy`,
 * `losses/approx_kl`, `losses/clipfrac` (means over the minibatches run) and
 * `losses/explained_variance`.
 */
export async function ppoUpdate(
  policy: CandidatePolicy,
  optimizer: tf.Optimizer,
  batch: RolloutBatch,
  config: Partial<PpoConfig> = {},
  options: { rng?: Rng } = {},
): Promise<UpdateMetrics> {
  const cfg = { ...DEFAULT_PPO_CONFIG, ...config };
  const steps = batch.steps;
  if (steps.length === 0) throw new Error('ppoUpdate: empty batch');
  const rng = options.rng ?? Rng.fromSeed(cfg.seed, 'ppo');

  // ---- ALGO LOGIC: bootstrap value if not done; GAE ----------------------------------------
  const { advantages, returns } = ppoAdvantages(batch, cfg);

  // ---- flatten the batch (b_*) ----------------------------------------------------------------
  const bAdvantages = Float32Array.from(advantages); // [N]
  const bReturns = Float32Array.from(returns); // [N]
  const bValues = Float32Array.from(steps, (s) => s.value!); // [N]
  const bLogProbs = Float32Array.from(steps, (s) => s.logProb); // [N]
  const bActions = actionIndices(steps); // [N]
  const enc = encodeSteps(policy, steps);

  // ---- optimizing the policy and value network ------------------------------------------------
  const n = steps.length;
  const minibatchSize = Math.max(1, Math.ceil(n / cfg.minibatches));
  const sums: Record<string, number> = {};
  let count = 0;
  let stop = false;
  for (let epoch = 0; epoch < cfg.updateEpochs && !stop; epoch++) {
    const bInds = rng.shuffle([...Array(n).keys()]);
    for (let start = 0; start < n; start += minibatchSize) {
      const mbInds = bInds.slice(start, start + minibatchSize);
      const mbEnc = sliceEncoded(enc, mbInds);
      const mbActions = Int32Array.from(mbInds, (i) => bActions[i]);
      let mbAdvArr = Float32Array.from(mbInds, (i) => bAdvantages[i]);
      if (cfg.normAdv && mbAdvArr.length > 1) {
        const m = mean(mbAdvArr);
        const std = Math.sqrt(mbAdvArr.reduce((s, a) => s + (a - m) * (a - m), 0) / (mbAdvArr.length - 1)); // torch .std(): unbiased
        mbAdvArr = mbAdvArr.map((a) => (a - m) / (std + 1e-8));
      }
      const mbAdv = tf.tensor1d(mbAdvArr); // [M]
      const mbOldLogProbs = tf.tensor1d(Float32Array.from(mbInds, (i) => bLogProbs[i])); // [M]
      const mbOldValues = tf.tensor1d(Float32Array.from(mbInds, (i) => bValues[i])); // [M]
      const mbReturns = tf.tensor1d(Float32Array.from(mbInds, (i) => bReturns[i])); // [M]

      const kept: Record<string, tf.Tensor> = {};
      const { value: loss, grads } = tf.variableGrads(() => {
        const { logProbs, entropy, values } = policy.evaluate(mbEnc, mbActions, { value: true }); // [M] each
        const logRatio = tf.sub(logProbs, mbOldLogProbs);
        const ratio = tf.exp(logRatio);
        // diagnostics: approx_kl = mean((ρ − 1) − log ρ), clipfrac = mean(|ρ − 1| > ε)
        kept['losses/approx_kl'] = tf.keep(tf.mean(tf.sub(tf.sub(ratio, 1), logRatio)));
        kept['losses/clipfrac'] = tf.keep(
          tf.mean(tf.cast(tf.greater(tf.abs(tf.sub(ratio, 1)), cfg.clipEpsilon), 'float32')),
        );
        // policy loss, value loss, entropy
        const pgLoss = ppoPolicyLoss(logProbs, mbOldLogProbs, mbAdv, cfg.clipEpsilon);
        const vLoss = ppoValueLoss(values!, mbOldValues, mbReturns, cfg.clipVloss ? cfg.clipEpsilon : null);
        const entropyLoss = tf.mean(entropy);
        kept['losses/policy_loss'] = tf.keep(pgLoss);
        kept['losses/value_loss'] = tf.keep(vLoss);
        kept['losses/entropy'] = tf.keep(entropyLoss);
        return tf.add(tf.sub(pgLoss, tf.mul(cfg.entropyCoef, entropyLoss)), tf.mul(cfg.valueCoef, vLoss)) as tf.Scalar;
      }, policy.variables);
      applyClippedGradients(optimizer, grads, cfg.maxGradNorm);
      tf.dispose([loss, mbAdv, mbOldLogProbs, mbOldValues, mbReturns]);

      const values = await readScalars(kept);
      for (const [k, v] of Object.entries(values)) sums[k] = (sums[k] ?? 0) + v;
      count++;
      if (cfg.targetKl !== null && values['losses/approx_kl'] > cfg.targetKl) {
        stop = true;
        break;
      }
    }
  }

  const metrics: UpdateMetrics = {};
  for (const [k, v] of Object.entries(sums)) metrics[k] = v / count;
  metrics['losses/explained_variance'] = explainedVariance(bValues, bReturns);
  return metrics;
}
