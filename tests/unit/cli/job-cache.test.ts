/**
 * Finished experiment jobs are kept and found again: a second run of the same request reads every
 * job instead of running it, with the same numbers; --fresh runs them again; a record of other
 * input files, or a torn one, is never read.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main';
import { JobCache, currentProvenance, filesFingerprint } from '../../../src/cli/experiments/job-cache';
import { renderReport } from '../../../src/cli/experiments/report';
import type { JobOutcome } from '../../../src/core/experiments/experiment';
import { captureCliOutput } from '../support/cli-output';

const cli = captureCliOutput();
const { err, lastJson } = cli;
const lastOut = () => cli.out.join('\n');

const OUTCOME: JobOutcome = { split: 'test', success: 0.5, score: 0.7, realSteps: 0, dreamSteps: 9, wallSeconds: 1 };

function stderrText(): string {
  const write = process.stderr.write as unknown as { mock: { calls: unknown[][] } };
  return write.mock.calls.map((c) => String(c[0])).join('');
}

describe('experiment job cache', () => {
  it('reads a record back by key and fingerprint, and nothing else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dreamgym-jobs-'));
    const cache = new JobCache(dir, 'fp-a');
    cache.write('{"job":"x"}', OUTCOME, currentProvenance());
    expect(cache.read('{"job":"x"}')?.outcome).toEqual(OUTCOME);
    expect(cache.read('{"job":"y"}')).toBeNull();
    expect(new JobCache(dir, 'fp-b').read('{"job":"x"}')).toBeNull(); // other datasets or model files
    const [file] = readdirSync(dir);
    writeFileSync(join(dir, file), '{"key": "{\\"job\\":\\"x\\"}", "outc'); // torn by a kill
    expect(cache.read('{"job":"x"}')).toBeNull();
  });

  it('fingerprints files by content', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dreamgym-fp-'));
    writeFileSync(join(dir, 'a.jsonl'), 'one');
    const before = filesFingerprint([dir]);
    expect(filesFingerprint([dir])).toBe(before);
    writeFileSync(join(dir, 'a.jsonl'), 'two');
    expect(filesFingerprint([dir])).not.toBe(before);
  });

  it('follows a link to a folder once: a model folder linked into itself twice is fingerprinted (repro 8)', () => {
    const model = mkdtempSync(join(tmpdir(), 'dreamgym-fp-links-'));
    writeFileSync(join(model, 'model.json'), '{}');
    symlinkSync('.', join(model, 'a'));
    symlinkSync('.', join(model, 'b'));
    // In a child process: the old walk never returns (2^40 paths), and a test cannot stop a sync loop.
    const script =
      `import { filesFingerprint } from ${JSON.stringify(resolve('src/cli/experiments/job-cache.ts'))};` +
      `console.log(filesFingerprint([${JSON.stringify(model)}]));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ status: child.status, signal: child.signal, stderr: child.stderr }).toEqual({
      status: 0,
      signal: null,
      stderr: '',
    });
    expect(child.stdout.trim()).toBe(filesFingerprint([model]));
    writeFileSync(join(model, 'model.json'), '{"changed": true}');
    expect(child.stdout.trim()).not.toBe(filesFingerprint([model])); // the real files still count
  });

  it('a second run of the same request reads its jobs; --fresh runs them again', async () => {
    const out = mkdtempSync(join(tmpdir(), 'dreamgym-exp-'));
    const run = ['experiment', '--table', '2', '--envs', 'webshop-lite-v0', '--quick', '--seeds', '1'];
    const args = [...run, '--out', out, '--workers', '1', '--json'];
    expect(await main(args)).toBe(0);
    const first = lastJson();
    expect(stderrText()).toMatch(/experiment: 3 runs, 0 of them finished before/);
    vi.mocked(process.stderr.write).mockClear();
    expect(await main(args)).toBe(0);
    expect(stderrText()).toMatch(/experiment: 3 runs, 3 of them finished before .*; 0 to run/);
    expect(lastJson().table).toEqual(first.table);
    vi.mocked(process.stderr.write).mockClear();
    expect(await main([...args, '--fresh'])).toBe(0);
    expect(stderrText()).toMatch(/experiment: 3 runs, 0 of them finished before/);
    const success = (json: any) => json.table.envs[0].rows.map((r: { success: unknown }) => r.success);
    expect(success(lastJson())).toEqual(success(first));
  }, 120_000);

  it('runs kept jobs of other code again, and names the code of every job (repro 11)', async () => {
    const out = mkdtempSync(join(tmpdir(), 'dreamgym-exp-code-'));
    const run = ['experiment', '--table', '2', '--envs', 'webshop-lite-v0', '--quick', '--seeds', '1'];
    const args = [...run, '--out', out, '--workers', '1'];
    expect(await main([...args, '--json'])).toBe(0);
    const now = currentProvenance();
    expect(lastJson().jobs.map((j: { commit: string }) => j.commit)).toEqual([now.commit, now.commit, now.commit]);
    // The kept jobs as an older commit left them.
    for (const name of readdirSync(join(out, 'jobs'))) {
      const file = join(out, 'jobs', name);
      const record = JSON.parse(readFileSync(file, 'utf8'));
      record.provenance = { ...record.provenance, commit: 'old111111111', sourceTree: 'old222222222', dirty: false };
      writeFileSync(file, JSON.stringify(record));
    }
    vi.mocked(process.stderr.write).mockClear();
    expect(await main([...args, '--json'])).toBe(0);
    expect(stderrText()).toMatch(
      /3 kept runs of other code \(commit old111111111 \(src tree old222222222\): 3 runs\) run again with this code/,
    );
    expect(stderrText()).toMatch(/experiment: 3 runs, 0 of them finished before/);
    const json = JSON.parse(readFileSync(join(out, 'experiment.json'), 'utf8'));
    expect(json.jobs.map((j: { commit: string; reused: boolean }) => [j.commit, j.reused])).toEqual(
      Array(3).fill([now.commit, false]),
    );
    // Run again with the same code: all kept, and the plain table says which code ran them.
    expect(await main(args)).toBe(0);
    expect(lastOut()).toMatch(new RegExp(`Code: commit ${now.commit} \\(src tree ${now.sourceTree}.*\\): 3 runs\\.`));
  }, 180_000);

  it('a report names its command, machine, date, code and how many runs it read', () => {
    const provenance = { commit: 'abc', sourceTree: 'def', dirty: false, machine: '2 × cpu, Node v20' };
    const text = renderReport('## Table 1\n', {
      command: 'npm run dreamgym -- experiment --report --table 1',
      date: new Date('2026-12-04T00:00:00Z'),
      provenances: [provenance, provenance, { ...provenance, commit: 'xyz', dirty: true }],
      jobs: 3,
      reused: 2,
      runs: 'runs/results/jobs',
    });
    expect(text).toContain('Regenerate: `npm run dreamgym -- experiment --report --table 1`');
    expect(text).toContain('2026-12-04T00:00:00.000Z');
    expect(text).toContain('Machine: 2 × cpu, Node v20 (3 runs)');
    expect(text).toContain(
      'commit abc, src tree def (2 runs); commit xyz, src tree def with uncommitted changes (1 run)',
    );
    expect(text).toMatch(
      /3 jobs kept in `runs\/results\/jobs`; 2 were read from earlier runs.*, 1 ran in this command/,
    );
    expect(text).toContain('## Table 1');
  });

  it('--report needs a table', async () => {
    expect(await main(['experiment', '--grid', '--report'])).toBe(2);
    expect(err.join('\n')).toMatch(/--report writes a table: give --table 1 or 2/);
  });
});
