/**
 * NODE ONLY (src/node/): a run folder's identity, RUN/run.json = { id, seed, preset }, written when
 * a run starts. Its checkpoints carry it too, so a checkpoint copied in from another run is refused
 * (checkpoint-folder.ts) instead of resumed or evaluated as this run's.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunIdentity } from '../core/train/checkpoint';

export const RUN_FILE = 'run.json';

/** A new run's identity: a fresh id, and the seed and preset it was started with. */
export function newRunIdentity(config: { seed: number; preset: string }): RunIdentity {
  return { id: randomUUID(), seed: config.seed, preset: config.preset };
}

export function writeRunIdentity(runDir: string, identity: RunIdentity): void {
  writeFileSync(join(runDir, RUN_FILE), `${JSON.stringify(identity, null, 2)}\n`);
}

/**
 * The identity of the run in `runDir`: its run.json, else (a run started before run.json) the
 * seed and preset of its config.json; null when neither can be read.
 */
export function readRunIdentity(runDir: string): RunIdentity | null {
  for (const file of [RUN_FILE, 'config.json']) {
    const path = join(runDir, file);
    if (!existsSync(path)) continue;
    try {
      const { id, seed, preset } = JSON.parse(readFileSync(path, 'utf8')) as Partial<RunIdentity>;
      if (typeof seed !== 'number' || typeof preset !== 'string') continue;
      return { ...(file === RUN_FILE && typeof id === 'string' ? { id } : {}), seed, preset };
    } catch {
      continue; // unreadable: the other file, or no identity to check against
    }
  }
  return null;
}

/** How a message names a run: `ID (seed S, preset P)`. */
export function describeRun(run: RunIdentity): string {
  return `${run.id ?? 'without an id'} (seed ${run.seed}, preset ${run.preset})`;
}

/** Whether a checkpoint's run is not `expected`: another id, or (without ids) another seed or preset. */
export function otherRun(saved: RunIdentity, expected: RunIdentity): boolean {
  if (saved.id !== undefined && expected.id !== undefined && saved.id !== expected.id) return true;
  return saved.seed !== expected.seed || saved.preset !== expected.preset;
}
