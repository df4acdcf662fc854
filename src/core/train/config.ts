/**
 * Training configuration and presets. Every field is documented and validated: a bad value is
 * an error that names the field, what was given, and what is valid.
 */

import { parseLlmSpec, type LlmSpecText } from '../llm/spec';
import { DEFAULT_LLM_MAX_FAILURES } from '../experience/engine-failures';
import { DEFAULT_SEED, POLICY_GRADIENT_DEFAULTS, type PolicyGradientSettings } from '../rl/settings';
import { DreamGymError } from '../errors';

export const ALGORITHMS = ['grpo', 'ppo', 'reinforce'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];
export const MODES = ['real', 'dream', 's2r'] as const;
export type Mode = (typeof MODES)[number];
/** Where an iteration's rollouts run: the real env, or the dream (an s2r run has both, one after the other). */
export type Phase = 'real' | 'dream';

/** The run's settings: its own, and the policy-gradient knobs of rl/settings.ts. */
export interface TrainConfig extends PolicyGradientSettings {
  /** Preset this config started from. */
  preset: string;
  /** Environment id (see `dreamgym envs`). */
  env: string;
  /**
   * Where experience comes from: 'real' = the ground-truth env; 'dream' = the experience model
   * (zero real training steps); 's2r' = dream for `iterations`, then real RL with a budget of
   * `s2rRealFraction × realStepBudget` real steps.
   */
  mode: Mode;
  /** The experience model (and the LLM of the prior and of LLM variations): an engine spec, src/core/llm/spec.ts. */
  llm: LlmSpecText;
  /** S2R: share of the real-mode budget given to the real phase (paper: ~6%; default 10%). */
  s2rRealFraction: number;
  /**
   * S2R that corrects the dream (dream-correction.ts): the share of the real phase's budget spent
   * during the dream on replaying the dream's claimed successes in the real env; the misses and
   * confirmations refit the learned model's verdict (and join the halt's real data). 0 = off; the
   * rest of the budget stays plain S2R real RL. Mode s2r with a learned experience model only.
   */
  s2rCorrectFraction: number;
  /** S2R correction: rounds, evenly spaced over the dream iterations (never after the last: nothing dreams then). */
  s2rCorrectRounds: number;
  /** Curriculum task generator on (variations of high-variance tasks); off = the fixed task pool. */
  curriculum: boolean;
  /** Curriculum: cap on the share of synthetic tasks in a batch (λ). */
  lambda: number;
  /** Curriculum: seed tasks taken per iteration (top-m by reward variance). */
  curriculumSeeds: number;
  /** Curriculum groups: each task's rollouts ('task'), or k-means clusters of similar tasks ('cluster', the paper's PPO grouping). */
  curriculumGrouping: 'task' | 'cluster';
  /** Curriculum: k of the task clustering (0 = round(√tasks per iteration)). */
  curriculumClusters: number;
  /**
   * Curriculum: where variations come from: 'procedural' (mutateTask, validated by the expert
   * solver), 'llm' (written by the LLM: dream-only tasks, so not in 'real' mode) or 'both'.
   */
  curriculumVariations: 'procedural' | 'llm' | 'both';
  /** Experience model: retrieved transitions shown per dreamed step (0 = the no-retrieval ablation). */
  retrievalK: number;
  /** Experience model: history steps shown (0 = the no-history ablation). */
  historyLength: number;
  /** Experience model: reason before predicting (false = the no-reasoning ablation). */
  reasoning: boolean;
  /**
   * Learned experience model: judge a step's ending with its verdict head, where it has one
   * (false = the generator-reward-only ablation: the decoder's own reward and ending).
   */
  verdictHead: boolean;
  /**
   * Learned experience model: how the verdict ensemble's members combine: 'min' (a success pays
   * only where every member grants it) or 'mean-std' (their mean − verdictLambda × std).
   */
  verdictCombine: 'min' | 'mean-std';
  /** Learned experience model: λ of 'mean-std'. */
  verdictLambda: number;
  /** Learned experience model: the verdict ensemble's members used (the first N of those stored; 1 = no ensemble). */
  verdictMembers: number;
  /**
   * The dream halts (MOReL): a dreamed step whose role pattern is farther from every real
   * transition of the buffer than the calibrated threshold ends the episode with no success
   * (novelty.ts). The learned and LLM experience models; never the oracle, which is the real env.
   */
  halt: boolean;
  /** The halt's threshold: this quantile of held-out real steps' novelty (each episode left out of its own search). */
  haltQuantile: number;
  /** The same for steps that end in success (lower: a false success costs more than a real one halted). */
  haltSuccessQuantile: number;
  /** The halt's reward: −haltPenalty (MOReL's −κ; 0: a plain failure). */
  haltPenalty: number;
  /** With the halt: a dreamed state offers only actions whose role pattern some real state offered (novelty.ts). */
  haltOffers: boolean;
  /** With the halt: other draws asked of the model for a running step beyond the threshold before it halts. */
  haltRedraws: number;
  /**
   * Dreams that start from real states (MBPO): this share of a dream iteration's tasks begin at a
   * random step of a real episode (the buffer's, or an imported domain's training episodes), the
   * real prefix as their history. Each such task is the recorded episode's own task. A real phase
   * ignores it, as it ignores the other dream settings; so does a dream with no real episode of its
   * env to begin at (an empty buffer), which begins every task at its first state.
   */
  realStartShare: number;
  /** Steps a dream begun at a real state may take (0: up to the step limit, counting its real prefix). */
  realStartHorizon: number;
  /** The LLM acts as the agent's prior: π ∝ exp(β·prior + f_θ) (false = the no-LLM-prior ablation; needs an LLM, not the oracle). */
  llmPrior: boolean;
  algo: Algorithm;
  seed: number;
  /** Task difficulty 0..1 for training and held-out evaluation tasks. */
  difficulty: number;
  /** Policy-gradient iterations. */
  iterations: number;
  /** Distinct tasks per iteration. */
  tasksPerIteration: number;
  /** Rollouts per task (GRPO's group size G; also used by PPO and REINFORCE for equal budgets). */
  groupSize: number;
  /** Size of the training task pool (seeds 0..pool-1; held-out tasks: dev from 1e9, test from 2e9). */
  taskPool: number;
  /** Adam learning rate (at the first iteration; see learningRateSchedule). */
  learningRate: number;
  /**
   * How the learning rate moves over the run's iterations: 'constant', or 'cosine' / 'linear'
   * decay from learningRate to a tenth of it at the last iteration (a function of the iteration
   * alone, so a resumed run follows the same schedule).
   */
  learningRateSchedule: 'constant' | 'cosine' | 'linear';
  /** Evaluate on held-out real tasks every K iterations (0 = only at the end). */
  evalInterval: number;
  /** Held-out episodes per intermediate evaluation (always the dev split: see evaluate.ts). */
  evalEpisodes: number;
  /** Held-out episodes of the final evaluation (the run's own is on dev; `--split test` adds one on test). */
  finalEvalEpisodes: number;
  /** Hard cap on real environment steps (training rollouts; evaluation is not counted). */
  realStepBudget: number;
  /** OpenAI-compatible engine: time limit of one attempt (connect, headers and the whole body), ms. */
  llmTimeoutMs: number;
  /** OpenAI-compatible engine: extra attempts after a network error, 429 or 5xx (a timeout is not retried: it has waited llmTimeoutMs). */
  llmRetries: number;
  /**
   * OpenAI-compatible engine: requests kept in flight at once (the rollout asks for every running
   * episode's step together; a server with parallel slots or continuous batching answers them
   * together). WebLLM and wllama serve one at a time whatever this says. Results do not depend on it.
   */
  llmConcurrency: number;
  /**
   * A failed engine call (after its retries) costs one invalid transition; the run stops after this
   * many failed calls in a row, or when every prediction of a dream step failed.
   */
  llmMaxFailures: number;
}

