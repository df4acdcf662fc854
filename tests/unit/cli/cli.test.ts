import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import { captureCliOutput } from '../support/cli-output';
import { cli } from './run-cli';

const { err, lastJson } = captureCliOutput();
const dir = mkdtempSync(join(tmpdir(), 'dreamgym-cli-'));

describe('dreamgym CLI', () => {
  it('lists the environments', async () => {
    expect(await main(['envs', '--json'])).toBe(0);
    expect(lastJson().map((e: { id: string }) => e.id)).toEqual([
      'webshop-lite-v0',
      'household-v0',
      'webarena-lite-v0',
    ]);
  });

  it('explains unknown commands, options, values and env ids', async () => {
    expect(await main(['trian'])).toBe(2);
    expect(err.join('\n')).toMatch(
      /Unknown command 'trian'. Commands: envs, check-env, rollout, convert, train, eval, buffer, bench/,
    );
    expect(await main(['rollout', 'household-v0', '--polcy', 'expert'])).toBe(2);
    expect(err.join('\n')).toMatch(/Unknown option --polcy for 'rollout'. Valid options: --policy/);
    expect(await main(['rollout', 'household-v0', '--episodes', 'many'])).toBe(2);
    expect(err.join('\n')).toMatch(/--episodes must be an integer, got 'many'/);
    expect(await main(['rollout', 'household-v0', '--policy', 'genius'])).toBe(2);
    expect(err.join('\n')).toMatch(/--policy must be one of expert, random, noisy-expert, decoy-expert; got 'genius'/);
    expect(await main(['check-env', 'atari-v5'])).toBe(1);
    expect(err.join('\n')).toMatch(/Unknown environment 'atari-v5'. Valid ids: webshop-lite-v0, household-v0/);
  });

  it('rollout: the same seed gives byte-identical JSONL', async () => {
    const a = join(dir, 'a.jsonl'),
      b = join(dir, 'b.jsonl');
    for (const file of [a, b]) {
      expect(
        await cli`rollout webshop-lite-v0 --policy noisy-expert --epsilon 0.4 --episodes 6 --seed 9
          --out ${file} --json`,
      ).toBe(0);
    }
    expect(readFileSync(a, 'utf8')).toBe(readFileSync(b, 'utf8'));
    expect(readFileSync(a, 'utf8').trim().split('\n')).toHaveLength(6);
    expect(lastJson()).toMatchObject({ env: 'webshop-lite-v0', policy: 'noisy-expert', epsilon: 0.4, episodes: 6 });
  });

  it('convert: round trip through AgentGym, and a malformed file is rejected whole', async () => {
    const ours = join(dir, 'h.jsonl'),
      agentgym = join(dir, 'h.json'),
      back = join(dir, 'back.jsonl');
    expect(await main(['rollout', 'household-v0', '--episodes', '3', '--seed', '2', '--out', ours])).toBe(0);
    expect(await main(['convert', '--from', 'ours', '--to', 'agentgym', ours, agentgym, '--json'])).toBe(0);
    expect(lastJson()).toMatchObject({ episodes: 3 });
    // No --from: the records say AgentGym.
    expect(await main(['convert', '--to', 'ours', agentgym, back, '--json'])).toBe(0);
    expect(lastJson()).toMatchObject({ from: 'agentgym', to: 'ours' });
    const original = readFileSync(ours, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const roundTrip = readFileSync(back, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(roundTrip.map((t) => t.steps.map((s: { action: string }) => s.action))).toEqual(
      original.map((t) => t.steps.map((s: { action: string }) => s.action)),
    );

    const broken = join(dir, 'broken.jsonl');
    const lines = readFileSync(ours, 'utf8').trim().split('\n');
    lines[2] = lines[2].replace('"observation":', '"observaton":');
    writeFileSync(broken, lines.join('\n'));
    const target = join(dir, 'never.json');
    expect(await main(['convert', '--from', 'ours', '--to', 'trl', broken, target])).toBe(1);
    expect(err.join('\n')).toMatch(/line 3, field 'steps\[0\]\.observation': missing field/);
    expect(() => readFileSync(target)).toThrow();
  });

  it('check-env prints the report as the last JSON line', async () => {
    expect(await main(['check-env', 'household-v0', '--episodes', '10', '--json'])).toBe(0);
    const report = lastJson();
    expect(Object.keys(report).slice(0, 7)).toEqual([
      'env',
      'episodes',
      'contract',
      'expert',
      'random',
      'deterministic',
      'steps_per_second',
    ]);
    expect(report).toMatchObject({
      env: 'household-v0',
      episodes: 10,
      contract: 'ok',
      deterministic: true,
      expert: { success: 1 },
    });
    expect(report.steps_per_second).toBeGreaterThan(0);
  });

  it('buffer: import is idempotent, stats count by env and source, query finds similar steps, export round-trips', async () => {
    const bufferDir = join(dir, 'buffer');
    const file = join(dir, 'seed.jsonl');
    expect(await main(['rollout', 'household-v0', '--episodes', '8', '--seed', '40', '--out', file])).toBe(0);
    expect(await main(['buffer', 'import', file, '--dir', bufferDir, '--json'])).toBe(0);
    const first = lastJson();
    expect(first).toMatchObject({ episodes: 8, skipped: 0 });
    expect(await main(['buffer', 'import', file, '--dir', bufferDir, '--json'])).toBe(0);
    expect(lastJson()).toMatchObject({ episodes: 0, transitions: 0, skipped: 8 });
    expect(await main(['buffer', 'stats', '--dir', bufferDir, '--json'])).toBe(0);
    expect(lastJson()).toMatchObject({
      transitions: first.transitions,
      episodes: 8,
      byEnvAndSource: { 'household-v0': { offline: first.transitions } },
    });
    expect(
      await cli`buffer query --dir ${bufferDir} --env household-v0 --text ${'take apple from countertop'} --k 3 --json`,
    ).toBe(0);
    const query = lastJson();
    expect(query.results).toHaveLength(3);
    expect(query.results[0].score).toBeGreaterThanOrEqual(query.results[2].score);
    const out = join(dir, 'export.json');
    expect(await main(['buffer', 'export', '--dir', bufferDir, '--format', 'agentgym', out, '--json'])).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toHaveLength(8);
    expect(await main(['buffer'])).toBe(2);
    expect(err.join('\n')).toMatch(
      /'buffer' needs a subcommand: buffer import, buffer stats, buffer query, buffer export/,
    );
  });

  it('buffer import rejects a malformed file whole and writes nothing', async () => {
    const bufferDir = join(dir, 'buffer-bad');
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"id": 1}\nnot json\n');
    expect(await main(['buffer', 'import', bad, '--dir', bufferDir])).toBe(1);
    expect(err.join('\n')).toMatch(/line 1, field 'id': expected a string/);
    expect(err.join('\n')).toMatch(/line 2: not valid JSON/);
    // Nothing was written, not even the folder; and stats on a folder that is not there says so (creating nothing).
    expect(existsSync(bufferDir)).toBe(false);
    expect(await main(['buffer', 'stats', '--dir', bufferDir, '--json'])).toBe(1);
    expect(err.join('\n')).toMatch(/There is no buffer folder at .*buffer-bad.*check the path \(--dir\)/);
    expect(existsSync(bufferDir)).toBe(false);
  });

  it('evaluates a dream run in the real env, as its own final evaluation did', async () => {
    const run = join(dir, 'dream-eval');
    expect(
      await cli`train --preset webshop-easy --mode dream --llm oracle:0,0 --seed 2
        --set iterations=2,tasksPerIteration=2,groupSize=2,finalEvalEpisodes=20 --out ${run} --json`,
    ).toBe(0);
    const trained = lastJson();
    expect(trained).toMatchObject({ mode: 'dream', real_steps: 0 });
    expect(await main(['eval', '--run', run, '--episodes', '20', '--json'])).toBe(0);
    expect(lastJson().eval).toEqual(trained.eval);
  });
});
