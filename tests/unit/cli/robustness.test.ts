/**
 * Nothing lost, whatever happens (issue 13), through the command line: two imports into one folder
 * at once, an import killed with SIGKILL mid-write and imported again (the small version of
 * scripts/measure/import-kill-trials.ts), conversions that keep every episode, `--set` that takes only its
 * own keys, `--resume` that refuses conflicting options, and the smaller usage errors.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { captureCliOutput } from '../support/cli-output';
import { cli } from './run-cli';

const { out, err, lastJson } = captureCliOutput();
const dir = mkdtempSync(join(tmpdir(), 'dreamgym-robust-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function rollout(policy: string, episodes: number, seed: number, file: string): Promise<string> {
  const code = await cli`rollout household-v0 --policy ${policy} --episodes ${episodes} --seed ${seed} --out ${file}`;
  expect(code).toBe(0);
  return file;
}

async function stats(bufferDir: string): Promise<{ transitions: number; episodes: number; tasks: number }> {
  expect(await main(['buffer', 'stats', '--dir', bufferDir, '--json'])).toBe(0);
  return lastJson();
}

/** The CLI in its own process; `kill` may kill it (SIGKILL) once it runs. */
function cliProcess(
  args: string[],
  kill?: (child: ReturnType<typeof spawn>) => void,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  kill?.(child);
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
}

/** Bytes on disk past what meta.json commits: an import caught mid-write. */
function uncommitted(bufferDir: string): number {
  try {
    const meta = JSON.parse(readFileSync(join(bufferDir, 'meta.json'), 'utf8'));
    return Object.entries(meta.committedBytes as Record<string, number>).reduce(
      (sum, [file, bytes]) =>
        sum + Math.max(0, (existsSync(join(bufferDir, file)) ? statSync(join(bufferDir, file)).size : 0) - bytes),
      0,
    );
  } catch {
    return 0;
  }
}

describe('buffer folders with more than one process', () => {
  it('two imports into one folder at once: both succeed, one after the other, and stats shows every record', async () => {
    const a = await rollout('expert', 60, 0, join(dir, 'a.jsonl'));
    const b = await rollout('random', 60, 1000, join(dir, 'b.jsonl'));
    const shared = join(dir, 'shared');
    const [first, second] = await Promise.all([
      cliProcess(['buffer', 'import', a, '--dir', shared]),
      cliProcess(['buffer', 'import', b, '--dir', shared]),
    ]);
    expect([first.code, second.code], first.stderr + second.stderr).toEqual([0, 0]);
    // One after the other: lastJson() reads this process's latest output, so two at once could read one twice.
    const apart: { transitions: number }[] = [];
    for (const [name, file] of [
      ['a', a],
      ['b', b],
    ]) {
      expect(await main(['buffer', 'import', file, '--dir', join(dir, `alone-${name}`), '--json'])).toBe(0);
      apart.push(lastJson());
    }
    expect(await stats(shared)).toMatchObject({
      episodes: 120,
      tasks: 120,
      transitions: apart[0].transitions + apart[1].transitions,
    });
  }, 120_000);

  it('an import killed mid-write leaves nothing a reader sees; importing again gives what a clean import gives', async () => {
    const file = await rollout('noisy-expert', 300, 5000, join(dir, 'c.jsonl'));
    expect(await main(['buffer', 'import', file, '--dir', join(dir, 'clean'), '--json'])).toBe(0);
    const clean = await stats(join(dir, 'clean'));
    const killedDir = join(dir, 'killed');
    const killed = await cliProcess(['buffer', 'import', file, '--dir', killedDir], (child) => {
      const poll = setInterval(() => {
        if (uncommitted(killedDir) > 0) {
          child.kill('SIGKILL');
          clearInterval(poll);
        }
      }, 1);
      child.on('close', () => clearInterval(poll));
    });
    const seen = await stats(killedDir);
    // Killed while writing: nothing is committed. (A machine fast enough to finish first commits it all.)
    if (killed.signal === 'SIGKILL') expect(seen).toMatchObject({ episodes: 0, tasks: 0, transitions: 0 });
    else expect(seen).toMatchObject({ episodes: clean.episodes, tasks: clean.tasks, transitions: clean.transitions });
    expect(await main(['buffer', 'import', file, '--dir', killedDir, '--json'])).toBe(0); // takes over the dead writer's lock
    expect(await stats(killedDir)).toMatchObject({ episodes: 300, tasks: 300, transitions: clean.transitions });
  }, 120_000);
});

