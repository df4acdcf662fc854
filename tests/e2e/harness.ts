/**
 * Shared setup of the app e2e tests: the Vite dev server on a free loopback port and Debian's
 * Chromium with a persistent temp profile (IndexedDB and localStorage survive a reload).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type ViteDevServer } from 'vite';
import { chromium, type BrowserContext } from 'playwright';
import { chromiumArgs } from '../../vite.config';

export const SHOTS = 'test-output/screenshots';

export interface AppHarness { server: ViteDevServer; context: BrowserContext; baseUrl: string; close(): Promise<void> }

export async function startApp(profilePrefix: string): Promise<AppHarness> {
  mkdirSync(SHOTS, { recursive: true });
  const server = await createServer({ configFile: 'vite.config.ts', server: { port: 0, host: '127.0.0.1' }, logLevel: 'error' });
  await server.listen();
  const address = server.httpServer!.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 5173}`;
  const profileDir = mkdtempSync(join(tmpdir(), profilePrefix));
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: chromiumArgs, headless: true,
    viewport: { width: 1280, height: 720 },
  });
  return {
    server, context, baseUrl,
    async close() {
      await context.close();
      await server.close();
      rmSync(profileDir, { recursive: true, force: true });
    },
  };
}
