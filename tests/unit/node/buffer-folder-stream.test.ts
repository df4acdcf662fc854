/**
 * `buffer stats` and `buffer query` stream the folder, and a load that would not fit the heap is
 * refused with the fix (issue 44, repro 12: stats and query loaded the whole buffer, about 3× the
 * folder's size, and past the heap limit died in a V8 abort with a native stack).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReplayBuffer, type RetrievedTransition } from '../../../src/core/buffer/buffer';
import { HashedNgramEmbedder, transitionText } from '../../../src/core/buffer/embedders';
import type { SearchOptions } from '../../../src/core/buffer/retrieval';
import { StreamedRetrieval } from '../../../src/core/buffer/streamed-retrieval';
import type { BufferTransition } from '../../../src/core/buffer/types';
import { FolderBufferStore } from '../../../src/node/buffer-folder';
import { readFolderStats, scanFolderTransitions } from '../../../src/node/buffer-folder-stream';
import { embeddingOf, makeEpisode, makeTask, makeTransition } from '../../e2e/pages/buffer-fixtures';

/** Folders made here, removed at the end (the large one is 160 MB). */
const made: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** `dreamgym …` in a child process whose heap is `heapMb` (what a small machine, or a large buffer, gives). */
function cli(args: string[], heapMb: number) {
  return spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, '--import', 'tsx', 'src/cli/bin.ts', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });
}

/**
 * A folder with what makes retrieval order subtle: equal vectors (ties), replaced records, a vector
 * removed, vectors of another embedder (re-embedded, ranked after the rest), invalid and dreamed
 * steps, two envs, and a rewrite (eviction) behind it.
 */
async function subtleFolder(): Promise<string> {
  const dir = tempDir('dreamgym-query-');
  const embedder = new HashedNgramEmbedder();
  const store = await FolderBufferStore.open(dir);
  const make = (n: number, overrides: Partial<BufferTransition> = {}) =>
    makeTransition(n, { instruction: `buy item ${n % 2}`, observation: `page ${n % 3}`, ...overrides });
  const embed = async (ts: BufferTransition[]) => {
    const vectors = await embedder.embed(ts.map((t) => transitionText(t)));
    return ts.map((t, i) => ({ ...t, embedding: vectors[i], embedder: embedder.id }));
  };
  await store.putTransitions([
    ...Array.from({ length: 8 }, (_, n) => make(60 + n, { embedding: embeddingOf(n), createdAt: 8 - n })), // another embedder's
    ...(await embed([make(70, { source: 'real' })])),
  ]);
  await store.evict({ maxTransitions: 7, sources: ['offline'] }); // a rewrite: the files of generation 1
  // Inserted in the reverse of the file's order; equal texts, so equal scores, by the dozen.
  await store.putTransitions(await embed(Array.from({ length: 60 }, (_, n) => make(n, { createdAt: 2000 - n }))));
  await store.putTransitions([
    ...(await embed([make(3, { valid: false }), make(4, { source: 'dream' })])),
    ...[0, 1, 2].map((n) =>
      make(80 + n, { env: 'household-v0', instruction: 'buy item 1', observation: 'page 2', createdAt: 10 - n }),
    ),
  ]);
  await store.putTransitions([make(5, { observation: 'page 5, again', embedder: embedder.id })]); // its vector removed
  await store.putTransitions(await embed([make(9, { action: 'search[apple]' })]));
  await store.close();
  return dir;
}

describe('buffer folder, read as a stream', () => {
  it('a streamed query finds what a full load finds, ties and re-embedded rows in order', async () => {
    const dir = await subtleFolder();
    const full = new ReplayBuffer(await FolderBufferStore.open(dir, { readOnly: true }));
    const asked = (hits: RetrievedTransition[]) => hits.map((h) => [h.transition.id, h.score, h.transition.action]);
    const cases: [number, SearchOptions][] = [
      [1, {}],
      [7, {}],
      [200, {}],
      [5, { diverse: true }],
      [30, { diverse: true }],
      [6, { env: 'webshop-lite-v0', source: 'offline' }],
      [4, { source: 'dream' }],
      [1, { env: 'household-v0' }],
      [2, { env: 'household-v0' }],
    ];
    for (const [k, options] of cases) {
      const expected = asked(await full.retrieve('buy item 1 page 2', k, options));
      expect(expected.length).toBeGreaterThan(0);
      for (const chunk of [64, 4000, 1 << 20]) {
        const streamed = new StreamedRetrieval(new HashedNgramEmbedder(), 'buy item 1 page 2', k, options);
        await scanFolderTransitions(dir, streamed, chunk);
        expect(asked(streamed.results()), JSON.stringify({ k, options, chunk })).toEqual(expected);
      }
    }
    await full.store.close();
  });

  it('counts what a full load counts, replaced records once, whatever the chunk size', async () => {
    const dir = tempDir('dreamgym-stream-');
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
    for (const chunk of [64, 1000, 1 << 20]) expect(readFolderStats(dir, chunk)).toEqual(loaded);
  });

  it('buffer stats and query of a folder larger than the heap stream; a full load is refused with the fix', async () => {
    const dir = tempDir('dreamgym-big-');
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
    const query = cli(['buffer', 'query', '--dir', dir, '--text', 'buy item 157', '--k', '3', '--json'], 192);
    expect({ status: query.status, stderr: query.stderr.slice(-300) }).toEqual({ status: 0, stderr: '' });
    const { results } = JSON.parse(query.stdout.trim().split('\n').at(-1)!) as { results: { id: string }[] };
    expect(results.map((r) => r.id)).toHaveLength(3);
    expect(results[0].id).toBe(makeTransition(157).id);
    const exported = cli(['buffer', 'export', '--dir', dir, join(dir, 'out.jsonl')], 192);
    expect(exported.status).toBe(1);
    expect(exported.stderr).toMatch(
      /holds 161 MB; loading it needs about 48\d MB.*NODE_OPTIONS=--max-old-space-size=\d+/s,
    );
    expect(exported.stderr).not.toMatch(/FATAL ERROR|Native stack/);
  });
});
