/**
 * Store benchmark: insert n synthetic transitions (256-dim embeddings, batches of 1,000; only the
 * putTransitions calls are timed), then time a cold load: reopening (where the caller can) plus
 * forEachTransition over everything.
 * Browser-safe; the clock is read for timing only.
 */
import type { BufferEpisode, BufferStore, BufferTransition, TransitionSource } from '../core/buffer/types';

export interface StoreBenchOptions {
  /** Floats per embedding (default 256). */
  dims?: number;
  /** Transitions per putTransitions call (default 1,000). */
  batchSize?: number;
  /**
   * Closes-and-reopens support: given the store after inserting, returns a fresh instance on the
   * same data (IndexedDB: same database name; folder: same folder). Without it the load is warm.
   */
  reopen?: () => Promise<BufferStore>;
}

export interface StoreBenchResult {
  kind: BufferStore['kind'];
  transitions: number;
  dims: number;
  batchSize: number;
  insertSeconds: number;
  /** Transitions written per second (goal ≥ 10,000). */
  insertPerSecond: number;
  /** Seconds for forEachTransition over all of them (goal < 2 s for 100k). */
  loadSeconds: number;
  loaded: number;
  /** Whether the load ran on a reopened store (cold) or on the one that inserted. */
  cold: boolean;
}

const STEPS_PER_EPISODE = 10;
const SOURCES: TransitionSource[] = ['offline', 'offline', 'real', 'dream'];
const WORDS = [
  'red',
  'shirt',
  'cotton',
  'size',
  'medium',
  'price',
  'under',
  'dollars',
  'kitchen',
  'drawer',
  'apple',
  'fridge',
  'open',
  'take',
  'search',
  'click',
  'back',
  'next',
  'page',
  'buy',
  'now',
  'blue',
  'mug',
  'table',
];

/** A deterministic transition of plausible size (≈ 0.5 kB of text plus the embedding). */
export function syntheticTransition(i: number, dims = 256, createdAt = 1_700_000_000_000 + i): BufferTransition {
  const episode = Math.floor(i / STEPS_PER_EPISODE);
  const stepIndex = i % STEPS_PER_EPISODE;
  const text = (salt: number, words: number) => {
    const out: string[] = [];
    for (let w = 0; w < words; w++) out.push(WORDS[(i * 31 + salt * 17 + w * 7) % WORDS.length]);
    return out.join(' ');
  };
  const embedding = new Float32Array(dims);
  let seed = (i * 2654435761) >>> 0;
  let norm = 0;
  for (let d = 0; d < dims; d++) {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    embedding[d] = seed / 2 ** 32 - 0.5;
    norm += embedding[d] * embedding[d];
  }
  const scale = 1 / Math.sqrt(norm);
  for (let d = 0; d < dims; d++) embedding[d] *= scale;
  const env = episode % 2 === 0 ? 'webshop-lite-v0' : 'household-v0';
  return {
    id: `bench-${episode}#${stepIndex}`,
    env,
    taskId: `${env}:${episode}`,
    instruction: `find a ${text(1, 8)}`,
    episodeId: `bench-${episode}`,
    stepIndex,
    observation: text(2, 40),
    admissible: Array.from({ length: 8 }, (_, a) => `click ${text(a + 3, 2)}`),
    action: `click ${text(3, 2)}`,
    nextObservation: text(4, 40),
    nextAdmissible: Array.from({ length: 8 }, (_, a) => `click ${text(a + 5, 2)}`),
    reward: stepIndex === STEPS_PER_EPISODE - 1 ? 1 : 0,
    terminated: stepIndex === STEPS_PER_EPISODE - 1,
    truncated: false,
    source: SOURCES[episode % SOURCES.length],
    valid: true,
    createdAt,
    embedding,
    embedder: `bench-hash-${dims}`,
  };
}

function episodesOf(transitions: BufferTransition[]): BufferEpisode[] {
  const episodes = new Map<string, BufferEpisode>();
  for (const t of transitions) {
    const e = episodes.get(t.episodeId) ?? {
      id: t.episodeId,
      env: t.env,
      taskId: t.taskId,
      source: t.source,
      steps: 0,
      return: 0,
      success: false,
      createdAt: t.createdAt,
    };
    e.steps++;
    e.return += t.reward;
    e.success ||= t.terminated && t.reward > 0;
    episodes.set(t.episodeId, e);
  }
  return [...episodes.values()];
}

/**
 * Inserts n synthetic transitions into `store` (which should be empty), then loads them all.
 * Closes the store it loaded from (the reopened one, when `reopen` is given, and the original).
 */
export async function benchStoreInsertAndLoad(
  store: BufferStore,
  n: number,
  options: StoreBenchOptions = {},
): Promise<StoreBenchResult> {
  const dims = options.dims ?? 256;
  const batchSize = options.batchSize ?? 1000;
  // Only the putTransitions calls are timed (making the synthetic records is not the store's work).
  let insertMs = 0;
  for (let start = 0; start < n; start += batchSize) {
    const batch: BufferTransition[] = [];
    for (let i = start; i < Math.min(n, start + batchSize); i++) batch.push(syntheticTransition(i, dims));
    const episodes = episodesOf(batch);
    const batchStart = performance.now();
    await store.putTransitions(batch, episodes);
    insertMs += performance.now() - batchStart;
  }
  const insertSeconds = insertMs / 1000;

  let reader = store;
  if (options.reopen) await store.close();
  // A cold load includes opening: for the folder store, opening is reading and parsing the files.
  const loadStart = performance.now();
  if (options.reopen) reader = await options.reopen();
  let loaded = 0;
  let checksum = 0;
  await reader.forEachTransition((t) => {
    loaded++;
    checksum += t.embedding?.[0] ?? 0;
  });
  const loadSeconds = (performance.now() - loadStart) / 1000;
  await reader.close();
  if (loaded !== n)
    throw new Error(`benchStoreInsertAndLoad: loaded ${loaded} transitions, expected ${n} (checksum ${checksum}).`);
  return {
    kind: store.kind,
    transitions: n,
    dims,
    batchSize,
    insertSeconds,
    insertPerSecond: n / insertSeconds,
    loadSeconds,
    loaded,
    cold: options.reopen !== undefined,
  };
}