/** The settings every preset starts from (and the algorithm files' defaults, see `…ConfigFrom`). */
export const TRAIN_DEFAULTS: Readonly<Omit<TrainConfig, 'preset' | 'env' | 'difficulty'>> = {
  mode: 'real',
  llm: 'oracle:0,0',
  s2rRealFraction: 0.1,
  s2rCorrectFraction: 0,
  s2rCorrectRounds: 4,
  curriculum: false,
  lambda: 0.25,
  curriculumSeeds: 4,
  curriculumGrouping: 'task',
  curriculumClusters: 0,
  curriculumVariations: 'procedural',
  retrievalK: 4,
  historyLength: 4,
  reasoning: true,
  verdictHead: true,
  verdictCombine: 'min',
  verdictLambda: 1,
  verdictMembers: 5,
  halt: true,
  haltQuantile: 0.99,
  haltSuccessQuantile: 0.9,
  haltPenalty: 0,
  haltOffers: true,
  haltRedraws: 3,
  realStartShare: 0.5,
  realStartHorizon: 10,
  llmPrior: false,
  algo: 'grpo',
  seed: DEFAULT_SEED,
  iterations: 60,
  tasksPerIteration: 8,
  groupSize: 8,
  taskPool: 2000,
  learningRate: 3e-3,
  learningRateSchedule: 'constant',
  ...POLICY_GRADIENT_DEFAULTS,
  evalInterval: 10,
  evalEpisodes: 50,
  finalEvalEpisodes: 200,
  realStepBudget: 40_000,
  llmTimeoutMs: 60_000,
  llmRetries: 2,
  llmConcurrency: 4,
  llmMaxFailures: DEFAULT_LLM_MAX_FAILURES,
};

