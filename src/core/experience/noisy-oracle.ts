/**
 * NoisyOracleModel: the real environment as an experience model, with a dialled reward error ε_R
 * and transition error ε_P (the paper's Appendix B: the real-vs-dream gap is bounded by these two errors,
 * Lemma 1: |J_M(π) − J_M̂(π)| ≤ ε_R/(1−γ) + 2γ R_max ε_P/(1−γ)²). A teaching and control
 * instrument, never a learned model: its label is always `oracle (ε_R=…, ε_P=…)`.
 *
 * Underneath it keeps a real env synced to the dream: the history's state-changing steps are
 * replayed on a fresh env (or the last env is reused when the history extends what it played).
 *
 * Reward error ε_R — "a wrong outcome at the end". With binary outcome rewards the reward can
 * only be wrong where the outcome is decided: on the episode's OUTCOME-BEARING step, i.e. a valid
 * step on which the real env terminates, or the step that reaches the step limit (where the
 * episode will be truncated as a failure). Every episode has exactly one such step, and there,
 * with probability ε_R, the outcome is flipped:
 *   - a real success (terminated, reward 1)          → terminated with reward 0 (a failure);
 *   - a real terminal failure (a wrong final choice) → terminated with reward 1 (a success);
 *   - a real non-terminal last step (step limit)     → reported as a terminal success, reward 1.
 * So a dialled ε_R is the chance that a dreamed episode's outcome is wrong, and the audit's
 * reward accuracy (measured on outcome-bearing steps) estimates 1 − ε_R. Flipping rewards on
 * ordinary mid-episode steps instead would mostly end episodes early with a fake success, which
 * is a different error (a transition error on `terminated`) than the paper's reward error.
 *
 * Transition error ε_P: on a valid step, with probability ε_P the next state is corrupted, by one
 * of: drop an admissible action; swap one for an action of another state (one the real env will
 * refuse); splice the observation's second half from another state. Terminal states can only be
 * spliced. Invalid actions (no-ops) are reported as the real env reports them.
 *
 * Deterministic: each step's draws come from a stream keyed by (seed, task, history, action), so
 * the same step gets the same answer whatever was asked before (cache-friendly, replayable).
 * Rewards otherwise pass through from the real env (a graded score at the end), so at (0, 0)
 * a DreamEnv over the oracle plays exactly like the real env.
 */
import { Rng, hashString } from '../rng';
import { getEnvDefinition } from '../envs/registry';
import type { EnvCreateOptions, GroundTruthEnv } from '../envs/env';
import type { Observation, StepResult, Task } from '../types';
import type { DreamContext, ExperienceModel, Prediction } from './types';

export interface NoisyOracleOptions {
  /** ε_R: chance that an outcome-bearing step reports the wrong outcome (0..1). */
  epsilonReward: number;
  /** ε_P: chance that a valid step's next state is corrupted (0..1). */
  epsilonTransition: number;
  /** Seed of the error draws (default 0). */
  seed?: number;
  /** The step limit the dream runs under (default: the env's); its last step is outcome-bearing. */
  stepLimit?: number;
  /** Options for the real env underneath. */
  createOptions?: EnvCreateOptions;
}

export type CorruptionKind = 'drop' | 'swap' | 'splice';

/** The label every noisy oracle carries (same form as llmSpecLabel). */
export function oracleLabel(epsilonReward: number, epsilonTransition: number): string {
  return `oracle (ε_R=${epsilonReward}, ε_P=${epsilonTransition})`;
}

/** A valid step that decides the episode's outcome: the real env terminates, or the step limit is reached. */
export function isOutcomeStep(
  real: Pick<StepResult, 'terminated' | 'info'>,
  stepIndex: number,
  stepLimit: number,
): boolean {
  return real.info.valid && (real.terminated || stepIndex >= stepLimit);
}

function checkProbability(name: string, p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`NoisyOracleModel: ${name} must be a probability in 0..1, got ${p}`);
  return p;
}

