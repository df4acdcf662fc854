/**
 * The offline app shell: which built files the service worker precaches, and how it answers a
 * request. Plain logic (no DOM, no service-worker globals) so it runs in Node tests, in the
 * build plugin (src/sw/plugin.ts) and inside the generated sw.js (src/sw/service-worker.ts).
 *
 * LLM weights are never part of the shell: WebLLM and wllama keep their own caches (Cache
 * Storage / OPFS), and a multi-gigabyte shard in the shell cache would be evicted with it. The
 * shipped learned experience models are: `models/<env>/{model.json,weights.bin}` (public/models/,
 * a few MB each) are precached like code, so the page dreams with them offline and with no
 * download.
 */

/** What the build plugin hands to the service worker. */
export interface ShellManifest {
  /** Short hash over every precached file's path and content: a new build gets a new cache. */
  version: string;
  /** Paths relative to the service worker's scope ('index.html', 'assets/index-AbC.js', …). */
  files: string[];
}

export const CACHE_PREFIX = 'dreamgym-shell-';
/** The generated service worker's file name (at the root of the built app). */
export const SW_FILE = 'sw.js';
/** Largest file put in the shell (bytes): the biggest engine chunk is a few MB; weights are far larger. */
export const MAX_SHELL_FILE_BYTES = 32 * 1024 * 1024;

export function cacheName(version: string): string {
  return `${CACHE_PREFIX}${version}`;
}

/** Weight and tokenizer files of local LLMs, wherever they are served from. */
const MODEL_FILE =
  /\.(gguf|safetensors|onnx|ggml|pt|pth|ckpt)$|(^|\/)params_shard_\d+\.bin$|(^|\/)(ndarray-cache|mlc-chat-config|tokenizer(_config)?)\.json$/i;

export function isModelWeightPath(path: string): boolean {
  return MODEL_FILE.test(path.split(/[?#]/, 1)[0]);
}

/** The two files of a shipped learned experience model (public/models/<env>/): always in the shell. */
const SHIPPED_LEARNED_MODEL = /^models\/[A-Za-z0-9][A-Za-z0-9._-]*\/(model\.json|weights\.bin)$/;

export function isShippedLearnedModelPath(path: string): boolean {
  return SHIPPED_LEARNED_MODEL.test(path.split(/[?#]/, 1)[0]);
}

/**
 * Whether a built file (path relative to the output folder, '/' separators) belongs in the shell.
 * Returns the reason when it does not, for the build log.
 */
export function shellExclusion(path: string, bytes: number): string | null {
  if (path === SW_FILE) return 'the service worker itself';
  if (path.endsWith('.map')) return 'a source map';
  if (isShippedLearnedModelPath(path))
    return bytes > MAX_SHELL_FILE_BYTES
      ? `a shipped learned model file larger than ${MAX_SHELL_FILE_BYTES / 1024 / 1024} MiB`
      : null;
  if (isModelWeightPath(path)) return 'model weights (the engines cache them)';
  if (bytes > MAX_SHELL_FILE_BYTES) return `larger than ${MAX_SHELL_FILE_BYTES / 1024 / 1024} MiB`;
  return null;
}

export type Strategy =
  /** A precached file: the shell cache first, the network only if the entry is missing. */
  | 'cache-first'
  /** A page load: the network first (a fresh index.html), the cached index.html when offline. */
  | 'navigation'
  /** Not the service worker's business: cross-origin (model hubs, CDNs), non-GET, or not in the shell. */
  | 'pass-through'
  /**
   * A shipped learned model this build does not have (the page asks whether one exists): the
   * network, and a 404 when it cannot be reached, so the question has an answer offline too.
   */
  | 'network-or-404';

export interface RequestInfo {
  url: string;
  method: string;
  mode: string;
}

/**
 * How the service worker answers one request. `scope` is the registration scope (ends with '/'),
 * `shell` the set of precached paths relative to it.
 */
export function strategyFor(request: RequestInfo, scope: string, shell: ReadonlySet<string>): Strategy {
  if (request.method !== 'GET') return 'pass-through';
  const url = new URL(request.url);
  const base = new URL(scope);
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) return 'pass-through';
  if (request.mode === 'navigate') return 'navigation';
  const path = shellPath(request.url, scope);
  if (isModelWeightPath(path) && !isShippedLearnedModelPath(path)) return 'pass-through';
  if (shell.has(path)) return 'cache-first';
  return isShippedLearnedModelPath(path) ? 'network-or-404' : 'pass-through';
}

/** The path of a same-scope URL relative to the scope, without query or hash ('' is the scope root). */
export function shellPath(url: string, scope: string): string {
  const u = new URL(url);
  return decodeURIComponent(u.pathname.slice(new URL(scope).pathname.length));
}

/** Caches of earlier builds: everything with our prefix except the current one. */
export function staleCaches(names: readonly string[], version: string): string[] {
  return names.filter((name) => name.startsWith(CACHE_PREFIX) && name !== cacheName(version));
}

/** The manifest the plugin writes, checked: a clear error if a build produced something else. */
export function parseManifest(value: unknown): ShellManifest {
  const m = value as Partial<ShellManifest> | null;
  if (!m || typeof m.version !== 'string' || !/^[0-9a-f]{8,64}$/.test(m.version)) {
    throw new Error(
      'The offline shell manifest has no valid version (hex hash); rebuild the app with `npm run build`.',
    );
  }
  if (!Array.isArray(m.files) || !m.files.every((f) => typeof f === 'string') || !m.files.includes('index.html')) {
    throw new Error(
      'The offline shell manifest must list the built files including index.html; rebuild the app with `npm run build`.',
    );
  }
  return { version: m.version, files: m.files };
}