/** The LLM demo presets' settings (see PRESETS). */
const LLM_DEMO: Omit<TrainConfig, 'preset' | 'env' | 'difficulty'> = {
  ...TRAIN_DEFAULTS,
  algo: 'ppo',
  iterations: 30,
  tasksPerIteration: 4,
  groupSize: 4,
  curriculum: true,
  learningRate: 6e-3,
  learningRateSchedule: 'cosine',
  updateEpochs: 8,
  evalInterval: 10,
  evalEpisodes: 50,
};

export const PRESETS: Record<string, TrainConfig> = {
  'webshop-easy': { ...TRAIN_DEFAULTS, preset: 'webshop-easy', env: 'webshop-lite-v0', difficulty: 0, iterations: 100 },
  'webshop-medium': {
    ...TRAIN_DEFAULTS,
    preset: 'webshop-medium',
    env: 'webshop-lite-v0',
    difficulty: 0.5,
    iterations: 100,
    realStepBudget: 80_000,
  },
  'household-easy': {
    ...TRAIN_DEFAULTS,
    preset: 'household-easy',
    env: 'household-v0',
    difficulty: 0,
    iterations: 60,
    realStepBudget: 120_000,
  },
  'household-medium': {
    ...TRAIN_DEFAULTS,
    preset: 'household-medium',
    env: 'household-v0',
    difficulty: 0.5,
    iterations: 100,
    realStepBudget: 200_000,
  },
  // mini-WebArena (envs/webarena/README.md): level 0 starts on the task's one-page list, 1–3 expert
  // steps (random play succeeds 2.8 %); level 1 has forms and aggregation over 5-page lists, 9 expert
  // steps on average (random 0.1 %), and real RL gets the same small budget there.
  'webarena-easy': {
    ...TRAIN_DEFAULTS,
    preset: 'webarena-easy',
    env: 'webarena-lite-v0',
    difficulty: 0,
    iterations: 60,
    realStepBudget: 40_000,
  },
  'webarena-hard': {
    ...TRAIN_DEFAULTS,
    preset: 'webarena-hard',
    env: 'webarena-lite-v0',
    difficulty: 1,
    iterations: 100,
    realStepBudget: 40_000,
  },
  // Sized for a language model dreaming at a few transitions per second: about 3,000 dreamed
  // transitions in all, PPO with more update epochs per batch and a decaying learning rate. Tuned
  // with the noisy oracle (oracle:0.1,0.1; docs/results/real-llm-dream.md): webshop learns
  // visibly in that budget; household episodes run ~48 steps, so its demo plays few episodes and
  // shows the dream at work rather than learning (household learns in ~100k steps).
  'webshop-llm-demo': { ...LLM_DEMO, preset: 'webshop-llm-demo', env: 'webshop-lite-v0', difficulty: 0 },
  'household-llm-demo': {
    ...LLM_DEMO,
    preset: 'household-llm-demo',
    env: 'household-v0',
    difficulty: 0,
    iterations: 8,
    tasksPerIteration: 2,
  },
};

