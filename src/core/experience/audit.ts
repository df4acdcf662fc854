/**
 * The fidelity audit: how close an experience model's dreamed transitions are to the real env's,
 * over N held-out real transitions (the paper's bound, Appendix B, asks for two numbers, the reward error ε_R and the
 * transition error ε_P; this audit estimates both and the costs).
 *
 * Sampling. Transition i comes from held-out episode i (seed 1,000,000,000 + seed + i; seeds
 * ≥ 1e9 are never in the shipped datasets), played by the expert for even i and by the random
 * policy for odd i, at difficulty levels cycling 0, 0.25, …, 1. From each episode one step is
 * audited: with probability `endShare` (0.5) its LAST step — the outcome-bearing one — else a
 * step drawn uniformly. Over-sampling episode ends keeps the reward accuracy's standard error
 * small (≈ 0.03 at n = 400). With probability `probeShare` (0.1) a non-final step's action is
 * replaced by an action of another state of the episode that is inadmissible here (a probe: the
 * real env refuses it), so validity agreement measures something.
 *
 * For each transition the model is queried with the real history and state, and compared with
 * the real env replayed to the same point:
 * - valid_agreement: the model's verdict on the action (`actionValid`) equals the real `info.valid`;
 * - reward_accuracy = 1 − ε̂_R: the binary outcome (reward ≥ 1) equals the real outcome
 *   (`info.success`), measured on OUTCOME-BEARING steps only (a valid step where the real env
 *   terminates or the step limit is reached; see noisy-oracle.ts). Over all transitions the
 *   figure would be diluted by the many reward-0 mid-episode steps that no reward error touches,
 *   so a dialled ε_R would not show as 1 − ε_R. `auditDetailed` also gives the all-steps figure;
 * - terminated_accuracy: `terminated` equals the real one (all transitions);
 * - admissible_jaccard: |A ∩ B| / |A ∪ B| of the next admissible sets (both empty: 1);
 * - observation_f1: token F1 between the next observations (lower-cased letter/digit runs);
 * - invalid_rate: share of unusable answers (`Prediction.valid: false`); such a transition counts
 *   as a miss in every agreement figure above. A failed engine call (timeout, 5xx after its
 *   retries) is one of them, also counted in failed_calls; EngineFailureError stops the audit when
 *   a whole chunk's calls, or `maxFailures` in a row, fail (engine-failures.ts);
 * - tokens_per_transition, ms_per_transition: the model's usage per transition (the oracle: 0
 *   tokens, its replay time).
 */
import { Rng } from '../rng';
import { makeBaselinePolicy, rolloutEpisode } from '../data/rollout';
import { HELD_OUT_SEED_BASE, type Env } from '../envs/env';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import type { Observation, Step, StepResult, Task, Trajectory } from '../types';
import { isOutcomeStep } from './noisy-oracle';
import { EngineFailureGuard } from './engine-failures';
import { predictedOutcome, type ExperienceModel, type Prediction } from './types';

/** First held-out seed (docs/architecture.md §7.1: seeds ≥ 1,000,000,000 are the evaluation range). */
const LEVELS = [0, 0.25, 0.5, 0.75, 1] as const;

