/**
 * Real transitions no run trains on, as dream contexts: the states of held-out episodes (seeds ≥ 1e9),
 * expert and random episodes alternating, each with the actions that replay it on a fresh env. The
 * Experience model page dreams them beside the real answer; `dreamgym bench dream` times a model on them.
 */
import { HELD_OUT_SEED_BASE } from '../envs/env';
import { makeBaselinePolicy, rolloutEpisode } from '../data/rollout';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import type { Step, Task } from '../types';
import type { DreamContext } from './types';

/** One held-out transition: its dream context, and the task and actions that reach it in the real env. */
export interface HeldOutContext {
  ctx: DreamContext;
  replay: { task: Task; actions: string[] };
}

/** `count` held-out real transitions as dream contexts (expert and random episodes alternating). */
export async function heldOutContexts(envId: string, count: number, seed = 0): Promise<HeldOutContext[]> {
  const definition = getEnvDefinition(envId);
  const out: HeldOutContext[] = [];
  for (let i = 0; out.length < count; i++) {
    const episodeSeed = HELD_OUT_SEED_BASE + 700_000 + seed + i;
    const task = definition.generateTask(episodeSeed, 0);
    const t = await rolloutEpisode(makeEnv(envId), makeBaselinePolicy(i % 2 === 0 ? 'expert' : 'random'), {
      seed: episodeSeed,
      task,
    });
    t.steps.forEach((s, k) => {
      const history: Step[] = t.steps.slice(0, k);
      out.push({
        ctx: { task, history, state: { text: s.observation, admissible: s.admissible, task }, action: s.action },
        replay: { task, actions: t.steps.slice(0, k + 1).map((x) => x.action) },
      });
    });
  }
  return out.slice(0, count);
}
