/**
 * Dream-only training and evaluation of an imported domain (no real environment exists).
 *
 * The experience model is built by buildRunParts (src/core/train/run-parts.ts) from the run's
 * engine spec with the domain handed in: the reasoning model over a ChatModel with the domain's
 * derived card and a replay buffer seeded with the domain's TRAINING episodes, or a learned model.
 * `DomainExperienceModel` (experience/recorded-starts.ts) wraps it so a demonstrated task starts from its recorded first
 * observation (dreams start from real initial states, as in the paper) and only tasks without one
 * (extra descriptions) have the model write it. The oracle cannot serve a domain (run-parts.ts `checkDomainEngine`).
 *
 * `DomainTrainer` runs the trainer's loop (src/core/train/loop.ts, the one loop of every mode)
 * with the domain as its task source (`DomainTaskSource`): each iteration rolls out G episodes of
 * each of a batch of training tasks in DreamEnvs under the domain's env id and step limit, all
 * stepped together, adds the dreamed transitions to the buffer, and applies one GRPO update;
 * unusable dreamed steps are never learned from. Random streams are the trainer's, derived from
 * (seed, purpose, iteration).
 *
 * Evaluation (no oracle, no real env):
 *   (a) dream success: greedy episodes of the held-out tasks in the dream;
 *   (b) action agreement: on each held-out demonstrated step that lists its admissible actions
 *       (and the demonstrated action among them), does the greedy policy pick the demonstrated
 *       action? Reported with the number of usable steps and the chance level mean(1/|A|);
 *   (c) the audit against held-out real transitions (`auditDomain`): audit.ts replays a
 *       registered env, so the comparison for recorded data is here — the model's verdict on the
 *       action vs the recorded `valid`, its reward and `terminated` vs the recorded outcome where
 *       the record has one, token F1 of its next observation vs the recorded next observation,
 *       and the Jaccard of the admissible lists where the record lists them.
 */
import { ReplayBuffer } from '../buffer/buffer';
import { MemoryBufferStore } from '../buffer/stores/memory';
import type { Env, TimeLimit } from '../envs/env';
import { jaccard, tokenF1 } from '../experience/audit';
import { makeDreamEnv, type DreamEnv, type DreamUsage } from '../experience/dream-env';
import { outcomeOf, predictedOutcome, type ExperienceModel, type Prediction } from '../experience/types';
import { parseLlmSpec, type LlmSpec, type LlmSpecText } from '../llm/spec';
import type { PolicyState } from '../policy/features';
import type { CandidatePolicy } from '../policy/policy';
import type { PolicyStep } from '../rl/batch';
import { Rng } from '../rng';
import { ConfigError, withDefaults, type Phase, type TrainConfig } from '../train/config';
import { Trainer } from '../train/loop';
import { checkDomainEngine } from '../train/run-parts';
import { playGreedy, type EvalResult } from '../train/evaluate';
import type { TaskSource } from '../train/task-source';
import type { Observation, Task, Trajectory } from '../types';
import { heldOutTasks, trainingTasks, type Domain } from './domain';

/** A replay buffer (memory unless one is given) seeded with the domain's training episodes. */
export async function seedDomainBuffer(domain: Pick<Domain, 'train'>, buffer: ReplayBuffer = new ReplayBuffer(new MemoryBufferStore()), createdAt = 0): Promise<ReplayBuffer> {
  await buffer.importTrajectories(domain.train, { source: 'offline', createdAt });
  return buffer;
}

// =============================================================================================
// Configuration
// =============================================================================================

export interface DomainTrainConfig {
  /** The experience model's engine spec (recorded in the run's config; never the oracle). */
  llm: LlmSpecText;
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
  updateEpochs: number;
  maxGradNorm: number;
  seed: number;
  /** Held-out tasks played in the dream for (a) (at most; default 20). */
  evalEpisodes: number;
  /** Held-out transitions audited for (c) (at most; default 40). */
  auditTransitions: number;
  /** Failed engine calls in a row that stop the run (default: TRAIN_DEFAULTS.llmMaxFailures). */
  llmMaxFailures?: number;
}

