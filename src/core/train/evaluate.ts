/**
 * Held-out evaluation in the real environment: greedy actions on tasks whose seeds are never used
 * for training, all episodes stepped together in chunks for batched inference.
 *
 * The held-out tasks come in two splits (docs/architecture.md §7.1). Dev (seeds from 1e9) is for tuning, the
 * audit, the page and every evaluation a run makes while it trains. Test (seeds from 2e9) is only
 * for the reported tables (`experiment --split test`) and final evaluations asked for by name
 * (`train --split test`, `eval --split test`): no training or recipe decision ever sees it. This
 * file is the only place under src/ that knows where the test seeds start.
 */
import { Rng } from '../rng';
import type { Observation, Step, StepResult, Task, Trajectory } from '../types';
import { HELD_OUT_SEED_BASE, stepRecord, type Env } from '../envs/env';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import type { CandidatePolicy } from '../policy/policy';
import type { PolicyState } from '../policy/features';

/** Which held-out tasks an evaluation plays: dev (tuning, audits, the page) or test (reported tables only). */
export type EvalSplit = 'dev' | 'test';
export const EVAL_SPLITS: readonly EvalSplit[] = ['dev', 'test'];

/** First seed of the test split; dev starts at HELD_OUT_SEED_BASE (1e9), so each split has 1e9 seeds. */
export const TEST_SEED_BASE = 2_000_000_000;
/** Most tasks one evaluation plays (the dev range's tail, from +500,000, holds the benches' episodes). */
export const MAX_EVAL_EPISODES = 100_000;

/** The seed of held-out task `index` (0-based) of a split. */
export function heldOutSeed(split: EvalSplit, index: number): number {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_EVAL_EPISODES)
    throw new RangeError(`A held-out task index must be an integer within 0..${MAX_EVAL_EPISODES - 1}; got ${index}.`);
  if (split !== 'dev' && split !== 'test')
    throw new RangeError(`Unknown held-out split '${String(split)}'; use ${EVAL_SPLITS.join(' or ')}.`);
  return (split === 'test' ? TEST_SEED_BASE : HELD_OUT_SEED_BASE) + index;
}

/** The split a task seed belongs to (null: a training seed, below 1e9). */
export function splitOfSeed(seed: number): EvalSplit | null {
  return seed >= TEST_SEED_BASE ? 'test' : seed >= HELD_OUT_SEED_BASE ? 'dev' : null;
}

/** How a split's seeds read in logs and tables, e.g. `test split (seeds 2000000000…2000000199)`. */
export function describeSplit(split: EvalSplit, episodes: number): string {
  const first = heldOutSeed(split, 0);
  return `${split} split (seeds ${first}…${first + Math.max(0, episodes - 1)})`;
}

export interface EvalResult {
  /** The held-out split the tasks came from (seeds heldOutSeed(split, 0 … episodes − 1)). */
  split: EvalSplit;
  success: number;
  score: number;
  episodes: number;
  meanSteps: number;
}

/** How one greedy episode ended. */
export interface GreedyOutcome {
  success: boolean;
  score: number;
  return: number;
  length: number;
}

/**
 * Plays greedy episodes from their first observations, all stepped together (one batched policy
 * call per step). An episode ends when it terminates, is truncated, or has nothing to choose from.
 */
