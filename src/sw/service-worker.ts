/**
 * The service worker of the built app (bundled into dist/sw.js by src/sw/plugin.ts, which
 * injects the precache manifest as `__SHELL_MANIFEST__`). Not used by the dev server.
 *
 * install: precache the app shell (HTML, JS/CSS/wasm chunks, workers, shipped datasets) in a
 * cache named after the build's hash, bypassing the HTTP cache. activate: delete the caches of
 * older builds and take control of open pages. fetch: precached files cache-first, page loads
 * network-first with the cached index.html as the offline fallback; a shipped learned model the
 * build does not have, the network or a 404 (offline too); everything else (model hubs, CDNs,
 * other origins, POSTs) goes to the network untouched.
 */
import { cacheName, parseManifest, shellPath, staleCaches, strategyFor } from './shell';

declare const __SHELL_MANIFEST__: unknown;
declare const self: ServiceWorkerGlobalScope;

const manifest = parseManifest(__SHELL_MANIFEST__);
const CACHE = cacheName(manifest.version);
const shell = new Set(manifest.files);
const NAVIGATION_TIMEOUT_MS = 4000;

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      await cache.addAll(
        manifest.files.map((file) => new Request(new URL(file, self.registration.scope), { cache: 'reload' })),
      );
      // A new build replaces the old one at once; pages reload their chunks by hashed names.
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      await Promise.all(staleCaches(await caches.keys(), manifest.version).map((name) => caches.delete(name)));
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('message', (event) => {
  // The page asks which build it is served from (shown on Setup / in tests).
  if (event.data === 'shell-version')
    event.ports[0]?.postMessage({ version: manifest.version, files: manifest.files.length });
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const strategy = strategyFor(request, self.registration.scope, shell);
  if (strategy === 'pass-through') return;
  if (strategy === 'network-or-404') {
    event.respondWith(
      fetch(request).catch(
        () =>
          new Response('No such shipped model in this build.', {
            status: 404,
            headers: { 'content-type': 'text/plain' },
          }),
      ),
    );
    return;
  }
  if (strategy === 'cache-first') {
    event.respondWith(
      (async () => {
        const cache = await caches.open(CACHE);
        const hit = await cache.match(
          new URL(shellPath(request.url, self.registration.scope), self.registration.scope).href,
        );
        return hit ?? fetch(request);
      })(),
    );
    return;
  }
  event.respondWith(
    (async () => {
      // The network first, but a network that neither answers nor fails (a bad hotspot) does not
      // hold the page: after NAVIGATION_TIMEOUT_MS the cached shell is served.
      const network = fetch(request);
      const first = await Promise.race([
        network.catch(() => null),
        new Promise<null>((resolve) => setTimeout(resolve, NAVIGATION_TIMEOUT_MS, null)),
      ]);
      if (first) return first;
      const cached = await (await caches.open(CACHE)).match(new URL('index.html', self.registration.scope).href);
      return cached ?? network;
    })(),
  );
});
