/**
 * The rollout phase of an iteration (docs/architecture.md §4.1, steps 2–3): G episodes of each task, stepped
 * together. At each step the policy scores every running state in one batched forward; then every
 * running episode calls `env.step` at once and the steps are awaited together. An experience
 * model therefore receives concurrent `next` calls (it may batch them, an HTTP engine may keep
 * several requests in flight); the results are applied in episode order, so a seed gives the same
 * run whatever order the steps complete in.
 *
 * The real-step budget is never exceeded: when it cannot pay for every running episode's step,
 * the episodes beyond it are cut (their last step counts as truncated). A dreamed step whose
 * answer was unusable is recorded for inspection and never learned from — a failed engine call
 * (timeout, 5xx) too; the guard stops the rollout when a whole step's calls fail, or too many in a row.
 */
import type { Rng } from '../rng';
import type { Observation, StepResult, Task } from '../types';
import type { Env } from '../envs/env';
import { ExperienceModelError } from '../experience/types';
import type { EngineFailureGuard } from '../experience/engine-failures';
import type { ActResult, CandidatePolicy } from '../policy/policy';
import type { PolicyState } from '../policy/features';
import type { PolicyStep } from '../rl/batch';
import type { Phase } from './config';
import type { TaskSource } from './task-source';
import type { TraceStep } from './trace';
import type { RealStart, RealStartSource } from '../experience/types';
import { DreamGymError } from '../errors';

/** A step as the loop keeps it: the trace step plus the next observation (for buffer records). */
export interface RecordedStep extends Omit<TraceStep, 'observation' | 'admissible'> {
  observation: string;
  admissible: string[];
  next: Observation;
}

export interface Episode {
  env: Env;
  task: Task;
  obs: Observation;
  /** `iteration/task/member`; the members of a task share `iteration/task` as their group. */
  episodeId: string;
  groupId: string;
  /** The steps learned from (usable ones). */
  steps: PolicyStep[];
  actions: string[];
  done: boolean;
  return: number;
  success: boolean;
  /** Ended by the real-step budget, not by the task or the step limit (no outcome: left out of the metrics). */
  cut?: boolean;
  /** Every step, usable or not (traces and buffer records). */
  record: RecordedStep[];
  /**
   * A dream begun at a recorded real state (real-starts.ts): the step it began at, and the most
   * steps it may take from there (then it is truncated, as at the step limit).
   */
  realStart?: EpisodeRealStart;
}

/** Where a dream begun at a recorded real state began, and the real steps before it (for traces). */
export interface EpisodeRealStart {
  fromStep: number;
  horizon: number;
  /** The recorded real steps before the start (valid: the real env took the action; a no-op otherwise). */
  prefix: { observation: string; action: string; valid: boolean }[];
}

/** What the steps of a rollout cost: env steps, and for dreams the experience model's answers. */
export interface RolloutTally {
  steps: number;
  /** Steps the experience model was asked about, and of those: unusable answers, tokens, cache hits. */
  predictions: number;
  invalid: number;
  tokens: number;
  cacheHits: number;
  /** Steps the dream halted (novelty beyond the threshold). */
  halts: number;
  /** Other draws the halt asked for (a step's first draws unlike the data). */
  redraws: number;
  /** The verdict ensemble's disagreement, summed over the steps that report one, and their count. */
  disagreement: number;
  judged: number;
}

/** One env per episode slot and phase, made on first use and reused across iterations. */
export class EnvPool {
  private readonly envs: Record<Phase, Env[]> = { real: [], dream: [] };
  constructor(private readonly make: (phase: Phase) => Env) {}

  get(phase: Phase, index: number): Env {
    const pool = this.envs[phase];
    while (pool.length <= index) pool.push(this.make(phase));
    return pool[index];
  }
}

export interface StartOptions {
  iteration: number;
  groupSize: number;
  phase: Phase;
  source: TaskSource;
  envs: EnvPool;
  /** The iteration's task stream (replacement tasks are drawn from it). */
  rng: Rng;
  /** Dreams only: begin this share of the tasks at real states drawn from the pool. */
  realStarts?: RealStartOptions;
}

export interface RealStartOptions {
  pool: RealStartSource;
  /** The share of tasks (each with its whole group) that begin at a real state. */
  share: number;
  /** Steps a real start may take (0: up to the step limit, counting its real prefix). */
  horizon: number;
  stepLimit: number;
  /** The iteration's own stream for the draws (so the other streams stay as they were). */
  rng: Rng;
}

/**
 * Resets `groupSize` episodes of each task, in task-major order. A task whose dreamed first state
 * could not be written gives way to the source's replacement (the task list is updated in place);
 * `startFailed` counts them.
 */
