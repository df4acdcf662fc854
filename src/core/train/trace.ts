/**
 * Episode traces: what one rollout of a training iteration looked like, step by step, for the
 * Inspect view — the observation, the admissible actions with the policy's probabilities, the
 * action taken, the reward, and for dreamed steps the experience model's reasoning.
 *
 * And the "what would the real environment have done?" question, answered on demand: the real
 * env is reset to the trace's task, the actions the dream accepted before the step are replayed
 * (as the noisy oracle replays its history), and the same action is stepped. A dream that went
 * off the rails earlier shows up as a replayed action the real env refuses, and as a real state
 * before the step that differs from the dreamed one.
 *
 * Plain JSON-serialisable data only (traces travel from the trainer worker to IndexedDB).
 */
import { getEnvDefinition, listEnvDefinitions } from '../envs/registry';
import type { DreamAnswer, Observation, StepResult, Task } from '../types';
import type { Phase } from './config';

export interface TraceStep {
  /** The state the action was taken in. */
  observation: string;
  admissible: string[];
  action: string;
  /** Index of the action in `admissible`. */
  actionIndex: number;
  /** π(a | s) of each admissible action, aligned with `admissible`. */
  probabilities: number[];
  /** The LLM prior's scores of the admissible actions (the β·prior term of π; absent without a prior). */
  prior?: number[];
  reward: number;
  terminated: boolean;
  truncated: boolean;
  /** The step was a usable, accepted transition (false: a no-op, or an unusable dream answer). */
  valid: boolean;
  /** The experience model's answer was unusable (kept for inspection, never learned from). */
  dreamInvalid?: boolean;
  invalidReason?: string;
  /** The experience model's reasoning (dreamed steps). */
  reasoning?: string;
  /** Answered from the experience model's transition cache. */
  cached?: boolean;
  /** The experience model was asked about this step (dreamed steps; a refused inadmissible action is not asked). */
  asked?: boolean;
  /** What the experience model was asked and answered: the prompt (chat models), the raw answer, every try and why it was rejected, tokens and ms. */
  answer?: DreamAnswer;
  /** How far apart the verdict ensemble's members were (dreamed steps of a learned model with a head). */
  disagreement?: number;
  /** The step's distance to the nearest real transition, and whether the dream halted on it. */
  novelty?: number;
  halted?: boolean;
  /** Other draws of the step the halt asked for (its first draws were unlike the data). */
  redraws?: number;
}

export interface EpisodeTrace {
  format: 'dreamgym-episode-trace/1';
  iteration: number;
  /** Position of the episode in its iteration (task-major, then group member). */
  index: number;
  /** `iteration/task/member`, as in the loop. */
  episodeId: string;
  groupId: string;
  phase: Phase;
  /** The experience model's label (dream phase), e.g. `oracle (ε_R=0.1, ε_P=0.1)`. */
  experienceModel?: string;
  task: Task;
  success: boolean;
  return: number;
  steps: TraceStep[];
  /**
   * A dream begun at a recorded real state: the step of the real episode it began at, and the real
   * steps before it (the history the model and the policy saw). Absent: the task's own first state.
   */
  realStart?: { fromStep: number; prefix: { observation: string; action: string; valid: boolean }[] };
  /** The observation after the last step (what the agent saw when the episode ended). */
  final: { observation: string; admissible: string[] };
}

/** The state after step `i` (the next step's observation, or the episode's final one). */
export function nextOf(trace: EpisodeTrace, i: number): { observation: string; admissible: string[] } {
  const next = trace.steps[i + 1];
  return next ? { observation: next.observation, admissible: next.admissible } : trace.final;
}

/**
 * The actions to replay in the real env before step `i`: a real start's recorded prefix, then those
 * the trace accepted (valid steps).
 */