export async function playGreedy(
  policy: CandidatePolicy,
  starts: readonly { env: Env; task: Task; obs: Observation }[],
  stepLimit: number,
): Promise<GreedyOutcome[]> {
  const rng = Rng.fromSeed(0, 'eval'); // unused by greedy acting; act() takes a stream
  const running = starts.map((s) => ({
    ...s,
    actions: [] as string[],
    done: s.obs.admissible.length === 0,
    outcome: { success: false, score: 0, return: 0, length: 0 } as GreedyOutcome,
  }));
  for (let t = 0; ; t++) {
    const active = running.filter((e) => !e.done);
    if (active.length === 0) break;
    const states: PolicyState[] = active.map((e) => ({
      instruction: e.task.instruction,
      observation: e.obs.text,
      admissible: e.obs.admissible,
      step: t,
      maxSteps: stepLimit,
      previousActions: e.actions,
    }));
    const acted = await policy.act(states, rng, { greedy: true });
    for (let i = 0; i < active.length; i++) {
      const e = active[i];
      const r = await e.env.step(acted.actions[i]);
      e.actions = [...e.actions, acted.actions[i]];
      e.obs = r;
      e.outcome.length++;
      e.outcome.return += r.reward;
      if (r.terminated || r.truncated) {
        e.done = true;
        e.outcome.success = r.info.success;
        e.outcome.score = r.info.score ?? (r.info.success ? 1 : 0);
      } else if (r.admissible.length === 0) e.done = true;
    }
  }
  return running.map((e) => e.outcome);
}

/**
 * Greedy success and score on the first `episodes` held-out tasks of a split (dev unless asked) of
 * a registered env, in chunks for batched inference.
 */
export async function evaluatePolicy(
  policy: CandidatePolicy,
  envId: string,
  difficulty: number,
  episodes: number,
  options: { split?: EvalSplit; chunk?: number } = {},
): Promise<EvalResult> {
  const { split = 'dev', chunk = 100 } = options;
  if (episodes > 0) heldOutSeed(split, episodes - 1); // the split and the count are valid
  const definition = getEnvDefinition(envId);
  let successes = 0,
    score = 0,
    steps = 0;
  for (let start = 0; start < episodes; start += chunk) {
    const starts: { env: Env; task: Task; obs: Observation }[] = [];
    for (let i = start; i < Math.min(episodes, start + chunk); i++) {
      const seed = heldOutSeed(split, i);
      const env = makeEnv(envId);
      const task = definition.generateTask(seed, difficulty);
      starts.push({ env, task, obs: await env.reset({ seed, task }) });
    }
    for (const o of await playGreedy(policy, starts, definition.defaultStepLimit)) {
      if (o.success) successes++;
      score += o.score;
      steps += o.length;
    }
  }
  return { split, success: successes / episodes, score: score / episodes, episodes, meanSteps: steps / episodes };
}

/** One greedy episode of `policy` in a real env, recorded as a trajectory (the on-policy audit plays these). */
export async function recordGreedyEpisode(
  policy: CandidatePolicy,
  env: Env,
  task: Task,
  seed: number,
  name = 'agent',
): Promise<Trajectory> {
  const rng = Rng.fromSeed(seed, 'greedy-record');
  let obs = await env.reset({ seed, task });
  const steps: Step[] = [];
  const stepLimit = getEnvDefinition(env.id).defaultStepLimit;
  let result: StepResult | null = null;
  while (obs.admissible.length > 0) {
    const acted = await policy.act(
      [
        {
          instruction: task.instruction,
          observation: obs.text,
          admissible: obs.admissible,
          step: steps.length,
          maxSteps: stepLimit,
          previousActions: steps.map((s) => s.action),
        },
      ],
      rng,
      { greedy: true },
    );
    const action = acted.actions[0];
    result = await env.step(action);
    steps.push(stepRecord(obs, action, result));
    obs = result;
    if (result.terminated || result.truncated) break;
  }
  const success = result?.info.success ?? false;
  return {
    format: 'dreamgym-trajectory/1',
    id: `${env.id}/${name}/${seed}`,
    env: env.id,
    seed,
    source: 'agent',
    task,
    steps,
    final_observation: obs.text,
    result: {
      reward: steps.reduce((s, x) => s + x.reward, 0),
      success,
      score: result?.info.score ?? (success ? 1 : 0),
      steps: steps.length,
      terminate_reason: success
        ? 'success'
        : result?.terminated
          ? 'terminated'
          : result?.truncated
            ? 'truncated'
            : 'unfinished',
    },
  };
}
