// Measures `buffer import` killed at random points, then rerun — figures: docs/results/build-and-import.md.
/**
 * Measurement (issue 13): `kill -9` at random points during `buffer import` of 4,000 episodes, then
 * import again; every trial must end with episodes = tasks = 4,000 and the transitions of a clean
 * import. Also checks what a reader sees right after the kill: nothing, or the whole import.
 *
 *   node --import tsx scripts/measure/import-kill-trials.ts [--trials 20] [--episodes 4000] [--seed 13]
 *
 * Prints one line per trial and a JSON summary last; exits 1 if any trial fails. Odd trials kill
 * at a time drawn (seeded) over the clean import's wall time (most land while parsing and
 * embedding); even trials wait until the import starts writing its files, then kill within the
 * next 0–300 ms, so the kill lands mid-write. Not a CI test: it takes minutes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeBaselinePolicy, rolloutEpisode } from '../../src/core/data/rollout';
import { trajectoryToJsonLine } from '../../src/core/data/trajectory';
import { getEnvDefinition, makeEnv } from '../../src/core/envs/registry';
import { Rng } from '../../src/core/rng';

const ENV = 'household-v0';

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  ms: number;
}

/** When to kill: that long after the start, or that long after the import's first data file appears in `dir`. */
type Kill = { afterMs: number } | { afterWriteStartsMs: number; dir: string };

/** Runs the CLI, killing it (SIGKILL) as `kill` says if it is still running then. */
function cli(args: string[], kill?: Kill): Promise<CliRun> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  let timer: ReturnType<typeof setTimeout> | null = null;
  let poll: ReturnType<typeof setInterval> | null = null;
  if (kill && 'afterMs' in kill) timer = setTimeout(() => child.kill('SIGKILL'), kill.afterMs);
  else if (kill) {
    poll = setInterval(() => {
      if (uncommittedBytes(kill.dir) === 0) return;
      clearInterval(poll!);
      poll = null;
      timer = setTimeout(() => child.kill('SIGKILL'), kill.afterWriteStartsMs);
    }, 2);
  }
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (poll) clearInterval(poll);
      resolve({ code, signal, stdout, ms: performance.now() - started });
    }),
  );
}

async function stats(dir: string): Promise<{ transitions: number; episodes: number; tasks: number }> {
  const run = await cli(['buffer', 'stats', '--dir', dir, '--json']);
  if (run.code !== 0) return { transitions: 0, episodes: 0, tasks: 0 }; // no folder yet: killed before its first write
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

/** Bytes on disk beyond what meta.json commits (an interrupted write left them), 0 when there is no meta. */
function uncommittedBytes(dir: string): number {
  let meta: { committedBytes: Record<string, number>; files?: Record<string, string> };
  try {
    meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'));
  } catch {
    return 0;
  }
  let extra = 0;
  for (const [file, committed] of Object.entries(meta.committedBytes)) {
    const name = meta.files?.[file] ?? file;
    try {
      extra += Math.max(0, statSync(join(dir, name)).size - committed);
    } catch {
      /* not written yet */
    }
  }
  return extra;
}

async function writeEpisodes(path: string, episodes: number): Promise<void> {
  const definition = getEnvDefinition(ENV);
  const env = makeEnv(ENV);
  const policy = makeBaselinePolicy('noisy-expert', { epsilon: 0.3 });
  const lines: string[] = [];
  for (let seed = 0; seed < episodes; seed++) {
    lines.push(
      trajectoryToJsonLine(await rolloutEpisode(env, policy, { seed, task: definition.generateTask(seed, 0.5) })) +
        '\n',
    );
  }
  writeFileSync(path, lines.join(''));
}

async function main(): Promise<number> {
  const trials = option('trials', 20);
  const episodes = option('episodes', 4000);
  const rng = Rng.fromSeed(option('seed', 13), 'kill-trials');
  const work = mkdtempSync(join(tmpdir(), 'dreamgym-kill-'));
  const file = join(work, 'episodes.jsonl');
  await writeEpisodes(file, episodes);
  const clean = await cli(['buffer', 'import', file, '--dir', join(work, 'clean'), '--json']);
  const expected = await stats(join(work, 'clean'));
  console.log(
    `clean import of ${episodes} episodes (${(statSync(file).size / 1e6).toFixed(1)} MB): ${clean.ms.toFixed(0)} ms, ` +
      `${expected.episodes} episodes, ${expected.tasks} tasks, ${expected.transitions} transitions`,
  );
  const results = [];
  for (let trial = 1; trial <= trials; trial++) {
    const dir = join(work, `trial-${trial}`);
    const midWriteTrial = trial % 2 === 0;
    const killAt = Math.round(midWriteTrial ? rng.uniform(0, 300) : clean.ms * rng.uniform(0.3, 1.05));
    const killed = await cli(
      ['buffer', 'import', file, '--dir', dir, '--json'],
      midWriteTrial ? { afterWriteStartsMs: killAt, dir } : { afterMs: killAt },
    );
    const midWrite = uncommittedBytes(dir);
    const seen = await stats(dir); // a reader right after the kill: nothing or everything
    const atomic =
      (seen.episodes === 0 && seen.transitions === 0 && seen.tasks === 0) ||
      (seen.episodes === expected.episodes &&
        seen.tasks === expected.tasks &&
        seen.transitions === expected.transitions);
    const again = await cli(['buffer', 'import', file, '--dir', dir, '--json']);
    const after = await stats(dir);
    const ok =
      atomic &&
      again.code === 0 &&
      after.episodes === episodes &&
      after.tasks === episodes &&
      after.transitions === expected.transitions;
    const when = midWriteTrial ? `${killAt} ms after writing began` : `${killAt} ms after the start`;
    const outcome = killed.signal === 'SIGKILL' ? `killed ${when}` : `finished before the kill (${when})`;
    console.log(
      `trial ${String(trial).padStart(2)}: ${outcome}; ${midWrite} uncommitted bytes on disk; reader saw ${seen.episodes} episodes / ` +
        `${seen.tasks} tasks / ${seen.transitions} transitions; after re-import ${after.episodes} / ${after.tasks} / ${after.transitions} ${ok ? 'OK' : 'FAIL'}`,
    );
    results.push({ trial, killAt, killed: killed.signal === 'SIGKILL', midWrite: midWrite > 0, seen, after, ok });
    rmSync(dir, { recursive: true, force: true });
  }
  rmSync(work, { recursive: true, force: true });
  const summary = {
    episodes,
    trials,
    clean: expected,
    cleanMs: Math.round(clean.ms),
    killed: results.filter((r) => r.killed).length,
    killedMidWrite: results.filter((r) => r.midWrite).length,
    ok: results.filter((r) => r.ok).length,
    leftovers: readdirSync(tmpdir()).filter((n) => n.startsWith('dreamgym-kill-')).length,
  };
  console.log(JSON.stringify(summary));
  return summary.ok === trials ? 0 : 1;
}

process.exitCode = await main();
