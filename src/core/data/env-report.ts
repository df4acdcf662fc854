/**
 * The environment report behind `dreamgym check-env`: the contract check, expert and random
 * baselines across difficulty levels, a determinism replay, and step throughput.
 */
import { checkEnv } from '../envs/check-env';
import { Wrapper, type Env, type ResetOptions } from '../envs/env';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import { makeBaselinePolicy, rolloutEpisode } from './rollout';
import { trajectoryToJsonLine } from './trajectory';
import type { Observation, StepResult, Trajectory } from '../types';

export const REPORT_LEVELS = [0, 0.25, 0.5, 0.75, 1] as const;

export interface BaselineStats {
  success: number;
  score: number;
  mean_steps: number;
  episodes: number;
}

export interface EnvReport {
  env: string;
  episodes: number;
  contract: 'ok' | 'failed';
  contract_failures?: string[];
  expert: BaselineStats & { by_level: Record<string, BaselineStats> };
  random: BaselineStats & { by_level: Record<string, BaselineStats> };
  deterministic: boolean;
  steps_per_second: number;
  reset_ms: number;
}

/** Times step() and reset() of the wrapped env (the clock only measures; it never decides). */
class Stopwatch<E extends Env> extends Wrapper<E> {
  stepMs = 0;
  steps = 0;
  resetMs = 0;
  resets = 0;
  async reset(opts: ResetOptions): Promise<Observation> {
    const t0 = performance.now();
    const obs = await this.env.reset(opts);
    this.resetMs += performance.now() - t0;
    this.resets++;
    return obs;
  }
  async step(action: string): Promise<StepResult> {
    const t0 = performance.now();
    const result = await this.env.step(action);
    this.stepMs += performance.now() - t0;
    this.steps++;
    return result;
  }
}

function summarise(ts: Trajectory[]): BaselineStats {
  const n = Math.max(1, ts.length);
  return {
    success: ts.filter((t) => t.result.success).length / n,
    score: ts.reduce((s, t) => s + t.result.score, 0) / n,
    mean_steps: ts.reduce((s, t) => s + t.result.steps, 0) / n,
    episodes: ts.length,
  };
}

export interface EnvReportOptions {
  episodes?: number;
  seed?: number;
  /** Called after each episode (for progress bars). */
  onProgress?: (done: number, total: number) => void;
  envOptions?: Record<string, unknown>;
}

export async function envReport(envId: string, options: EnvReportOptions = {}): Promise<EnvReport> {
  const definition = getEnvDefinition(envId);
  const episodes = options.episodes ?? 100;
  const seed = options.seed ?? 0;
  const contract = await checkEnv(makeEnv(envId, options.envOptions), { seeds: [seed, seed + 1, seed + 2] });

  const env = new Stopwatch(makeEnv(envId, options.envOptions));
  const results: Record<'expert' | 'random', Trajectory[][]> = {
    expert: REPORT_LEVELS.map(() => []),
    random: REPORT_LEVELS.map(() => []),
  };
  const total = episodes * 2;
  let done = 0;
  for (const name of ['expert', 'random'] as const) {
    const policy = makeBaselinePolicy(name);
    for (let i = 0; i < episodes; i++) {
      const level = i % REPORT_LEVELS.length;
      const task = definition.generateTask(seed + i, REPORT_LEVELS[level]);
      results[name][level].push(await rolloutEpisode(env, policy, { seed: seed + i, task }));
      options.onProgress?.(++done, total);
    }
  }

  // Determinism: replay a few episodes in a fresh env and compare the bytes.
  let deterministic = true;
  const replayEnv = makeEnv(envId, options.envOptions);
  for (const name of ['expert', 'random'] as const) {
    const policy = makeBaselinePolicy(name);
    for (let i = 0; i < Math.min(10, episodes); i++) {
      const level = i % REPORT_LEVELS.length;
      const task = definition.generateTask(seed + i, REPORT_LEVELS[level]);
      const again = await rolloutEpisode(replayEnv, policy, { seed: seed + i, task });
      const first = results[name][level][Math.floor(i / REPORT_LEVELS.length)];
      if (trajectoryToJsonLine(again) !== trajectoryToJsonLine(first)) deterministic = false;
    }
  }

  const byLevel = (runs: Trajectory[][]) =>
    Object.fromEntries(REPORT_LEVELS.map((l, i) => [String(l), summarise(runs[i])]));
  return {
    env: envId,
    episodes,
    contract: contract.ok ? 'ok' : 'failed',
    ...(contract.ok ? {} : { contract_failures: contract.failures }),
    expert: { ...summarise(results.expert.flat()), by_level: byLevel(results.expert) },
    random: { ...summarise(results.random.flat()), by_level: byLevel(results.random) },
    deterministic,
    steps_per_second: env.steps / Math.max(1e-9, env.stepMs / 1000),
    reset_ms: env.resetMs / Math.max(1, env.resets),
  };
}
