/**
 * The policy-gradient knobs the three algorithms share, named as the training config names them
 * (train/config.ts composes them into TrainConfig), with their defaults. Each algorithm file picks
 * the ones it uses (grpoConfigFrom, ppoConfigFrom, reinforceConfigFrom); the learning rate is the
 * optimizer's (batch.ts makeOptimizer).
 */
export interface PolicyGradientSettings {
  /** Discount γ. */
  gamma: number;
  /** GAE λ (PPO). */
  gaeLambda: number;
  /** Clip range ε of the probability ratio (GRPO, PPO). */
  clipEpsilon: number;
  /** Entropy bonus coefficient. */
  entropyCoef: number;
  /** GRPO: coefficient of the KL penalty to the initial policy (rebuilt from the seed; 0 = off). */
  klCoef: number;
  /** Value loss coefficient (PPO). */
  valueCoef: number;
  /** Optimisation epochs over each batch (GRPO, PPO). */
  updateEpochs: number;
  /** Minibatches per epoch (PPO; GRPO takes each epoch over the whole batch). */
  minibatches: number;
  /** Global gradient-norm clip. */
  maxGradNorm: number;
}

/** The presets' settings (train/config.ts TRAIN_DEFAULTS starts from them). */
export const POLICY_GRADIENT_DEFAULTS: Readonly<PolicyGradientSettings> = Object.freeze({
  gamma: 0.99,
  gaeLambda: 0.95,
  clipEpsilon: 0.2,
  entropyCoef: 0.001,
  klCoef: 0,
  valueCoef: 0.5,
  updateEpochs: 4,
  minibatches: 4,
  maxGradNorm: 1.0,
});

/** The seed of a run that names none (train/config.ts TRAIN_DEFAULTS.seed). */
export const DEFAULT_SEED = 1;
