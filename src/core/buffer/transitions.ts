/** Episodes (our trajectory records) → replay-buffer transitions and episode records. */
import type { Trajectory } from '../types';
import type { BufferEpisode, BufferTransition, TransitionSource } from './types';

export interface ToTransitionsOptions {
  source: TransitionSource;
  /** ms since epoch, supplied by the caller (the clock is read at the edge, not in core). */
  createdAt: number;
  runId?: string;
}

export function transitionId(episodeId: string, stepIndex: number): string {
  return `${episodeId}#${stepIndex}`;
}

/** One transition per step: (s, a, r, s') with s' the next step's observation (or the final one). */
export function trajectoryToTransitions(
  t: Trajectory,
  options: ToTransitionsOptions,
): { transitions: BufferTransition[]; episode: BufferEpisode } {
  const transitions = t.steps.map((step, i): BufferTransition => {
    const next = t.steps[i + 1];
    return {
      id: transitionId(t.id, i),
      env: t.env,
      taskId: t.task.id,
      instruction: t.task.instruction,
      episodeId: t.id,
      stepIndex: i,
      observation: step.observation,
      admissible: step.admissible,
      action: step.action,
      nextObservation: next ? next.observation : t.final_observation,
      nextAdmissible: next ? next.admissible : [],
      reward: step.reward,
      terminated: step.terminated,
      truncated: step.truncated,
      source: options.source,
      valid: step.valid,
      ...(step.thought ? { reasoning: step.thought } : {}),
      createdAt: options.createdAt,
      ...(options.runId ? { runId: options.runId } : {}),
    };
  });
  const episode: BufferEpisode = {
    id: t.id,
    env: t.env,
    taskId: t.task.id,
    source: options.source,
    steps: t.steps.length,
    return: t.steps.reduce((s, x) => s + x.reward, 0),
    success: t.result.success,
    createdAt: options.createdAt,
    ...(options.runId ? { runId: options.runId } : {}),
  };
  return { transitions, episode };
}
