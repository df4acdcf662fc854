/**
 * The domain folder (issue 44, repros 1–3 and 13b): a folder this code did not write is never
 * removed, one import of a name at a time, and `--replace` builds beside the old domain and swaps
 * it in by one rename of the `current` link, so a crash at any point of the save leaves the old
 * domain or the new one, with its runs/; a domain of the old layout is refused with the fix.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildDomain, type Domain } from '../../../src/core/domain/domain';
import {
  DomainFolderError,
  loadDomainFolder,
  openDomainBuffer,
  openDomainFolder,
  SAVE_POINTS,
  saveDomainFolder,
  type SavePoint,
} from '../../../src/node/domain-folder';
import { foreignOurs } from '../domain/fixtures';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dreamgym-domain-folder-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Two different domains of one name: 'old' (12 episodes) and 'new' (15). */
async function domains(name = 'app'): Promise<{ old: Domain; fresh: Domain }> {
  const episodes = await foreignOurs(15, name);
  return { old: buildDomain(name, episodes.slice(0, 12)), fresh: buildDomain(name, episodes) };
}

class Crash extends Error {}

/** A hook that stops the save at `point` as a crash would (nothing after it runs). */
function crashAt(point: SavePoint): (reached: SavePoint) => void {
  return (reached) => {
    if (reached === point) throw new Crash(point);
  };
}

describe('saveDomainFolder writes over nothing it did not write', () => {
  it('refuses a folder of user files, even with replace, and leaves every file', async () => {
    const { old } = await domains('notes');
    mkdirSync(join(dir, 'notes'));
    writeFileSync(join(dir, 'notes', 'a.txt'), 'hi');
    for (const replace of [false, true]) {
      await expect(saveDomainFolder(old, dir, { createdAt: 1, replace })).rejects.toThrow(
        /notes is not a domain folder written by 'dreamgym domain import' .* holds a\.txt; .*another --name or --dir/,
      );
    }
    expect(readFileSync(join(dir, 'notes', 'a.txt'), 'utf8')).toBe('hi');
    expect(readdirSync(dir).sort()).toEqual(['notes']);
    expect(readdirSync(join(dir, 'notes'))).toEqual(['a.txt']); // not even a lock was written there
  });

  it('takes an empty folder, and refuses a domain name that is a path', async () => {
    const { old } = await domains();
    mkdirSync(join(dir, 'app'));
    await saveDomainFolder(old, dir, { createdAt: 1 });
    expect(loadDomainFolder(dir, 'app').train).toHaveLength(old.train.length);
    for (const bad of ['../base', 'a/b', '.hidden', '']) {
      expect(() => loadDomainFolder(dir, bad)).toThrow(DomainFolderError);
      expect(() => loadDomainFolder(dir, bad)).toThrow(/cannot name a domain: use 1–64 letters, digits/);
      await expect(openDomainBuffer(dir, bad)).rejects.toThrow(/cannot name a domain/);
    }
  });
});