export function acceptedActionsBefore(trace: EpisodeTrace, i: number): string[] {
  const prefix = (trace.realStart?.prefix ?? []).filter((s) => s.valid).map((s) => s.action);
  const accepted = trace.steps
    .slice(0, i)
    .filter((s) => s.valid)
    .map((s) => s.action);
  return [...prefix, ...accepted];
}

export type RealOutcome =
  | {
      kind: 'real';
      /** The real state the action was taken in (after replaying the prefix). */
      before: Observation;
      /** What the real env returned for the action. */
      result: StepResult;
      /** Positions in the replayed prefix of actions the real env refused (the dream had diverged). */
      refused: number[];
    }
  | { kind: 'none'; reason: string };

/**
 * The real env's answer to `action` after `actionsBefore`, from the task's start. Tasks the real
 * env cannot rebuild (LLM-written tasks, imported domains, a task without its spec) have no real
 * counterpart: the answer says so instead of guessing.
 */
export async function replayInRealEnv(
  envId: string,
  task: Task,
  actionsBefore: readonly string[],
  action: string,
): Promise<RealOutcome> {
  if (!listEnvDefinitions().some((d) => d.id === envId)) {
    return {
      kind: 'none',
      reason: `'${envId}' has no built-in real environment (an imported domain): only the dream exists.`,
    };
  }
  if (task.origin === 'llm') {
    return {
      kind: 'none',
      reason: 'This task was written by an LLM: no real environment can play it, so there is no real counterpart.',
    };
  }
  const env = getEnvDefinition(envId).create();
  let before: Observation;
  try {
    before = await env.reset({ seed: task.seed ?? 0, task });
  } catch (error) {
    return { kind: 'none', reason: `The real environment cannot rebuild this task (${(error as Error).message}).` };
  }
  const refused: number[] = [];
  for (let i = 0; i < actionsBefore.length; i++) {
    const r = await env.step(actionsBefore[i]);
    if (!r.info.valid) refused.push(i);
    before = r;
    if (r.terminated) break;
  }
  const result = await env.step(action);
  return { kind: 'real', before: { text: before.text, admissible: before.admissible.slice(), task }, result, refused };
}

/** Where a dreamed step and the real env's answer to the same action disagree. */
export interface OutcomeComparison {
  sameObservation: boolean;
  /** Admissible actions only the dream offered / only the real env offers. */
  onlyInDream: string[];
  onlyInReal: string[];
  sameReward: boolean;
  sameTerminated: boolean;
  sameValid: boolean;
  /** The real state before the step differs from the dreamed one (the dream had diverged earlier). */
  divergedBefore: boolean;
  /** Everything agrees. */
  same: boolean;
}

export function compareOutcome(
  trace: EpisodeTrace,
  i: number,
  real: Extract<RealOutcome, { kind: 'real' }>,
): OutcomeComparison {
  const step = trace.steps[i];
  const next = nextOf(trace, i);
  // The step limit is the wrapper's, the same for both: a truncated step offers no actions in either.
  const realAdmissible = step.truncated && !real.result.terminated ? [] : real.result.admissible;
  const dreamSet = new Set(next.admissible),
    realSet = new Set(realAdmissible);
  const onlyInDream = next.admissible.filter((a) => !realSet.has(a));
  const onlyInReal = realAdmissible.filter((a) => !dreamSet.has(a));
  const sameObservation = next.observation === real.result.text;
  const sameReward = Math.abs(step.reward - real.result.reward) < 1e-9;
  const sameTerminated = step.terminated === real.result.terminated;
  const sameValid = step.valid === real.result.info.valid;
  const divergedBefore = real.before.text !== step.observation || real.refused.length > 0;
  return {
    sameObservation,
    onlyInDream,
    onlyInReal,
    sameReward,
    sameTerminated,
    sameValid,
    divergedBefore,
    same:
      sameObservation &&
      onlyInDream.length === 0 &&
      onlyInReal.length === 0 &&
      sameReward &&
      sameTerminated &&
      sameValid,
  };
}
