/**
 * The shared vocabulary of the project (docs/architecture.md §3.1): tasks, observations, steps and
 * trajectories. Plain JSON-serialisable data only, so the same records travel between Node,
 * workers, IndexedDB and JSONL files.
 */
import type { ChatMessage, ChatUsage, FinishReason } from './llm/types';

export type TaskOrigin = 'generated' | 'variation' | 'llm' | 'imported';

export interface Task {
  /** Stable id, e.g. 'webshop-lite-v0:42:0.30'. */
  id: string;
  /** Versioned environment id the task belongs to. */
  env: string;
  /** What the agent is asked to do, in the environment's own words. */
  instruction: string;
  /** Scalar difficulty 0..1 (the knobs it maps to live in `spec`). */
  difficulty: number;
  /** Environment-specific, machine-checkable description (enough to rebuild the episode). */
  spec?: unknown;
  origin: TaskOrigin;
  /** The generator seed (absent for imported or LLM tasks). */
  seed?: number;
  /** Task this one was derived from (curriculum variations). */
  parent?: string;
}

export interface Observation {
  text: string;
  /** Actions the environment accepts now, sorted as the environment lists them; empty once the episode ended. */
  admissible: string[];
  task: Task;
}

export interface StepInfo {
  /** false when the action was unparsable or inadmissible (a no-op). */
  valid: boolean;
  /** The task was accomplished (WebShop: reward 1 at buy; household: goal holds). */
  success: boolean;
  /** Graded outcome in [0, 1] where the environment has one (WebShop's reward at buy). */
  score?: number;
  /** Steps taken in this episode, this one included. */
  steps: number;
  /** Set by a DreamEnv (never by a real env): what the experience model did for this step. */
  dream?: DreamStepReport;
}

/** One dreamed step's account: whether the model was asked, what it cost, and whether its answer was usable. */
export interface DreamStepReport {
  /** The experience model was asked (false: a no-op the dream refused itself, e.g. an inadmissible action). */
  predicted: boolean;
  /** The model's reasoning ('' when it was not asked). */
  reasoning: string;
  /** Prompt + completion tokens of the answer (0 for a transition-cache hit or when not asked). */
  tokens: number;
  /** Answered from the model's transition cache. */
  cached: boolean;
  /** The answer was unusable: the step is kept for inspection, never learned from. */
  invalid: boolean;
  invalidReason?: string;
  /** The engine call failed (timeout, refused, 5xx after its retries): the answer is missing, so the step is invalid. */
  engineError?: string;
  /** What the model was asked and answered (absent when not asked, or for a model with no answer text: the oracle). */
  answer?: DreamAnswer;
  /** How far apart the verdict ensemble's members were (max − min of their p), where the model has one. */
  disagreement?: number;
  /** The step's distance to the nearest real transition, and whether the dream halted on it. */
  novelty?: number;
  halted?: boolean;
  /** Other draws the halt asked for, the first ones being unlike the data (the generated state's uncertainty). */
  redraws?: number;
}

/** One call of an answer, as the model gave it: its raw text, how it ended, what it cost, and why it was rejected. */
export interface AnswerAttempt {
  raw: string;
  finishReason: FinishReason;
  usage: ChatUsage;
  /** Why this answer was rejected and asked again (absent for the accepted one). */
  rejected?: string;
}

/** A dreamed step's question and answer, for inspection: the prompt, every call's raw text and why it was rejected, the cost. */
export interface DreamAnswer {
  /** The chat prompt (chat models only: a learned model is not a chat model and has no prompt text). */
  prompt?: ChatMessage[];
  /** The raw text of the last answer (a learned model's: its decoded answer with the structure markers). */
  raw?: string;
  /** Every call in order (chat models; none for a transition-cache hit). */
  tries?: AnswerAttempt[];
  /** Tokens and ms of all calls together (zero for a cache hit). */
  usage: ChatUsage;
}

export interface StepResult extends Observation {
  reward: number;
  /** The task ended the episode (bought, goal reached). */
  terminated: boolean;
  /** The step limit ended the episode. Never true together with `terminated`. */
  truncated: boolean;
  info: StepInfo;
}

/** One step of an episode as recorded in datasets. */
export interface Step {
  observation: string;
  admissible: string[];
  action: string;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  valid: boolean;
  /** Free-text reasoning that preceded the action, when the source had one. */
  thought?: string;
}

export type TrajectorySource = 'expert' | 'random' | 'noisy-expert' | 'decoy-expert' | 'agent' | 'imported' | 'dream';

/** One episode: the unit of our JSONL format (one line each). */
export interface Trajectory {
  /** Format marker and version, so files explain themselves. */
  format: 'dreamgym-trajectory/1';
  id: string;
  env: string;
  seed: number;
  task: Task;
  steps: Step[];
  /** The observation after the last action (what the agent saw when the episode ended). */
  final_observation: string;
  result: {
    reward: number;
    success: boolean;
    score: number;
    steps: number;
    terminate_reason: 'success' | 'terminated' | 'truncated' | 'unfinished';
  };
  source: TrajectorySource;
  /** Policy details, e.g. { epsilon: 0.3 } for noisy-expert. */
  policy?: Record<string, unknown>;
}

export type TransitionSource = 'offline' | 'real' | 'dream';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  ms: number;
}

/** A (s, a, r, s') record of the replay buffer (offline data, real interactions and dreamed ones). */
export interface Transition {
  /** Stable id: `${episodeId}#${stepIndex}` (re-importing the same episode writes the same ids). */
  id: string;
  env: string;
  taskId: string;
  instruction: string;
  episodeId: string;
  stepIndex: number;
  observation: string;
  admissible: string[];
  action: string;
  nextObservation: string;
  nextAdmissible: string[];
  reward: number;
  terminated: boolean;
  truncated: boolean;
  source: TransitionSource;
  /** false for unparsable / inconsistent dreamed steps (kept for inspection, never learned from). */
  valid: boolean;
  /** The experience model's reasoning (dreamed transitions). */
  reasoning?: string;
  /** Token usage of the experience model for this step (dreamed transitions). */
  usage?: TokenUsage;
  /** ms since epoch; supplied by the caller (core code never reads the clock for data). */
  createdAt: number;
  runId?: string;
  /** Embedding of (instruction, observation, action), L2-normalised; absent until embedded. */
  embedding?: Float32Array;
  /** Id of the embedder that made `embedding` (vectors of different embedders never mix). */
  embedder?: string;
}
