/**
 * `dreamgym bench import`: the time of `domain import` of an ETO file of household episodes made
 * by code (a rollout of the expert and a random policy, written as ETO records, which list no
 * admissible actions, so every step gets inferred candidates), and of one episode of many steps.
 * Issue 44's goals: 20,000 episodes in ≤ 60 s, a 100,000-step episode in ≤ 30 s.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrajectories, writeTrajectories } from '../core/data/formats';
import { makeBaselinePolicy, rolloutEpisode } from '../core/data/rollout';
import { buildDomain } from '../core/domain/domain';
import { getEnvDefinition, makeEnv } from '../core/envs/registry';
import type { Step, Trajectory } from '../core/types';
import { saveDomainFolder } from '../node/domain-folder';

export interface ImportBenchRow {
  label: string;
  episodes: number;
  steps: number;
  file_mb: number;
  /** Seconds of each phase of `domain import`, and in all. */
  read_s: number;
  build_s: number;
  save_s: number;
  total_s: number;
  goal_s: number;
}

/**
 * `n` household episodes, the expert's and a random policy's alternating, over a pool of 1,500
 * tasks (many users doing the same tasks): the distinct actions of 20,000 stay under a domain's
 * 5,000 (with a task each, 20,000 episodes hold about 6,000).
 */
export async function householdRollouts(n: number): Promise<Trajectory[]> {
  const definition = getEnvDefinition('household-v0');
  const env = makeEnv('household-v0');
  const out: Trajectory[] = [];
  for (let i = 0; i < n; i++) {
    const task = definition.generateTask(91_000 + (i % 1500), [0, 0.5, 1][i % 3]);
    const policy = makeBaselinePolicy(i % 2 === 0 ? 'expert' : 'random');
    out.push(await rolloutEpisode(env, policy, { seed: 200_000 + i, task }));
  }
  return out;
}

/** One episode of `steps` steps made of the steps of many (a long session of one application). */
export function longEpisode(episodes: readonly Trajectory[], steps: number): Trajectory {
  const all: Step[] = episodes.flatMap((t) => t.steps.map((s) => ({ ...s, terminated: false, truncated: false })));
  const kept = all.slice(0, steps);
  if (kept.length < steps) throw new Error(`longEpisode: ${all.length} steps given, ${steps} asked.`);
  return { ...episodes[0], id: 'long-session', steps: kept, result: { ...episodes[0].result, steps } };
}

/** Times the phases of `domain import` (the calls it makes) of `trajectories` written as ETO. */
export async function benchImport(label: string, trajectories: Trajectory[], goalSeconds: number) {
  const dir = mkdtempSync(join(tmpdir(), 'dreamgym-bench-import-'));
  try {
    const file = join(dir, 'episodes.eto.jsonl');
    writeFileSync(file, writeTrajectories(trajectories, 'eto'));
    const t0 = performance.now();
    const text = readFileSync(file, 'utf8');
    const read = readTrajectories(text, 'eto', { sourceName: file, defaultEnv: 'bench' });
    const t1 = performance.now();
    const domain = buildDomain('bench', read);
    const t2 = performance.now();
    await saveDomainFolder(domain, join(dir, 'domains'), { createdAt: 0, source: { file, format: 'eto' } });
    const t3 = performance.now();
    const row: ImportBenchRow = {
      label,
      episodes: read.length,
      steps: domain.stats.steps,
      file_mb: Math.round(text.length / 1e5) / 10,
      read_s: seconds(t1 - t0),
      build_s: seconds(t2 - t1),
      save_s: seconds(t3 - t2),
      total_s: seconds(t3 - t0),
      goal_s: goalSeconds,
    };
    return row;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}