describe('conversions keep every episode', () => {
  it('expert and random episodes of the same seeds survive convert → import in every chat format', async () => {
    const expert = readFileSync(await rollout('expert', 3, 40, join(dir, 'e.jsonl')), 'utf8');
    const random = readFileSync(await rollout('random', 3, 40, join(dir, 'r.jsonl')), 'utf8');
    const both = join(dir, 'both.jsonl');
    writeFileSync(both, expert + random);
    for (const format of ['agentgym', 'eto', 'trl']) {
      const converted = join(dir, `both.${format}`);
      expect(await main(['convert', '--from', 'ours', '--to', format, both, converted])).toBe(0);
      expect(
        await main(['buffer', 'import', converted, '--format', format, '--dir', join(dir, `conv-${format}`), '--json']),
      ).toBe(0);
      expect(lastJson()).toMatchObject({ episodes: 6, skipped: 0 });
    }
  });

  // Issue 31: each file converted alone wrote `alfworld_SEED` ids, and the second import overwrote the first.
  it('two files with the same seeds, converted apart, import side by side in every chat format', async () => {
    const files = {
      e: await rollout('expert', 3, 40, join(dir, 'e.jsonl')),
      r: await rollout('random', 3, 40, join(dir, 'r.jsonl')),
    };
    for (const format of ['agentgym', 'eto', 'trl']) {
      const bufferDir = join(dir, `apart-${format}`);
      for (const [name, file] of Object.entries(files)) {
        const converted = join(dir, `${name}-apart.${format}`);
        expect(await main(['convert', '--from', 'ours', '--to', format, file, converted])).toBe(0);
        expect(await main(['buffer', 'import', converted, '--format', format, '--dir', bufferDir, '--json'])).toBe(0);
        expect(lastJson()).toMatchObject({ episodes: 3, skipped: 0, repaired: 0, renamed: [] });
      }
      expect(await stats(bufferDir)).toMatchObject({ episodes: 6 });
    }
  });

  it('an id the buffer holds for a different episode is stored under a new id, and the command says so', async () => {
    // AgentGym's own ids name only the seed: two such files of different episodes share them.
    const bufferDir = join(dir, 'old-ids');
    for (const name of ['e', 'r']) {
      const converted = join(dir, `${name}-old.agentgym`);
      expect(await main(['convert', '--from', 'ours', '--to', 'agentgym', join(dir, `${name}.jsonl`), converted])).toBe(
        0,
      );
      writeFileSync(
        converted,
        readFileSync(converted, 'utf8').replace(/"alfworld_\w+_(\d+)_[0-9a-f]{8}"/g, '"alfworld_$1"'),
      );
      out.length = 0;
      expect(await main(['buffer', 'import', converted, '--format', 'agentgym', '--dir', bufferDir])).toBe(0);
    }
    expect(out.join('\n')).toMatch(
      /imported 3 episodes .*\n3 episodes had an id the buffer already holds for a different/,
    );
    expect(out.join('\n')).toMatch(/alfworld_40 → alfworld_40~[0-9a-f]{8}/);
    expect(await stats(bufferDir)).toMatchObject({ episodes: 6 });
  });

  it('a file naming one episode id twice is refused, naming both lines', async () => {
    const twice = join(dir, 'twice.jsonl');
    const line = readFileSync(join(dir, 'e.jsonl'), 'utf8').split('\n')[0];
    writeFileSync(twice, `${line}\n${line}\n`);
    expect(await main(['buffer', 'import', twice, '--dir', join(dir, 'twice')])).toBe(1);
    expect(err.join('\n')).toMatch(
      /line 2, field 'id': episode id 'household-v0\/expert\/40' is already used by line 1/,
    );
  });
});

