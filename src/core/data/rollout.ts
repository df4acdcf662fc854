/**
 * Baseline policies (expert, random, noisy-expert(ε)) and episode rollouts into our trajectory
 * records — the offline data that seeds the replay buffer, like the paper's mix of expert and
 * noisy/random real trajectories.
 */
import { Rng } from '../rng';
import type { Observation, Step, Task, Trajectory, TrajectorySource } from '../types';
import { expertOf, stepRecord, type Env } from '../envs/env';
import { getEnvDefinition } from '../envs/registry';
import { TRAJECTORY_FORMAT } from './trajectory';
import { DreamGymError } from '../errors';

export const BASELINE_POLICIES = ['expert', 'random', 'noisy-expert', 'decoy-expert'] as const;
export type BaselinePolicyName = (typeof BASELINE_POLICIES)[number];

export interface BaselinePolicy {
  name: BaselinePolicyName;
  /** e.g. { epsilon: 0.3 } for noisy-expert; recorded in the trajectory. */
  params: Record<string, number>;
  /** The action at step `step` (0-based) of an episode; `episode` is what was played so far. */
  act(obs: Observation, env: Env, rng: Rng, step: number, episode: EpisodeSoFar): Promise<string> | string;
}

/** The episode being played: its seed and task, and the actions taken so far. */
export interface EpisodeSoFar {
  seed: number;
  task: Task;
  actions: readonly string[];
}

export class PolicyConfigError extends DreamGymError {
  constructor(message: string) {
    super(message, { code: 'policy-config-invalid', fix: 'Correct the rollout policy option the message names.' });
    this.name = 'PolicyConfigError';
  }
}

function expertMove(env: Env): string {
  const expert = expertOf(env);
  if (!expert)
    throw new PolicyConfigError(
      `Environment '${env.id}' has no expert: the expert and noisy-expert policies need a ground-truth environment.`,
    );
  const action = expert.expertAction();
  if (action === null)
    throw new Error(
      `The expert of '${env.id}' has no move in a running episode; this is a bug in the environment's expert.`,
    );
  return action;
}

/**
 * An admissible action, other than `except`, that ends the episode right now, or null. Found by
 * trying each on a fresh copy of the env replayed to this point (ground-truth envs are cheap and
 * deterministic), so the policy needs no knowledge of the env's rules.
 */
async function endingAction(
  envId: string,
  obs: Observation,
  episode: EpisodeSoFar,
  except: string,
): Promise<string | null> {
  const definition = getEnvDefinition(envId);
  for (const action of obs.admissible) {
    if (action === except) continue;
    const copy = definition.create();
    await copy.reset({ seed: episode.seed, task: episode.task });
    for (const past of episode.actions) await copy.step(past);
    if ((await copy.step(action)).terminated) return action;
  }
  return null;
}

export interface NoisyExpertOptions {
  /** Chance of a random action each step. */
  epsilon?: number;
  /** Expert steps (drawn in 1..K per episode) before the noise starts. */
  expertSteps?: number;
  /** Chance, each step an admissible action would end the episode early, of taking it. */
  finishEarly?: number;
}

/**
 * noisy-expert(ε): the expert, with a random action with probability ε each step. With
 * `expertSteps: K` it follows the expert for the first k steps (k drawn in 1..K per episode) and
 * only then goes noisy: with ε = 1, an expert start and a random finish — the off-expert moves
 * near the goal (a wrong buy, a wrong put) that expert and random data both lack. With
 * `finishEarly: q` it is hasty: where an action other than the expert's would end the episode
 * now (WebShop's 'buy now' before every option is chosen, or on a product the expert would not
 * buy), it takes it with probability q — the premature finishes a policy in training tries
 * first, which an experience model must have seen to call failures. Where only the goal ends an
 * episode (household), it never fires and draws nothing.
 */
