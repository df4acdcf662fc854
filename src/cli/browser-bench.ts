/**
 * Runs a benchmark page of `bench/` in headless Chromium: starts the Vite dev server on a free
 * loopback port, opens the page with a fresh on-disk profile (real IndexedDB), calls its
 * function, and shuts everything down.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreBenchResult } from '../core/buffer/stores/bench';
import type { RetrievalBenchResult } from '../core/buffer/bench';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic', '--enable-unsafe-webgpu'];

export async function benchBufferInBrowser(n: number): Promise<{ store: StoreBenchResult; retrieval: RetrievalBenchResult; storageUsageBytes: number | null }> {
  const { createServer } = await import('vite');
  const { chromium } = await import('playwright');
  const server = await createServer({ configFile: 'vite.config.ts', server: { port: 0, host: '127.0.0.1' }, logLevel: 'error' });
  await server.listen();
  const address = server.httpServer!.address();
  const port = typeof address === 'object' && address ? address.port : 5173;
  const profile = mkdtempSync(join(tmpdir(), 'dreamgym-bench-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await context.newPage();
    process.stderr.write('bench buffer: Chromium (IndexedDB, retrieval) …\n');
    await page.goto(`http://127.0.0.1:${port}/bench/buffer.html`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 120_000 });
    return await page.evaluate((count) => (window as unknown as { runBufferBench(n: number): Promise<never> }).runBufferBench(count), n);
  } finally {
    await context.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
