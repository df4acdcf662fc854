/**
 * The configuration of a run on an imported domain (no real environment exists): what
 * the user sets (`DomainTrainConfig`, its defaults and validation), the step limit the data
 * suggests, and the trainer's config it becomes (`domainTrainConfig`: dream mode, GRPO, no
 * curriculum, no held-out real evaluation). The experience model may be any engine but the oracle,
 * which needs a real env (run-parts.ts `checkDomainEngine`, the one decision).
 */
import { envIds } from '../envs/registry';
import { parseLlmSpec, type LlmSpecText } from '../llm/spec';
import type { EvalSplit } from '../train/evaluate';
import { DEFAULT_SFT_CONFIG } from '../train/sft';
import { withDefaults, type TrainConfig } from '../train/config';
import { checkDomainEngine } from '../train/run-parts';
import type { Domain } from './domain';

/**
 * How `domain train` makes its agent: behaviour cloning on the training episodes, then the dream
 * (the default); behaviour cloning only (to compare with); the dream only, from a fresh policy.
 */
export const DOMAIN_AGENT_STARTS = ['bc-then-dream', 'bc', 'dream'] as const;
export type DomainAgentStart = (typeof DOMAIN_AGENT_STARTS)[number];

export interface DomainTrainConfig {
  /** The experience model's engine spec (recorded in the run's config; never the oracle). */
  llm: LlmSpecText;
  /** What is trained: BC then the dream, BC only, or the dream only (clone.ts, trainer.ts). */
  agent: DomainAgentStart;
  /** Passes of behaviour cloning over the demonstrated steps. */
  bcEpochs: number;
  /** Adam's learning rate of behaviour cloning. */
  bcLearningRate: number;
  iterations: number;
  /** Training tasks rolled out per iteration. */
  tasksPerIteration: number;
  /** Episodes per task (a GRPO group). */
  groupSize: number;
  /** Step limit of dreamed episodes (default: from the data, see `defaultStepLimit`). */
  stepLimit?: number;
  learningRate: number;
  clipEpsilon: number;
  entropyCoef: number;
  /** KL(π ‖ π_ref) in the dream's GRPO, with π_ref the cloned policy (0 with the dream only: no reference to keep). */
  klCoef: number;
  updateEpochs: number;
  maxGradNorm: number;
  seed: number;
  /** Held-out tasks played in the dream for (a) (at most; default 20). */
  evalEpisodes: number;
  /** Held-out transitions audited for (c) (at most; default 40). */
  auditTransitions: number;
  /** Failed engine calls in a row that stop the run (default: TRAIN_DEFAULTS.llmMaxFailures). */
  llmMaxFailures?: number;
  /**
   * A registered env the domain's episodes were recorded in (a measurement: household or webshop
   * exported through `convert`): the trained policy also plays its held-out real tasks.
   */
  realEval?: RealEvalConfig;
}

export interface RealEvalConfig {
  env: string;
  episodes: number;
  /** Task difficulty 0..1 (that of the recorded episodes). */
  difficulty: number;
  /** The held-out split played (default dev; test only for reported figures, docs/architecture.md §7). */
  split?: EvalSplit;
}

export const DEFAULT_DOMAIN_TRAIN_CONFIG: Readonly<Omit<DomainTrainConfig, 'llm'>> = Object.freeze({
  agent: 'bc-then-dream',
  // The SFT baseline's choice (train/sft.ts DEFAULT_SFT_CONFIG, tuned on the dev split).
  bcEpochs: DEFAULT_SFT_CONFIG.epochs,
  bcLearningRate: DEFAULT_SFT_CONFIG.learningRate,
  iterations: 5,
  tasksPerIteration: 4,
  groupSize: 4,
  learningRate: 3e-3,
  clipEpsilon: 0.2,
  entropyCoef: 0.01,
  // Tuned on the dev split (200 household episodes as ETO, seeds 0–2: BC 25.3 %; the dream at β 0 20.3 %,
  // 0.1 26.7 %, 1 24.7 %; docs/results/imported-domains.md): without it the dream undid BC on one seed.
  klCoef: 0.1,
  updateEpochs: 1,
  maxGradNorm: 0.5,
  seed: 0,
  evalEpisodes: 20,
  auditTransitions: 40,
});

