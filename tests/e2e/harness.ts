/**
 * Shared setup of the app e2e tests: the production build (made once by build-app.ts, the e2e
 * project's global setup) served by `vite preview` on a free loopback port, and Debian's Chromium
 * with a persistent temp profile (IndexedDB, OPFS and localStorage survive a reload).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { preview, type PreviewServer } from 'vite';
import { inject } from 'vitest';
import { chromium, type BrowserContext } from 'playwright';
import { chromiumArgs } from '../../vite.config';

export const SHOTS = 'test-output/screenshots';

export interface AppHarness {
  server: PreviewServer;
  context: BrowserContext;
  baseUrl: string;
  /** The build's log (the service worker plugin reports what it precached). */
  buildLog: string;
  /** Stops the HTTP server (the network is gone for real; the browser keeps running). */
  stopServer(): Promise<void>;
  close(): Promise<void>;
}

export interface AppOptions {
  /** 'block' keeps the app's service worker out, so context.route sees every request (workers' included). */
  serviceWorkers?: 'allow' | 'block';
}

function launchProfile(profileDir: string, options: AppOptions): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: chromiumArgs,
    headless: true,
    viewport: { width: 1280, height: 720 },
    serviceWorkers: options.serviceWorkers ?? 'allow',
  });
}

/** The built app on a free loopback port, and Chromium with a fresh temp profile. */
export async function startApp(profilePrefix: string, options: AppOptions = {}): Promise<AppHarness> {
  mkdirSync(SHOTS, { recursive: true });
  const { outDir, log } = inject('builtApp');
  const server = await preview({
    configFile: 'vite.config.ts',
    build: { outDir },
    preview: { port: 0, host: '127.0.0.1' },
    logLevel: 'error',
  });
  const address = server.httpServer.address();
  if (!address || typeof address !== 'object') throw new Error('vite preview did not report its port');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const profileDir = mkdtempSync(join(tmpdir(), profilePrefix));
  const context = await launchProfile(profileDir, options);
  let serving = true;
  return {
    server,
    context,
    baseUrl,
    buildLog: log,
    async stopServer() {
      if (serving) {
        serving = false;
        await server.close();
      }
    },
    async close() {
      await context.close();
      if (serving) await server.close();
      rmSync(profileDir, { recursive: true, force: true });
    },
  };
}
