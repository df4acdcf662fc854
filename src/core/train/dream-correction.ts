/**
 * S2R that corrects the dream (issue 43, part 5; beyond the paper). An S2R run spends
 * `s2rCorrectFraction` of its real budget during the dream: at a few dream iterations it replays
 * the episodes the dream judged successes in the real env, from the same task, action by action.
 * A miss (the dream said success, the real env did not) and a confirmation are real episodes; the
 * experience model learns from them (`ExperienceModel.correct`: the learned model refits its
 * verdict head with them, the halt adds them to its real data) and the dream goes on, corrected.
 * The rest of the budget stays plain S2R real RL after the dream.
 *
 * Schedule: `s2rCorrectRounds` rounds, evenly spaced over the dream iterations and never after the
 * last one (a correction then would correct a dream that no longer runs). The first round comes
 * once the agent has trained a while in the dream, when its claimed successes start to include
 * the dream's exploits; the later ones catch the exploits it finds next. Round k may have spent
 * k/rounds of the correction budget by its end; what a round leaves goes to the next one, and what
 * the last leaves to the real phase, so the run's real steps are the same with correction or without.
 *
 * A round replays the claimed successes of its own iteration only (the checkpoint keeps what each
 * round replayed, so a resumed run replays the same again and rebuilds the same model: the real
 * env is deterministic given the task and the actions). A replay:
 * - starts only where the budget left pays for all its actions, so none is cut;
 * - begins with the recorded real prefix where the dream began at a real state mid-episode (those
 *   real steps are spent again), and is skipped, at no cost, where the real env's first state is
 *   not the one the dream (or its prefix) began in, or the task is dream-only (no real env plays it);
 * - stops at its first step the real env refuses: the dream's path left reality there (a miss).
 * Identical replays (task, start and actions) are played once.
 */
import { isDreamOnly } from '../curriculum/curriculum';
import type { Env } from '../envs/env';
import type { RecordedEpisode } from '../experience/learned/sft-data';
import type { Task, Transition } from '../types';
import type { TrainConfig } from './config';
import type { Episode } from './rollout';

/** A dreamed success to replay: its task, the first state the dream began in, and the steps the dream accepted. */
export interface ReplayPlan {
  task: Task;
  /** The dream's first observation (the real env's start of the task, unless the dream began elsewhere). */
  start: string;
  /** The actions of the dream's valid steps, in order (a no-op changed nothing in the dream, so it is not replayed). */
  actions: string[];
}

/** What one round replayed (kept in the checkpoint: a resumed run replays it again to rebuild the model). */
export interface CorrectionRecord {
  iteration: number;
  plans: ReplayPlan[];
  /** Real steps it spent. */
  steps: number;
}

/** One replay's real episode and outcome. */
export interface Replayed {
  episode: RecordedEpisode;
  success: boolean;
  steps: number;
}

/** A round's replays and what they cost. */
export interface CorrectionRound {
  record: CorrectionRecord;
  replays: Replayed[];
  /** Replays that did not succeed in the real env (the dream's false successes). */
  misses: number;
}

type CorrectionSettings = Pick<TrainConfig, 'mode' | 'iterations' | 's2rCorrectFraction' | 's2rCorrectRounds'>;

/** Real steps the correction may spend in all: its share of the S2R real budget. */
export function correctionBudget(config: CorrectionSettings, realBudget: number): number {
  return config.mode === 's2r' ? Math.floor(config.s2rCorrectFraction * realBudget) : 0;
}

/** The round (1-based) a dream iteration ends with, or 0: rounds at k·iterations/(rounds+1), k = 1…rounds. */
export function correctionRoundAt(config: CorrectionSettings, iteration: number): number {
  if (config.mode !== 's2r' || config.s2rCorrectFraction <= 0) return 0;
  const rounds = config.s2rCorrectRounds;
  for (let k = 1; k <= rounds; k++)
    if (Math.max(1, Math.round((k * config.iterations) / (rounds + 1))) === iteration) return k;
  return 0;
}

/** Real steps rounds 1…k may have spent together. */
export function roundAllowance(config: CorrectionSettings, realBudget: number, round: number): number {
  return Math.floor((correctionBudget(config, realBudget) * round) / config.s2rCorrectRounds);
}

/** The episodes the dream judged successes, as plans to replay (identical ones once, replayable ones only). */
export function claimedSuccesses(episodes: readonly Episode[]): ReplayPlan[] {
  const plans = new Map<string, ReplayPlan>();
  for (const e of episodes) {
    if (!e.success || e.cut || isDreamOnly(e.task) || e.record.length === 0) continue;
    // A dream begun at a real state replays the real steps before it first (their no-ops changed nothing).
    const prefix = e.realStart?.prefix ?? [];
    const plan = {
      task: e.task,
      start: prefix[0]?.observation ?? e.record[0].observation,
      actions: [...prefix, ...e.record].filter((r) => r.valid).map((r) => r.action),
    };
    const key = JSON.stringify([plan.task.id, plan.start, plan.actions]);
    if (plan.actions.length > 0 && !plans.has(key)) plans.set(key, plan);
  }
  return [...plans.values()];
}

/**
 * Plays a plan in a real env: its actions in order until the env ends the episode, refuses an
 * action, or the actions run out. Null (nothing spent) when the env's first state is not the one
 * the dream began in.
 */
export async function replayInReal(env: Env, plan: ReplayPlan, episodeId: string): Promise<Replayed | null> {
  let state = await env.reset({ seed: plan.task.seed ?? 0, task: plan.task });
  if (state.text !== plan.start) return null;
  const steps: Transition[] = [];
  let success = false;
  for (const action of plan.actions) {
    const result = await env.step(action);
    steps.push({
      id: `${episodeId}#${steps.length}`,
      env: plan.task.env,
      taskId: plan.task.id,
      instruction: plan.task.instruction,
      episodeId,
      stepIndex: steps.length,
      observation: state.text,
      admissible: state.admissible.slice(),
      action,
      nextObservation: result.text,
      nextAdmissible: result.admissible.slice(),
      reward: result.reward,
      terminated: result.terminated,
      truncated: result.truncated,
      source: 'real',
      valid: result.info.valid,
      createdAt: 0,
    });
    state = result;
    if (result.terminated || result.truncated) success = result.info.success;
    if (result.terminated || result.truncated || !result.info.valid) break;
  }
  const episode = { id: episodeId, taskId: plan.task.id, instruction: plan.task.instruction, steps };
  return { episode, success, steps: steps.length };
}

/**
 * One round: the plans replayed in order while `budget` pays for each one's actions in full.
 * `replayAll` (a resumed run rebuilding its model) plays every plan whatever it costs: they were paid for.
 */
export async function correctionRound(
  plans: readonly ReplayPlan[],
  options: { env: Env; budget: number; iteration: number; runId: string; replayAll?: boolean },
): Promise<CorrectionRound> {
  const record: CorrectionRecord = { iteration: options.iteration, plans: [], steps: 0 };
  const replays: Replayed[] = [];
  for (const plan of plans) {
    if (!options.replayAll && plan.actions.length > options.budget - record.steps) continue;
    const id = `${options.runId}/correct/${options.iteration}/${record.plans.length}`;
    const replayed = await replayInReal(options.env, plan, id);
    if (!replayed) continue;
    record.plans.push(plan);
    record.steps += replayed.steps;
    replays.push(replayed);
  }
  return { record, replays, misses: replays.filter((r) => !r.success).length };
}