describe('--set takes only its own keys, --resume refuses what conflicts', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('refuses --set %s=1', async (key) => {
    expect(await main(['train', '--preset', 'webshop-easy', '--set', `${key}=1`, '--out', join(dir, 'never')])).toBe(2);
    expect(err.join('\n')).toContain(`--set: unknown setting '${key}'; valid settings: preset, env, mode`);
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });

  it('refuses a repeated option, a repeated --set key and non-decimal numbers instead of keeping one silently', async () => {
    const out = join(dir, 'never');
    const train = (...args: string[]) => main(['train', '--preset', 'webshop-easy', '--out', out, ...args]);
    expect(await train('--set', 'iterations=40', '--set', 'groupSize=4')).toBe(2);
    expect(err.join('\n')).toContain(
      'Option --set is given twice, and only one value can hold: give it once, its pairs ' +
        'separated by commas (--set a=1,b=2).',
    );
    expect(await train('--seed', '1', '--seed', '2')).toBe(2);
    expect(err.join('\n')).toContain('Option --seed is given twice, and only one value can hold: give it once.');
    expect(await train('--set', 'groupSize=2,groupSize=3')).toBe(2);
    expect(err.join('\n')).toContain("--set: 'groupSize' is given twice; give each setting once.");
    expect(await train('--iterations', '0x2')).toBe(2);
    expect(err.join('\n')).toContain("Option --iterations must be an integer, got '0x2'.");
    expect(await train('--set', 'groupSize=0x4')).toBe(2);
    expect(err.join('\n')).toMatch(/'groupSize' must be/);
    expect(existsSync(out)).toBe(false);
  });

  it('takes only the engine settings in the dream commands', async () => {
    expect(await main(['audit', '--env', 'webshop-lite-v0', '--llm', 'oracle:0,0', '--set', 'learningRate=1'])).toBe(2);
    expect(err.join('\n')).toContain(
      "--set: unknown setting 'learningRate'; valid settings: llmTimeoutMs, llmRetries, llmConcurrency, llmMaxFailures",
    );
    expect(await main(['dream', '--env', 'webshop-lite-v0', '--llm', 'oracle:0,0', '--set', 'llmTimeoutMs=0'])).toBe(2);
    expect(err.join('\n')).toMatch(/'llmTimeoutMs' must be within 1\.\.3600000; got 0/);
  });

  it('refuses a --resume whose options conflict with the saved run, and resumes with the allowed ones', async () => {
    const run = join(dir, 'resumable');
    expect(
      await cli`train --preset webshop-easy --seed 3 --out ${run}
        --set iterations=1,tasksPerIteration=1,groupSize=2,evalInterval=0,finalEvalEpisodes=2`,
    ).toBe(0);
    expect(
      await main(['train', '--resume', '--out', run, '--algo', 'ppo', '--seed', '4', '--set', 'learningRate=0.01']),
    ).toBe(2);
    const message = err.join('\n');
    expect(message).toMatch(
      /--resume continues the run saved in .* exactly, so its settings cannot change; these options conflict:/,
    );
    expect(message).toContain('--algo ppo (the saved run has algo "grpo")');
    expect(message).toContain('--seed 4 (the saved run has seed 3)');
    expect(message).toContain('--set learningRate 0.01 (the saved run has learningRate 0.003)');
    expect(await cli`train --resume --out ${run} --seed 3 --iterations 2 --set llmTimeoutMs=5000 --json`).toBe(0);
    expect(lastJson()).toMatchObject({ seed: 3, iterations: 2 });
    // --json states what ran: the effective config, the resumed run's own settings and the one allowed change.
    expect(lastJson().config).toMatchObject({
      seed: 3,
      iterations: 2,
      tasksPerIteration: 1,
      groupSize: 2,
      llmTimeoutMs: 5000,
    });
  }, 60_000);
});

// Issue 31: `audit --n 1000000000000` grew without bound; `--preset __proto__` read a prototype.
describe('counts have maximums, numbers are exact and decimal, names are own keys', () => {
  it.each([
    ['audit', '--env', 'webshop-lite-v0', '--llm', 'oracle:0,0', '--n', '1000000000000'],
    ['rollout', 'household-v0', '--episodes', '1000000000', '--out', 'never.jsonl'],
    ['dream', '--env', 'household-v0', '--llm', 'oracle:0,0', '--episodes', '1000000000'],
    ['check-env', 'household-v0', '--episodes', '1000000000'],
    ['train', '--preset', 'webshop-easy', '--iterations', '1000000000000', '--out', 'never'],
    ['train', '--preset', 'webshop-easy', '--set', 'iterations=1000000000000', '--out', 'never'],
    ['experiment', '--seeds', '1000000'],
    ['buffer', 'query', '--text', 'x', '--k', '1000000000'],
    ['expmodel', 'train', '--env', 'household-v0', '--out', 'never', '--epochs', '1000000000'],
  ])('refuses a count past its maximum: %s …', async (...args) => {
    expect(await main(args)).toBe(2);
    expect(err.join('\n')).toMatch(/must be (within \d+\.\.\d+|at most \d+)[,;] got 1\d+/);
  });

  it('refuses an integer too large to be exact, and a non-decimal engine number', async () => {
    expect(await main(['rollout', 'household-v0', '--seed', '1e20', '--out', join(dir, 'never.jsonl')])).toBe(2);
    expect(err.join('\n')).toMatch(/Option --seed must be within 0\.\.\d+, got 100000000000000000000/);
    expect(await main(['dream', '--env', 'household-v0', '--llm', 'oracle:0x1,0'])).toBe(2);
    expect(err.join('\n')).toMatch(
      /EPS_R \(reward error ε_R\) must be a number in 0\.\.1, written in decimals, got '0x1'/,
    );
  });

  it.each(['__proto__', 'constructor', 'toString'])('--preset %s is an unknown preset, with the list', async (name) => {
    expect(await main(['train', '--preset', name, '--out', join(dir, 'never')])).toBe(2);
    expect(err.join('\n')).toContain(`Unknown preset '${name}'. Valid presets: webshop-easy`);
    expect(err.join('\n')).not.toMatch(/is missing/);
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });
});

