/**
 * End to end: the IndexedDB buffer store in Debian's Chromium with real IndexedDB, through the test
 * page tests/e2e/pages/buffer.html served by a Vite dev server started here on a free port. A
 * persistent browser profile in a temp folder keeps IndexedDB on disk, as for a user.
 *
 * BUFFER_BENCH_N=100000 makes the benchmark insert and load that many (default 5,000: seconds).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ViteDevServer } from 'vite';
import { chromium, type BrowserContext, type Page } from 'playwright';
import { CHROMIUM, openPage, startDevServer } from './harness';
import { INDEXEDDB_SCHEMA_VERSION } from '../../src/core/buffer/stores';
import { embeddingOf, transitionSummary, v1Contents, v2Contents, V1_EMBEDDER } from './pages/buffer-fixtures';

/** The stores and indexes of schema v3 (the transitions, invalid and episodes stores are gone). */
const V3_STORES = { chunks: {}, tasks: { env: 'env' }, runs: {}, meta: {} };

let server: ViteDevServer;
let context: BrowserContext;
let profile: string;
let pageUrl: string;

const launch = (): Promise<BrowserContext> => chromium.launchPersistentContext(profile, CHROMIUM);

/** The buffer test page, ready, with no uncaught error on the way. */
async function openBufferPage(): Promise<Page> {
  const { page, errors } = await openPage(context);
  await page.goto(pageUrl);
  await page.waitForFunction(() => window.bufferPageReady === true, undefined, { timeout: 60_000 });
  expect(errors).toEqual([]);
  return page;
}

beforeAll(async () => {
  const dev = await startDevServer();
  server = dev.server;
  pageUrl = `${dev.baseUrl}/tests/e2e/pages/buffer.html`;
  profile = mkdtempSync(join(tmpdir(), 'dreamgym-buffer-e2e-'));
  context = await launch();
}, 120_000);