describe('one import of a name at a time', () => {
  it('a second save of the same name waits for the first, then is refused as an existing domain', async () => {
    const { old, fresh } = await domains();
    const results = await Promise.allSettled([
      saveDomainFolder(old, dir, { createdAt: 1, source: { file: 'old', format: 'ours' } }),
      saveDomainFolder(fresh, dir, { createdAt: 2, source: { file: 'new', format: 'ours' } }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/already exists .* --replace/);
    const buffer = await openDomainBuffer(dir, 'app');
    expect((await buffer.stats()).episodes).toBe(old.train.length);
    await buffer.store.close();
    expect(readdirSync(dir).sort()).toEqual(['app']);
  });

  it('a save waits at most lockWaitMs for the lock of another writer', async () => {
    const { old } = await domains();
    const holder = { pid: process.pid, host: (await import('node:os')).hostname(), command: 'x', since: 'now' };
    mkdirSync(join(dir, 'app'));
    writeFileSync(join(dir, 'app', 'writer.lock'), JSON.stringify({ ...holder, token: 't' }));
    await expect(saveDomainFolder(old, dir, { createdAt: 1, lockWaitMs: 50 })).rejects.toThrow(
      /app is being written by process \d+ on this machine .*delete .*app\/writer\.lock/,
    );
    expect(readdirSync(join(dir, 'app'))).toEqual(['writer.lock']);
  });
});

describe('replace swaps the new domain in, keeping runs/', () => {
  async function oldDomainWithRun(old: Domain): Promise<void> {
    await saveDomainFolder(old, dir, { createdAt: 1, source: { file: 'old', format: 'ours' } });
    mkdirSync(join(dir, 'app', 'runs', 'seed-0'), { recursive: true });
    writeFileSync(join(dir, 'app', 'runs', 'seed-0', 'summary.json'), '{"run":"old"}');
  }

  it('replaces the domain and keeps its runs/', async () => {
    const { old, fresh } = await domains();
    await oldDomainWithRun(old);
    const saved = await saveDomainFolder(fresh, dir, { createdAt: 2, replace: true });
    expect(saved.keptEntries).toEqual(['runs']);
    expect(loadDomainFolder(dir, 'app').train).toHaveLength(fresh.train.length);
    expect(readFileSync(join(dir, 'app', 'runs', 'seed-0', 'summary.json'), 'utf8')).toBe('{"run":"old"}');
    expect(readdirSync(dir).sort()).toEqual(['app']);
    expect(readdirSync(join(dir, 'app')).sort()).toEqual(['current', 'data.2', 'runs']);
    expect(readlinkSync(join(dir, 'app', 'current'))).toBe('data.2');
  });

  it.each(SAVE_POINTS)('a crash at %s leaves the old domain or the new one, whole, with its runs/', async (point) => {
    const { old, fresh } = await domains();
    await oldDomainWithRun(old);
    await expect(saveDomainFolder(fresh, dir, { createdAt: 2, replace: true, at: crashAt(point) })).rejects.toThrow(
      Crash,
    );
    const domain = loadDomainFolder(dir, 'app'); // a reader needs no recovery: `current` names one whole domain
    const expected = ['swapped', 'removing'].includes(point) ? fresh : old;
    expect(domain.train.map((t) => t.id)).toEqual(expected.train.map((t) => t.id));
    const buffer = await openDomainBuffer(dir, 'app');
    expect((await buffer.stats()).episodes).toBe(expected.train.length);
    await buffer.store.close();
    expect(readFileSync(join(dir, 'app', 'runs', 'seed-0', 'summary.json'), 'utf8')).toBe('{"run":"old"}');
    expect(readdirSync(dir).sort()).toEqual(['app']);
    // And the next import goes on from there.
    await saveDomainFolder(fresh, dir, { createdAt: 3, replace: true });
    expect(loadDomainFolder(dir, 'app').train).toHaveLength(fresh.train.length);
  });

  it('a failed first import leaves an empty folder; a crash of one after the swap, the new domain', async () => {
    const { old } = await domains();
    await expect(saveDomainFolder(old, dir, { createdAt: 1, at: crashAt('linked') })).rejects.toThrow(Crash);
    expect(readdirSync(join(dir, 'app'))).toEqual([]);
    expect(() => loadDomainFolder(dir, 'app')).toThrow(/No domain named 'app' .* Import it first/);
    await expect(saveDomainFolder(old, dir, { createdAt: 1, at: crashAt('swapped') })).rejects.toThrow(Crash);
    expect(loadDomainFolder(dir, 'app').train).toHaveLength(old.train.length);
  });

  it('readers pass over what a killed import left, and the next import removes it', async () => {
    const { old, fresh } = await domains();
    await oldDomainWithRun(old);
    const app = join(dir, 'app');
    mkdirSync(join(app, 'data.7')); // a data folder a kill cut short, and its link
    writeFileSync(join(app, 'data.7', '.dreamgym-domain-staging'), '');
    writeFileSync(join(app, 'data.7', 'train.jsonl'), '{"half":');
    symlinkSync('data.7', join(app, 'current.new-999'));
    writeFileSync(join(app, 'data.1', 'notes.txt'), 'mine'); // the user's, in the data folder
    expect(loadDomainFolder(dir, 'app').train).toHaveLength(old.train.length);
    const saved = await saveDomainFolder(fresh, dir, { createdAt: 2, replace: true });
    expect(saved.keptEntries.sort()).toEqual(['notes.txt', 'runs']);
    expect(readdirSync(app).sort()).toEqual(['current', 'data.2', 'runs']); // data.7 removed first
    expect(readFileSync(join(app, 'current', 'notes.txt'), 'utf8')).toBe('mine');
    expect(loadDomainFolder(dir, 'app').train).toHaveLength(fresh.train.length);
  });
});

describe('readers', () => {
  it('read the data folder `current` links to; a file missing there is named, with the fix', async () => {
    const { old } = await domains();
    await saveDomainFolder(old, dir, { createdAt: 1 });
    const { domain, buffer } = await openDomainFolder(dir, 'app');
    expect((await buffer.stats()).episodes).toBe(domain.stats.trainEpisodes);
    await buffer.store.close();
    rmSync(join(dir, 'app', 'data.1', 'held-out.jsonl'));
    expect(() => loadDomainFolder(dir, 'app')).toThrow(
      /The domain's data in .*data\.1 is incomplete \(ENOENT.*held-out\.jsonl.*\)\. Import it again with --replace/,
    );
    rmSync(join(dir, 'app', 'data.1', 'buffer'), { recursive: true });
    await expect(openDomainBuffer(dir, 'app')).rejects.toThrow(/data\.1 is incomplete .*no buffer folder/);
  });
});

describe('a domain of the old layout (format 1: the data in the domain folder itself)', () => {
  /** The layout up to issue 44, made from a saved domain: its data files moved up, the link gone. */
  async function formatOneDomain(old: Domain): Promise<string> {
    await saveDomainFolder(old, dir, { createdAt: 1, source: { file: 'my old.json', format: 'eto' } });
    const app = join(dir, 'app');
    for (const entry of readdirSync(join(app, 'data.1'))) renameSync(join(app, 'data.1', entry), join(app, entry));
    rmSync(join(app, 'data.1'), { recursive: true });
    rmSync(join(app, 'current'));
    const manifest = JSON.parse(readFileSync(join(app, 'domain.json'), 'utf8'));
    writeFileSync(join(app, 'domain.json'), JSON.stringify({ ...manifest, format: 'dreamgym-domain/1' }));
    mkdirSync(join(app, 'runs', 'seed-0'), { recursive: true });
    writeFileSync(join(app, 'runs', 'seed-0', 'summary.json'), '{"run":"old"}');
    return app;
  }

  it('is refused by readers naming the fix, and --replace turns it into this layout, keeping runs/', async () => {
    const { old, fresh } = await domains();
    const app = await formatOneDomain(old);
    const fix = `dreamgym domain import 'my old.json' --format eto --name app --dir ${dir} --replace`;
    expect(() => loadDomainFolder(dir, 'app')).toThrow(/layout of an older version \(format dreamgym-domain\/1\)/);
    expect(() => loadDomainFolder(dir, 'app')).toThrow(fix);
    await expect(openDomainBuffer(dir, 'app')).rejects.toThrow(fix);
    await expect(saveDomainFolder(fresh, dir, { createdAt: 2 })).rejects.toThrow(/already exists .* --replace/);
    const saved = await saveDomainFolder(fresh, dir, { createdAt: 2, replace: true });
    expect(saved.keptEntries).toEqual(['runs']);
    expect(readdirSync(app).sort()).toEqual(['current', 'data.1', 'runs']);
    expect(loadDomainFolder(dir, 'app').train).toHaveLength(fresh.train.length);
    expect(readFileSync(join(app, 'runs', 'seed-0', 'summary.json'), 'utf8')).toBe('{"run":"old"}');
  });

  it('a crash while its old files go leaves the new domain; the next import removes the rest', async () => {
    const { old, fresh } = await domains();
    const app = await formatOneDomain(old);
    await expect(
      saveDomainFolder(fresh, dir, { createdAt: 2, replace: true, at: crashAt('removing') }),
    ).rejects.toThrow(Crash);
    expect(loadDomainFolder(dir, 'app').train).toHaveLength(fresh.train.length);
    expect(existsSync(join(app, 'domain.json'))).toBe(true);
    await saveDomainFolder(fresh, dir, { createdAt: 3, replace: true });
    expect(readdirSync(app).sort()).toEqual(['current', 'data.2', 'runs']);
  });
});
