/**
 * Dream-only training of an imported domain (no real environment exists).
 *
 * The experience model is built by buildRunParts (src/core/train/run-parts.ts) from the run's
 * engine spec with the domain handed in: the reasoning model over a ChatModel with the domain's
 * derived card and a replay buffer seeded with the domain's TRAINING episodes, or a learned model.
 * `DomainExperienceModel` (experience/recorded-starts.ts) wraps it so a demonstrated task starts
 * from its recorded first observation (dreams start from real initial states, as in the paper) and
 * only tasks without one (extra descriptions) have the model write it. The oracle cannot serve a
 * domain (run-parts.ts `checkDomainEngine`).
 *
 * `DomainTrainer` runs the trainer's loop (src/core/train/loop.ts, the one loop of every mode)
 * with the domain as its task source (`DomainTaskSource`, task-source.ts): each iteration rolls
 * out G episodes of each of a batch of training tasks in DreamEnvs under the domain's env id and
 * step limit, all stepped together, adds the dreamed transitions to the buffer, and applies one
 * GRPO update; unusable dreamed steps are never learned from. Random streams are the trainer's,
 * derived from (seed, purpose, iteration). Its configuration is config.ts; its evaluation (dream
 * success, action agreement, the audit against held-out recorded transitions) is evaluate.ts.
 */
import { ReplayBuffer } from '../buffer/buffer';
import { MemoryBufferStore } from '../buffer/stores/memory';
import type { TimeLimit } from '../envs/env';
import { makeDreamEnv, type DreamEnv } from '../experience/dream-env';
import type { ExperienceModel } from '../experience/types';
import type { CandidatePolicy } from '../policy/policy';
import type { PolicyStep } from '../rl/batch';
import { evaluatePolicy } from '../train/evaluate';
import { Trainer } from '../train/loop';
import type { Task } from '../types';
import {
  defaultStepLimit,
  domainTrainConfig,
  validateDomainTrainConfig,
  DEFAULT_DOMAIN_TRAIN_CONFIG,
  type DomainTrainConfig,
} from './config';
import { trainingTasks, type Domain } from './domain';
import { actionAgreement, auditDomain, dreamSuccess, type DomainEvaluation } from './evaluate';
import { domainHealth, type DomainHealth } from './health';
import { DomainTaskSource } from './task-source';

/** A replay buffer (memory unless one is given) seeded with the domain's training episodes. */
export async function seedDomainBuffer(
  domain: Pick<Domain, 'train'>,
  buffer: ReplayBuffer = new ReplayBuffer(new MemoryBufferStore()),
  createdAt = 0,
): Promise<ReplayBuffer> {
  await buffer.importTrajectories(domain.train, { source: 'offline', createdAt });
  return buffer;
}

export type Metrics = Record<string, number>;
export interface DomainIterationRecord {
  iteration: number;
  metrics: Metrics;
}

export interface DomainTrainerDeps {
  /** Dreamed transitions are added here (the experience model retrieves from the same buffer). */
  buffer?: ReplayBuffer;
  /** Timestamps of buffer records (core never reads the clock). */
  now?: () => number;
  signal?: AbortSignal;
  /** Sees each batch right before the update (inspection, tests). */
  onBatch?: (batch: { steps: PolicyStep[] }, iteration: number) => void;
}

/** The trainer's loop (src/core/train/loop.ts) with the domain as its task source, plus the domain's own evaluation. */
export class DomainTrainer {
  readonly config: DomainTrainConfig;
  readonly stepLimit: number;
  readonly trainTasks: Task[];
  /** The shared training loop. */
  readonly trainer: Trainer;

  constructor(
    readonly domain: Domain,
    readonly model: ExperienceModel,
    config: Partial<DomainTrainConfig> & Pick<DomainTrainConfig, 'llm'>,
    readonly deps: DomainTrainerDeps = {},
  ) {
    this.config = validateDomainTrainConfig({ ...DEFAULT_DOMAIN_TRAIN_CONFIG, ...config }, domain);
    this.stepLimit = this.config.stepLimit ?? defaultStepLimit(domain);
    this.trainTasks = trainingTasks(domain);
    if (this.trainTasks.length === 0) {
      throw new Error(
        `The domain '${domain.name}' has no training tasks; import more episodes or give extra task ` +
          'descriptions (--tasks).',
      );
    }
    const source = new DomainTaskSource(domain, this.trainTasks, this.stepLimit, () => this.makeEnv());
    const { onBatch } = deps;
    this.trainer = new Trainer(domainTrainConfig(domain, this.config, this.trainTasks.length), {
      source,
      experienceModel: model,
      runId: `domain/${domain.name}/${this.config.seed}`,
      ...(deps.buffer ? { buffer: deps.buffer } : {}),
      ...(deps.now ? { now: deps.now } : {}),
      ...(onBatch ? { onBatch: (batch, _phase, iteration) => onBatch(batch, iteration) } : {}),
    });
  }

