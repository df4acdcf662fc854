/**
 * The experience model contract (docs/architecture.md §3.6; the paper's M_exp): given the task, the interaction
 * history, the current state, the agent's action and top-k retrieved transitions, predict the
 * next state, the reward and whether the episode ended — with a reasoning trace first.
 *
 * Two notions of "valid" live side by side in a Prediction:
 * - `valid`: the model's ANSWER is usable (parsed, matched the schema, consistent). When false
 *   after the bounded retries, `invalidReason` and `raw` say why; DreamEnv turns such a step into
 *   a marked no-op (`info.dreamInvalid`) that the trainer excludes from learning.
 * - `actionValid`: the model's VERDICT on the agent's action (the JSON field `valid`): false means
 *   "the environment would not accept this action here" — a no-op with reward 0 (the paper, §4:
 *   an invalid action leads to a failure state with zero reward).
 *
 * Observations in a Prediction are always in the environment's own text format (the model works
 * in a compact abstract state space and renders back, see domain-card.ts), so a trainer reading a
 * DreamEnv sees the same kind of pages as in the real env.
 */
import type { Rng } from '../rng';
import type { ChatMessage, ChatUsage } from '../llm/types';
import type { AnswerAttempt, Observation, Step, Task, Transition } from '../types';
import type { ReplayBuffer } from '../buffer/buffer';
import { DreamGymError } from '../errors';

export type { AnswerAttempt, ChatUsage };

/** What the experience model is asked for one dreamed step. */
export interface DreamContext {
  task: Task;
  /** Every step of the episode so far, oldest first, no-ops included (`valid: false`). */
  history: readonly Step[];
  /** The current state (the observation the action is taken in). */
  state: Observation;
  action: string;
  /**
   * Retrieved past transitions to show as worked examples. When omitted, a model with a replay
   * buffer retrieves its own top-k (filtered to the env, valid only, one per episode).
   */
  retrieved?: readonly Transition[];
  /**
   * Which sample of this transition to draw (absent or 0: the first). A model that samples its
   * answers draws another one for another number, the same for the same number; the halt asks for
   * more where a sample is unlike every real transition (halting-model.ts). Others may ignore it.
   */
  draw?: number;
  signal?: AbortSignal;
}

export interface Prediction {
  /** The model's reasoning before the outcome (empty when reasoning is switched off). */
  reasoning: string;
  /** The next state, in the env's text format; the same state for an invalid action or answer. */
  next: Observation;
  /**
   * The outcome reward: 1 only on the final step of a completed task, else 0 (the paper, §4). The
   * noisy oracle passes the real env's reward through (a graded score at the end); a learned
   * model's verdict head gives its p(success), the outcome it expects (then `success` says which).
   */
  reward: number;
  /** The predicted outcome of an ending whose reward is graded; absent: the outcome is reward ≥ 1 (predictedOutcome). */
  success?: boolean;
  terminated: boolean;
  /** The answer was usable (see the file comment). */
  valid: boolean;
  /** The model judged the action acceptable in this state (see the file comment). */
  actionValid: boolean;
  /** Graded outcome in [0, 1] where the model knows one (the oracle: the real env's graded score). */
  score?: number;
  /** Tokens and latency of all attempts together (zero for a transition-cache hit). */
  usage: ChatUsage;
  /** Model calls made (1 + retries; 0 for a cache hit or a model without calls). */
  attempts: number;
  /** The chat prompt asked (chat models only: a learned model or the oracle has no prompt text). */
  prompt?: ChatMessage[];
  /** Every call of this answer in order, with its raw text and why it was rejected (chat models; none for a cache hit). */
  tries?: AnswerAttempt[];
  /** One line per rejected attempt: why it was retried (length cut-off, parse error, inconsistency). */
  notes: string[];
  /** The raw text of the last answer (always kept for an invalid answer). */
  raw?: string;
  /** Why the answer is unusable (when `valid` is false). */
  invalidReason?: string;
  /**
   * The engine call itself failed after its retries (a timeout, a refused connection, 5xx; see
   * LlmError.transient): its message. Such a prediction is invalid; the caller counts these
   * (engine-failures.ts) to stop a run whose server is down.
   */
  engineError?: string;
  /** Answered from the transition cache. */
  cached?: boolean;
  /** Ids of the retrieved transitions shown to the model. */
  retrievedIds?: string[];
  /** How far apart the verdict ensemble's members were on this step (max − min of their p). */
  disagreement?: number;
  /** The step's distance to the nearest real transition (novelty.ts), where the dream measures it. */
  novelty?: number;
  /** The dream halted here: the step was beyond the novelty threshold, so the episode ended with no success. */
  halted?: boolean;
  /** Other draws asked for this step because the first ones were unlike the data (halting-model.ts). */
  redraws?: number;
}