export class ConfigError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'config-invalid',
      fix: "Correct the setting the message names ('dreamgym help train' lists each setting and its values).",
    });
    this.name = 'ConfigError';
  }
}

export function presetNames(): string[] {
  return Object.keys(PRESETS);
}

export function getPreset(name: string): TrainConfig {
  // An own key only: '__proto__' or 'constructor' must not read a prototype's member.
  const preset = Object.hasOwn(PRESETS, name) ? PRESETS[name] : undefined;
  if (!preset) throw new ConfigError(`Unknown preset '${name}'. Valid presets: ${presetNames().join(', ')}.`);
  return { ...preset };
}

type Rule =
  | { kind: 'int' | 'number'; min: number; max: number }
  | { kind: 'choice'; values: readonly string[] }
  | { kind: 'string' }
  | { kind: 'boolean' }
  | { kind: 'llm' };

const RULES: Record<keyof TrainConfig, Rule> = {
  preset: { kind: 'string' },
  env: { kind: 'string' },
  mode: { kind: 'choice', values: MODES },
  algo: { kind: 'choice', values: ALGORITHMS },
  llm: { kind: 'llm' },
  s2rRealFraction: { kind: 'number', min: 0.001, max: 1 },
  s2rCorrectFraction: { kind: 'number', min: 0, max: 1 },
  s2rCorrectRounds: { kind: 'int', min: 1, max: 1000 },
  curriculum: { kind: 'boolean' },
  lambda: { kind: 'number', min: 0, max: 1 },
  curriculumSeeds: { kind: 'int', min: 0, max: 4096 },
  curriculumGrouping: { kind: 'choice', values: ['task', 'cluster'] },
  curriculumClusters: { kind: 'int', min: 0, max: 4096 },
  curriculumVariations: { kind: 'choice', values: ['procedural', 'llm', 'both'] },
  retrievalK: { kind: 'int', min: 0, max: 64 },
  historyLength: { kind: 'int', min: 0, max: 100 },
  reasoning: { kind: 'boolean' },
  verdictHead: { kind: 'boolean' },
  verdictCombine: { kind: 'choice', values: ['min', 'mean-std'] },
  verdictLambda: { kind: 'number', min: 0, max: 10 },
  verdictMembers: { kind: 'int', min: 1, max: 64 },
  halt: { kind: 'boolean' },
  haltQuantile: { kind: 'number', min: 0.5, max: 1 },
  haltSuccessQuantile: { kind: 'number', min: 0.5, max: 1 },
  haltPenalty: { kind: 'number', min: 0, max: 10 },
  haltOffers: { kind: 'boolean' },
  haltRedraws: { kind: 'int', min: 0, max: 16 },
  realStartShare: { kind: 'number', min: 0, max: 1 },
  realStartHorizon: { kind: 'int', min: 0, max: 1000 },
  llmPrior: { kind: 'boolean' },
  seed: { kind: 'int', min: 0, max: 2 ** 31 - 1 },
  difficulty: { kind: 'number', min: 0, max: 1 },
  iterations: { kind: 'int', min: 1, max: 1_000_000 },
  tasksPerIteration: { kind: 'int', min: 1, max: 4096 },
  groupSize: { kind: 'int', min: 1, max: 256 },
  taskPool: { kind: 'int', min: 1, max: 999_999_999 },
  learningRate: { kind: 'number', min: 1e-7, max: 1 },
  learningRateSchedule: { kind: 'choice', values: ['constant', 'cosine', 'linear'] },
  gamma: { kind: 'number', min: 0, max: 1 },
  gaeLambda: { kind: 'number', min: 0, max: 1 },
  clipEpsilon: { kind: 'number', min: 0.001, max: 10 },
  entropyCoef: { kind: 'number', min: 0, max: 10 },
  klCoef: { kind: 'number', min: 0, max: 10 },
  valueCoef: { kind: 'number', min: 0, max: 10 },
  updateEpochs: { kind: 'int', min: 1, max: 100 },
  minibatches: { kind: 'int', min: 1, max: 1024 },
  maxGradNorm: { kind: 'number', min: 0.001, max: 1e6 },
  evalInterval: { kind: 'int', min: 0, max: 1_000_000 },
  evalEpisodes: { kind: 'int', min: 1, max: 100_000 },
  finalEvalEpisodes: { kind: 'int', min: 1, max: 100_000 },
  realStepBudget: { kind: 'int', min: 1, max: 1e12 },
  llmTimeoutMs: { kind: 'int', min: 1, max: 3_600_000 },
  llmRetries: { kind: 'int', min: 0, max: 20 },
  llmConcurrency: { kind: 'int', min: 1, max: 256 },
  llmMaxFailures: { kind: 'int', min: 1, max: 1_000_000 },
};

