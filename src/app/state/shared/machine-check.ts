/**
 * The page's one-second speed check of this machine (the arithmetic is machine-speed.ts), for the
 * estimates of the Train page and the Experience model tab: run on the main thread in short
 * chunks, with a macrotask between them so the page paints and handles input meanwhile.
 */
import { engineSetup } from '../setup/engine.svelte';
import { measureSpeed } from './machine-speed';

const SETTLE_MS = 15_000;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A macrotask: the page paints and handles input between the speed check's chunks. */
function yieldNow(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

/** This machine's speed-check score now (rounds/s), measured for about a second. */
export function checkMachineSpeed(): Promise<number> {
  return measureSpeed({ clock: () => performance.now(), yieldNow });
}

/**
 * Once the app has loaded (the shipped models checked, the offline shell installed; at most SETTLE_MS):
 * checked while a fresh profile still installs the app, the speed check read the machine 2–5× slower than
 * the runs then found it (start-here-clock.svelte.ts, and the Train page's first e2e run).
 */
export async function appSettled(): Promise<void> {
  const installed =
    typeof navigator !== 'undefined' && navigator.serviceWorker ? navigator.serviceWorker.ready : undefined;
  const loaded = Promise.all([engineSetup().ready(), installed]).catch(() => undefined);
  await Promise.race([loaded, delay(SETTLE_MS)]);
  await delay(500);
}
