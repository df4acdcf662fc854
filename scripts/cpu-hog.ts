/**
 * Keeps the machine's cores busy, to run the test suite as on a laptop with other work open
 * (tests assert behaviour and poll what the page shows; they must pass beside this):
 *
 *   node --import tsx scripts/cpu-hog.ts [--threads N] [--seconds S] & npm test; kill $!
 *
 * N busy worker threads (default: one per core) spin for S seconds (default 3,600), then exit.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number.`);
  return value;
}

const threads = option('threads', availableParallelism());
const seconds = option('seconds', 3600);
const spin = `const end = Date.now() + ${seconds * 1000}; let x = 0; while (Date.now() < end) x = (x * 31 + 7) % 1000003;`;
for (let i = 0; i < threads; i++) new Worker(spin, { eval: true });
console.log(`cpu-hog: ${threads} busy threads for ${seconds} s (pid ${process.pid})`);
