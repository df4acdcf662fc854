/**
 * A training run's folder (OUT): what train writes there, claiming it for a new run, reading its metrics back,
 * and the run's parts over OUT/buffer, for training it (train) or playing its checkpoint (eval, act, audit).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TrainConfig } from '../../core/train/config';
import { Trainer, type IterationRecord, type TrainerDeps } from '../../core/train/loop';
import { buildRunParts } from '../../core/train/run-parts';
import { ReplayBuffer } from '../../core/buffer/buffer';
import { FolderBufferStore } from '../../node/buffer-folder';
import { FolderCheckpointStore } from '../../node/checkpoint-folder';
import { describeRun, readRunIdentity, RUN_FILE } from '../../node/run-identity';
import { nodeEngineDeps } from '../../node/edge';
import { UsageError } from '../args';
import { round } from '../output';
import { offlineTrajectories } from '../experience-options';
import { trainCommand } from './train-options';

export const SFT_FILE = 'sft.json';

/** What a run writes in its folder: a forced new run removes these (and nothing else) first. */
const RUN_ENTRIES = [
  RUN_FILE,
  'config.json',
  'metrics.jsonl',
  'perf.jsonl',
  'summary.json',
  SFT_FILE,
  'checkpoint',
  'buffer',
];

/**
 * A new run's folder must be new or empty: one holding a run is refused unless --force (then that
 * run's own files go), and one holding anything else is refused (train would write over it).
 */
export function claimRunFolder(out: string, force: boolean): void {
  if (!existsSync(out) || !statSync(out).isDirectory()) return; // new, or a file (mkdir says what is wrong)
  const entries = readdirSync(out);
  if (entries.length === 0) return;
  const run = readRunIdentity(out);
  if (run === null && !entries.includes('checkpoint')) {
    const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? `, … (${entries.length - 5} more)` : '');
    throw new UsageError(
      `--out ${out} holds files that train did not write (${shown}); ` +
        `a run writes ${RUN_ENTRIES.slice(1, 4).join(', ')} ` +
        'and more there and would overwrite them. Pick a new or empty --out.',
      trainCommand,
    );
  }
  if (!force)
    throw new UsageError(
      `--out ${out} holds a run already (${run ? describeRun(run) : 'a checkpoint'}): continue it with --resume, ` +
        'start it over with --force (its checkpoint, buffer and metrics are replaced), or pick another --out.',
      trainCommand,
    );
  for (const entry of RUN_ENTRIES) rmSync(join(out, entry), { recursive: true, force: true });
}

/** The run's metric history as records (metrics.jsonl: one iteration a line). */
export function readHistory(metricsPath: string): IterationRecord[] {
  return readFileSync(metricsPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const { iteration, ...metrics } = JSON.parse(line) as Record<string, number>;
      return { iteration, metrics };
    });
}

/** Mean dream/invalid_rate over the run's dream iterations (0 when none). */
export function invalidRate(metricsPath: string): number {
  const rates = readFileSync(metricsPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l)['dream/invalid_rate'])
    .filter((x) => typeof x === 'number');
  return rates.length ? rates.reduce((a: number, b: number) => a + b, 0) / rates.length : 0;
}

/**
 * The run's parts (buildRunParts) and, for dream and s2r runs, a replay buffer in OUT/buffer
 * (seeded once from the env's shipped offline dataset, or `dataset`; dreamed and real transitions
 * are added as the run goes). The clock gives the perf/* metrics.
 */
export async function trainerDeps(config: TrainConfig, out: string, dataset?: string): Promise<TrainerDeps> {
  const buffer = config.mode === 'real' ? undefined : await runBuffer(config.env, out, dataset);
  const parts = await buildRunParts(config, { ...nodeEngineDeps(), ...(buffer ? { buffer } : {}) });
  return { ...parts, ...(buffer ? { buffer, now: () => Date.now() } : {}), clock: () => performance.now() };
}

async function runBuffer(envId: string, out: string, dataset: string | undefined): Promise<ReplayBuffer> {
  mkdirSync(out, { recursive: true });
  // A bad --dataset is refused before the run's buffer folder is made.
  const given = dataset === undefined ? null : await offlineTrajectories(envId, dataset, trainCommand);
  const buffer = new ReplayBuffer(await FolderBufferStore.open(join(out, 'buffer')));
  if ((await buffer.stats()).transitions === 0) {
    await buffer.importTrajectories(given ?? (await offlineTrajectories(envId, undefined, trainCommand)), {
      source: 'offline',
      createdAt: Date.now(),
    });
  }
  return buffer;
}

/** perf/* (wall-clock, rounded for reading) apart from the reproducible metrics. */
export function splitPerf(metrics: Record<string, number>): {
  perf: Record<string, number>;
  rest: Record<string, number>;
} {
  const perf: Record<string, number> = {},
    rest: Record<string, number> = {};
  for (const [key, value] of Object.entries(metrics)) {
    if (key.startsWith('perf/')) perf[key] = round(value, key === 'perf/iteration_seconds' ? 3 : 1);
    else rest[key] = value;
  }
  return { perf, rest };
}

export function roundAll(metrics: Record<string, number>): Record<string, number | null> {
  return Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, Number.isFinite(v) ? round(v, 6) : null]));
}

/** The greedy agent of a run folder's checkpoint, for playing real episodes (eval, the on-policy audit). */
export async function loadRunAgent(run: string): Promise<{ trainer: Trainer; close(): Promise<void> }> {
  const identity = readRunIdentity(run);
  const state = await new FolderCheckpointStore(join(run, 'checkpoint'), identity ? { run: identity } : {}).load();
  if (!state) throw new Error(`No checkpoint in ${join(run, 'checkpoint')}: train first, or check the folder.`);
  // The agent plays the real env (with its LLM prior, if it trained with one): no dream, no task generation.
  const asReal = { mode: 'real', curriculumVariations: 'procedural' } as const;
  const deps = await trainerDeps({ ...state.config, ...asReal }, run);
  const trainer = await Trainer.restore(state, asReal, deps);
  return {
    trainer,
    close: async () => {
      trainer.dispose();
      await deps.buffer?.store.close();
    },
  };
}
