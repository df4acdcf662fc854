/**
 * Shared setup of the app e2e tests: the Vite dev server on a free loopback port and Debian's
 * Chromium with a persistent temp profile (IndexedDB and localStorage survive a reload).
 * `startBuiltApp` serves the production build instead (vite build into a temp folder, then
 * vite preview): the build is the only one with the service worker.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, preview, type PreviewServer, type ViteDevServer } from 'vite';
import { chromium, type BrowserContext } from 'playwright';
import { chromiumArgs } from '../../vite.config';

export const SHOTS = 'test-output/screenshots';

export interface AppHarness { server: ViteDevServer; context: BrowserContext; baseUrl: string; close(): Promise<void> }

function launchProfile(profileDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: chromiumArgs, headless: true,
    viewport: { width: 1280, height: 720 },
  });
}

export async function startApp(profilePrefix: string): Promise<AppHarness> {
  mkdirSync(SHOTS, { recursive: true });
  // No HMR: a page under test must never reload because a source file changed meanwhile.
  const server = await createServer({ configFile: 'vite.config.ts', server: { port: 0, host: '127.0.0.1', hmr: false }, logLevel: 'error' });
  await server.listen();
  const address = server.httpServer!.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 5173}`;
  const profileDir = mkdtempSync(join(tmpdir(), profilePrefix));
  const context = await launchProfile(profileDir);
  return {
    server, context, baseUrl,
    async close() {
      await context.close();
      await server.close();
      rmSync(profileDir, { recursive: true, force: true });
    },
  };
}

export interface BuiltAppHarness {
  server: PreviewServer; context: BrowserContext; baseUrl: string;
  /** The build's log (the service worker plugin reports what it precached). */
  buildLog: string;
  /** Stops the HTTP server (the network is gone for real; the browser keeps running). */
  stopServer(): Promise<void>;
  close(): Promise<void>;
}

/** `vite build` in a child process (NODE_ENV=production: vitest sets it to 'test'). */
function buildInto(outDir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--outDir', outDir, '--emptyOutDir'], {
      env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (chunk) => { log += chunk; });
    child.stderr.on('data', (chunk) => { log += chunk; });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(log) : reject(new Error(`vite build failed (exit ${code}):\n${log}`))));
  });
}

/** The production build served by `vite preview` on a free loopback port, and Chromium with a temp profile. */
export async function startBuiltApp(profilePrefix: string): Promise<BuiltAppHarness> {
  mkdirSync(SHOTS, { recursive: true });
  const outDir = mkdtempSync(join(tmpdir(), 'dreamgym-build-'));
  const buildLog = await buildInto(outDir);
  const server = await preview({ configFile: 'vite.config.ts', build: { outDir }, preview: { port: 0, host: '127.0.0.1' }, logLevel: 'error' });
  const address = server.httpServer.address();
  if (!address || typeof address !== 'object') throw new Error('vite preview did not report its port');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const profileDir = mkdtempSync(join(tmpdir(), profilePrefix));
  const context = await launchProfile(profileDir);
  let serving = true;
  return {
    server, context, baseUrl, buildLog,
    async stopServer() {
      if (serving) { serving = false; await server.close(); }
    },
    async close() {
      await context.close();
      if (serving) await server.close();
      rmSync(profileDir, { recursive: true, force: true });
      rmSync(outDir, { recursive: true, force: true });
    },
  };
}