export interface AuditOptions {
  envId: string;
  /** Transitions audited (default 400). */
  n?: number;
  /** Seed of the episode range and of the step draws (default 0). */
  seed?: number;
  /** Shown in the report as `llm` (default: the model's label). */
  llm?: string;
  /** Share of transitions taken at an episode's end (default 0.5). */
  endShare?: number;
  /** Share of non-final transitions whose action is replaced by an inadmissible probe (default 0.1). */
  probeShare?: number;
  /** Step limit (default: the env's). */
  stepLimit?: number;
  /**
   * Who plays the audited episodes (default: the expert and a random policy in turn). Give a
   * trained agent to audit the states the agent itself reaches in the real env: a dream-trained
   * policy goes where the model is wrong, which expert and random data do not show.
   */
  player?: { name: string; play(env: Env, task: Task, seed: number): Promise<Trajectory> };
  /** Failed engine calls in a row that stop the audit (default: TRAIN_DEFAULTS.llmMaxFailures). */
  maxFailures?: number;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/** The audit's JSON (the `audit` command prints it as its last line). */
export interface AuditReport {
  env: string;
  llm: string;
  n: number;
  valid_agreement: number;
  /** null when no outcome-bearing step was sampled (tiny n). */
  reward_accuracy: number | null;
  terminated_accuracy: number;
  admissible_jaccard: number;
  observation_f1: number;
  invalid_rate: number;
  /** Predictions whose engine call failed (timeout, 5xx, refused after its retries); they count in invalid_rate. */
  failed_calls?: number;
  tokens_per_transition: number;
  ms_per_transition: number;
}

export interface AuditRecord {
  episodeSeed: number;
  /** The task's instruction and the actions before the audited one (what went wrong, readable). */
  instruction: string;
  history: string[];
  /** Who played the episode: expert, random, or the audited agent's name. */
  policy: string;
  stepIndex: number;
  action: string;
  probe: boolean;
  outcomeStep: boolean;
  real: { valid: boolean; reward: number; success: boolean; terminated: boolean };
  predicted: {
    valid: boolean;
    actionValid: boolean;
    reward: number;
    success?: boolean;
    terminated: boolean;
    reasoning: string;
    invalidReason?: string;
  };
  jaccard: number;
  f1: number;
}

export interface AuditDetails {
  report: AuditReport;
  /** Outcome-bearing transitions (the reward accuracy's denominator). */
  outcomeSteps: number;
  /** Reward agreement over all transitions (binary outcome), for comparison. */
  rewardAccuracyAllSteps: number;
  probes: number;
  records: AuditRecord[];
}

// =============================================================================================
// Similarity measures
// =============================================================================================

export function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Token F1 (multiset overlap); both empty: 1. */
export function tokenF1(predicted: string, reference: string): number {
  const a = tokens(predicted),
    b = tokens(reference);
  if (a.length === 0 && b.length === 0) return 1;
  if (a.length === 0 || b.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const t of b) counts.set(t, (counts.get(t) ?? 0) + 1);
  let overlap = 0;
  for (const t of a) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      overlap++;
      counts.set(t, c - 1);
    }
  }
  if (overlap === 0) return 0;
  const precision = overlap / a.length,
    recall = overlap / b.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Jaccard similarity of two action sets; both empty: 1. */
export function jaccard(a: readonly string[], b: readonly string[]): number {
  const A = new Set(a),
    B = new Set(b);
  if (A.size === 0 && B.size === 0) return 1;
  let inter = 0;
  for (const x of A) if (B.has(x)) inter++;
  return inter / (A.size + B.size - inter);
}

function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

// =============================================================================================
// The audit
// =============================================================================================

interface Sample {
  episodeSeed: number;
  policy: string;
  task: Task;
  history: Step[];
  state: Observation;
  action: string;
  probe: boolean;
  stepIndex: number;
}

/** The i-th audited transition (deterministic in seed and i). */
async function sampleTransition(
  envId: string,
  i: number,
  seed: number,
  endShare: number,
  probeShare: number,
  stepLimit: number,
  player?: AuditOptions['player'],
): Promise<Sample> {
  const definition = getEnvDefinition(envId);
  const episodeSeed = HELD_OUT_SEED_BASE + seed + i;
  const policyName = player?.name ?? (i % 2 === 0 ? 'expert' : 'random');
  const task = definition.generateTask(episodeSeed, LEVELS[Math.floor(i / 2) % LEVELS.length]);
  const env = makeEnv(envId, { stepLimit });
  const trajectory = player
    ? await player.play(env, task, episodeSeed)
    : await rolloutEpisode(env, makeBaselinePolicy(policyName), { seed: episodeSeed, task });
  const rng = Rng.fromSeed(seed, 'audit', String(i));
  const last = trajectory.steps.length - 1;
  const t = rng.bool(endShare) ? last : rng.int(0, last);
  const step = trajectory.steps[t];
  let action = step.action;
  let probe = false;
  if (t < last && rng.bool(probeShare)) {
    const foreign = [...new Set(trajectory.steps.flatMap((s) => [s.action, ...s.admissible]))].filter(
      (a) => !step.admissible.includes(a),
    );
    if (foreign.length) {
      action = rng.pick(foreign);
      probe = true;
    }
  }
  return {
    episodeSeed,
    policy: policyName,
    task,
    history: trajectory.steps.slice(0, t),
    state: { text: step.observation, admissible: step.admissible, task },
    action,
    probe,
    stepIndex: t + 1,
  };
}

/** The real env's answer at the sample's point (history replayed on a fresh env). */
async function realStep(envId: string, sample: Sample): Promise<StepResult> {
  const env = getEnvDefinition(envId).create();
  await env.reset({ seed: sample.episodeSeed, task: sample.task });
  for (const s of sample.history) if (s.valid) await env.step(s.action);
  return env.step(sample.action);
}

