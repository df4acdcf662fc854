/**
 * `dreamgym bench import`: the time of `domain import` of an ETO file of household episodes made
 * by code (a rollout of the expert and a random policy, written as ETO records, which list no
 * admissible actions, so every step gets inferred candidates), and of one episode of many steps.
 * Issue 44's goals: 20,000 episodes in ≤ 60 s, a 100,000-step episode in ≤ 30 s.
 *
 * The files are written first and the rollouts let go, so an import is timed in a process that
 * holds what `domain import` holds: the rollouts' half a million steps added to the heap that every
 * garbage collection of the import walks (20,000 episodes, load average 10 on 2 cores: save 55.6 s
 * with them, 23.8 s without).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrajectories, writeTrajectories } from '../../core/data/formats';
import { makeBaselinePolicy, rolloutEpisode } from '../../core/data/rollout';
import { buildDomain } from '../../core/domain/domain';
import { getEnvDefinition, makeEnv } from '../../core/envs/registry';
import type { Step, Trajectory } from '../../core/types';
import { saveDomainFolder } from '../../node/domain-folder';

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

/**
 * Writes the bench's two ETO files into `dir`: `episodes` household episodes, and one episode of
 * `longSteps` steps among 9 others (a domain needs 10). The rollouts are not kept.
 */
export async function writeImportBenchFiles(
  dir: string,
  episodes: number,
  longSteps: number,
): Promise<{ episodes: string; long: string }> {
  const rollouts = await householdRollouts(Math.max(episodes, Math.ceil(longSteps / 10)));
  const files = { episodes: join(dir, 'episodes.eto.jsonl'), long: join(dir, 'long.eto.jsonl') };
  writeFileSync(files.episodes, writeTrajectories(rollouts.slice(0, episodes), 'eto'));
  // The long one is made of other rollouts than the 9 beside it.
  const long = [longEpisode(rollouts.slice(9), longSteps), ...rollouts.slice(0, 9)];
  writeFileSync(files.long, writeTrajectories(long, 'eto'));
  return files;
}

/** Times the phases of `domain import` (the calls it makes) of the ETO `file`, into a folder beside it. */
export async function benchImport(label: string, file: string, goalSeconds: number): Promise<ImportBenchRow> {
  const dir = `${file}.domains`;
  try {
    const t0 = performance.now();
    const { read, fileMb } = readEto(file);
    const t1 = performance.now();
    const domain = buildDomain('bench', read);
    const t2 = performance.now();
    await saveDomainFolder(domain, dir, { createdAt: 0, source: { file, format: 'eto' } });
    const t3 = performance.now();
    return {
      label,
      episodes: read.length,
      steps: domain.stats.steps,
      file_mb: fileMb,
      read_s: seconds(t1 - t0),
      build_s: seconds(t2 - t1),
      save_s: seconds(t3 - t2),
      total_s: seconds(t3 - t0),
      goal_s: goalSeconds,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The file's episodes; its text is not kept (as in `domain import`). */
function readEto(file: string): { read: Trajectory[]; fileMb: number } {
  const text = readFileSync(file, 'utf8');
  const read = readTrajectories(text, 'eto', { sourceName: file, defaultEnv: 'bench' });
  return { read, fileMb: Math.round(text.length / 1e5) / 10 };
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}