// Issue 31: a secret in an engine URL went into config.json, the checkpoint, --json output and errors.
describe('a secret in an engine URL is refused, and never written or printed', () => {
  const secretUrl = 'openai:http://user:s3cr3t@127.0.0.1:1/v1#m';
  const printed = () => [...out, ...err].join('\n');

  it.each([
    ['train', '--preset', 'webshop-easy', '--mode', 'dream', '--llm', secretUrl, '--json'],
    ['audit', '--env', 'webshop-lite-v0', '--llm', secretUrl, '--json'],
    ['dream', '--env', 'webshop-lite-v0', '--llm', secretUrl, '--json'],
    ['train', '--preset', 'webshop-easy', '--mode', 'dream', '--llm', 'oracle:0,0', '--set', `llm=${secretUrl}`],
  ])('%s … says where the key goes instead', async (...args) => {
    const runDir = join(dir, 'secret-run');
    const code = await main(args[0] === 'train' ? [...args, '--out', runDir] : args);
    expect(code).toBe(2);
    expect(err.join('\n')).toMatch(/must not carry credentials.*DREAMGYM_API_KEY/s);
    expect(printed()).not.toContain('s3cr3t');
    expect(existsSync(runDir)).toBe(false);
  });

  it('a resumed run refuses it too, and its files never hold it', async () => {
    const run = join(dir, 'secret-resume');
    const tiny = 'iterations=1,tasksPerIteration=1,groupSize=2,evalInterval=0,finalEvalEpisodes=2';
    expect(await main(['train', '--preset', 'webshop-easy', '--seed', '5', '--out', run, '--set', tiny])).toBe(0);
    expect(await main(['train', '--resume', '--out', run, '--llm', secretUrl, '--json'])).toBe(2);
    expect(printed()).not.toContain('s3cr3t');
    expect(readFileSync(join(run, 'config.json'), 'utf8')).not.toContain('s3cr3t');
  });
});

describe('smaller ones: each a clear error that names the fix', () => {
  it('refuses out-of-range numbers, a dream without --llm, and missing options, all as usage errors (exit 2)', async () => {
    expect(await main(['rollout', 'household-v0', '--episodes', '-3', '--out', join(dir, 'x.jsonl')])).toBe(2);
    expect(err.join('\n')).toMatch(/Option --episodes must be within 1\.\.100000, got -3/);
    expect(await main(['train', '--preset', 'webshop-easy', '--mode', 'dream'])).toBe(2);
    expect(err.join('\n')).toMatch(/--mode dream dreams, so it needs --llm/);
    expect(await cli`train --preset webshop-easy --mode real --llm bogus --out ${join(dir, 'bogus')}`).toBe(2);
    expect(err.join('\n')).toMatch(/'llm' is not an engine spec: Unknown engine spec 'bogus'/);
    expect(existsSync(join(dir, 'bogus'))).toBe(false);
    for (const args of [
      ['convert', 'a', 'b'],
      ['buffer', 'query', '--dir', dir],
      ['eval'],
      ['rollout', 'household-v0'],
    ]) {
      expect(await main(args), args.join(' ')).toBe(2);
    }
  });

  it('turns file-system errors into what is wrong with which path', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    expect(await main(['train', '--preset', 'webshop-easy', '--out', file, '--set', 'iterations=1'])).toBe(1);
    expect(err.join('\n')).toContain(
      `A file is in the way at ${file}, where a folder is needed: pick another --out or --dir`,
    );
    expect(err.join('\n')).not.toMatch(/EEXIST|ENOTDIR/);
  });

  it('buffer stats, query and export on a mistyped folder create nothing', async () => {
    const typo = join(dir, 'bufer');
    for (const args of [
      ['buffer', 'stats'],
      ['buffer', 'query', '--text', 'apple'],
      ['buffer', 'export', join(dir, 'out.jsonl')],
    ]) {
      expect(await main([...args, '--dir', typo])).toBe(1);
    }
    expect(err.join('\n')).toMatch(/There is no buffer folder at .*bufer/);
    expect(existsSync(typo)).toBe(false);
  });

  it('buffer query prints imported text with control characters escaped', async () => {
    const record = JSON.parse(readFileSync(join(dir, 'e.jsonl'), 'utf8').split('\n')[0]);
    record.id = 'hostile/1';
    record.task.instruction = 'find the apple \u001b]0;owned\u0007\u001b[2J';
    const file = join(dir, 'hostile.jsonl');
    writeFileSync(file, JSON.stringify(record) + '\n');
    expect(await main(['buffer', 'import', file, '--dir', join(dir, 'hostile')])).toBe(0);
    expect(await main(['buffer', 'query', '--text', 'find the apple', '--dir', join(dir, 'hostile')])).toBe(0);
    expect(out.join('\n')).toContain('task: find the apple \\x1b]0;owned\\x07\\x1b[2J');
    expect(out.join('\n')).not.toContain('\u001b');
  });
});