export const DEFAULT_DOMAIN_TRAIN_CONFIG: Readonly<Omit<DomainTrainConfig, 'llm'>> = Object.freeze({
  iterations: 5,
  tasksPerIteration: 4,
  groupSize: 4,
  learningRate: 3e-3,
  clipEpsilon: 0.2,
  entropyCoef: 0.01,
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
  const positive = ['iterations', 'tasksPerIteration', 'groupSize', 'updateEpochs'] as const;
  for (const key of positive) {
    if (!Number.isInteger(config[key]) || config[key] < 1) throw new RangeError(`${key} must be a positive integer, got ${config[key]}.`);
  }
  for (const key of ['evalEpisodes', 'auditTransitions'] as const) {
    if (!Number.isInteger(config[key]) || config[key] < 0) throw new RangeError(`${key} must be 0 or a positive integer, got ${config[key]}.`);
  }
  if (config.stepLimit !== undefined && (!Number.isInteger(config.stepLimit) || config.stepLimit < 1)) {
    throw new RangeError(`stepLimit must be a positive integer, got ${config.stepLimit}.`);
  }
  if (!(config.learningRate > 0)) throw new RangeError(`learningRate must be positive, got ${config.learningRate}.`);
  return config;
}

// =============================================================================================
// Training
// =============================================================================================

export type Metrics = Record<string, number>;
export interface DomainIterationRecord { iteration: number; metrics: Metrics }

export interface DomainTrainerDeps {
  /** Dreamed transitions are added here (the experience model retrieves from the same buffer). */
  buffer?: ReplayBuffer;
  /** Timestamps of buffer records (core never reads the clock). */
  now?: () => number;
  signal?: AbortSignal;
  /** Sees each batch right before the update (inspection, tests). */
  onBatch?: (batch: { steps: PolicyStep[] }, iteration: number) => void;
}

type DreamPoolEnv = TimeLimit<DreamEnv>;

function sumUsage(envs: readonly DreamPoolEnv[]): DreamUsage {
  const total: DreamUsage = { steps: 0, predictions: 0, cacheHits: 0, invalid: 0, promptTokens: 0, completionTokens: 0, ms: 0 };
  for (const e of envs) {
    const u = e.env.usage;
    for (const k of Object.keys(total) as (keyof DreamUsage)[]) total[k] += u[k];
  }
  return total;
}

/** The trainer's config for a domain: dream mode, GRPO, no curriculum, no held-out real evaluation. */
export function domainTrainConfig(domain: Pick<Domain, 'name' | 'envId'>, config: DomainTrainConfig, taskCount: number): TrainConfig {
  return withDefaults({
    preset: `domain:${domain.name}`, env: domain.envId, mode: 'dream', llm: config.llm, algo: 'grpo', curriculum: false,
    difficulty: 0, taskPool: Math.max(1, taskCount), evalInterval: 0, seed: config.seed, iterations: config.iterations,
    tasksPerIteration: config.tasksPerIteration, groupSize: config.groupSize, learningRate: config.learningRate, clipEpsilon: config.clipEpsilon,
    entropyCoef: config.entropyCoef, klCoef: 0, updateEpochs: config.updateEpochs, maxGradNorm: config.maxGradNorm,
    ...(config.llmMaxFailures !== undefined ? { llmMaxFailures: config.llmMaxFailures } : {}),
  });
}

/**
 * A domain as the trainer's task source: its training tasks (distinct per iteration while there
 * are enough, then repeated; a shuffle by the iteration's task stream) and DreamEnvs over its
 * experience model. It has no real env: no real phase, no curriculum, no held-out real evaluation.
 */
export class DomainTaskSource implements TaskSource {
  readonly hasRealEnv = false;
  readonly curriculum = null;
  readonly envId: string;

  constructor(readonly domain: Domain, readonly trainTasks: Task[], readonly stepLimit: number, private readonly makeDreamEnv: () => Env) {
    this.envId = domain.envId;
  }

  chooseTasks(_iteration: number, count: number, _phase: Phase, rng: Rng): Task[] {
    const order = rng.shuffle(this.trainTasks);
    return Array.from({ length: count }, (_, i) => order[i % order.length]);
  }

  /** A domain has no pool to fall back on: a failed first state stands as an error. */
  replacement(): Task | null { return null; }

  makeEnv(phase: Phase): Env {
    if (phase === 'real') throw new Error(`The imported domain '${this.domain.name}' has no real env to play a real phase in.`);
    return this.makeDreamEnv();
  }

  async recordOutcomes(): Promise<void> { /* no curriculum */ }

  evaluate(): Promise<EvalResult> {
    return Promise.reject(new Error(`Held-out evaluation plays real tasks, and the imported domain '${this.domain.name}' has no real env; ` +
      'evaluate it its own way: DomainTrainer.evaluate() (dream success, action agreement and the audit).'));
  }
}

/** The trainer's loop (src/core/train/loop.ts) with the domain as its task source, plus the domain's own evaluation. */
export class DomainTrainer {
  readonly config: DomainTrainConfig;
  readonly stepLimit: number;
  readonly trainTasks: Task[];
  /** The shared training loop. */
  readonly trainer: Trainer;

  constructor(readonly domain: Domain, readonly model: ExperienceModel, config: Partial<DomainTrainConfig> & Pick<DomainTrainConfig, 'llm'>,
    readonly deps: DomainTrainerDeps = {}) {
    this.config = validateDomainTrainConfig({ ...DEFAULT_DOMAIN_TRAIN_CONFIG, ...config }, domain);
    this.stepLimit = this.config.stepLimit ?? defaultStepLimit(domain);
    this.trainTasks = trainingTasks(domain);
    if (this.trainTasks.length === 0) throw new Error(`The domain '${domain.name}' has no training tasks; import more episodes or give extra task descriptions (--tasks).`);
    const source = new DomainTaskSource(domain, this.trainTasks, this.stepLimit, () => this.makeEnv());
    const { onBatch } = deps;
    this.trainer = new Trainer(domainTrainConfig(domain, this.config, this.trainTasks.length), {
      source, experienceModel: model, runId: `domain/${domain.name}/${this.config.seed}`,
      ...(deps.buffer ? { buffer: deps.buffer } : {}), ...(deps.now ? { now: deps.now } : {}),
      ...(onBatch ? { onBatch: (batch, _phase, iteration) => onBatch(batch, iteration) } : {}),
    });
  }

  get policy(): CandidatePolicy { return this.trainer.policy; }
  /** Iterations completed. */
  get iteration(): number { return this.trainer.iteration; }
  get dreamSteps(): number { return this.trainer.dreamSteps; }
  get finished(): boolean { return this.trainer.finished; }

  /** A DreamEnv under the domain's env id (tasks for bare seeds cycle through the training tasks). */
  makeEnv(): DreamPoolEnv {
    const tasks = this.trainTasks;
    return makeDreamEnv(this.model, {
      envId: this.domain.envId, stepLimit: this.stepLimit, taskForSeed: (seed) => tasks[Math.abs(seed) % tasks.length],
      ...(this.deps.signal ? { signal: this.deps.signal } : {}),
    });
  }

  /** One iteration of the trainer (dreamed rollouts, buffer, GRPO update) with its metrics. */
  runIteration(): Promise<DomainIterationRecord> {
    return this.trainer.runIteration();
  }

  /** (a), (b) and (c) for the current policy. */
  async evaluate(options: { onProgress?: (stage: string, done: number, total: number) => void } = {}): Promise<DomainEvaluation> {
    const dream = await dreamSuccess(this.policy, this.model, this.domain, { episodes: this.config.evalEpisodes, stepLimit: this.stepLimit, signal: this.deps.signal });
    options.onProgress?.('dream success', 1, 3);
    const agreement = await actionAgreement(this.policy, this.domain.heldOut, { stepLimit: this.stepLimit });
    options.onProgress?.('action agreement', 2, 3);
    const audit = await auditDomain(this.model, this.domain, { n: this.config.auditTransitions, seed: this.config.seed, signal: this.deps.signal });
    options.onProgress?.('audit', 3, 3);
    return { dream, agreement, audit };
  }

  dispose(): void {
    this.trainer.dispose();
  }
}

// =============================================================================================
// Evaluation
// =============================================================================================

export interface DreamSuccessReport {
  /** Held-out tasks played (each once: greedy policy, temperature-0 model). */
  episodes: number;
  success_rate: number | null;
  mean_return: number | null;
  mean_length: number | null;
  /** Share of dreamed steps whose answer was unusable. */
  invalid_rate: number;
}

export interface ActionAgreementReport {
  /** Share of usable held-out steps where the greedy policy picks the demonstrated action (null: none usable). */
  agreement: number | null;
  /** Held-out steps that list admissible actions including the demonstrated one. */
  usable_steps: number;
  held_out_steps: number;
  /** What a uniform random pick would score on the same steps, mean(1/|A|) (null: none usable). */
  chance: number | null;
}

export interface DomainAuditReport {
  env: string;
  llm: string;
  /** Held-out transitions audited. */
  n: number;
  /** The model's verdict on the action equals the recorded `valid`. */
  valid_agreement: number | null;
  /** Binary outcome right on outcome-bearing steps (last steps of episodes whose outcome is recorded); null: none. */
  reward_accuracy: number | null;
  outcome_steps: number;
  /** `terminated` right where the record knows it (every step but the last of an unfinished episode). */
  terminated_accuracy: number | null;
  terminated_known: number;
  /** Token F1 of the predicted vs recorded next observation, where one is recorded. */
  observation_f1: number | null;
  with_next_observation: number;
  /** Jaccard of predicted vs recorded next admissible actions, where the record lists them. */
  admissible_jaccard: number | null;
  with_next_admissible: number;
  invalid_rate: number;
  tokens_per_transition: number;
  ms_per_transition: number;
}

export interface DomainEvaluation {
  dream: DreamSuccessReport;
  agreement: ActionAgreementReport;
  audit: DomainAuditReport;
}

function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function ratio(hits: number, total: number): number | null {
  return total > 0 ? round(hits / total) : null;
}

/** (a) Greedy episodes of the held-out tasks (at most `episodes`) in the dream. */
export async function dreamSuccess(policy: CandidatePolicy, model: ExperienceModel, domain: Domain,
  options: { episodes: number; stepLimit?: number; signal?: AbortSignal }): Promise<DreamSuccessReport> {
  const tasks = heldOutTasks(domain).slice(0, Math.max(0, options.episodes));
  const stepLimit = options.stepLimit ?? defaultStepLimit(domain);
  const starts: { env: DreamPoolEnv; task: Task; obs: Observation }[] = [];
  for (const task of tasks) {
    const env = makeDreamEnv(model, { envId: domain.envId, stepLimit, taskForSeed: () => task, ...(options.signal ? { signal: options.signal } : {}) });
    starts.push({ env, task, obs: await env.reset({ seed: 0, task }) });
  }
  const outcomes = await playGreedy(policy, starts, stepLimit);
  const usage = sumUsage(starts.map((e) => e.env));
  const n = outcomes.length;
  return {
    episodes: n,
    success_rate: n ? round(outcomes.filter((e) => e.success).length / n) : null,
    mean_return: n ? round(outcomes.reduce((s, e) => s + e.return, 0) / n) : null,
    mean_length: n ? round(outcomes.reduce((s, e) => s + e.length, 0) / n) : null,
    invalid_rate: usage.predictions ? round(usage.invalid / usage.predictions) : 0,
  };
}

/** (b) Does the greedy policy pick the demonstrated action on held-out steps that list their candidates? */
export async function actionAgreement(policy: CandidatePolicy, heldOut: readonly Trajectory[], options: { stepLimit: number; chunk?: number }): Promise<ActionAgreementReport> {
  const usable: { state: PolicyState; action: string }[] = [];
  let total = 0;
  for (const t of heldOut) {
    t.steps.forEach((s, i) => {
      total++;
      if (s.admissible.length === 0 || !s.admissible.includes(s.action)) return;
      usable.push({
        state: { instruction: t.task.instruction, observation: s.observation, admissible: s.admissible, step: i, maxSteps: Math.max(options.stepLimit, i + 1),
          previousActions: t.steps.slice(0, i).map((x) => x.action) },
        action: s.action,
      });
    });
  }
  if (usable.length === 0) return { agreement: null, usable_steps: 0, held_out_steps: total, chance: null };
  const rng = Rng.fromSeed(0, 'domain-agreement');
  const chunk = options.chunk ?? 256;
  let agree = 0, chance = 0;
  for (let start = 0; start < usable.length; start += chunk) {
    const part = usable.slice(start, start + chunk);
    const acted = await policy.act(part.map((u) => u.state), rng, { greedy: true });
    part.forEach((u, i) => {
      if (acted.actions[i] === u.action) agree++;
      chance += 1 / u.state.admissible.length;
    });
  }
  return { agreement: round(agree / usable.length), usable_steps: usable.length, held_out_steps: total, chance: round(chance / usable.length) };
}

interface AuditSample { trajectory: Trajectory; index: number }

/** The audited transitions: about half from episode ends (the outcome-bearing steps), the rest uniform; seeded. */
function auditSamples(heldOut: readonly Trajectory[], n: number, seed: number): AuditSample[] {
  const lasts: AuditSample[] = [];
  const others: AuditSample[] = [];
  for (const t of heldOut) t.steps.forEach((_, index) => (index === t.steps.length - 1 ? lasts : others).push({ trajectory: t, index }));
  const all = [...lasts, ...others];
  if (all.length <= n) return all;
  const rng = Rng.fromSeed(seed, 'domain-audit');
  const ends = rng.split('ends').sample(lasts, Math.min(lasts.length, Math.round(n / 2)));
  const rest = rng.split('rest').sample(others, n - ends.length);
  const picked = [...ends, ...rest];
  if (picked.length < n) picked.push(...rng.split('fill').sample(lasts.filter((s) => !ends.includes(s)), n - picked.length));
  const order = new Map(all.map((s, i) => [s, i]));
  return picked.sort((a, b) => order.get(a)! - order.get(b)!);
}

/**
 * (c) The model's predictions on held-out recorded transitions, compared with what was recorded
 * (see the file comment). An unusable answer counts as a miss in every figure.
 */
export async function auditDomain(model: ExperienceModel, domain: Pick<Domain, 'envId' | 'heldOut'>,
  options: { n: number; seed?: number; llm?: string; signal?: AbortSignal; onProgress?: (done: number, total: number) => void }): Promise<DomainAuditReport> {
  const samples = auditSamples(domain.heldOut, Math.max(0, options.n), options.seed ?? 0);
  let validAgree = 0, outcomeSteps = 0, outcomeRight = 0, terminatedKnown = 0, terminatedRight = 0;
  let withNextObs = 0, f1Sum = 0, withNextAdm = 0, jaccardSum = 0, invalid = 0, tokens = 0, ms = 0;
  for (let k = 0; k < samples.length; k++) {
    const { trajectory: t, index: i } = samples[k];
    const step = t.steps[i];
    const last = i === t.steps.length - 1;
    const prediction = await model.next({
      task: t.task, history: t.steps.slice(0, i), state: { text: step.observation, admissible: step.admissible, task: t.task }, action: step.action,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const usable = prediction.valid;
    if (!usable) invalid++;
    tokens += prediction.usage.promptTokens + prediction.usage.completionTokens;
    ms += prediction.usage.ms;
    if (usable && prediction.actionValid === step.valid) validAgree++;
    const outcomeKnown = !last || t.result.terminate_reason !== 'unfinished';
    if (outcomeKnown) {
      terminatedKnown++;
      const realTerminated = last ? step.terminated || t.result.terminate_reason === 'success' || t.result.terminate_reason === 'terminated' : step.terminated;
      if (usable && prediction.terminated === realTerminated) terminatedRight++;
      if (last) {
        outcomeSteps++;
        const realOutcome = t.result.success ? 1 : outcomeOf(step.reward);
        if (usable && predictedOutcome(prediction) === realOutcome) outcomeRight++;
      }
    }
    const next = t.steps[i + 1];
    const nextText = next ? next.observation : t.final_observation;
    if (nextText.trim() !== '') {
      withNextObs++;
      if (usable) f1Sum += tokenF1(prediction.next.text, nextText);
    }
    if (next && next.admissible.length > 0) {
      withNextAdm++;
      if (usable) jaccardSum += jaccard(prediction.next.admissible, next.admissible);
    }
    options.onProgress?.(k + 1, samples.length);
  }
  const n = samples.length;
  return {
    env: domain.envId,
    llm: options.llm ?? model.label,
    n,
    valid_agreement: ratio(validAgree, n),
    reward_accuracy: ratio(outcomeRight, outcomeSteps),
    outcome_steps: outcomeSteps,
    terminated_accuracy: ratio(terminatedRight, terminatedKnown),
    terminated_known: terminatedKnown,
    observation_f1: withNextObs ? round(f1Sum / withNextObs) : null,
    with_next_observation: withNextObs,
    admissible_jaccard: withNextAdm ? round(jaccardSum / withNextAdm) : null,
    with_next_admissible: withNextAdm,
    invalid_rate: n ? round(invalid / n) : 0,
    tokens_per_transition: n ? round(tokens / n, 1) : 0,
    ms_per_transition: n ? round(ms / n, 3) : 0,
  };
}

// =============================================================================================
// All together
// =============================================================================================

export interface DomainTrainResult {
  iterations: DomainIterationRecord[];
  evaluation: DomainEvaluation;
  dreamSteps: number;
  stepLimit: number;
}

/** Dream-only training for `config.iterations`, then (a), (b) and (c). */
export async function trainDomain(domain: Domain, model: ExperienceModel, config: Partial<DomainTrainConfig> & Pick<DomainTrainConfig, 'llm'>,
  deps: DomainTrainerDeps & { onIteration?: (record: DomainIterationRecord) => void } = {}): Promise<DomainTrainResult> {
  const trainer = new DomainTrainer(domain, model, config, deps);
  try {
    const iterations: DomainIterationRecord[] = [];
    while (!trainer.finished) {
      const record = await trainer.runIteration();
      iterations.push(record);
      deps.onIteration?.(record);
    }
    const evaluation = await trainer.evaluate();
    return { iterations, evaluation, dreamSteps: trainer.dreamSteps, stepLimit: trainer.stepLimit };
  } finally {
    trainer.dispose();
  }
}
