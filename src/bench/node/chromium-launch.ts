/**
 * Headless Chromium as the page measurements open it (src/bench/node/chromium.ts, scripts/measure/*-page*.ts):
 * Debian's Chromium, or CHROMIUM_PATH; WebGPU from SwiftShader with --enable-unsafe-webgpu;
 * a fresh on-disk profile (a real IndexedDB) at 1280×720. vite.config.ts gives the browser tests the same flags.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright';

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--enable-unsafe-webgpu',
];

export interface ChromiumSession {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** Chromium on a fresh profile folder named `<profilePrefix>…` under the OS temp folder. */
export async function openChromium(profilePrefix: string): Promise<ChromiumSession> {
  // Loaded here, not at the top: vite.config.ts imports this module for its flags alone.
  const { chromium } = await import('playwright');
  const profile = mkdtempSync(join(tmpdir(), profilePrefix));
  const removeProfile = () => rmSync(profile, { recursive: true, force: true });
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      args: chromiumArgs,
      headless: true,
      viewport: { width: 1280, height: 720 },
    });
    return {
      context,
      close: async () => {
        await context.close();
        removeProfile();
      },
    };
  } catch (error) {
    removeProfile();
    throw error;
  }
}

/** The built app (`npm run build`, or `outDir`) served by vite preview on a free loopback port. */
export async function previewBuiltApp(outDir?: string): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const { preview } = await import('vite');
  const server = await preview({
    configFile: 'vite.config.ts',
    ...(outDir ? { build: { outDir } } : {}),
    preview: { port: 0, host: '127.0.0.1' },
    logLevel: 'error',
  });
  const address = server.httpServer.address();
  if (!address || typeof address !== 'object') {
    await server.close();
    throw new Error('vite preview did not report its port');
  }
  return { baseUrl: `http://127.0.0.1:${address.port}`, close: () => server.close() };
}