export interface ExperienceModel {
  /**
   * Shown next to every dreamed transition and in charts. The noisy oracle is always labelled
   * `oracle (ε_R=…, ε_P=…)`, so it is never mistaken for a learned model.
   */
  readonly label: string;
  /**
   * How many concurrent `next` calls this model serves best (the learned model decodes them as one
   * batch); callers that can ask several at once (the audit) ask this many. Absent: one at a time.
   */
  readonly preferredBatch?: number;
  /**
   * How many retrieved real transitions each step's context holds, where the model fixes it (a
   * learned model trained with k = 0 retrieves nothing at any setting). Absent: the run's retrievalK.
   */
  readonly retrievalK?: number;
  /** Real states a dream may start from (real-starts.ts RealStartsModel); absent: dreams start at the first state. */
  readonly realStarts?: RealStartSource;
  /** The first observation of a task that has no real start page (imported or LLM tasks). */
  initial(task: Task, signal?: AbortSignal): Promise<Observation>;
  /**
   * One dreamed step; never throws for a bad answer (it returns `valid: false`). May be called
   * concurrently: a rollout step asks for every running episode's step at once (docs/architecture.md §3.6,
   * Concurrency). A model may batch such calls, but its answers must not depend on the order the
   * calls arrive or complete in (key any randomness by the call, not by a shared stream).
   */
  next(ctx: DreamContext): Promise<Prediction>;
  /**
   * Learns from real episodes that replayed the dream's claimed successes (S2R that corrects the
   * dream, train/dream-correction.ts): a learned model refits its verdict with them, the halt adds
   * them to its real data. Each call adds to the earlier ones, so one call with all of them (a
   * resumed run) leaves the model as the calls one by one did. Absent: the model cannot be corrected.
   */
  correct?(correction: DreamCorrection): Promise<void>;
  /** Frees what the model holds (the learned model's tfjs weights); it cannot be used after. */
  dispose?(): void;
}

/** Real episodes a dream was wrong or right about, and where the model's own real data lives. */
export interface DreamCorrection {
  /** Each replays one dreamed success's actions in the real env from the same task (misses and confirmations). */
  episodes: readonly RealEpisode[];
  /** The run's replay buffer: its real episodes are those a learned model's verdict was fitted on. */
  buffer?: ReplayBuffer;
}

/** A real episode as the buffer groups one (learned/sft-data.ts RecordedEpisode): its steps in order. */
export interface RealEpisode {
  id: string;
  taskId: string;
  instruction: string;
  steps: Transition[];
}

/** A recorded state to dream from: the steps before it are the episode's history so far. */
export interface RealStart {
  task: Task;
  /** The real steps before the start (empty: the episode's own first state). */
  history: Step[];
  state: { text: string; admissible: string[] };
  /** The start's step index in its recorded episode (= history.length). */
  fromStep: number;
  /** The recorded episode it comes from (its index in the source). */
  episode: number;
}

/** Real states a dream may begin at (real-starts.ts RealStartPool). */
export interface RealStartSource {
  /** Recorded episodes with a state to begin at. */
  readonly size: number;
  pick(rng: Rng): RealStart;
}

/** Raised when a model cannot produce even a first observation (initial() has nothing to fall back on). */
export class ExperienceModelError extends DreamGymError {
  constructor(
    message: string,
    readonly raw?: string,
  ) {
    super(message, {
      code: 'experience-model-no-start',
      fix: 'Try a larger model, more retries, or start the task from a real environment.',
    });
    this.name = 'ExperienceModelError';
  }
}

export const ZERO_USAGE: Readonly<ChatUsage> = Object.freeze({ promptTokens: 0, completionTokens: 0, ms: 0 });

export function addUsage(a: ChatUsage, b: ChatUsage): ChatUsage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    ms: a.ms + b.ms,
  };
}

/** The binary outcome of a reward: 1 for a completed task (reward ≥ 1), else 0. */
export function outcomeOf(reward: number): 0 | 1 {
  return reward >= 1 ? 1 : 0;
}

/** The outcome a prediction calls: its own `success` where it gives one (a graded reward), else that of its reward. */
export function predictedOutcome(p: Pick<Prediction, 'reward' | 'success'>): 0 | 1 {
  return p.success === undefined ? outcomeOf(p.reward) : p.success ? 1 : 0;
}