/** The longest demonstrated episode, clamped to 5..50 steps (dreams need an end; LLM steps cost). */
export function defaultStepLimit(domain: Pick<Domain, 'train' | 'heldOut'>): number {
  const longest = Math.max(1, ...[...domain.train, ...domain.heldOut].map((t) => t.steps.length));
  return Math.min(50, Math.max(5, longest));
}

export function validateDomainTrainConfig(config: DomainTrainConfig, domain: { name: string }): DomainTrainConfig {
  checkDomainEngine(parseLlmSpec(config.llm), domain);
  if (!DOMAIN_AGENT_STARTS.includes(config.agent))
    throw new RangeError(`agent must be one of ${DOMAIN_AGENT_STARTS.join(', ')}, got '${String(config.agent)}'.`);
  if (!(config.bcLearningRate > 0))
    throw new RangeError(`bcLearningRate must be positive, got ${config.bcLearningRate}.`);
  const positive = ['iterations', 'tasksPerIteration', 'groupSize', 'updateEpochs', 'bcEpochs'] as const;
  for (const key of positive) {
    if (!Number.isInteger(config[key]) || config[key] < 1) {
      throw new RangeError(`${key} must be a positive integer, got ${config[key]}.`);
    }
  }
  for (const key of ['evalEpisodes', 'auditTransitions'] as const) {
    if (!Number.isInteger(config[key]) || config[key] < 0) {
      throw new RangeError(`${key} must be 0 or a positive integer, got ${config[key]}.`);
    }
  }
  if (config.stepLimit !== undefined && (!Number.isInteger(config.stepLimit) || config.stepLimit < 1)) {
    throw new RangeError(`stepLimit must be a positive integer, got ${config.stepLimit}.`);
  }
  if (!(config.learningRate > 0)) throw new RangeError(`learningRate must be positive, got ${config.learningRate}.`);
  if (config.realEval) validateRealEval(config.realEval);
  return config;
}

function validateRealEval(real: RealEvalConfig): void {
  if (!envIds().includes(real.env)) {
    throw new RangeError(
      `The real env '${real.env}' is not registered (${envIds().join(', ')}): a domain has a real env only when ` +
        'its episodes were recorded in one of these.',
    );
  }
  if (!Number.isInteger(real.episodes) || real.episodes < 1) {
    throw new RangeError(`realEval.episodes must be a positive integer, got ${real.episodes}.`);
  }
  if (!(real.difficulty >= 0 && real.difficulty <= 1)) {
    throw new RangeError(`realEval.difficulty must be within 0..1, got ${real.difficulty}.`);
  }
}

/** The trainer's config for a domain: dream mode, GRPO, no curriculum, no held-out real evaluation. */
export function domainTrainConfig(
  domain: Pick<Domain, 'name' | 'envId'>,
  config: DomainTrainConfig,
  taskCount: number,
): TrainConfig {
  return withDefaults({
    preset: `domain:${domain.name}`,
    env: domain.envId,
    mode: 'dream',
    llm: config.llm,
    algo: 'grpo',
    curriculum: false,
    difficulty: 0,
    taskPool: Math.max(1, taskCount),
    evalInterval: 0,
    seed: config.seed,
    iterations: config.iterations,
    tasksPerIteration: config.tasksPerIteration,
    groupSize: config.groupSize,
    learningRate: config.learningRate,
    clipEpsilon: config.clipEpsilon,
    entropyCoef: config.entropyCoef,
    // The reference is the cloned policy; a dream-only agent has none to be held near.
    klCoef: config.agent === 'bc-then-dream' ? config.klCoef : 0,
    updateEpochs: config.updateEpochs,
    maxGradNorm: config.maxGradNorm,
    ...(config.llmMaxFailures !== undefined ? { llmMaxFailures: config.llmMaxFailures } : {}),
  });
}
