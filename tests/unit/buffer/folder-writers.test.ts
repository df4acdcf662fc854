/**
 * The folder store with more than one process: one writer at a time (the lock file, its stale
 * rule, the bounded wait and the holder named), readers that change nothing and never see half
 * a write, and rewrites that a crash leaves whole (the old files or the new ones).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { FolderBufferStore } from '../../../src/node/buffer-folder';
import { BufferFolderMissingError } from '../../../src/node/buffer-folder-format';
import { FolderLockedError, LOCK_FILE } from '../../../src/node/folder-lock';
import { embeddingOf, makeEpisode, makeTask, makeTransition } from '../../e2e/pages/buffer-fixtures';
import { tempFolders } from '../support/temp-folders';

const freshFolder = tempFolders('writers-test');
const open = (dir: string, options: Parameters<typeof FolderBufferStore.open>[1] = {}) =>
  FolderBufferStore.open(dir, { durable: false, ...options });

/** A pid that no process has now: a child that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('FolderBufferStore: one writer at a time', () => {
  it('makes a second writer wait a bounded time, then fail naming the holder; after close the next one opens', async () => {
    const dir = freshFolder();
    const first = await open(dir);
    await first.putTransitions([makeTransition(0)], [makeEpisode('ep-0')]);
    const lock = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'));
    expect(lock).toMatchObject({ pid: process.pid, host: hostname() });

    const error = await open(dir, { lockWaitMs: 150 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FolderLockedError);
    expect((error as Error).message).toContain(`is being written by process ${process.pid} on this machine`);
    expect((error as Error).message).toContain(`delete ${join(dir, LOCK_FILE)}`);

    // A writer that waits long enough gets the folder once the first one closes, and sees its write.
    const second = open(dir, { lockWaitMs: 10_000 });
    await first.close();
    const store = await second;
    expect(await store.countTransitions()).toBe(1);
    await store.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('takes over the lock of a process that is gone, and of an empty lock left long ago', async () => {
    const dir = freshFolder();
    writeFileSync(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid: deadPid(), host: hostname(), command: 'buffer import a.jsonl', since: 'then', token: 'x' }),
    );
    const store = await open(dir, { lockWaitMs: 0 });
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    await store.close();

    writeFileSync(join(dir, LOCK_FILE), '');
    await expect(open(dir, { lockWaitMs: 100 })).rejects.toThrow(/a process that left an unreadable lock/); // fresh: maybe still being written
    const { utimesSync } = await import('node:fs');
    utimesSync(join(dir, LOCK_FILE), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    await (await open(dir, { lockWaitMs: 0 })).close();
  });

  it('never takes over the lock of another host (its pid means nothing here)', async () => {
    const dir = freshFolder();
    writeFileSync(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid: deadPid(), host: 'elsewhere', command: 'train', since: 'then', token: 'y' }),
    );
    await expect(open(dir, { lockWaitMs: 50 })).rejects.toThrow(
      /process \d+ on host 'elsewhere' \(train, since then\)/,
    );
  });
});

describe('FolderBufferStore: readers', () => {
  it('refuse a missing folder and create nothing', async () => {
    const dir = join(freshFolder(), 'typo');
    const error = await open(dir, { readOnly: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BufferFolderMissingError);
    expect((error as Error).message).toMatch(/There is no buffer folder at .*typo.*check the path/);
    expect(existsSync(dir)).toBe(false);
  });

  it('read while a writer holds the lock, see only committed batches, and refuse to write', async () => {
    const dir = freshFolder();
    const writer = await open(dir, {
      testHooks: {
        beforeCommit: (op) => {
          if (op === 'putTasks') throw new Error('not yet');
        },
      },
    });
    await writer.putTransitions(
      [makeTransition(0, { embedding: embeddingOf(0) }), makeTransition(1)],
      [makeEpisode('ep-0')],
    );
    const filesBefore = readdirSync(dir).sort();
    const reader = await open(dir, { readOnly: true });
    expect(await reader.stats()).toMatchObject({ transitions: 2, episodes: 1 });
    await expect(reader.putTasks([makeTask('t')])).rejects.toThrow(/opened read-only/);
    expect(readdirSync(dir).sort()).toEqual(filesBefore);
    await reader.close();
    await writer.close();
  });

  it('ignore bytes a writer appended but has not committed (a batch in flight)', async () => {
    const dir = freshFolder();
    const writer = await open(dir);
    await writer.putTransitions([makeTransition(0)], [makeEpisode('ep-0')]);
    // What a writer's append looks like before its meta.json commit: whole lines past the committed end.
    writeFileSync(
      join(dir, 'transitions.jsonl'),
      readFileSync(join(dir, 'transitions.jsonl'), 'utf8') + JSON.stringify(makeTransition(1)) + '\n',
    );
    const reader = await open(dir, { readOnly: true });
    expect(await reader.countTransitions()).toBe(1);
    await reader.close();
    await writer.close();
  });
});

describe('FolderBufferStore: rewrites', () => {
  it('write new names and commit them in meta.json; files of an interrupted rewrite are ignored, then removed', async () => {
    const dir = freshFolder();
    const store = await open(dir);
    await store.putTransitions(
      [0, 1, 2, 3].map((n) => makeTransition(n, { source: 'dream', embedding: embeddingOf(n) })),
      [makeEpisode('ep-0', 'dream'), makeEpisode('ep-1', 'dream')],
    );
    await store.evict({ sources: ['dream'], maxTransitions: 2 });
    await store.close();
    const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'));
    expect(meta).toMatchObject({
      version: 2,
      generation: 1,
      files: { 'transitions.jsonl': 'transitions.1.jsonl', 'episodes.jsonl': 'episodes.1.jsonl' },
    });
    expect(existsSync(join(dir, 'transitions.jsonl'))).toBe(false);

    // A crash after writing the next generation's files, before its meta.json: the folder is the old one.
    writeFileSync(join(dir, 'transitions.2.jsonl'), '{"not":"committed"}\n');
    writeFileSync(join(dir, 'embeddings.2.bin'), Buffer.alloc(16));
    const reader = await open(dir, { readOnly: true });
    expect((await reader.listTransitions()).map((t) => t.id)).toEqual(['ep-0#2', 'ep-1#0']);
    await reader.close();
    expect(existsSync(join(dir, 'transitions.2.jsonl'))).toBe(true); // a reader changes nothing
    const writer = await open(dir);
    expect(await writer.countTransitions()).toBe(2);
    await writer.close();
    expect(existsSync(join(dir, 'transitions.2.jsonl'))).toBe(false);
    expect(existsSync(join(dir, 'embeddings.2.bin'))).toBe(false);
  });
});
