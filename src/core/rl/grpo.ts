/**
 * GRPO (Shao et al. 2024), value-free, for the candidate-scoring policy (the paper trains its agents with GRPO or PPO).
 *
 *     groups:  G rollouts of the same task share a `groupId`
 *     R_i   = Σ_t r_t of episode i                       (episode reward)
 *     Â_i   = (R_i − mean_group(R)) / (std_group(R) + ε) applied to every step of episode i
 *     ρ_t   = π_θ(a_t|s_t) / π_old(a_t|s_t)
 *     L     = −mean_t[ min(ρ_t Â, clip(ρ_t, 1 ± ε_clip) Â) ]
 *             + β_KL · mean_t[ KL(π_θ(·|s_t) ‖ π_ref(·|s_t)) ] − c_ent · mean_t[ H(π_θ(·|s_t)) ]
 *
 * The KL to the frozen reference is exact (a sum over the state's admissible actions, which we
 * have in full), not the sampled k3 estimator LLM trainers need. Steps are averaged over the
 * batch ("token-level" mean). Epochs × minibatches with a seeded shuffle, as in PPO.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../rng';
import type { CandidatePolicy } from '../policy/policy';
import { sliceEncoded } from '../policy/features';
import { DEFAULT_SEED, POLICY_GRADIENT_DEFAULTS, type PolicyGradientSettings } from './settings';
import { groupNormalizedAdvantages } from './advantages';
import {
  actionIndices,
  applyClippedGradients,
  encodeSteps,
  groupEpisodes,
  readScalars,
  type RolloutBatch,
  type UpdateMetrics,
} from './batch';

// =============================================================================================
// Config
// =============================================================================================

/** GRPO's knobs, named as in rl/settings.ts (the learning rate is the optimizer's: makeOptimizer). */
export interface GrpoConfig {
  /** Clip range ε of the ratio. */
  clipEpsilon: number;
  /** Coefficient of KL(π_θ ‖ π_ref); needs a `reference` policy when > 0. */
  klCoef: number;
  /** Entropy bonus coefficient. */
  entropyCoef: number;
  /** ε in the group normalisation (r − mean) / (std + ε). */
  advantageEps: number;
  /** Passes over the batch. */
  updateEpochs: number;
  /** Minibatches per epoch (the batch's steps split evenly after a seeded shuffle). */
  minibatches: number;
  /** Global gradient-norm clip (Infinity or 0 = no clipping). */
  maxGradNorm: number;
  /** Seed of the minibatch shuffle when no rng is given. */
  seed: number;
}

/** GRPO's settings in a training config. Each epoch takes the whole batch (config.minibatches is PPO's). */
export function grpoConfigFrom(
  config: Pick<PolicyGradientSettings, 'clipEpsilon' | 'klCoef' | 'entropyCoef' | 'updateEpochs' | 'maxGradNorm'> & {
    seed: number;
  },
): GrpoConfig {
  return {
    clipEpsilon: config.clipEpsilon,
    klCoef: config.klCoef,
    entropyCoef: config.entropyCoef,
    advantageEps: 1e-6,
    updateEpochs: config.updateEpochs,
    minibatches: 1,
    maxGradNorm: config.maxGradNorm,
    seed: config.seed,
  };
}

/** What a run uses unless its config says otherwise (the presets' settings). */
export const DEFAULT_GRPO_CONFIG: Readonly<GrpoConfig> = Object.freeze(
  grpoConfigFrom({ ...POLICY_GRADIENT_DEFAULTS, seed: DEFAULT_SEED }),
);

export interface GrpoOptions {
  /** The frozen reference policy π_ref (e.g. `policy.clone()` at the start of training). */
  reference?: CandidatePolicy;
  /** Minibatch shuffle stream (default: Rng.fromSeed(config.seed, 'grpo')). */
  rng?: Rng;
}

// =============================================================================================
// Loss (pure: log-prob tensors in, scalar out — gradient-checked in the tests)
// =============================================================================================

/** Clipped surrogate −mean(min(ρA, clip(ρ, 1±ε)A)) with ρ = exp(logProbs − oldLogProbs). All [n]. */
export function grpoLoss(
  logProbs: tf.Tensor1D,
  oldLogProbs: tf.Tensor1D,
  advantages: tf.Tensor1D,
  clipEpsilon: number,
): tf.Scalar {
  return tf.tidy(() => {
    const ratio = tf.exp(tf.sub(logProbs, oldLogProbs));
    const unclipped = tf.mul(ratio, advantages);
    const clipped = tf.mul(tf.clipByValue(ratio, 1 - clipEpsilon, 1 + clipEpsilon), advantages);
    return tf.neg(tf.mean(tf.minimum(unclipped, clipped))) as tf.Scalar;
  });
}

/** Per-step GRPO advantages: each episode's group-normalised reward, copied to its steps. */
export function grpoAdvantages(batch: RolloutBatch, eps = DEFAULT_GRPO_CONFIG.advantageEps): number[] {
  const episodes = groupEpisodes(batch.steps);
  const groups = new Map<string, { rewards: number[]; episodes: number[] }>();
  episodes.forEach((e, k) => {
    const key = e.groupId ?? `episode:${e.episodeId}`;
    let g = groups.get(key);
    if (!g) {
      g = { rewards: [], episodes: [] };
      groups.set(key, g);
    }
    let total = 0;
    for (const i of e.indices) total += batch.steps[i].reward;
    g.rewards.push(total);
    g.episodes.push(k);
  });
  const advantages = new Array<number>(batch.steps.length);
  for (const g of groups.values()) {
    const normalized = groupNormalizedAdvantages(g.rewards, eps);
    g.episodes.forEach((k, j) => {
      for (const i of episodes[k].indices) advantages[i] = normalized[j];
    });
  }
  return advantages;
}

