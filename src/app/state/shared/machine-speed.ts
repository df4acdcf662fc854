/**
 * A one-second speed check of this machine (plain logic, unit-tested): a fixed piece of float
 * work, timed in short chunks on the thread that runs it, so the score is the work this thread
 * gets done per second now — the processor's speed and the share of it that other programs
 * leave. The page's first time estimates scale measured work by it (start-here-estimate.ts).
 */

/** One round: a 32 × 32 matrix times a vector, a small share of what a policy or decoder does a step. */
const SIZE = 32;
const matrix = new Float32Array(SIZE * SIZE).map((_, i) => ((i * 7919) % 101) / 101 - 0.5);
const START = new Float32Array(SIZE).map((_, i) => ((i * 104729) % 97) / 97 - 0.5);

/** Runs `rounds` rounds from the same start; returns a checksum so the work cannot be optimised away. */
export function speedCheckRounds(rounds: number): number {
  const vector = START.slice(),
    out = new Float32Array(SIZE);
  let sum = 0;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < SIZE; i++) {
      let acc = 0;
      for (let j = 0; j < SIZE; j++) acc += matrix[i * SIZE + j] * vector[j];
      out[i] = Math.tanh(acc);
    }
    vector[r % SIZE] = out[(r * 13) % SIZE];
    sum += out[0];
  }
  return sum;
}

export interface SpeedCheckOptions {
  /** Monotonic clock in ms. */
  clock: () => number;
  /** Lets the thread do other work between chunks (the page's: a macrotask). */
  yieldNow: () => Promise<void>;
  /** How long to measure, in ms of chunks (default 1000). */
  budgetMs?: number;
  /** Rounds a chunk (default 200: a few ms). */
  chunkRounds?: number;
}

/** Rounds per second this thread did over about `budgetMs` of timed chunks (yields between them not counted). */
export async function measureSpeed(options: SpeedCheckOptions): Promise<number> {
  const { clock, yieldNow, budgetMs = 1000, chunkRounds = 200 } = options;
  let busyMs = 0,
    rounds = 0;
  while (busyMs < budgetMs) {
    const t0 = clock();
    speedCheckRounds(chunkRounds);
    busyMs += clock() - t0;
    rounds += chunkRounds;
    await yieldNow();
  }
  return (rounds * 1000) / Math.max(busyMs, 1e-3);
}