export class NoisyOracleModel implements ExperienceModel {
  readonly label: string;
  readonly epsilonReward: number;
  readonly epsilonTransition: number;
  readonly seed: number;
  readonly stepLimit: number;
  /** Where the env's pages split into elements (its experience card's), if they do. */
  private readonly elementSeparator: string | undefined;
  /**
   * Real envs parked in the state their history led to, keyed by task and history: rollouts
   * stepped in lockstep (a GRPO group, a batch of tasks) each find theirs instead of replaying the
   * whole history every step. Bounded; the oldest are dropped.
   */
  private readonly synced = new Map<string, { key: string; env: GroundTruthEnv; actions: string[] }>();
  private static readonly MAX_SYNCED = 1024;

  constructor(
    readonly envId: string,
    private readonly options: NoisyOracleOptions,
  ) {
    const definition = getEnvDefinition(envId);
    this.epsilonReward = checkProbability('epsilonReward', options.epsilonReward);
    this.epsilonTransition = checkProbability('epsilonTransition', options.epsilonTransition);
    this.seed = options.seed ?? 0;
    this.stepLimit = options.stepLimit ?? definition.defaultStepLimit;
    this.elementSeparator = definition.experienceCard?.elementSeparator;
    this.label = oracleLabel(this.epsilonReward, this.epsilonTransition);
  }

  async initial(task: Task): Promise<Observation> {
    const env = getEnvDefinition(this.envId).create(this.options.createOptions);
    return env.reset({ seed: task.seed ?? 0, task });
  }

  /**
   * A real env in the state the history led to (its state-changing steps replayed), owned by
   * the caller until it hands it back: concurrent rollouts never share one.
   */
  private async claim(
    task: Task,
    actions: readonly string[],
  ): Promise<{ key: string; env: GroundTruthEnv; actions: string[] }> {
    const key = `${task.id}\u0000${task.instruction}`;
    const slot = `${key}\u0000${actions.join('\u0001')}`;
    const parked = this.synced.get(slot);
    if (parked) {
      this.synced.delete(slot);
      return parked;
    }
    const env = getEnvDefinition(this.envId).create(this.options.createOptions);
    await env.reset({ seed: task.seed ?? 0, task });
    for (const a of actions) await env.step(a);
    return { key, env, actions: actions.slice() };
  }

  /** Hands a real env back, parked under its (task, history). */
  private park(synced: { key: string; env: GroundTruthEnv; actions: string[] }): void {
    this.synced.set(`${synced.key}\u0000${synced.actions.join('\u0001')}`, synced);
    if (this.synced.size > NoisyOracleModel.MAX_SYNCED) this.synced.delete(this.synced.keys().next().value!);
  }

