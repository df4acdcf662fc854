/**
 * Baseline policies (expert, random, noisy-expert(ε)) and episode rollouts into our trajectory
 * records — the offline data that seeds the replay buffer, like the paper's mix of expert and
 * noisy/random real trajectories.
 */
import { Rng } from '../rng';
import type { Observation, Step, Task, Trajectory, TrajectorySource } from '../types';
import { expertOf, type Env } from '../envs/env';
import { TRAJECTORY_FORMAT } from './trajectory';

export const BASELINE_POLICIES = ['expert', 'random', 'noisy-expert'] as const;
export type BaselinePolicyName = (typeof BASELINE_POLICIES)[number];

export interface BaselinePolicy {
  name: BaselinePolicyName;
  /** e.g. { epsilon: 0.3 } for noisy-expert; recorded in the trajectory. */
  params: Record<string, number>;
  /** The action at step `step` (0-based) of an episode. */
  act(obs: Observation, env: Env, rng: Rng, step: number): string;
}

export class PolicyConfigError extends Error {
  constructor(message: string) { super(message); this.name = 'PolicyConfigError'; }
}

function expertMove(env: Env): string {
  const expert = expertOf(env);
  if (!expert) throw new PolicyConfigError(`Environment '${env.id}' has no expert: the expert and noisy-expert policies need a ground-truth environment.`);
  const action = expert.expertAction();
  if (action === null) throw new Error(`The expert of '${env.id}' has no move in a running episode; this is a bug in the environment's expert.`);
  return action;
}

/**
 * noisy-expert(ε): the expert, with a random action with probability ε each step. With
 * `expertSteps: K` it follows the expert for the first k steps (k drawn in 1..K per episode) and
 * only then goes noisy: with ε = 1, an expert start and a random finish — the off-expert moves
 * near the goal (a wrong buy, a wrong put) that expert and random data both lack.
 */
export function makeBaselinePolicy(name: string, options: { epsilon?: number; expertSteps?: number } = {}): BaselinePolicy {
  switch (name) {
    case 'expert':
      return { name, params: {}, act: (_obs, env) => expertMove(env) };
    case 'random':
      return { name, params: {}, act: (obs, _env, rng) => rng.pick(obs.admissible) };
    case 'noisy-expert': {
      const epsilon = options.epsilon ?? 0.3;
      if (!(epsilon >= 0 && epsilon <= 1)) throw new PolicyConfigError(`--epsilon must be within 0..1 (the chance of a random action), got ${epsilon}.`);
      const expertSteps = options.expertSteps;
      if (expertSteps !== undefined && !(Number.isInteger(expertSteps) && expertSteps >= 1)) {
        throw new PolicyConfigError(`--expert-steps must be a positive integer (expert steps before the noise starts), got ${expertSteps}.`);
      }
      let clean = 0;
      return {
        name, params: { epsilon, ...(expertSteps !== undefined ? { expertSteps } : {}) },
        act: (obs, env, rng, step) => {
          if (step === 0) clean = expertSteps === undefined ? 0 : rng.int(1, expertSteps);
          return step >= clean && rng.bool(epsilon) ? rng.pick(obs.admissible) : expertMove(env);
        },
      };
    }
    default:
      throw new PolicyConfigError(`Unknown policy '${name}'. Valid policies: ${BASELINE_POLICIES.join(', ')}.`);
  }
}

export interface RolloutOptions {
  seed: number;
  task?: Task;
  /** Safety cap when the env has no step limit of its own. */
  maxSteps?: number;
}

/** Plays one episode with `policy` and records it. */
export async function rolloutEpisode(env: Env, policy: BaselinePolicy, options: RolloutOptions): Promise<Trajectory> {
  const rng = Rng.fromSeed(options.seed, 'policy', policy.name);
  let obs = await env.reset({ seed: options.seed, ...(options.task ? { task: options.task } : {}) });
  const task = obs.task;
  const steps: Step[] = [];
  let reward = 0, score = 0, success = false;
  let reason: Trajectory['result']['terminate_reason'] = 'unfinished';
  const maxSteps = options.maxSteps ?? 1000;
  while (steps.length < maxSteps) {
    const action = policy.act(obs, env, rng, steps.length);
    const result = await env.step(action);
    steps.push({ observation: obs.text, admissible: obs.admissible, action, reward: result.reward,
      terminated: result.terminated, truncated: result.truncated, valid: result.info.valid });
    reward += result.reward;
    obs = result;
    if (result.terminated || result.truncated) {
      success = result.info.success;
      score = result.info.score ?? (success ? 1 : 0);
      reason = success ? 'success' : result.terminated ? 'terminated' : 'truncated';
      break;
    }
  }
  const source: TrajectorySource = policy.name;
  return {
    format: TRAJECTORY_FORMAT, id: `${env.id}/${source}/${options.seed}`, env: env.id, seed: options.seed, source,
    ...(Object.keys(policy.params).length > 0 ? { policy: { ...policy.params } } : {}),
    task, steps, final_observation: obs.text,
    result: { reward, success, score, steps: steps.length, terminate_reason: reason },
  };
}