export async function startEpisodes(
  tasks: Task[],
  options: StartOptions,
): Promise<{ episodes: Episode[]; startFailed: number }> {
  const episodes: Episode[] = [];
  let startFailed = 0;
  for (let t = 0; t < tasks.length; t++) {
    // One draw per task: the whole group begins at the same real state (GRPO compares like with like).
    const start = realStartFor(options);
    if (start) tasks[t] = start.task;
    for (let g = 0; g < options.groupSize; g++) {
      const env = options.envs.get(options.phase, episodes.length);
      let obs: Observation;
      try {
        const recorded = start ? { start: { history: start.history, state: start.state } } : {};
        obs = await env.reset({ seed: tasks[t].seed ?? 0, task: tasks[t], ...recorded });
      } catch (error) {
        const replacement =
          g === 0 && error instanceof ExperienceModelError
            ? options.source.replacement(tasks[t], options.phase, options.rng)
            : null;
        if (!replacement) throw error;
        tasks[t] = replacement;
        startFailed++;
        obs = await env.reset({ seed: replacement.seed ?? 0, task: replacement });
      }
      // A start with nothing to choose from (a dreamed first state can be one) ends at once.
      episodes.push({
        env,
        task: tasks[t],
        obs,
        episodeId: `${options.iteration}/${t}/${g}`,
        groupId: `${options.iteration}/${t}`,
        steps: [],
        // A real start's prefix is the agent's history too: the policy sees it as it would in the real env.
        actions: start ? start.history.map((s) => s.action) : [],
        done: obs.admissible.length === 0,
        return: 0,
        success: false,
        record: [],
        ...(start ? { realStart: episodeRealStart(start, options) } : {}),
      });
    }
  }
  return { episodes, startFailed };
}

/** A real state to begin a task at, drawn for this share of a dream's tasks; null: the task's own start. */
function realStartFor(options: StartOptions): RealStart | null {
  const starts = options.realStarts;
  if (options.phase !== 'dream' || !starts || starts.pool.size === 0) return null;
  return starts.rng.next() < starts.share ? starts.pool.pick(starts.rng) : null;
}

function episodeRealStart(start: RealStart, options: StartOptions): EpisodeRealStart {
  const starts = options.realStarts!;
  const left = Math.max(1, starts.stepLimit - start.fromStep);
  return {
    fromStep: start.fromStep,
    horizon: starts.horizon > 0 ? Math.min(starts.horizon, left) : left,
    prefix: start.history.map((s) => ({ observation: s.observation, action: s.action, valid: s.valid })),
  };
}

export interface StepOptions {
  policy: CandidatePolicy;
  /** The iteration's sampling stream. */
  rng: Rng;
  phase: Phase;
  stepLimit: number;
  /** Env steps this rollout may take at most (Infinity: no budget). */
  stepBudget: number;
  /** Counts failed engine calls of dreamed steps; throws EngineFailureError when the engine is down. */
  failures?: EngineFailureGuard;
  /**
   * Sees each env step as soon as it completes (live progress: a slow engine's answers arrive one
   * by one within a rollout step), and `planned` — the most steps the running episodes can still
   * take — at the start of every rollout step. Nothing it does changes the run.
   */
  progress?: RolloutProgressHook;
  /** Aborted: the rollout stops before its next step with IterationStoppedError (the iteration is dropped, nothing kept). */
  signal?: AbortSignal;
}

/** A stop asked for inside an iteration: the iteration is abandoned before it keeps or learns anything. */
export class IterationStoppedError extends DreamGymError {
  constructor() {
    super('Stopped inside the iteration: it was dropped, and the run keeps its last checkpoint.', {
      code: 'iteration-stopped',
      fix: 'Nothing is wrong: the run was stopped on request; resume it from its last checkpoint.',
    });
    this.name = 'IterationStoppedError';
  }
}

export interface RolloutProgressHook {
  stepPlanned(stepsLeftAtMost: number): void;
  stepDone(result: StepResult): void;
}

/** Steps every running episode until all are done; returns what the steps cost. */
export async function stepEpisodes(episodes: Episode[], options: StepOptions): Promise<RolloutTally> {
  const tally: RolloutTally = {
    steps: 0,
    predictions: 0,
    invalid: 0,
    tokens: 0,
    cacheHits: 0,
    halts: 0,
    redraws: 0,
    disagreement: 0,
    judged: 0,
  };
  for (;;) {
    if (options.signal?.aborted) throw new IterationStoppedError();
    const running = payableEpisodes(episodes, options.stepBudget - tally.steps);
    if (running.length === 0) return tally;
    const states = running.map((e): PolicyState => ({
      instruction: e.obs.task.instruction,
      observation: e.obs.text,
      admissible: e.obs.admissible,
      step: e.actions.length,
      maxSteps: options.stepLimit,
      previousActions: e.actions,
    }));
    options.progress?.stepPlanned(
      running.reduce((sum, e) => sum + Math.max(1, options.stepLimit - e.actions.length), 0),
    );
    const acted = await options.policy.act(states, options.rng);
    // All at once, awaited together; applied in episode order (never in completion order).
    const results = await Promise.all(
      running.map(async (e, i) => {
        const result = await e.env.step(acted.actions[i]);
        options.progress?.stepDone(result);
        return result;
      }),
    );
    results.forEach((result, i) => {
      applyStep(running[i], states[i], acted, i, result, options.phase);
      countStep(tally, result, options.phase);
      endAtHorizon(running[i]);
    });
    if (options.phase === 'dream')
      options.failures?.recordStep(
        results.filter((r) => r.info.dream?.predicted).map((r) => r.info.dream!.engineError),
      );
  }
}

