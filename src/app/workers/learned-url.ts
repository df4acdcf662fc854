/**
 * Where the app's shipped learned models are: `<BASE_URL>models/<env>/{model.json,weights.bin}`
 * on this origin (public/models/ in the source tree; precached by the service worker). No heavy
 * imports: the page's main thread uses it too.
 */
import type { MANIFEST_FILE, WEIGHTS_FILE } from '../../core/experience/learned/model-file';

/** Where the app is served from: Vite's BASE_URL resolved on this origin (works in workers too). */
export function appBase(): string {
  const base = import.meta.env?.BASE_URL ?? '/';
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin ?? 'http://localhost';
  return new URL(base.startsWith('/') || /^https?:/.test(base) ? base : '/', `${origin}/`).href;
}

export function shippedModelUrl(
  env: string,
  file: typeof MANIFEST_FILE | typeof WEIGHTS_FILE,
  base = appBase(),
): string {
  return new URL(`models/${encodeURIComponent(env)}/${file}`, base).href;
}
