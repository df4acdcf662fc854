/**
 * Shared setup of the e2e tests: the production build (made once by build-app.ts, the e2e project's
 * global setup) served by `vite preview` on a free loopback port, and Debian's Chromium with a
 * persistent temp profile (IndexedDB, OPFS and localStorage survive a reload); useApp gives a test
 * file that app for its tests, openPage a page whose uncaught errors are collected. Test pages served
 * from source (tests/e2e/pages) get the Vite dev server instead (startDevServer).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, preview, type PreviewServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, inject } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright';
import { chromiumArgs } from '../../vite.config';

export const SHOTS = 'test-output/screenshots';

/** Debian's Chromium, headless, with the flags the app is tested with (vite.config.ts). */
export const CHROMIUM = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: chromiumArgs,
  headless: true,
};

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
    ...CHROMIUM,
    viewport: { width: 1280, height: 720 },
    serviceWorkers: options.serviceWorkers ?? 'allow',
  });
}

/** The loopback URL a server listens on (port 0 asked for a free one). */
function loopbackUrl(address: ReturnType<PreviewServer['httpServer']['address']>, what: string): string {
  if (!address || typeof address !== 'object') throw new Error(`${what} did not report its port`);
  return `http://127.0.0.1:${address.port}`;
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
  const baseUrl = loopbackUrl(server.httpServer.address(), 'vite preview');
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

/** The app of one test file; useApp closes it after the file's tests. */
export type AppSession = Omit<AppHarness, 'close'>;

export interface UseAppOptions extends AppOptions {
  /** false: the app is not started (the file's tests skip themselves); true by default. */
  when?: boolean;
  /** How long starting may take (default 120 s, the e2e project's hook timeout). */
  startTimeoutMs?: number;
}

/**
 * The built app for the tests of the calling file: started before them and closed after them
 * (vitest's beforeAll and afterAll, so call it at the file's top level; hooks the file registers
 * after this call run once the app is up). Its fields can be read from inside tests and hooks.
 */
export function useApp(profilePrefix: string, options: UseAppOptions = {}): AppSession {
  let started: AppHarness | undefined;
  const app = (): AppHarness => {
    if (!started) throw new Error(`the app ${profilePrefix}… is not started: read it inside a test or a hook`);
    return started;
  };
  beforeAll(async () => {
    if (options.when !== false) started = await startApp(profilePrefix, options);
  }, options.startTimeoutMs ?? 120_000);
  afterAll(async () => {
    await started?.close();
  });
  return {
    get server() {
      return app().server;
    },
    get context() {
      return app().context;
    },
    get baseUrl() {
      return app().baseUrl;
    },
    get buildLog() {
      return app().buildLog;
    },
    stopServer: () => app().stopServer(),
  };
}

/** The uncaught errors of `page` from now on, each with the page's URL then. */
export function trackErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return errors;
}

/** A new page (of a browser context, or a browser) and the list its uncaught errors go to. */
export async function openPage(opener: { newPage(): Promise<Page> }): Promise<{ page: Page; errors: string[] }> {
  const page = await opener.newPage();
  return { page, errors: trackErrors(page) };
}

/** The Vite dev server (vite.config.ts) on a free loopback port: the app and the test pages, from source. */
export async function startDevServer(): Promise<{ server: ViteDevServer; baseUrl: string }> {
  const server = await createServer({
    configFile: 'vite.config.ts',
    server: { port: 0, host: '127.0.0.1' },
    logLevel: 'error',
  });
  await server.listen();
  return { server, baseUrl: loopbackUrl(server.httpServer!.address(), 'the vite dev server') };
}