export async function auditDetailed(model: ExperienceModel, options: AuditOptions): Promise<AuditDetails> {
  const envId = options.envId;
  const definition = getEnvDefinition(envId);
  const n = options.n ?? 400;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`audit: n must be a positive integer, got ${n}`);
  const seed = options.seed ?? 0;
  const stepLimit = options.stepLimit ?? definition.defaultStepLimit;
  const endShare = options.endShare ?? 0.5;
  const probeShare = options.probeShare ?? 0.1;

  const records: AuditRecord[] = [];
  let validAgree = 0,
    terminatedAgree = 0,
    jaccardSum = 0,
    f1Sum = 0,
    invalid = 0;
  let outcomeSteps = 0,
    outcomeCorrect = 0,
    rewardAgreeAll = 0,
    tokenSum = 0,
    msSum = 0,
    probes = 0,
    failedCalls = 0;
  const failures = new EngineFailureGuard(options.maxFailures);
  // Predictions are asked in chunks the model likes to batch (the learned model decodes them
  // together); scoring stays in sample order, so the figures do not depend on the chunk size.
  const chunkSize = Math.max(1, model.preferredBatch ?? 1);
  for (let start = 0; start < n; start += chunkSize) {
    if (options.signal?.aborted) throw new Error('audit aborted');
    const chunk: {
      sample: Awaited<ReturnType<typeof sampleTransition>>;
      real: Awaited<ReturnType<typeof realStep>>;
    }[] = [];
    for (let i = start; i < Math.min(n, start + chunkSize); i++) {
      const sample = await sampleTransition(envId, i, seed, endShare, probeShare, stepLimit, options.player);
      chunk.push({ sample, real: await realStep(envId, sample) });
    }
    const predictions = await Promise.all(
      chunk.map(({ sample }) =>
        model.next({
          task: sample.task,
          history: sample.history,
          state: sample.state,
          action: sample.action,
          signal: options.signal,
        }),
      ),
    );
    failures.recordStep(predictions.map((p) => p.engineError));
    chunk.forEach(({ sample, real }, c) => {
      const i = start + c;
      const prediction: Prediction = predictions[c];
      const usable = prediction.valid;
      const outcomeStep = isOutcomeStep(real, sample.stepIndex, stepLimit);
      const realOutcome = real.info.success ? 1 : 0;
      const rewardRight = usable && predictedOutcome(prediction) === realOutcome;
      const realNextAdmissible = real.terminated ? [] : real.admissible;
      const j = usable ? jaccard(prediction.next.admissible, realNextAdmissible) : 0;
      const f1 = usable ? tokenF1(prediction.next.text, real.text) : 0;
      if (!usable) invalid++;
      if (prediction.engineError !== undefined) failedCalls++;
      if (usable && prediction.actionValid === real.info.valid) validAgree++;
      if (usable && prediction.terminated === real.terminated) terminatedAgree++;
      if (outcomeStep) {
        outcomeSteps++;
        if (rewardRight) outcomeCorrect++;
      }
      if (rewardRight) rewardAgreeAll++;
      if (sample.probe) probes++;
      jaccardSum += j;
      f1Sum += f1;
      tokenSum += prediction.usage.promptTokens + prediction.usage.completionTokens;
      msSum += prediction.usage.ms;
      records.push({
        episodeSeed: sample.episodeSeed,
        instruction: sample.task.instruction,
        history: sample.history.map((h) => h.action),
        policy: sample.policy,
        stepIndex: sample.stepIndex,
        action: sample.action,
        probe: sample.probe,
        outcomeStep,
        real: { valid: real.info.valid, reward: real.reward, success: real.info.success, terminated: real.terminated },
        predicted: {
          valid: prediction.valid,
          actionValid: prediction.actionValid,
          reward: prediction.reward,
          terminated: prediction.terminated,
          ...(prediction.success !== undefined ? { success: prediction.success } : {}),
          reasoning: prediction.reasoning,
          ...(prediction.invalidReason ? { invalidReason: prediction.invalidReason } : {}),
        },
        jaccard: j,
        f1,
      });
      options.onProgress?.(i + 1, n);
    });
  }
  const report: AuditReport = {
    env: envId,
    llm: options.llm ?? model.label,
    n,
    valid_agreement: round(validAgree / n),
    reward_accuracy: outcomeSteps ? round(outcomeCorrect / outcomeSteps) : null,
    terminated_accuracy: round(terminatedAgree / n),
    admissible_jaccard: round(jaccardSum / n),
    observation_f1: round(f1Sum / n),
    invalid_rate: round(invalid / n),
    failed_calls: failedCalls,
    tokens_per_transition: round(tokenSum / n, 1),
    ms_per_transition: round(msSum / n, 3),
  };
  return { report, outcomeSteps, rewardAccuracyAllSteps: round(rewardAgreeAll / n), probes, records };
}

/** The audit's report (see the file comment for every figure). */
export async function auditExperienceModel(model: ExperienceModel, options: AuditOptions): Promise<AuditReport> {
  return (await auditDetailed(model, options)).report;
}