function noisyExpert(options: NoisyExpertOptions): BaselinePolicy {
  const epsilon = options.epsilon ?? 0.3;
  const { expertSteps, finishEarly } = options;
  if (!(epsilon >= 0 && epsilon <= 1))
    throw new PolicyConfigError(`--epsilon must be within 0..1 (the chance of a random action), got ${epsilon}.`);
  if (expertSteps !== undefined && !(Number.isInteger(expertSteps) && expertSteps >= 1)) {
    throw new PolicyConfigError(
      `--expert-steps must be a positive integer (expert steps before the noise starts), got ${expertSteps}.`,
    );
  }
  if (finishEarly !== undefined && !(finishEarly > 0 && finishEarly <= 1)) {
    throw new PolicyConfigError(
      `--finish-early must be within 0..1, above 0 (the chance of ending an episode early where an action would), got ${finishEarly}.`,
    );
  }
  let clean = 0;
  return {
    name: 'noisy-expert',
    params: {
      epsilon,
      ...(expertSteps !== undefined ? { expertSteps } : {}),
      ...(finishEarly !== undefined ? { finishEarly } : {}),
    },
    act: async (obs, env, rng, step, episode) => {
      if (step === 0) clean = expertSteps === undefined ? 0 : rng.int(1, expertSteps);
      if (step >= clean && rng.bool(epsilon)) return rng.pick(obs.admissible);
      const expert = expertMove(env);
      if (finishEarly === undefined) return expert;
      const early = await endingAction(env.id, obs, episode, expert);
      return early !== null && rng.bool(finishEarly) ? early : expert;
    },
  };
}

/**
 * decoy-expert: the expert of a decoy task first (the env's `decoyTask`: the same world, a goal
 * one detail off), played in a shadow copy of the env in step with the real one, until the decoy
 * is reached; then the real expert. Its episodes hold the goal-like steps that do not end an
 * episode (a put of the right object in a wrong place, of a wrong object in the right place) and
 * then a real finish. Where the env has no decoy for a task, it is the expert.
 */
function decoyExpert(): BaselinePolicy {
  let shadow: Env | null = null;
  return {
    name: 'decoy-expert',
    params: {},
    act: async (_obs, env, rng, step, episode) => {
      if (step === 0) shadow = await decoyShadow(env.id, episode, rng);
      const decoy = shadow && expertOf(shadow)?.expertAction();
      if (!shadow || !decoy) return expertMove(env);
      if ((await shadow.step(decoy)).terminated) shadow = null;
      return decoy;
    },
  };
}

async function decoyShadow(envId: string, episode: EpisodeSoFar, rng: Rng): Promise<Env | null> {
  const definition = getEnvDefinition(envId);
  if (!definition.decoyTask)
    throw new PolicyConfigError(
      `Environment '${envId}' has no decoy tasks: the decoy-expert policy needs an env whose definition has decoyTask.`,
    );
  const decoy = definition.decoyTask(episode.task, rng);
  if (!decoy) return null;
  const shadow = definition.create();
  await shadow.reset({ seed: episode.seed, task: decoy });
  return shadow;
}

export function makeBaselinePolicy(name: string, options: NoisyExpertOptions = {}): BaselinePolicy {
  switch (name) {
    case 'expert':
      return { name, params: {}, act: (_obs, env) => expertMove(env) };
    case 'random':
      return { name, params: {}, act: (obs, _env, rng) => rng.pick(obs.admissible) };
    case 'noisy-expert':
      return noisyExpert(options);
    case 'decoy-expert':
      return decoyExpert();
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
  let reward = 0,
    score = 0,
    success = false;
  let reason: Trajectory['result']['terminate_reason'] = 'unfinished';
  const maxSteps = options.maxSteps ?? 1000;
  while (steps.length < maxSteps) {
    const action = await policy.act(obs, env, rng, steps.length, {
      seed: options.seed,
      task,
      actions: steps.map((s) => s.action),
    });
    const result = await env.step(action);
    steps.push(stepRecord(obs, action, result));
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
    format: TRAJECTORY_FORMAT,
    id: `${env.id}/${source}/${options.seed}`,
    env: env.id,
    seed: options.seed,
    source,
    ...(Object.keys(policy.params).length > 0 ? { policy: { ...policy.params } } : {}),
    task,
    steps,
    final_observation: obs.text,
    result: { reward, success, score, steps: steps.length, terminate_reason: reason },
  };
}
