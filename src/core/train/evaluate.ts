/**
 * Held-out evaluation in the real environment: greedy actions on tasks whose seeds (≥ 1e9) are
 * never used for training, all episodes stepped together in chunks for batched inference.
 */
import { Rng } from '../rng';
import type { Observation } from '../types';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import type { CandidatePolicy } from '../policy/policy';
import type { PolicyState } from '../policy/features';

export const EVAL_SEED_BASE = 1_000_000_000;

export interface EvalResult { success: number; score: number; episodes: number; meanSteps: number }

export async function evaluatePolicy(policy: CandidatePolicy, envId: string, difficulty: number, episodes: number, chunk = 100): Promise<EvalResult> {
  const definition = getEnvDefinition(envId);
  const rng = Rng.fromSeed(0, 'eval'); // unused by greedy acting; act() takes a stream
  let successes = 0, score = 0, steps = 0;
  for (let start = 0; start < episodes; start += chunk) {
    const count = Math.min(chunk, episodes - start);
    const running: { env: ReturnType<typeof makeEnv>; obs: Observation; actions: string[]; done: boolean }[] = [];
    for (let i = 0; i < count; i++) {
      const seed = EVAL_SEED_BASE + start + i;
      const env = makeEnv(envId);
      const obs = await env.reset({ seed, task: definition.generateTask(seed, difficulty) });
      running.push({ env, obs, actions: [], done: false });
    }
    for (let t = 0; ; t++) {
      const active = running.filter((e) => !e.done);
      if (active.length === 0) break;
      const states: PolicyState[] = active.map((e) => ({ instruction: e.obs.task.instruction, observation: e.obs.text,
        admissible: e.obs.admissible, step: t, maxSteps: definition.defaultStepLimit, previousActions: e.actions }));
      const acted = await policy.act(states, rng, { greedy: true });
      for (let i = 0; i < active.length; i++) {
        const e = active[i];
        const r = await e.env.step(acted.actions[i]);
        e.actions = [...e.actions, acted.actions[i]];
        e.obs = r;
        steps++;
        if (r.terminated || r.truncated) {
          e.done = true;
          if (r.info.success) successes++;
          score += r.info.score ?? (r.info.success ? 1 : 0);
        }
      }
    }
  }
  return { success: successes / episodes, score: score / episodes, episodes, meanSteps: steps / episodes };
}
