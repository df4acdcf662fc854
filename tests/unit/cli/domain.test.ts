/**
 * `dreamgym domain import` loses nothing (issue 44): a folder it did not write is refused with the
 * fix, two imports of one name leave one domain, `--replace` keeps the domain's runs/, and a name
 * that is a path is refused by every command that takes one (repros 1–3 and 13b).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import { writeTrajectories } from '../../../src/core/data/formats';
import { loadDomainFolder } from '../../../src/node/domain-folder';
import { foreignOurs } from '../domain/fixtures';
import { captureCliOutput } from '../support/cli-output';

const { out, err, lastJson } = captureCliOutput();
const root = mkdtempSync(join(tmpdir(), 'dreamgym-domain-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** An ETO file of `n` episodes (the issue's `E`). */
async function etoFile(n: number, name = `e${n}.json`): Promise<string> {
  const file = join(root, name);
  writeFileSync(file, writeTrajectories(await foreignOurs(n), 'eto'));
  return file;
}

const importArgs = (file: string, name: string, dir: string, ...rest: string[]) => [
  'domain',
  'import',
  file,
  '--format',
  'eto',
  '--name',
  name,
  '--dir',
  dir,
  ...rest,
];

describe('domain import', () => {
  it('refuses a folder it did not write, naming the fix, and deletes nothing (repro 1)', async () => {
    const x = join(root, 'X');
    mkdirSync(join(x, 'notes'), { recursive: true });
    writeFileSync(join(x, 'notes', 'a.txt'), 'hi\n');
    const file = await etoFile(12);
    expect(await main(importArgs(file, 'notes', x))).toBe(1);
    expect(err.join('\n')).toMatch(
      /notes is not a domain folder written by 'dreamgym domain import' \(it has no current link .*\) and holds a\.txt/,
    );
    expect(err.join('\n')).toMatch(/Choose another --name or --dir, or move that folder away yourself/);
    expect(await main(importArgs(file, 'notes', x, '--replace'))).toBe(1);
    expect(readFileSync(join(x, 'notes', 'a.txt'), 'utf8')).toBe('hi\n');
    expect(readdirSync(join(x, 'notes'))).toEqual(['a.txt']);
  });

  it('two imports into one name at once leave one domain, of one file (repro 2)', async () => {
    const dir = join(root, 'two');
    const [a, b] = [await etoFile(12, 'a.json'), await etoFile(15, 'b.json')];
    const codes = await Promise.all([main(importArgs(a, 'app', dir)), main(importArgs(b, 'app', dir))]);
    expect(codes.sort()).toEqual([0, 1]);
    expect(err.join('\n')).toMatch(/A domain named 'app' already exists .* pass --replace/);
    const domain = loadDomainFolder(dir, 'app');
    const manifest = JSON.parse(readFileSync(join(dir, 'app', 'current', 'domain.json'), 'utf8'));
    expect(domain.stats.episodes).toBe(manifest.source.file === a ? 12 : 15);
    expect(await main(['buffer', 'stats', '--dir', join(dir, 'app', 'current', 'buffer'), '--json'])).toBe(0);
    expect(lastJson().episodes).toBe(domain.stats.trainEpisodes);
  });

  it('--replace swaps the new domain in and keeps runs/, saying so (repro 3)', async () => {
    const dir = join(root, 'replace');
    expect(await main(importArgs(await etoFile(12), 'app', dir))).toBe(0);
    mkdirSync(join(dir, 'app', 'runs', 'seed-0'), { recursive: true });
    writeFileSync(join(dir, 'app', 'runs', 'seed-0', 'summary.json'), '{}\n');
    expect(await main(importArgs(await etoFile(15), 'app', dir, '--replace'))).toBe(0);
    expect(out.join('\n')).toContain('kept from the domain it replaced: runs');
    expect(existsSync(join(dir, 'app', 'runs', 'seed-0', 'summary.json'))).toBe(true);
    expect(loadDomainFolder(dir, 'app').stats.episodes).toBe(15);
    expect(readdirSync(dir).sort()).toEqual(['app']);
  });
});

describe('a domain name is checked wherever one is taken (repro 13b)', () => {
  it('expmodel train and domain train refuse --domain ../base as the import refuses it', async () => {
    const dir = join(root, 'names', 'domains');
    // A real domain one level up: a name that is a path would reach it.
    expect(await main(importArgs(await etoFile(12), 'base', join(root, 'names')))).toBe(0);
    expect(await main(importArgs(await etoFile(12), '../base', dir))).toBe(1);
    const refusal = /The name '\.\.\/base' cannot name a domain: use 1–64 letters, digits, '-' or '_'/;
    expect(err.join('\n')).toMatch(refusal);
    err.length = 0;
    const model = join(root, 'names', 'model');
    const expmodel = ['expmodel', 'train', '--domain', '../base', '--dir', dir, '--out', model, '--epochs', '1'];
    expect(await main([...expmodel, '--d-model', '8'])).not.toBe(0);
    expect(err.join('\n')).toMatch(refusal);
    expect(existsSync(model)).toBe(false);
    err.length = 0;
    expect(await main(['domain', 'train', '--name', '../base', '--dir', dir, '--llm', 'learned:nowhere'])).not.toBe(0);
    expect(err.join('\n')).toMatch(refusal);
    expect(existsSync(join(root, 'names', 'base', 'runs'))).toBe(false);
  }, 60_000);
});
