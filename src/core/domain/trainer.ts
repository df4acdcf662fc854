/**
 * Training the agent of an imported domain (no real environment exists): behaviour cloning on the
 * demonstrations (clone.ts), then the dream (`trainDomain`; config.agent picks either or both).
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
 *
 * Where the agent's candidate actions come from, when the application records none (ETO):
 *   - behaviour cloning: the import's lists, inferred for each step that listed none from the
 *     training episodes (candidates.ts; clone.ts);
 *   - the dream: a demonstrated task starts from its recorded first state and list; every later
 *     list is the one the experience model writes, and the learned model learned to write them
 *     from the import's lists (sft-data.ts). A running state written without actions is unusable
 *     and never learned from (dream-env.ts);
 *   - deployed: `dreamgym act --run` infers them for a state that lists none, as the import does,
 *     from the run's domain's training episodes (src/cli/commands/act.ts).
 */
import { ReplayBuffer } from '../buffer/buffer';
import { MemoryBufferStore } from '../buffer/stores/memory';
import type { TimeLimit } from '../envs/env';
import { makeDreamEnv, type DreamEnv } from '../experience/dream-env';
import type { ExperienceModel } from '../experience/types';
import type { CandidatePolicy } from '../policy/policy';
import type { PolicyStep } from '../rl/batch';
import { evaluatePolicy } from '../train/evaluate';
import { Trainer, type TrainerState } from '../train/loop';
import { schemaOfEpisodes } from '../train/policy-schema';
import type { FeatureSchema } from '../policy/feature-schema';
import { DEFAULT_SFT_CONFIG, type SftEpoch } from '../train/sft';
import type { Task } from '../types';
import {
  defaultStepLimit,
  domainTrainConfig,
  validateDomainTrainConfig,
  DEFAULT_DOMAIN_TRAIN_CONFIG,
  type DomainAgentStart,
  type DomainTrainConfig,
} from './config';
import { trainingTasks, type Domain } from './domain';
import { cloneDemonstrations, type BcConfig, type BcResult } from './clone';
import { actionAgreement, auditDomain, dreamSuccess, type DomainAuditReport, type DomainEvaluation } from './evaluate';
import {
  domainHealth,
  dreamStopReason,
  MIN_TERMINATED_ACCURACY,
  verdictProblem,
  type DomainHealth,
  type DomainHealthProblem,
  type VerdictFit,
} from './health';
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
  /** The policy's feature schema (default: mined from the domain's training episodes, as buildRunParts mines it). */
  featureSchema?: FeatureSchema;
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
      featureSchema: deps.featureSchema ?? schemaOfEpisodes(domain.envId, domain.train),
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

  /** (c): the model against held-out recorded transitions (the policy plays no part in it). */
  audit(): Promise<DomainAuditReport> {
    return auditDomain(this.model, this.domain, {
      n: this.config.auditTransitions,
      seed: this.config.seed,
      signal: this.deps.signal,
    });
  }

  /** (a), (b) and (c) of evaluate.ts for the current policy (`audit`: (c) already made, not made again). */
  async evaluate(
    options: {
      onProgress?: (stage: string, done: number, total: number) => void;
      audit?: DomainAuditReport;
    } = {},
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
    const audit = options.audit ?? (await this.audit());
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

/** Which policy `trainDomain` returns, and why (the `--json` summary's `agent`). */
export interface DomainAgentChoice {
  /** What was asked for (config.agent). */
  trained: DomainAgentStart;
  /** Whose weights the returned policy holds: the cloned ('bc') or the dream-trained ('dream') one. */
  returned: 'bc' | 'dream';
  /** Why, in words. */
  reason: string;
  /** Dream iterations run; where the dream turned unhealthy, the iteration it stopped at. */
  dreamIterations: number;
  stoppedAt: number | null;
}

export interface DomainTrainResult {
  iterations: DomainIterationRecord[];
  evaluation: DomainEvaluation;
  /** Whether the model can be trusted (health.ts): a failed one is never reported as a success. */
  health: DomainHealth;
  dreamSteps: number;
  stepLimit: number;
  /** Behaviour cloning's record (null: `--agent dream`). */
  bc: Omit<BcResult, 'weights'> | null;
  agent: DomainAgentChoice;
  /** The trainer's state holding the returned policy: the run's checkpoint (`dreamgym act --run`). */
  checkpoint: TrainerState;
}

export interface DomainTrainRunDeps extends DomainTrainerDeps {
  onIteration?: (record: DomainIterationRecord) => void;
  onBcEpoch?: (record: SftEpoch) => void;
  /** The learned model's verdict head fit (model.json), judged by health.ts `verdictProblem`. */
  verdict?: VerdictFit | null;
}

/**
 * The agent of an imported domain (config.agent): behaviour cloning on the training episodes
 * (clone.ts), then GRPO in the dream for `config.iterations`, then (a), (b) and (c). What stops
 * the dream is the dream's own health, never a real evaluation (the user has none):
 *   - before it, a model that fails what needs no policy (its verdict head at chance, or its audit's
 *     terminated accuracy) is not dreamed in at all;
 *   - during it, `dreamStopReason` (episodes that all end at once or never, the verdict ensemble's
 *     disagreement) stops it;
 *   - after it, a failed health check of the dream-trained policy's evaluation.
 * In each case the BC checkpoint is returned, and the result says so; with `agent: 'dream'` there
 * is none, and the dream's policy is returned with the reason it is not to be trusted.
 */
export async function trainDomain(
  domain: Domain,
  model: ExperienceModel,
  config: Partial<DomainTrainConfig> & Pick<DomainTrainConfig, 'llm'>,
  deps: DomainTrainRunDeps = {},
): Promise<DomainTrainResult> {
  const trainer = new DomainTrainer(domain, model, config, deps);
  try {
    const c = trainer.config;
    const bc =
      c.agent === 'dream' ? null : await cloneDemonstrations(trainer.policy, domain, bcConfig(trainer), deps.onBcEpoch);
    if (bc) await trainer.trainer.anchorReference(); // the dream's KL term holds the policy near the cloned one
    const audit = await trainer.audit();
    const gate = [...verdictProblem(deps.verdict), ...preDreamAudit(audit)];
    const dreamAllowed = c.agent !== 'bc' && !(bc && gate.length > 0);
    const iterations: DomainIterationRecord[] = [];
    let stop: ReturnType<typeof dreamStopReason> = null;
    while (dreamAllowed && !trainer.finished) {
      const record = await trainer.runIteration();
      iterations.push(record);
      deps.onIteration?.(record);
      if ((stop = dreamStopReason(iterations))) break;
    }
    let agent = chooseAgent(c.agent, bc !== null, gate, stop, iterations.length);
    if (agent.returned === 'bc' && iterations.length > 0) trainer.policy.setWeights(bc!.weights);
    const demonstrated = [...domain.train, ...domain.heldOut];
    let evaluation = await trainer.evaluate({ audit });
    let health = domainHealth(iterations, evaluation, demonstrated, deps.verdict, trainer.stepLimit);
    if (bc && agent.returned === 'dream' && health.status === 'failed') {
      // The dream-trained policy's own evaluation failed the dream: the cloned policy is returned instead.
      const why = health.problems.filter((p) => p.severity === 'failed').map((p) => p.kind);
      agent = { ...agent, returned: 'bc', reason: `${AFTER_DREAM} (${why.join(', ')}): ${KEPT_BC}` };
      trainer.policy.setWeights(bc.weights);
      evaluation = await trainer.evaluate({ audit });
      health = domainHealth(iterations, evaluation, demonstrated, deps.verdict, trainer.stepLimit);
    }
    const checkpoint = await trainer.trainer.state();
    return {
      iterations,
      evaluation,
      health,
      dreamSteps: trainer.dreamSteps,
      stepLimit: trainer.stepLimit,
      bc: bc && withoutWeights(bc),
      agent,
      checkpoint,
    };
  } finally {
    trainer.dispose();
  }
}

/**
 * The trainer of a saved domain agent (`checkpoint`), to act with: its policy as saved, the domain's
 * training tasks; no experience model, so it makes no env (act.ts scores candidates only).
 */
export function restoreDomainAgent(domain: Domain, checkpoint: TrainerState, stepLimit: number): Promise<Trainer> {
  const source = new DomainTaskSource(domain, trainingTasks(domain), stepLimit, () => {
    throw new Error(`A restored agent of '${domain.name}' acts on given states; it plays no dreamed episode.`);
  });
  return Trainer.restore(checkpoint, {}, { source });
}

const KEPT_BC = 'the behaviour-cloning checkpoint is returned, not the dream-trained policy.';
const AFTER_DREAM = "the dream-trained policy's evaluation failed the health checks";

function bcConfig(trainer: DomainTrainer): BcConfig {
  const c = trainer.config;
  return {
    epochs: c.bcEpochs,
    learningRate: c.bcLearningRate,
    batchSize: DEFAULT_SFT_CONFIG.batchSize,
    maxGradNorm: DEFAULT_SFT_CONFIG.maxGradNorm,
    seed: c.seed,
    stepLimit: trainer.stepLimit,
  };
}

/** The audit's verdict before any dream: endings judged unlike the held-out records fail the model (health.ts). */
function preDreamAudit(audit: DomainAuditReport): DomainHealthProblem[] {
  const accuracy = audit.terminated_accuracy;
  if (accuracy === null || accuracy >= MIN_TERMINATED_ACCURACY) return [];
  return [
    {
      kind: 'terminated-accuracy',
      severity: 'failed',
      message: `the audit's terminated accuracy is ${accuracy.toFixed(3)} (at least ${MIN_TERMINATED_ACCURACY} needed)`,
    },
  ];
}

function chooseAgent(
  trained: DomainAgentStart,
  cloned: boolean,
  gate: readonly DomainHealthProblem[],
  stop: DomainHealthProblem | null,
  dreamIterations: number,
): DomainAgentChoice {
  const base = { trained, dreamIterations, stoppedAt: stop ? dreamIterations : null };
  if (trained === 'bc')
    return { ...base, returned: 'bc', reason: 'behaviour cloning only was asked for (--agent bc).' };
  if (cloned && gate.length > 0) {
    const why = gate.map((p) => p.kind).join(', ');
    return { ...base, returned: 'bc', reason: `the experience model failed before any dream (${why}): ${KEPT_BC}` };
  }
  if (stop && cloned) {
    return {
      ...base,
      returned: 'bc',
      reason: `the dream turned unhealthy at iteration ${dreamIterations} (${stop.kind}) and was stopped: ${KEPT_BC}`,
    };
  }
  if (stop) {
    return {
      ...base,
      returned: 'dream',
      reason:
        `the dream turned unhealthy at iteration ${dreamIterations} (${stop.kind}) and was stopped; there is no ` +
        'behaviour-cloning checkpoint to return (--agent dream), so the policy of that iteration is returned.',
    };
  }
  const from = cloned ? 'after behaviour cloning, ' : '';
  return {
    ...base,
    returned: 'dream',
    reason:
      `${from}the dream stayed healthy for its ${dreamIterations} iterations: ` +
      'the dream-trained policy is returned.',
  };
}

function withoutWeights(bc: BcResult): Omit<BcResult, 'weights'> {
  const { weights: _weights, ...rest } = bc;
  return rest;
}
