/**
 * What a learned experience model's dreams are worth, for the Experience model page: the fidelity
 * audit against the real environment (core's auditDetailed, with the noisy oracle at (0.1, 0.1)
 * beside it for scale) and a few held-out transitions dreamed beside what the real environment
 * returns for the same action.
 *
 * The transitions come from held-out episodes (seeds ≥ 1e9, never trained on: core's
 * heldOutContexts, expert and random episodes alternating), spread over several episodes and
 * steps; the real side replays the episode's actions on a fresh env.
 */
import { auditDetailed } from '../../../core/experience/audit';
import { heldOutContexts } from '../../../core/experience/held-out';
import { NoisyOracleModel } from '../../../core/experience/noisy-oracle';
import { predictedOutcome, type ExperienceModel } from '../../../core/experience/types';
import { makeEnv } from '../../../core/envs/registry';
import type { DreamSample, Evaluation, PredictionSpeed } from './expmodel-protocol';

/** Contexts looked at per sample shown: the samples are spread over this many held-out transitions. */
const SPREAD = 7;

/** `n` held-out transitions dreamed by `model` beside the real env's answer to the same action. */
export async function dreamedVsReal(
  model: ExperienceModel,
  envId: string,
  n: number,
  seed = 0,
): Promise<DreamSample[]> {
  if (n <= 0) return [];
  const contexts = await heldOutContexts(envId, n * SPREAD, seed);
  // Every SPREAD-th transition, offset so that both first steps and later ones are shown.
  const chosen = Array.from({ length: n }, (_, i) => contexts[Math.min(contexts.length - 1, i * SPREAD + (i % 3))]);
  const predictions = await Promise.all(chosen.map((c) => model.next(c.ctx)));
  const out: DreamSample[] = [];
  for (let i = 0; i < chosen.length; i++) {
    const { ctx, replay } = chosen[i];
    const env = makeEnv(envId);
    await env.reset({ seed: replay.task.seed ?? 0, task: replay.task });
    for (const action of replay.actions.slice(0, -1)) await env.step(action);
    const real = await env.step(replay.actions[replay.actions.length - 1]);
    const p = predictions[i];
    out.push({
      episodeSeed: replay.task.seed ?? 0,
      instruction: ctx.task.instruction,
      stepIndex: ctx.history.length + 1,
      state: ctx.state.text,
      action: ctx.action,
      dreamed: {
        usable: p.valid,
        ...(p.invalidReason ? { invalidReason: p.invalidReason } : {}),
        actionValid: p.actionValid,
        reward: p.reward,
        success: p.terminated && predictedOutcome(p) === 1,
        terminated: p.terminated,
        observation: p.next.text,
        admissible: p.next.admissible.slice(),
      },
      real: {
        valid: real.info.valid,
        reward: real.reward,
        success: real.info.success,
        terminated: real.terminated,
        observation: real.text,
        admissible: real.terminated ? [] : real.admissible.slice(),
      },
    });
  }
  return out;
}

/**
 * `model` with a stopwatch: the wall time while at least one prediction is in flight (the audit
 * asks a batch at a time and builds the next one in between, so that time is not counted).
 */
export function timedModel<M extends ExperienceModel>(
  model: M,
  now: () => number = () => performance.now(),
): { model: ExperienceModel; read(): { transitions: number; seconds: number } } {
  let inFlight = 0,
    since = 0,
    busyMs = 0,
    transitions = 0;
  const timed: ExperienceModel = {
    label: model.label,
    ...(model.preferredBatch !== undefined ? { preferredBatch: model.preferredBatch } : {}),
    initial: (task, signal) => model.initial(task, signal),
    next: async (ctx) => {
      if (inFlight++ === 0) since = now();
      try {
        return await model.next(ctx);
      } finally {
        transitions++;
        if (--inFlight === 0) busyMs += now() - since;
      }
    },
  };
  return { model: timed, read: () => ({ transitions, seconds: busyMs / 1000 }) };
}

export interface EvaluateOptions {
  envId: string;
  /** Transitions audited (0: no audit). */
  audit: number;
  samples: number;
  seed: number;
  onAudit?: (done: number, total: number) => void;
  signal?: AbortSignal;
  /** Where the model decodes, in a sentence (shown with its speed). */
  decoding?: string;
  now?: () => number;
}

/** The audit (learned and oracle) and the dreamed-vs-real samples of a model. */
export async function evaluateModel(
  model: ExperienceModel & { label: string },
  options: EvaluateOptions,
): Promise<Omit<Evaluation, 'path' | 'training' | 'verdict'>> {
  const { envId, seed } = options;
  let audit: Evaluation['audit'] = null;
  let oracle: Evaluation['oracle'] = null;
  let speed: PredictionSpeed | null = null;
  if (options.audit > 0) {
    const stopwatch = timedModel(model, options.now);
    const oracleModel = new NoisyOracleModel(envId, { epsilonReward: 0.1, epsilonTransition: 0.1, seed });
    // The oracle is the real env replayed: quick; its progress is the last share of the bar.
    const total = options.audit * 2;
    const details = await auditDetailed(stopwatch.model, {
      envId,
      n: options.audit,
      seed,
      signal: options.signal,
      onProgress: (done) => options.onAudit?.(done, total),
    });
    audit = { report: details.report, outcomeSteps: details.outcomeSteps, probes: details.probes };
    const decoding = options.decoding ?? 'in the evaluating worker';
    const { transitions, seconds } = stopwatch.read();
    const batch = Math.max(1, model.preferredBatch ?? 1);
    speed = { transitions, seconds, transitionsPerSecond: transitions / Math.max(seconds, 1e-9), batch, decoding };
    oracle = (
      await auditDetailed(oracleModel, {
        envId,
        n: options.audit,
        seed,
        signal: options.signal,
        onProgress: (done) => options.onAudit?.(options.audit + done, total),
      })
    ).report;
  }
  if (options.signal?.aborted) throw new DOMException('The evaluation was stopped.', 'AbortError');
  const samples = await dreamedVsReal(model, envId, options.samples, seed);
  return { env: envId, label: model.label, audit, oracle, samples, speed };
}
