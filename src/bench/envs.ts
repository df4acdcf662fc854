/**
 * `bench envs`: environment steps per second, random and expert episodes on pre-generated tasks,
 * for each built-in env at a small and a large configuration. The CLI prints the table, with the
 * 1,000-product WebShop of the same run as the reference.
 */
import { TimeLimit, expertOf } from '../core/envs/env';
import { getEnvDefinition } from '../core/envs/registry';
import { Rng } from '../core/rng';
import type { Task } from '../core/types';

export interface EnvBenchCase {
  label: string;
  env: string;
  create: Record<string, unknown>;
  level: number;
}

export const ENV_BENCH_CASES: EnvBenchCase[] = [
  { label: 'mini-WebShop, 1,000 products', env: 'webshop-lite-v0', create: { catalogSize: 1000 }, level: 0.5 },
  { label: 'mini-WebShop, 5,000 products', env: 'webshop-lite-v0', create: { catalogSize: 5000 }, level: 0.5 },
  { label: 'mini-household, small rooms (level 0)', env: 'household-v0', create: {}, level: 0 },
  { label: 'mini-household, large rooms (level 1)', env: 'household-v0', create: {}, level: 1 },
  { label: 'mini-WebArena, one-page lists (level 0)', env: 'webarena-lite-v0', create: {}, level: 0 },
  { label: 'mini-WebArena, 5-page lists (level 1)', env: 'webarena-lite-v0', create: {}, level: 1 },
];

export interface EnvBenchRow {
  label: string;
  env: string;
  steps: number;
  steps_per_second: number;
  random_steps_per_second: number;
  expert_steps_per_second: number;
  reset_ms: number;
  task_generation_ms: number;
  ratio_to_reference: number;
}

/** Times step() over random and expert episodes on pre-generated tasks. */
export async function benchEnvCase(
  c: EnvBenchCase,
  episodes: number,
): Promise<Omit<EnvBenchRow, 'ratio_to_reference'>> {
  const definition = getEnvDefinition(c.env);
  const env = new TimeLimit(definition.create({ ...c.create, difficulty: c.level }), definition.defaultStepLimit);
  const t0 = performance.now();
  const tasks: Task[] = [];
  for (let i = 0; i < episodes; i++) {
    const knobs = { ...(definition.knobsForLevel(c.level) as Record<string, unknown>), ...c.create };
    tasks.push(definition.generateTask(50_000 + i, knobs));
  }
  const taskMs = (performance.now() - t0) / episodes;
  const result = { random: { steps: 0, ms: 0 }, expert: { steps: 0, ms: 0 } };
  let resetMs = 0;
  const expert = expertOf(env)!;
  for (const policy of ['random', 'expert'] as const) {
    const rng = Rng.fromSeed(1, 'bench', policy);
    for (let i = 0; i < episodes; i++) {
      const r0 = performance.now();
      let obs = await env.reset({ seed: 50_000 + i, task: tasks[i] });
      resetMs += performance.now() - r0;
      for (;;) {
        const action = policy === 'random' ? rng.pick(obs.admissible) : expert.expertAction()!;
        const s0 = performance.now();
        const step = await env.step(action);
        result[policy].ms += performance.now() - s0;
        result[policy].steps++;
        obs = step;
        if (step.terminated || step.truncated) break;
      }
    }
  }
  const steps = result.random.steps + result.expert.steps;
  const ms = result.random.ms + result.expert.ms;
  return {
    label: c.label,
    env: c.env,
    steps,
    steps_per_second: Math.round(steps / (ms / 1000)),
    random_steps_per_second: Math.round(result.random.steps / (result.random.ms / 1000)),
    expert_steps_per_second: Math.round(result.expert.steps / (result.expert.ms / 1000)),
    reset_ms: roundMs(resetMs / (2 * episodes)),
    task_generation_ms: roundMs(taskMs),
  };
}

/** Milliseconds to the microsecond. */
function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
