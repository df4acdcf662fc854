/**
 * `dreamgym train` loses nothing and its options cannot contradict (issue 44): `--out` into a run
 * or a folder of user files is refused unless `--resume` or `--force` (repro 4), and `--set` may
 * not give `mode`, `env` or `preset`, nor disagree with an option it stands for (repro 5).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import { captureCliOutput } from '../support/cli-output';

const { err, lastJson } = captureCliOutput();
const root = mkdtempSync(join(tmpdir(), 'dreamgym-train-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TINY = 'tasksPerIteration=1,groupSize=2,evalInterval=0,finalEvalEpisodes=2';
const train = (...args: string[]) =>
  main(['train', '--preset', 'webshop-easy', '--iterations', '1', '--set', TINY, ...args]);
const runJson = (out: string) => JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'));

describe('train --out refuses to write over what it did not write (repro 4)', () => {
  it('refuses a folder holding a run of another seed unless --resume or --force', async () => {
    const run = join(root, 'A');
    expect(await train('--seed', '1', '--out', run)).toBe(0);
    const metrics = readFileSync(join(run, 'metrics.jsonl'), 'utf8');
    expect(await train('--seed', '7', '--out', run)).toBe(2);
    expect(err.join('\n')).toMatch(
      /--out .*A holds a run already \(.* \(seed 1, preset webshop-easy\)\): continue it with --resume, start it over/,
    );
    expect(runJson(run).seed).toBe(1);
    expect(readFileSync(join(run, 'metrics.jsonl'), 'utf8')).toBe(metrics);
    expect(await train('--seed', '7', '--out', run, '--resume', '--force')).toBe(2);
    expect(err.join('\n')).toMatch(/--resume continues the run in OUT and --force starts it over: give one/);
    writeFileSync(join(run, 'notes.txt'), 'mine');
    expect(await train('--seed', '7', '--out', run, '--force', '--json')).toBe(0);
    expect(lastJson().seed).toBe(7);
    expect(runJson(run).seed).toBe(7);
    expect(readFileSync(join(run, 'notes.txt'), 'utf8')).toBe('mine');
  }, 120_000);

  it('refuses a folder of user files, even with --force, and leaves them as they were', async () => {
    const folder = join(root, 'mine');
    mkdirSync(folder);
    writeFileSync(join(folder, 'config.json'), '{"mine": true}\n');
    writeFileSync(join(folder, 'metrics.jsonl'), 'my data\n');
    for (const force of [[], ['--force']]) {
      expect(await train('--out', folder, ...force)).toBe(2);
      expect(err.join('\n')).toMatch(
        /--out .*mine holds files that train did not write \(config\.json, metrics\.jsonl\); .*new or empty --out/,
      );
    }
    expect(readFileSync(join(folder, 'config.json'), 'utf8')).toBe('{"mine": true}\n');
    expect(readFileSync(join(folder, 'metrics.jsonl'), 'utf8')).toBe('my data\n');
    expect(readdirSync(folder).sort()).toEqual(['config.json', 'metrics.jsonl']);
  }, 60_000);
});

describe('--set cannot contradict the options (repro 5)', () => {
  it.each([
    [['--set', `mode=dream,${TINY}`], /--set mode=dream: the mode has its own option, .* use --mode dream\./],
    [
      ['--set', `env=webshop-lite-v0,${TINY}`, '--preset', 'household-easy'],
      /--set env=webshop-lite-v0: the env comes with the preset .* use --preset webshop-easy/,
    ],
    [['--set', `preset=household-easy,${TINY}`], /--set preset=household-easy: .* use --preset household-easy\./],
    [['--set', `seed=7,${TINY}`, '--seed', '3'], /--seed 3 and --set seed=7 disagree: give it once, as --seed\./],
  ])(
    'refuses %j, naming the option to use',
    async (args, message) => {
      const out = join(root, 'never');
      const preset = args.includes('--preset') ? [] : ['--preset', 'webshop-easy'];
      expect(await main(['train', ...preset, '--iterations', '1', '--out', out, ...args])).toBe(2);
      expect(err.join('\n')).toMatch(message);
      expect(existsSync(out)).toBe(false);
    },
    60_000,
  );
});
