/**
 * Vite build plugin (Node only): after the client build is written, list the built files that
 * make up the app shell, hash them into a version, and bundle src/sw/service-worker.ts with that
 * manifest into `<outDir>/sw.js`. The dev server gets no service worker (it would break HMR).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin, type ResolvedConfig } from 'vite';
import { SW_FILE, shellExclusion, type ShellManifest } from './shell.ts';

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/** The manifest for a built output folder; `skipped` lists what was left out and why. */
export function shellManifest(outDir: string): { manifest: ShellManifest; skipped: string[] } {
  const hash = createHash('sha256');
  const files: string[] = [];
  const skipped: string[] = [];
  for (const full of listFiles(outDir).sort()) {
    const path = relative(outDir, full).split(sep).join('/');
    const reason = shellExclusion(path, statSync(full).size);
    if (reason) {
      if (path !== SW_FILE) skipped.push(`${path} (${reason})`);
      continue;
    }
    files.push(path);
    hash.update(path).update('\0').update(readFileSync(full)).update('\0');
  }
  return { manifest: { version: hash.digest('hex').slice(0, 16), files }, skipped };
}

export function serviceWorkerPlugin(): Plugin {
  let config: ResolvedConfig;
  let written = false; // a failed build has nothing to precache
  return {
    name: 'dreamgym:service-worker',
    apply: 'build',
    configResolved(resolved) {
      config = resolved;
    },
    buildStart() {
      written = false;
    },
    writeBundle() {
      written = true;
    },
    closeBundle: {
      sequential: true,
      order: 'post',
      async handler() {
        if (!written || config.build.ssr || config.build.lib) return;
        const outDir = resolve(config.root, config.build.outDir);
        const { manifest, skipped } = shellManifest(outDir);
        const entry = fileURLToPath(new URL('./service-worker.ts', import.meta.url));
        const result = await build({
          configFile: false,
          logLevel: 'warn',
          publicDir: false,
          define: { __SHELL_MANIFEST__: JSON.stringify(manifest) },
          build: {
            write: false,
            minify: config.build.minify !== false,
            sourcemap: false,
            emptyOutDir: false,
            lib: { entry, formats: ['iife'], name: 'dreamgymServiceWorker', fileName: () => SW_FILE },
          },
        });
        const outputs = (Array.isArray(result) ? result : [result]) as {
          output: { type: string; fileName: string; code?: string }[];
        }[];
        const chunk = outputs.flatMap((r) => r.output).find((o) => o.type === 'chunk' && o.fileName === SW_FILE);
        if (!chunk?.code)
          throw new Error(`The service worker bundle produced no ${SW_FILE}; check src/sw/service-worker.ts.`);
        writeFileSync(join(outDir, SW_FILE), chunk.code);
        config.logger.info(
          `${SW_FILE}: app shell ${manifest.version}, ${manifest.files.length} files precached` +
            (skipped.length ? `; left out: ${skipped.join(', ')}` : ''),
        );
      },
    },
  };
}
