/**
 * Vite build plugin (Node only): web-llm in the built app once. The page, the trainer worker and
 * the WebLLM worker each load web-llm (6 MB) on first use, and Vite builds every worker as its own
 * bundle, so each got its own copy of the library (18 MB of the dist). web-llm ships as one
 * self-contained ES module (no imports), so the build emits that file as-is under
 * `assets/web-llm-<version>.js` and rewrites every `import('@mlc-ai/web-llm')` into an import of
 * that URL, relative to the importing chunk (all chunks live in `assets/`). The dev server and the
 * browser tests keep Vite's own resolution.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'vite';

const PACKAGE = '@mlc-ai/web-llm';
const DYNAMIC_IMPORT = /import\(\s*(['"])@mlc-ai\/web-llm\1\s*\)/g;

function webLlmFile(): { fileName: string; source: string } {
  const require = createRequire(import.meta.url);
  const packageJson = require.resolve(`${PACKAGE}/package.json`);
  const { version, main: entry } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string; main: string };
  const source = readFileSync(join(dirname(packageJson), entry), 'utf8');
  if (/^\s*import\s|^\s*export\s+[^;]*\sfrom\s/m.test(source.replace(/export\s*\{[^}]*\}\s*;?\s*(\/\/#.*)?\s*$/, ''))) {
    throw new Error(
      `${PACKAGE} ${version} imports other modules now: it can no longer be served as one file (src/build/web-llm-once.ts).`,
    );
  }
  // Its source map is not shipped: drop the comment naming it (a 404 in devtools otherwise).
  return { fileName: `web-llm-${version}.js`, source: source.replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n') };
}

/** The plugin for the page's build and the workers' builds (`worker.plugins`); each emits the same file. */
export function webLlmOncePlugin(): Plugin {
  let file: { fileName: string; source: string } | undefined;
  return {
    name: 'dreamgym:web-llm-once',
    apply: 'build',
    buildStart() {
      file ??= webLlmFile();
    },
    transform(code, id) {
      if (!code.includes(PACKAGE) || id.includes('/node_modules/')) return null;
      if (/from\s+['"]@mlc-ai\/web-llm['"]/.test(code.replace(/import\s+type\s[^;]*;/g, ''))) {
        this.error(
          `${id} imports ${PACKAGE} statically: import it with importWebLlm() (src/core/llm/webllm.ts), so the build keeps one copy.`,
        );
      }
      // A URL built at run time (not a literal, which Vite would resolve as a source asset) is
      // left alone; import.meta.url is then the importing chunk's own, in assets/.
      const url = `((name) => new URL(name, import.meta.url).href)(${JSON.stringify(`./${file!.fileName}`)})`;
      const replaced = code.replace(DYNAMIC_IMPORT, () => `import(/* @vite-ignore */ ${url})`);
      return replaced === code ? null : { code: replaced, map: null };
    },
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: `assets/${file!.fileName}`, source: file!.source });
    },
  };
}
