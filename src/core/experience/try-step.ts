/**
 * "Try one step": the quickest way to judge an experience model before a long run. From a real
 * state of a registered environment (a held-out task, a few expert steps in), the model predicts
 * the next state of the expert's next action, and the real environment takes the same action:
 * the prompt (chat models), the raw answer and every retry, the parsed prediction beside what
 * really happens, and the tokens and milliseconds it cost. The page's Setup runs it in the trainer
 * worker (the engine loaded as for a run); `dreamgym train --estimate` uses it to measure the
 * engine's speed.
 *
 * Seeds come from the held-out range, so the task is never one a run trains on (and a transition
 * cache never serves it to a run).
 */
import { expertOf, HELD_OUT_SEED_BASE } from '../envs/env';
import { makeEnv } from '../envs/registry';
import type { Observation, Step, StepResult, Task } from '../types';
import type { ExperienceModel, Prediction } from './types';

/** Where "Try one step" tasks come from: held-out seeds no run trains on (nor the token bench's). */
export const TRY_STEP_SEED_BASE = HELD_OUT_SEED_BASE + 700_000;

export interface TryStepOptions {
  envId: string;
  /** Which try (0, 1, 2, …): picks the task and how many expert steps in the state is. */
  attempt?: number;
  /** ms, monotonic: the wall time of the prediction (default: the prediction's own usage.ms). */
  clock?: () => number;
}

export interface TryStepResult {
  env: string;
  label: string;
  task: Task;
  /** The real steps before the state (the model sees them as history). */
  history: Step[];
  state: { text: string; admissible: string[] };
  action: string;
  prediction: Prediction;
  /** What the real environment returns for the same action. */
  real: { text: string; admissible: string[]; reward: number; terminated: boolean; valid: boolean; success: boolean };
  /** Wall time of the prediction (retries included). */
  ms: number;
  tokens: { prompt: number; completion: number };
}

export async function tryOneStep(model: ExperienceModel, options: TryStepOptions): Promise<TryStepResult> {
  const attempt = Math.max(0, Math.floor(options.attempt ?? 0));
  const env = makeEnv(options.envId);
  const expert = expertOf(env);
  if (!expert)
    throw new Error(
      `'${options.envId}' has no expert to choose an action with; Try one step needs a registered environment.`,
    );
  let obs: Observation = await env.reset({ seed: TRY_STEP_SEED_BASE + attempt });
  const task = obs.task;
  const history: Step[] = [];
  // A state a few steps in (0, 1 or 2 expert steps), so the history and a later page are tried too.
  for (let i = 0; i < attempt % 3; i++) {
    const action = expert.expertAction();
    if (!action) break;
    const r = await env.step(action);
    if (r.terminated || r.truncated || r.admissible.length === 0) break;
    history.push({
      observation: obs.text,
      admissible: obs.admissible.slice(),
      action,
      reward: r.reward,
      terminated: false,
      truncated: false,
      valid: r.info.valid,
    });
    obs = r;
  }
  const action = expert.expertAction() ?? obs.admissible[0];
  const state = { text: obs.text, admissible: obs.admissible.slice(), task };
  const started = options.clock?.();
  const prediction = await model.next({ task, history, state, action });
  const ms = started !== undefined ? options.clock!() - started : prediction.usage.ms;
  const real: StepResult = await env.step(action);
  return {
    env: options.envId,
    label: model.label,
    task,
    history,
    state: { text: state.text, admissible: state.admissible },
    action,
    prediction,
    real: {
      text: real.text,
      admissible: real.admissible.slice(),
      reward: real.reward,
      terminated: real.terminated,
      valid: real.info.valid,
      success: real.info.success,
    },
    ms,
    tokens: { prompt: prediction.usage.promptTokens, completion: prediction.usage.completionTokens },
  };
}
