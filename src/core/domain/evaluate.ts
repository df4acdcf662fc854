/**
 * Evaluation of a policy trained on an imported domain (no oracle, no real env):
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
import type { TimeLimit } from '../envs/env';
import { jaccard, tokenF1 } from '../experience/audit';
import { makeDreamEnv, type DreamEnv, type DreamUsage } from '../experience/dream-env';
import { outcomeOf, predictedOutcome, type ExperienceModel } from '../experience/types';
import type { PolicyState } from '../policy/features';
import type { CandidatePolicy } from '../policy/policy';
import { Rng } from '../rng';
import { playGreedy, type EvalSplit } from '../train/evaluate';
import type { Observation, Task, Trajectory } from '../types';
import { defaultStepLimit } from './config';
import { heldOutTasks, type Domain } from './domain';

export interface DreamSuccessReport {
  /** Held-out tasks played (each once: greedy policy, temperature-0 model). */
  episodes: number;
  success_rate: number | null;
  mean_return: number | null;
  mean_length: number | null;
  /** Share of dreamed steps whose answer was unusable. */
  invalid_rate: number;
  /** Share of the episodes that ended at their first step (health.ts; null: none played, or a step limit of 1). */
  first_step_share: number | null;
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

/** Held-out real success, where the domain's episodes came from a registered env (config.ts `realEval`). */
export interface RealSuccessReport {
  env: string;
  split: EvalSplit;
  difficulty: number;
  episodes: number;
  success_rate: number;
  score: number;
  mean_steps: number;
}

export interface DomainEvaluation {
  dream: DreamSuccessReport;
  agreement: ActionAgreementReport;
  audit: DomainAuditReport;
  real?: RealSuccessReport;
}

type DreamPoolEnv = TimeLimit<DreamEnv>;

function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function ratio(hits: number, total: number): number | null {
  return total > 0 ? round(hits / total) : null;
}

function sumUsage(envs: readonly DreamPoolEnv[]): DreamUsage {
  const total: DreamUsage = {
    steps: 0,
    predictions: 0,
    cacheHits: 0,
    invalid: 0,
    promptTokens: 0,
    completionTokens: 0,
    ms: 0,
  };
  for (const e of envs) {
    const u = e.env.usage;
    for (const k of Object.keys(total) as (keyof DreamUsage)[]) total[k] += u[k];
  }
  return total;
}

/** (a) Greedy episodes of the held-out tasks (at most `episodes`) in the dream. */
export async function dreamSuccess(
  policy: CandidatePolicy,
  model: ExperienceModel,
  domain: Domain,
  options: { episodes: number; stepLimit?: number; signal?: AbortSignal },
): Promise<DreamSuccessReport> {
  const tasks = heldOutTasks(domain).slice(0, Math.max(0, options.episodes));
  const stepLimit = options.stepLimit ?? defaultStepLimit(domain);
  const starts: { env: DreamPoolEnv; task: Task; obs: Observation }[] = [];
  for (const task of tasks) {
    const env = makeDreamEnv(model, {
      envId: domain.envId,
      stepLimit,
      taskForSeed: () => task,
      ...(options.signal ? { signal: options.signal } : {}),
    });
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
    first_step_share: n && stepLimit > 1 ? round(outcomes.filter((e) => e.length <= 1).length / n) : null,
  };
}

/** The policy's view of step `i` of a recorded episode: its recorded candidates and the actions before it. */
export function recordedStepState(t: Trajectory, i: number, stepLimit: number): PolicyState {
  const s = t.steps[i];
  return {
    instruction: t.task.instruction,
    observation: s.observation,
    admissible: s.admissible,
    step: i,
    maxSteps: Math.max(stepLimit, i + 1),
    previousActions: t.steps.slice(0, i).map((x) => x.action),
  };
}

