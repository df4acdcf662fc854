import { createLogger } from 'vite';
import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { playwright } from '@vitest/browser-playwright';
import { serviceWorkerPlugin } from './src/sw/plugin.ts';
import { webLlmOncePlugin } from './src/build/web-llm-once.ts';
import { chromiumArgs, chromiumPath } from './src/bench/node/chromium-launch.ts';

// Chromium's flags, one list: the browser tests here, the e2e harness (which imports them from this file) and the
// page measurements (src/bench/node/chromium-launch.ts, where they are explained).
export { chromiumArgs };

/** Vite's logger less its dependency-optimizer chatter (`npm start` prints the URL and real problems only). */
function quietLogger() {
  const logger = createLogger();
  const info = logger.info.bind(logger);
  logger.info = (message, options) => {
    if (!/optimiz/i.test(message)) info(message, options);
  };
  return logger;
}

export default defineConfig({
  customLogger: quietLogger(),
  // The built app gets a generated service worker that precaches the app shell (src/sw/plugin.ts).
  // web-llm is emitted once and shared by the page and its workers (src/build/web-llm-once.ts).
  plugins: [svelte(), webLlmOncePlugin(), serviceWorkerPlugin()],
  worker: { format: 'es', plugins: () => [webLlmOncePlugin()] },
  // Pre-bundled up front so the browser tests never see a mid-run dependency reload.
  optimizeDeps: {
    include: [
      '@tensorflow/tfjs',
      '@tensorflow/tfjs-backend-wasm',
      '@tensorflow/tfjs-backend-webgpu',
      'idb',
      'stemmer',
      'uplot',
    ],
  },
  server: { fs: { allow: ['..'] } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          environment: 'node',
          include: ['tests/unit/**/*.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          // The served app in Chromium through Playwright (the dev server is started by the test).
          name: 'e2e',
          environment: 'node',
          include: ['tests/e2e/**/*.e2e.test.ts'],
          // One production build for all app tests (served with vite preview by tests/e2e/harness.ts).
          globalSetup: ['tests/e2e/build-app.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // A readout is polled until it shows what the test expects: a busy machine may take seconds to get there.
          expect: { poll: { timeout: 30_000, interval: 100 } },
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['tests/browser/**/*.browser.test.ts'],
          testTimeout: 120_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            instances: [{ browser: 'chromium' }],
            provider: playwright({ launchOptions: { executablePath: chromiumPath, args: chromiumArgs } }),
          },
        },
      },
    ],
  },
});
