/**
 * The page's replay-buffer cap, shared by the trainer worker (which keeps it) and the Buffer page
 * (which states it). Plain constants, no imports: the page bundle stays free of the worker's code.
 */

/** Most transitions the page's replay buffer keeps (about 1 kB each with its embedding). */
export const BUFFER_CAP = 100_000;

/** What goes first when a run's batch needs room: the oldest dreamed transitions, then the oldest real ones; offline data is kept. */
export const EVICTION_ORDER = ['dream', 'real'] as const;