afterAll(async () => {
  await context?.close();
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('IndexedDbBufferStore in Chromium', () => {
  it('writes transitions with Float32Array embeddings and reads the same after a reload and a browser restart', async () => {
    let page = await openBufferPage();
    await page.evaluate(() => window.bufferPage.reset('e2e-roundtrip'));
    expect(await page.evaluate(() => window.bufferPage.write('e2e-roundtrip', 30))).toEqual({ added: 30, replaced: 0 });
    const written = await page.evaluate(() => window.bufferPage.read('e2e-roundtrip'));
    expect(written.transitions).toHaveLength(30);
    expect(written.transitions[0]).toMatchObject({ id: 'ep-0#0', embeddingType: 'Float32Array', embedder: 'hash-16' });
    expect(written.transitions[0].embedding).toEqual(Array.from(embeddingOf(0, 16)));
    expect(written.transitions[1]).toMatchObject({ embeddingType: null, embedding: null });
    expect(written.stats).toMatchObject({ transitions: 30, episodes: 10, tasks: 2, runs: 1, invalid: 4 });
    expect(written.stats.byEnvAndSource).toEqual({ 'webshop-lite-v0': { offline: 10, real: 10, dream: 10 } });

    await page.reload();
    await page.waitForFunction(() => window.bufferPageReady === true);
    expect(await page.evaluate(() => window.bufferPage.read('e2e-roundtrip'))).toEqual(written);
    await page.close();

    // All the way to disk: a new browser on the same profile.
    await context.close();
    context = await launch();
    page = await openBufferPage();
    expect(await page.evaluate(() => window.bufferPage.read('e2e-roundtrip'))).toEqual(written);
    await page.close();
  });

  it('an import interrupted by a page reload is absent or complete after the reload, never partial', async () => {
    const n = 8_000; // 40,000 transitions: a second or two of embedding, then one transaction of 40 chunks
    const page = await openBufferPage();
    const seen: string[] = [];
    // Reload at the start, while embedding, while the one transaction is filled, and after: absent or complete every time.
    for (const [trial, wait] of [
      [0, 'now'],
      [1, 'embedding'],
      [2, 'writing'],
      [3, 'writing'],
      [4, 'done'],
    ] as const) {
      const name = `e2e-reload-import-${trial}`;
      await page.evaluate((db) => window.bufferPage.reset(db), name);
      await page.evaluate(([db, count]) => window.bufferPage.startImport(db, count), [name, n] as const);
      if (wait !== 'now')
        await page.waitForFunction((phase) => window.importPhase === phase || window.importPhase === 'done', wait, {
          timeout: 60_000,
          polling: 1,
        });
      const phase = await page.evaluate(() => window.importPhase ?? 'none');
      await page.reload();
      await page.waitForFunction(() => window.bufferPageReady === true);
      const counts = await page.evaluate((db) => window.bufferPage.importCounts(db), name);
      const absent = counts.episodes === 0 && counts.tasks === 0 && counts.transitions === 0;
      const complete = counts.episodes === n && counts.tasks === n && counts.transitions === n * counts.perEpisode;
      expect(absent || complete, `trial ${trial} (reloaded while ${phase}): ${JSON.stringify(counts)}`).toBe(true);
      seen.push(`${phase}: ${absent ? 'absent' : 'complete'}`);
    }
    // How far each trial got before its reload took effect depends on the machine's speed (the
    // phase is read just before the reload, and the import runs on meanwhile), so the property is
    // the one above: absent or complete, whatever the timing. A finished import stays complete.
    expect(seen[4]).toBe('done: complete');
    console.log(`[reload during import, ${n} episodes] ${seen.join('; ')}`);
    await page.close();
  }, 180_000);

  it('upgrades a hand-made v1 database, keeping and migrating every record', async () => {
    const page = await openBufferPage();
    const result = await page.evaluate(() => window.bufferPage.upgradeFromV1('e2e-v1'));
    expect(result.before.version).toBe(1);
    expect(result.before.stores.transitions).toEqual({
      env: 'env',
      source: 'source',
      episodeId: 'episodeId',
      createdAt: 'createdAt',
    });
    expect(result.after.version).toBe(INDEXEDDB_SCHEMA_VERSION);
    expect(result.after.stores).toEqual(V3_STORES);
    const v1 = v1Contents();
    expect(result.transitions.map((t) => t.id)).toEqual(v1.transitions.map((t) => t.id));
    for (const [i, t] of result.transitions.entries()) {
      const original = v1.transitions[i];
      expect(t).toMatchObject({
        source: original.source,
        valid: original.valid,
        env: original.env,
        embedder: original.embedding ? V1_EMBEDDER : null,
        embeddingType: original.embedding ? 'Float32Array' : null,
        embedding: original.embedding ? Array.from(original.embedding) : null,
      });
    }
    expect(result.episodes).toEqual(['ep-0', 'ep-1']);
    expect(result.tasks).toEqual(['task-0', 'task-1']);
    expect(result.runs).toEqual([['run-1', 'running']]);
    expect(result.stats).toMatchObject({ transitions: 4, invalid: 1 });
    await page.close();
  });

  it('upgrades a hand-made v2 database to v3, moving every record into chunks in insertion order', async () => {
    const page = await openBufferPage();
    const result = await page.evaluate(() => window.bufferPage.upgradeFromV2('e2e-v2'));
    expect(result.before.version).toBe(2);
    expect(result.before.stores.invalid).toEqual({});
    expect(result.after).toEqual({ version: INDEXEDDB_SCHEMA_VERSION, stores: V3_STORES });
    const ordered = [...v2Contents().transitions].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
    expect(result.transitions).toEqual(
      // Each as written, its embedding read back as a Float32Array.
      ordered.map((t) => ({ ...transitionSummary(t), embeddingType: t.embedding ? 'Float32Array' : null })),
    );
    expect(result.episodes).toEqual(['ep-0', 'ep-1']);
    expect(result.tasks).toEqual(['task-0', 'task-1']);
    expect(result.runs).toEqual([['run-1', 'running']]);
    expect(result.stats).toMatchObject({ transitions: 5, episodes: 2, invalid: 1 });
    expect(result.chunks).toEqual([
      {
        seq: 1,
        ids: ordered.map((t) => t.id),
        transitions: 5,
        episodes: 2,
        dims: null,
        rowDims: ordered.map((t) => t.embedding?.length ?? -1),
        rowDimsType: 'Int32Array',
        embeddingsType: 'Float32Array',
        floats: 4 + 4 + 4 + 8,
        hasEmbeddingField: false,
      },
    ]);

    const large = await page.evaluate(() => window.bufferPage.upgradeFromV2('e2e-v2-large', 2_500));
    expect(large.stats).toMatchObject({ transitions: 2_505, episodes: 252, invalid: 1 });
    expect(large.chunks.map((c) => [c.seq, c.transitions, c.dims])).toEqual([
      [1, 1000, null],
      [2, 1000, 16],
      [3, 505, 16],
    ]);
    await page.close();
  });

  it('leaves the database unchanged when a batch fails half-way', async () => {
    const page = await openBufferPage();
    const result = await page.evaluate(() => window.bufferPage.failingBatches('e2e-atomic'));
    expect(result.before.transitions).toHaveLength(3);
    expect(result.thrown?.message).toBe('injected failure half-way');
    expect(result.afterThrow).toEqual(result.before);
    expect(result.cloneError?.name).toBe('DataCloneError');
    expect(result.afterClone).toEqual(result.before);
    await page.close();
  });

  it('surfaces an (injected) QuotaExceededError as BufferQuotaError with the real estimate, and reports persistence', async () => {
    const page = await openBufferPage();
    const { error, count } = await page.evaluate(() => window.bufferPage.quota('e2e-quota'));
    const { persistence, estimate } = await page.evaluate(() => window.bufferPage.storage('e2e-quota'));
    console.log(`[chromium storage] persist(): ${JSON.stringify(persistence)}; estimate: ${JSON.stringify(estimate)}`);
    expect(error).toMatchObject({
      name: 'BufferQuotaError',
      isBufferQuotaError: true,
      attempted: 4,
      causeName: 'QuotaExceededError',
    });
    expect(error!.usedBytes).toBeTypeOf('number');
    expect(error!.quotaBytes).toBeGreaterThan(0);
    expect(error!.message).toMatch(/MB used of .* MB; 4 transitions were not saved/);
    expect(count).toBe(0);
    expect(typeof persistence.persisted).toBe('boolean');
    expect(persistence.reason.length).toBeGreaterThan(10);
    expect(estimate.quota).toBeGreaterThan(0);
    await page.close();
  });

  it('benchmarks insert and cold load', async () => {
    const n = Number(process.env.BUFFER_BENCH_N ?? 5_000);
    const page = await openBufferPage();
    const result = await page.evaluate((count) => window.bufferPage.bench('e2e-bench', count), n);
    console.log(
      `[bench indexeddb chromium n=${n}] insert ${result.insertPerSecond.toFixed(0)} transitions/s (${result.insertSeconds.toFixed(2)} s), ` +
        `cold load ${result.loadSeconds.toFixed(2)} s, usage ${((result.usageBytes ?? 0) / 1e6).toFixed(0)} MB`,
    );
    expect(result).toMatchObject({ kind: 'indexeddb', transitions: n, loaded: n, cold: true });
    await page.close();
  }, 300_000);
});