/** (b) Does the greedy policy pick the demonstrated action on held-out steps that list their candidates? */
export async function actionAgreement(
  policy: CandidatePolicy,
  heldOut: readonly Trajectory[],
  options: { stepLimit: number; chunk?: number },
): Promise<ActionAgreementReport> {
  const usable: { state: PolicyState; action: string }[] = [];
  let total = 0;
  for (const t of heldOut) {
    t.steps.forEach((s, i) => {
      total++;
      if (s.admissible.length === 0 || !s.admissible.includes(s.action)) return;
      usable.push({ state: recordedStepState(t, i, options.stepLimit), action: s.action });
    });
  }
  if (usable.length === 0) return { agreement: null, usable_steps: 0, held_out_steps: total, chance: null };
  const rng = Rng.fromSeed(0, 'domain-agreement');
  const chunk = options.chunk ?? 256;
  let agree = 0,
    chance = 0;
  for (let start = 0; start < usable.length; start += chunk) {
    const part = usable.slice(start, start + chunk);
    const acted = await policy.act(
      part.map((u) => u.state),
      rng,
      { greedy: true },
    );
    part.forEach((u, i) => {
      if (acted.actions[i] === u.action) agree++;
      chance += 1 / u.state.admissible.length;
    });
  }
  return {
    agreement: round(agree / usable.length),
    usable_steps: usable.length,
    held_out_steps: total,
    chance: round(chance / usable.length),
  };
}

interface AuditSample {
  trajectory: Trajectory;
  index: number;
}

/** The audited transitions: about half from episode ends (the outcome-bearing steps), the rest uniform; seeded. */
function auditSamples(heldOut: readonly Trajectory[], n: number, seed: number): AuditSample[] {
  const lasts: AuditSample[] = [];
  const others: AuditSample[] = [];
  for (const t of heldOut) {
    t.steps.forEach((_, index) => (index === t.steps.length - 1 ? lasts : others).push({ trajectory: t, index }));
  }
  const all = [...lasts, ...others];
  if (all.length <= n) return all;
  const rng = Rng.fromSeed(seed, 'domain-audit');
  const ends = rng.split('ends').sample(lasts, Math.min(lasts.length, Math.round(n / 2)));
  const rest = rng.split('rest').sample(others, n - ends.length);
  const picked = [...ends, ...rest];
  if (picked.length < n) {
    picked.push(
      ...rng.split('fill').sample(
        lasts.filter((s) => !ends.includes(s)),
        n - picked.length,
      ),
    );
  }
  const order = new Map(all.map((s, i) => [s, i]));
  return picked.sort((a, b) => order.get(a)! - order.get(b)!);
}

/**
 * (c) The model's predictions on held-out recorded transitions, compared with what was recorded
 * (see the file comment). An unusable answer counts as a miss in every figure.
 */
export async function auditDomain(
  model: ExperienceModel,
  domain: Pick<Domain, 'envId' | 'heldOut'>,
  options: {
    n: number;
    seed?: number;
    llm?: string;
    signal?: AbortSignal;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<DomainAuditReport> {
  const samples = auditSamples(domain.heldOut, Math.max(0, options.n), options.seed ?? 0);
  let validAgree = 0,
    outcomeSteps = 0,
    outcomeRight = 0,
    terminatedKnown = 0,
    terminatedRight = 0;
  let withNextObs = 0,
    f1Sum = 0,
    withNextAdm = 0,
    jaccardSum = 0,
    invalid = 0,
    tokens = 0,
    ms = 0;
  for (let k = 0; k < samples.length; k++) {
    const { trajectory: t, index: i } = samples[k];
    const step = t.steps[i];
    const last = i === t.steps.length - 1;
    const prediction = await model.next({
      task: t.task,
      history: t.steps.slice(0, i),
      state: { text: step.observation, admissible: step.admissible, task: t.task },
      action: step.action,
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
      const realTerminated = last
        ? step.terminated || t.result.terminate_reason === 'success' || t.result.terminate_reason === 'terminated'
        : step.terminated;
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
