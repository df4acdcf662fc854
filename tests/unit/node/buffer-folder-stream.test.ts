/**
 * `buffer stats` streams the folder, and a load that would not fit the heap is refused with the
 * fix (issue 44, repro 12: stats and query loaded the whole buffer, about 3× the folder's size,
 * and past the heap limit died in a V8 abort with a native stack).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FolderBufferStore } from '../../../src/node/buffer-folder';
import { embeddingOf, makeEpisode, makeTask, makeTransition } from '../../e2e/pages/buffer-fixtures';

/** `dreamgym …` in a child process whose heap is `heapMb` (what a small machine, or a large buffer, gives). */
function cli(args: string[], heapMb: number) {
  return spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, '--import', 'tsx', 'src/cli/bin.ts', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });
}

describe('buffer folder, read as a stream', () => {
  it('counts what a full load counts, replaced records once, whatever the chunk size', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dreamgym-stream-'));
    const store = await FolderBufferStore.open(dir);
    await store.putTransitions(
      Array.from({ length: 30 }, (_, n) => makeTransition(n, { embedding: embeddingOf(n) })),
      [makeEpisode('ep-0'), makeEpisode('ep-1')],
    );
    await store.putTransitions([makeTransition(4, { valid: false, source: 'dream' })], [makeEpisode('ep-1')]);
    await store.putImport({ transitions: [makeTransition(40)], episodes: [], tasks: [makeTask('t1'), makeTask('t2')] });
    const loaded = await store.stats();
    await store.close();
    expect(loaded.invalid).toBe(1);
    for (const chunk of [64, 1000, 1 << 20]) expect(FolderBufferStore.readStats(dir, chunk)).toEqual(loaded);
  });

  it('buffer stats of a folder larger than the heap streams; a query is refused with the fix', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dreamgym-big-'));
    const store = await FolderBufferStore.open(dir, { durable: false });
    const page = 'x'.repeat(1 << 20); // one 1 MB observation per transition: 160 MB of folder
    for (let batch = 0; batch < 8; batch++)
      await store.putTransitions(
        Array.from({ length: 20 }, (_, i) => makeTransition(batch * 20 + i, { observation: page })),
      );
    await store.close();
    const stats = cli(['buffer', 'stats', '--dir', dir, '--json'], 192);
    expect({ status: stats.status, stderr: stats.stderr.slice(-300) }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(stats.stdout.trim().split('\n').at(-1)!)).toMatchObject({ transitions: 160 });
    const query = cli(['buffer', 'query', '--dir', dir, '--text', 'x'], 192);
    expect(query.status).toBe(1);
    expect(query.stderr).toMatch(
      /holds 161 MB; loading it needs about 48\d MB.*NODE_OPTIONS=--max-old-space-size=\d+/s,
    );
    expect(query.stderr).not.toMatch(/FATAL ERROR|Native stack/);
  });
});