/** A real start that used its horizon is truncated there, as an episode at the step limit is. */
function endAtHorizon(e: Episode): void {
  if (e.done || !e.realStart || e.record.length < e.realStart.horizon) return;
  e.done = true;
  const last = e.steps[e.steps.length - 1];
  if (last) last.truncated = true;
  e.record[e.record.length - 1].truncated = true;
}

/** The running episodes whose next step the budget pays for; the others are cut. */
function payableEpisodes(episodes: Episode[], stepsLeft: number): Episode[] {
  const running = episodes.filter((e) => !e.done);
  if (stepsLeft >= running.length) return running;
  const paid = Math.max(0, stepsLeft);
  for (const e of running.slice(paid)) cut(e);
  return running.slice(0, paid);
}

/** Ends an episode the budget cannot pay for: its last step counts as truncated. */
function cut(e: Episode): void {
  e.done = true;
  e.cut = true;
  const last = e.steps[e.steps.length - 1];
  if (last) last.truncated = true;
}

/** A dreamed step whose answer was unusable: kept for inspection, never learned from. */
function unusable(result: StepResult, phase: Phase): boolean {
  return phase === 'dream' && result.info.dream?.invalid === true;
}

function applyStep(
  e: Episode,
  state: PolicyState,
  acted: ActResult,
  i: number,
  result: StepResult,
  phase: Phase,
): void {
  const action = acted.actions[i];
  const dream = result.info.dream;
  const skip = unusable(result, phase);
  e.record.push({
    observation: e.obs.text,
    admissible: e.obs.admissible,
    action,
    next: result,
    actionIndex: acted.actionIndices[i],
    probabilities: acted.probs[i],
    ...(acted.priors[i] ? { prior: acted.priors[i]! } : {}),
    reward: result.reward,
    terminated: result.terminated,
    truncated: result.truncated,
    valid: !skip && result.info.valid,
    ...(skip ? { dreamInvalid: true, ...(dream?.invalidReason ? { invalidReason: dream.invalidReason } : {}) } : {}),
    ...(dream?.cached ? { cached: true } : {}),
    ...(dream?.disagreement !== undefined ? { disagreement: dream.disagreement } : {}),
    ...(dream?.novelty !== undefined ? { novelty: dream.novelty } : {}),
    ...(dream?.halted ? { halted: true } : {}),
    ...(dream?.redraws ? { redraws: dream.redraws } : {}),
    ...(dream?.reasoning ? { reasoning: dream.reasoning } : {}),
    ...(dream?.predicted ? { asked: true } : {}),
    ...(dream?.answer ? { answer: dream.answer } : {}),
  });
  if (!skip) {
    e.steps.push({
      state,
      action: acted.actionIndices[i],
      logProb: acted.logProbs[i],
      value: acted.values[i],
      prior: acted.priors[i],
      reward: result.reward,
      terminated: result.terminated,
      truncated: result.truncated,
      episodeId: e.episodeId,
      groupId: e.groupId,
    });
  } else if (result.truncated && e.steps.length > 0) {
    e.steps[e.steps.length - 1].truncated = true;
  }
  e.actions = [...e.actions, action];
  e.return += result.reward;
  e.obs = result;
  if (result.terminated || result.truncated) {
    e.done = true;
    e.success = result.info.success;
  } else if (result.admissible.length === 0) e.done = true; // nothing to choose from: the episode cannot go on
}

function countStep(tally: RolloutTally, result: StepResult, phase: Phase): void {
  tally.steps++;
  const dream = result.info.dream;
  if (phase !== 'dream' || !dream?.predicted) return;
  tally.predictions++;
  tally.tokens += dream.tokens;
  if (dream.cached) tally.cacheHits++;
  if (dream.halted) tally.halts++;
  tally.redraws += dream.redraws ?? 0;
  if (dream.disagreement !== undefined) {
    tally.disagreement += dream.disagreement;
    tally.judged++;
  }
  if (unusable(result, phase)) tally.invalid++;
}