  async next(ctx: DreamContext): Promise<Prediction> {
    const t0 = performance.now();
    const replay = ctx.history.filter((s) => s.valid).map((s) => s.action);
    const synced = await this.claim(ctx.task, replay);
    const real = await synced.env.step(ctx.action);
    if (real.info.valid) synced.actions.push(ctx.action);
    this.park(synced);

    const rng = Rng.fromSeed(this.seed, 'oracle', ctx.task.id, String(hashString(replay.join('\n'))), ctx.action);
    const rewardDraw = rng.next();
    const transitionDraw = rng.next();
    const stepIndex = ctx.history.length + 1;
    const notes: string[] = [];

    let next: Observation = { text: real.text, admissible: real.admissible.slice(), task: ctx.task };
    let reward = real.reward;
    let score: number | undefined = real.info.score;
    let terminated = real.terminated;
    let success = real.info.success;

    if (isOutcomeStep(real, stepIndex, this.stepLimit) && rewardDraw < this.epsilonReward) {
      if (success) {
        reward = 0;
        score = 0;
        success = false;
        notes.push('outcome flipped: the real success is reported as a failure (ε_R)');
      } else {
        reward = 1;
        score = 1;
        success = true;
        notes.push(
          `outcome flipped: the real ${real.terminated ? 'failure' : 'last step'} is reported as a success (ε_R)`,
        );
      }
      terminated = true;
      next = { ...next, admissible: [] };
    }
    if (real.info.valid && transitionDraw < this.epsilonTransition) {
      const corrupted = corruptState(next, terminated, ctx, rng.split('corrupt'), this.elementSeparator);
      if (corrupted) {
        next = corrupted.observation;
        notes.push(`next state corrupted: ${corrupted.what} (ε_P)`);
      }
    }
    const reasoning = real.info.valid
      ? `Oracle: the real env accepts '${ctx.action}'${terminated ? ` and the episode ends (${success ? 'success' : 'failure'})` : ''}.${notes.length ? ` Injected: ${notes.join('; ')}.` : ''}`
      : `Oracle: the real env refuses '${ctx.action}' here (a no-op).`;
    return {
      reasoning,
      next,
      reward,
      terminated,
      valid: true,
      actionValid: real.info.valid,
      ...(score !== undefined ? { score } : {}),
      usage: { promptTokens: 0, completionTokens: 0, ms: performance.now() - t0 },
      attempts: 1,
      notes: [],
    };
  }
}

/** Words of a text (splice points), or the page's elements where the env has a separator and the text holds it. */
function pieces(text: string, separator?: string): { parts: string[]; join: string } {
  if (separator && text.includes(separator)) return { parts: text.split(separator), join: separator };
  return { parts: text.split(' '), join: ' ' };
}

/**
 * One corruption of a next state (null when none changes anything). A splice cuts at the page's
 * elements where the env names their separator (its experience card's `elementSeparator`), else at words.
 */
export function corruptState(
  next: Observation,
  terminated: boolean,
  ctx: Pick<DreamContext, 'state' | 'history'>,
  rng: Rng,
  elementSeparator?: string,
): { observation: Observation; what: string } | null {
  const others = [
    ctx.state,
    ...ctx.history
      .slice()
      .reverse()
      .map((s) => ({ text: s.observation, admissible: s.admissible })),
  ];
  const foreignActions = [...new Set(others.flatMap((o) => o.admissible))].filter((a) => !next.admissible.includes(a));
  const otherText = others.map((o) => o.text).find((t) => t !== next.text);
  const kinds: CorruptionKind[] = [];
  if (!terminated && next.admissible.length >= 2) kinds.push('drop');
  if (!terminated && next.admissible.length >= 1 && foreignActions.length > 0) kinds.push('swap');
  if (otherText !== undefined) kinds.push('splice');
  if (kinds.length === 0) return null;
  const kind = rng.pick(kinds);
  if (kind === 'drop') {
    const i = rng.int(0, next.admissible.length - 1);
    const dropped = next.admissible[i];
    return {
      observation: { ...next, admissible: next.admissible.filter((_, j) => j !== i) },
      what: `dropped '${dropped}'`,
    };
  }
  if (kind === 'swap') {
    const i = rng.int(0, next.admissible.length - 1);
    const foreign = rng.pick(foreignActions);
    const admissible = next.admissible.slice();
    const swapped = admissible[i];
    admissible[i] = foreign;
    return { observation: { ...next, admissible }, what: `swapped '${swapped}' for '${foreign}'` };
  }
  const mine = pieces(next.text, elementSeparator);
  const theirs = pieces(otherText!, elementSeparator);
  const cut = Math.max(1, Math.ceil(mine.parts.length / 2));
  const from = Math.floor(theirs.parts.length / 2);
  let text = [...mine.parts.slice(0, cut), ...theirs.parts.slice(from)].join(mine.join);
  if (text === next.text) text = `${next.text}${mine.join}${theirs.parts.slice(from).join(mine.join) || otherText}`;
  return { observation: { ...next, text }, what: "spliced the observation with another state's" };
}
