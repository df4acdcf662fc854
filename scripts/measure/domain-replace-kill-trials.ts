// Measures `domain import --replace` killed at each point of its save — figures: docs/results/build-and-import.md.
/**
 * Measurement (issue 44, repro 3): `kill -9` of `domain import --replace` at each of the five
 * points of the save (SAVE_POINTS in src/node/domain-folder.ts: while building the new data
 * folder, built, its link made, the link renamed over `current`, the old data folder half
 * removed). The process kills itself with SIGKILL there (DREAMGYM_TEST_KILL_AT=POINT), then a
 * reader opens the domain: every trial must find the old domain or the new one whole (manifest,
 * episodes and buffer agree), its runs/ kept, nothing beside it; and the next import must leave
 * one data folder, no leftover.
 *
 *   node --import tsx scripts/measure/domain-replace-kill-trials.ts
 *
 * Prints one line per trial and a JSON summary last; exits 1 if any trial fails. Not a CI test:
 * each trial starts the CLI twice (about 10 s each on a busy laptop).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTrajectories } from '../../src/core/data/formats';
import { makeBaselinePolicy, rolloutEpisode } from '../../src/core/data/rollout';
import { getEnvDefinition, makeEnv } from '../../src/core/envs/registry';
import type { Trajectory } from '../../src/core/types';
import { loadDomainFolder, openDomainBuffer, SAVE_POINTS } from '../../src/node/domain-folder';

const NAME = 'app';

/** Household episodes under a foreign env name, as an ETO file. */
async function etoFile(path: string, episodes: number, firstSeed: number): Promise<void> {
  const definition = getEnvDefinition('household-v0');
  const env = makeEnv('household-v0');
  const out: Trajectory[] = [];
  for (let i = 0; i < episodes; i++) {
    const seed = firstSeed + i;
    const task = definition.generateTask(seed, 0.5);
    const episode = await rolloutEpisode(env, makeBaselinePolicy(i % 2 ? 'random' : 'expert'), { seed, task });
    out.push({ ...episode, env: NAME, task: { ...episode.task, env: NAME, origin: 'imported' } });
  }
  writeFileSync(path, writeTrajectories(out, 'eto'));
}

function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: string | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], {
    stdio: 'ignore',
    env: { ...process.env, ...env },
  });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
}

/** What a reader finds: which file's domain, whole (manifest, episodes and buffer agree), and runs/ kept. */
async function inspect(dir: string, sizes: Record<string, number>): Promise<{ found: string; problems: string[] }> {
  const problems: string[] = [];
  const domain = loadDomainFolder(dir, NAME);
  const found = Object.keys(sizes).find((k) => sizes[k] === domain.stats.episodes) ?? '?';
  if (found === '?') problems.push(`${domain.stats.episodes} episodes: neither domain`);
  if (domain.train.length !== domain.stats.trainEpisodes) problems.push('train.jsonl does not match the manifest');
  const buffer = await openDomainBuffer(dir, NAME);
  const episodes = (await buffer.stats()).episodes;
  await buffer.store.close();
  if (episodes !== domain.stats.trainEpisodes) problems.push(`buffer has ${episodes} episodes`);
  if (!existsSync(join(dir, NAME, 'runs', 'seed-0', 'summary.json'))) problems.push('runs/ lost');
  const beside = readdirSync(dir).filter((e) => e !== NAME);
  if (beside.length > 0) problems.push(`left beside it: ${beside.join(', ')}`);
  return { found, problems };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'dreamgym-replace-kill-'));
  const [oldFile, newFile] = [join(root, 'old.json'), join(root, 'new.json')];
  const sizes = { old: 12, new: 16 };
  await etoFile(oldFile, sizes.old, 70_000);
  await etoFile(newFile, sizes.new, 80_000);
  const results = [];
  for (const point of SAVE_POINTS) {
    const dir = join(root, point);
    const base = (file: string) => ['domain', 'import', file, '--format', 'eto', '--name', NAME, '--dir', dir];
    const first = await cli(base(oldFile));
    if (first.code !== 0) throw new Error(`the first import failed (${first.code})`);
    mkdirSync(join(dir, NAME, 'runs', 'seed-0'), { recursive: true });
    writeFileSync(join(dir, NAME, 'runs', 'seed-0', 'summary.json'), '{}\n');
    const killed = await cli([...base(newFile), '--replace'], { DREAMGYM_TEST_KILL_AT: point });
    const { found, problems } = await inspect(dir, sizes);
    if (killed.signal !== 'SIGKILL') problems.push(`not killed (exit ${killed.code}, signal ${killed.signal})`);
    const again = await cli([...base(newFile), '--replace']);
    if (again.code !== 0) problems.push(`the import after it failed (${again.code})`);
    else if ((await inspect(dir, sizes)).found !== 'new') problems.push('the import after it did not take');
    const inside = readdirSync(join(dir, NAME)).filter((e) => e !== 'current' && e !== 'runs');
    if (inside.length !== 1 || !/^data\.\d+$/.test(inside[0])) problems.push(`left inside it: ${inside.join(', ')}`);
    results.push({ point, signal: killed.signal, found, ok: problems.length === 0, problems });
    console.log(
      `kill -9 at ${point}: ${found} domain whole${problems.length ? `; FAILED: ${problems.join('; ')}` : ''}`,
    );
  }
  rmSync(root, { recursive: true, force: true });
  const failed = results.filter((r) => !r.ok).length;
  console.log(JSON.stringify({ trials: results.length, failed, results }));
  process.exitCode = failed ? 1 : 0;
}

await main();