/** The settings `--set` and a saved config may name (own keys only: never `__proto__` or `toString`). */
export const SETTING_NAMES: readonly (keyof TrainConfig)[] = Object.keys(RULES) as (keyof TrainConfig)[];

export function isSettingName(key: string): key is keyof TrainConfig {
  return Object.hasOwn(RULES, key);
}

/** The settings of the OpenAI-compatible transport and its failure rule (the dream commands' `--set`). */
export const LLM_SETTING_NAMES = ['llmTimeoutMs', 'llmRetries', 'llmConcurrency', 'llmMaxFailures'] as const;
export type LlmSettings = Pick<TrainConfig, (typeof LLM_SETTING_NAMES)[number]>;

/**
 * A saved config (checkpoint, run list) written before a setting existed, completed with the
 * setting's default so older checkpoints keep loading; present values are kept as they are.
 */
export function withDefaults(config: Partial<TrainConfig>): TrainConfig {
  const filled: Record<string, unknown> = { ...config };
  for (const [key, value] of Object.entries(TRAIN_DEFAULTS)) if (filled[key] === undefined) filled[key] = value;
  return filled as unknown as TrainConfig;
}

/** Why a config.llm value is not an engine spec (null: it is one). */
function llmProblem(value: unknown): string | null {
  if (typeof value !== 'string' || !value)
    return `must be an engine spec such as 'oracle:0.1,0.1'; got ${JSON.stringify(value)}`;
  try {
    parseLlmSpec(value);
    return null;
  } catch (error) {
    return `is not an engine spec: ${(error as Error).message.split('\n')[0]}`;
  }
}

/** What is wrong with one setting's value (null: nothing). */
function settingProblem(key: keyof TrainConfig, value: unknown): string | null {
  const rule = RULES[key];
  if (value === undefined) return `'${key}' is missing`;
  if (rule.kind === 'choice') {
    return rule.values.includes(value as string)
      ? null
      : `'${key}' must be one of ${rule.values.join(', ')}; got ${JSON.stringify(value)}`;
  }
  if (rule.kind === 'boolean')
    return typeof value === 'boolean' ? null : `'${key}' must be true or false; got ${JSON.stringify(value)}`;
  if (rule.kind === 'llm') {
    const problem = llmProblem(value);
    return problem ? `'${key}' ${problem}` : null;
  }
  if (rule.kind === 'string')
    return typeof value === 'string' && value
      ? null
      : `'${key}' must be a non-empty string; got ${JSON.stringify(value)}`;
  const ok = typeof value === 'number' && Number.isFinite(value) && (rule.kind === 'number' || Number.isInteger(value));
  if (!ok)
    return `'${key}' must be ${rule.kind === 'int' ? 'an integer' : 'a number'} in ${rule.min}..${rule.max}; got ${JSON.stringify(value)}`;
  if ((value as number) < rule.min || (value as number) > rule.max)
    return `'${key}' must be within ${rule.min}..${rule.max}; got ${value}`;
  return null;
}