  get policy(): CandidatePolicy {
    return this.trainer.policy;
  }
  /** Iterations completed. */
  get iteration(): number {
    return this.trainer.iteration;
  }
  get dreamSteps(): number {
    return this.trainer.dreamSteps;
  }
  get finished(): boolean {
    return this.trainer.finished;
  }

  /** A DreamEnv under the domain's env id (tasks for bare seeds cycle through the training tasks). */
  makeEnv(): TimeLimit<DreamEnv> {
    const tasks = this.trainTasks;
    return makeDreamEnv(this.model, {
      envId: this.domain.envId,
      stepLimit: this.stepLimit,
      taskForSeed: (seed) => tasks[Math.abs(seed) % tasks.length],
      ...(this.deps.signal ? { signal: this.deps.signal } : {}),
    });
  }

  /** One iteration of the trainer (dreamed rollouts, buffer, GRPO update) with its metrics. */
  runIteration(): Promise<DomainIterationRecord> {
    return this.trainer.runIteration();
  }

  /** (a), (b) and (c) of evaluate.ts for the current policy. */
  async evaluate(
    options: { onProgress?: (stage: string, done: number, total: number) => void } = {},
  ): Promise<DomainEvaluation> {
    const { signal } = this.deps;
    const dream = await dreamSuccess(this.policy, this.model, this.domain, {
      episodes: this.config.evalEpisodes,
      stepLimit: this.stepLimit,
      signal,
    });
    options.onProgress?.('dream success', 1, 3);
    const agreement = await actionAgreement(this.policy, this.domain.heldOut, { stepLimit: this.stepLimit });
    options.onProgress?.('action agreement', 2, 3);
    const audit = await auditDomain(this.model, this.domain, {
      n: this.config.auditTransitions,
      seed: this.config.seed,
      signal,
    });
    options.onProgress?.('audit', 3, 3);
    const real = this.config.realEval;
    if (!real) return { dream, agreement, audit };
    // The real env's held-out (dev) seeds, played greedily: a measurement possible only for exports of our envs.
    const split = real.split ?? 'dev';
    const result = await evaluatePolicy(this.policy, real.env, real.difficulty, real.episodes, { split });
    const rounded = (x: number) => Math.round(x * 10000) / 10000;
    return {
      dream,
      agreement,
      audit,
      real: {
        env: real.env,
        split,
        difficulty: real.difficulty,
        episodes: result.episodes,
        success_rate: rounded(result.success),
        score: rounded(result.score),
        mean_steps: rounded(result.meanSteps),
      },
    };
  }

  dispose(): void {
    this.trainer.dispose();
  }
}

export interface DomainTrainResult {
  iterations: DomainIterationRecord[];
  evaluation: DomainEvaluation;
  /** Whether the model can be trusted (health.ts): a failed one is never reported as a success. */
  health: DomainHealth;
  dreamSteps: number;
  stepLimit: number;
}

/** Dream-only training for `config.iterations`, then (a), (b) and (c). */
export async function trainDomain(
  domain: Domain,
  model: ExperienceModel,
  config: Partial<DomainTrainConfig> & Pick<DomainTrainConfig, 'llm'>,
  deps: DomainTrainerDeps & { onIteration?: (record: DomainIterationRecord) => void } = {},
): Promise<DomainTrainResult> {
  const trainer = new DomainTrainer(domain, model, config, deps);
  try {
    const iterations: DomainIterationRecord[] = [];
    while (!trainer.finished) {
      const record = await trainer.runIteration();
      iterations.push(record);
      deps.onIteration?.(record);
    }
    const evaluation = await trainer.evaluate();
    const health = domainHealth(iterations, evaluation, [...domain.train, ...domain.heldOut]);
    return { iterations, evaluation, health, dreamSteps: trainer.dreamSteps, stepLimit: trainer.stepLimit };
  } finally {
    trainer.dispose();
  }
}
