/**
 * The domain folder (issue 44, repros 1–3 and 13b): a folder this code did not write is never
 * removed, one import of a name at a time, and `--replace` builds beside the old domain and swaps
 * it in, so a crash at any point of the save leaves the old domain or the new one, with its runs/.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildDomain, type Domain } from '../../../src/core/domain/domain';
import {
  DomainFolderError,
  loadDomainFolder,
  openDomainBuffer,
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
    writeFileSync(join(dir, 'app.writer.lock'), JSON.stringify({ ...holder, token: 't' }));
    await expect(saveDomainFolder(old, dir, { createdAt: 1, lockWaitMs: 50 })).rejects.toThrow(
      /app is being written by process \d+ on this machine .*delete .*app\.writer\.lock/,
    );
    expect(existsSync(join(dir, 'app'))).toBe(false);
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
  });

  it.each(SAVE_POINTS)('a crash at %s leaves the old domain or the new one, whole, with its runs/', async (point) => {
    const { old, fresh } = await domains();
    await oldDomainWithRun(old);
    await expect(saveDomainFolder(fresh, dir, { createdAt: 2, replace: true, at: crashAt(point) })).rejects.toThrow(
      Crash,
    );
    const domain = loadDomainFolder(dir, 'app'); // the reader finishes or undoes the swap
    const expected = ['old-aside', 'swapped'].includes(point) ? fresh : old;
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
});