function unknownSettings(settings: Record<string, unknown>, valid: readonly string[]): string[] {
  return Object.keys(settings)
    .filter((key) => !isSettingName(key) || !valid.includes(key))
    .map((key) => `unknown setting '${key}'; valid settings: ${valid.join(', ')}`);
}

/** Checks some settings (e.g. the LLM_SETTING_NAMES of a dream command's --set); throws a ConfigError listing every bad one. */
export function validateSettings<K extends keyof TrainConfig>(
  settings: Record<string, unknown>,
  valid: readonly K[],
): Pick<TrainConfig, K> {
  const problems = unknownSettings(settings, valid);
  for (const key of Object.keys(settings)) {
    if (!isSettingName(key) || !valid.includes(key as K)) continue;
    const problem = settingProblem(key, settings[key]);
    if (problem) problems.push(problem);
  }
  if (problems.length) throw new ConfigError(`Invalid settings:\n- ${problems.join('\n- ')}`);
  return settings as Pick<TrainConfig, K>;
}

/** Validates a (possibly user-edited) config; throws a ConfigError listing every bad field. */
export function validateConfig(config: Record<string, unknown>): TrainConfig {
  const problems = unknownSettings(config, SETTING_NAMES);
  for (const key of SETTING_NAMES) {
    const problem = settingProblem(key, Object.hasOwn(config, key) ? config[key] : undefined); // never a value inherited from a prototype
    if (problem) problems.push(problem);
  }
  if (config.mode === 'real' && (config.curriculumVariations === 'llm' || config.curriculumVariations === 'both')) {
    problems.push(
      `'curriculumVariations' ${config.curriculumVariations} writes dream-only tasks (no real env can play an LLM-written task), ` +
        "but mode 'real' has no dream phase; use mode dream or s2r (s2r plays them in its dream phase only), or curriculumVariations=procedural",
    );
  }
  if (typeof config.klCoef === 'number' && config.klCoef > 0 && config.algo !== 'grpo') {
    problems.push(
      `'klCoef' ${config.klCoef} is GRPO's KL penalty to the initial policy, but algo is ${JSON.stringify(config.algo)}; use algo grpo or klCoef 0`,
    );
  }
  problems.push(...correctionProblems(config));
  if (problems.length) throw new ConfigError(`Invalid training config:\n- ${problems.join('\n- ')}`);
  return config as unknown as TrainConfig;
}

/** Why a config cannot correct its dream (s2rCorrectFraction > 0): the mode, or an engine with nothing to refit. */
function correctionProblems(config: Record<string, unknown>): string[] {
  const fraction = config.s2rCorrectFraction;
  if (typeof fraction !== 'number' || !(fraction > 0)) return [];
  const problems: string[] = [];
  if (config.mode !== 's2r')
    problems.push(
      `'s2rCorrectFraction' ${fraction} spends part of the S2R real budget on replaying the dream's claimed ` +
        `successes, but mode is ${JSON.stringify(config.mode)}; use mode s2r, or s2rCorrectFraction 0`,
    );
  const llm = typeof config.llm === 'string' ? config.llm : '';
  if (llmProblem(llm) === null && parseLlmSpec(llm).kind !== 'learned')
    problems.push(
      `'s2rCorrectFraction' ${fraction} refits a learned experience model's verdict, but llm is '${llm}'` +
        (llm.startsWith('oracle:')
          ? ' (the oracle is the real env with dialled errors: there is nothing to correct)'
          : ' (a language model has no verdict head to refit)') +
        '; use --llm learned:PATH, or s2rCorrectFraction 0',
    );
  return problems;
}