// =============================================================================================
// Update
// =============================================================================================

/**
 * GRPO update on a batch of groups of complete episodes. Returns `losses/policy_loss`,
 * `losses/entropy`, `losses/approx_kl`, `losses/clipfrac` (averaged over the minibatches) and,
 * with a reference, `losses/ref_kl`.
 */
export async function grpoUpdate(
  policy: CandidatePolicy,
  optimizer: tf.Optimizer,
  batch: RolloutBatch,
  config: Partial<GrpoConfig> = {},
  options: GrpoOptions = {},
): Promise<UpdateMetrics> {
  const cfg = { ...DEFAULT_GRPO_CONFIG, ...config };
  const steps = batch.steps;
  if (steps.length === 0) throw new Error('grpoUpdate: empty batch');
  if (cfg.klCoef > 0 && !options.reference) {
    throw new Error('grpoUpdate: klCoef > 0 needs options.reference (e.g. policy.clone() made before training)');
  }
  const rng = options.rng ?? Rng.fromSeed(cfg.seed, 'grpo');

  // ---- ALGO LOGIC: group-normalised advantages -----------------------------------------------
  const advantages = Float32Array.from(grpoAdvantages(batch, cfg.advantageEps)); // [N]
  const oldLogProbs = Float32Array.from(steps, (s) => s.logProb); // [N]
  const enc = encodeSteps(policy, steps);
  const actions = actionIndices(steps); // [N]

  // ---- epochs × minibatches -----------------------------------------------------------------
  const n = steps.length;
  const minibatchSize = Math.max(1, Math.ceil(n / cfg.minibatches));
  const sums: Record<string, number> = {};
  let count = 0;
  for (let epoch = 0; epoch < cfg.updateEpochs; epoch++) {
    const order = cfg.minibatches > 1 ? rng.shuffle([...Array(n).keys()]) : [...Array(n).keys()];
    for (let start = 0; start < n; start += minibatchSize) {
      const mb = order.slice(start, start + minibatchSize);
      const mbEnc = cfg.minibatches > 1 ? sliceEncoded(enc, mb) : enc;
      const mbActions = Int32Array.from(mb, (i) => actions[i]);
      const mbAdv = tf.tensor1d(Float32Array.from(mb, (i) => advantages[i])); // [M]
      const mbOld = tf.tensor1d(Float32Array.from(mb, (i) => oldLogProbs[i])); // [M]
      // π_ref(·|s) over the padded slots, a constant [M, maxA]
      const refLogProbs =
        options.reference && cfg.klCoef > 0 ? tf.tidy(() => options.reference!.forward(mbEnc).logProbs) : null;

      const kept: Record<string, tf.Tensor> = {};
      const { value: loss, grads } = tf.variableGrads(() => {
        const { logProbs, entropy, allLogProbs } = policy.evaluate(mbEnc, mbActions); // [M], [M], [M, maxA]
        const pgLoss = grpoLoss(logProbs, mbOld, mbAdv, cfg.clipEpsilon);
        const entropyMean = tf.mean(entropy);
        let total = tf.sub(pgLoss, tf.mul(cfg.entropyCoef, entropyMean));
        if (refLogProbs) {
          // KL(π ‖ π_ref) = Σ_a π(a) (log π(a) − log π_ref(a)); padding slots have π = 0.
          const kl = tf.mean(tf.sum(tf.mul(tf.exp(allLogProbs), tf.sub(allLogProbs, refLogProbs)), 1));
          total = tf.add(total, tf.mul(cfg.klCoef, kl));
          kept['losses/ref_kl'] = tf.keep(kl);
        }
        // diagnostics (CleanRL): approx_kl = mean((ρ − 1) − log ρ), clipfrac = mean(|ρ − 1| > ε)
        const logRatio = tf.sub(logProbs, mbOld);
        const ratio = tf.exp(logRatio);
        kept['losses/approx_kl'] = tf.keep(tf.mean(tf.sub(tf.sub(ratio, 1), logRatio)));
        kept['losses/clipfrac'] = tf.keep(
          tf.mean(tf.cast(tf.greater(tf.abs(tf.sub(ratio, 1)), cfg.clipEpsilon), 'float32')),
        );
        kept['losses/policy_loss'] = tf.keep(pgLoss);
        kept['losses/entropy'] = tf.keep(entropyMean);
        return total as tf.Scalar;
      }, policy.policyVariables);
      applyClippedGradients(optimizer, grads, cfg.maxGradNorm);
      tf.dispose([loss, mbAdv, mbOld]);
      if (refLogProbs) refLogProbs.dispose();

      const values = await readScalars(kept);
      for (const [k, v] of Object.entries(values)) sums[k] = (sums[k] ?? 0) + v;
      count++;
    }
  }
  const metrics: UpdateMetrics = {};
  for (const [k, v] of Object.entries(sums)) metrics[k] = v / count;
  return metrics;
}
