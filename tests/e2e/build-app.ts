/**
 * Global setup of the e2e project: one production build (`vite build` into a temp folder) that
 * every app test serves with `vite preview` (harness.ts), so the tests drive the app users get —
 * service worker included — and the build cost is paid once per test run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    builtApp: { outDir: string; log: string };
  }
}

/** `vite build` in a child process (NODE_ENV=production: vitest sets it to 'test', which would leave out the service worker). */
function buildInto(outDir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['node_modules/vite/bin/vite.js', 'build', '--outDir', outDir, '--emptyOutDir'],
      {
        env: { ...process.env, NODE_ENV: 'production' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let log = '';
    child.stdout.on('data', (chunk) => {
      log += chunk;
    });
    child.stderr.on('data', (chunk) => {
      log += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(log) : reject(new Error(`vite build failed (exit ${code}):\n${log}`)),
    );
  });
}

export default async function setup(project: TestProject): Promise<() => void> {
  const outDir = mkdtempSync(join(tmpdir(), 'dreamgym-build-'));
  const log = await buildInto(outDir);
  project.provide('builtApp', { outDir, log });
  return () => rmSync(outDir, { recursive: true, force: true });
}
