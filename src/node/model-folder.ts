/**
 * NODE ONLY (src/node/): learned experience models and their training checkpoints as folders.
 *
 *   DIR/model.json + DIR/weights.bin           a trained model (model-file.ts)
 *   DIR/checkpoint/state.json + state-N.bin    the training in progress (resume with --resume)
 *
 * A model folder is written beside the old one (DIR.new-PID) and swapped in by two renames (DIR →
 * DIR.old-PID, DIR.new-PID → DIR). A crash between them leaves no DIR: opening the folder (any
 * read or write here) first recovers, putting the newest complete model of DIR, DIR.new-* and
 * DIR.old-* at DIR, with the checkpoint that moved with it. A checkpoint's data file has a new
 * name each epoch and the manifest that names it is replaced by one rename, so a crash leaves the
 * old checkpoint or the new one. On a full disk either write removes what it wrote and throws
 * DiskFullError (disk-full.ts).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { ReplayBuffer } from '../core/buffer/buffer';
import { LearnedExperienceModel, type LearnedModelOptions } from '../core/experience/learned/learned-model';
import {
  CHECKPOINT_FORMAT,
  decodeModelFiles,
  decodeTensorGroups,
  encodeTensorGroups,
  MANIFEST_FILE,
  ModelFileError,
  readModelFiles,
  type DecodeOptions,
  WEIGHTS_FILE,
  type ModelManifest,
} from '../core/experience/learned/model-file';
import type { NamedWeight } from '../core/experience/learned/network';
import type { LearnedCheckpoint } from '../core/experience/learned/train-model';
import { startDecodePool } from './workers/decode-pool';
import { DiskFullError, isDiskFull } from './disk-full';

/** Reads and checks the model in `dir`. */
export async function readModelFolder(
  dir: string,
  options: DecodeOptions = {},
): Promise<{ manifest: ModelManifest; weights: NamedWeight[] }> {
  const where = resolve(dir);
  recoverModelFolder(dir);
  if (!existsSync(join(dir, MANIFEST_FILE))) {
    throw new ModelFileError(
      `No learned experience model in ${where} (no ${MANIFEST_FILE}): train one with 'dreamgym expmodel train --env ENV --out ${dir}', or give the folder of one (public/models/<env> holds the shipped ones).`,
    );
  }
  return readModelFiles(
    async (file) =>
      file === MANIFEST_FILE ? readFileSync(join(dir, file), 'utf8') : new Uint8Array(readFileSync(join(dir, file))),
    where,
    options,
  );
}

/**
 * The learned experience model of `env` in `dir` — the folder of one model, or a folder of models
 * by env (`public/models` holds `<env>/model.json`) — retrieving from `options.buffer`.
 */
export async function loadModelFolder(
  dir: string,
  options: LearnedModelOptions & { env?: string; threads?: number } = {},
): Promise<LearnedExperienceModel> {
  const { env, threads = 1, ...rest } = options;
  recoverModelFolder(dir);
  if (env) recoverModelFolder(join(dir, env));
  const folder =
    env && !existsSync(join(dir, MANIFEST_FILE)) && existsSync(join(dir, env, MANIFEST_FILE)) ? join(dir, env) : dir;
  const { manifest, weights } = await readModelFolder(folder);
  if (env && manifest.env !== env) {
    throw new ModelFileError(
      `The learned model in ${resolve(folder)} was trained on '${manifest.env}', not '${env}': give the model of '${env}' ` +
        `(or a folder holding one model per env, like public/models).`,
    );
  }
  if (threads < 2) return LearnedExperienceModel.fromFiles(manifest, weights, rest);
  // Decoder threads, one per core, each with its own copy of the checked files. Where threads
  // cannot start, this thread decodes (the answers are the same; only the speed differs).
  const engine = { decoder: rest.decoder ?? 'fused', capacity: Math.max(2, rest.maxBatch ?? 64) } as const;
  const pool = await startDecodePool({ manifest, weights }, threads, engine).catch(() => null);
  if (!pool) return LearnedExperienceModel.fromFiles(manifest, weights, rest);
  return LearnedExperienceModel.fromFiles(manifest, weights, {
    ...rest,
    decoders: pool.decoders,
    release: () => {
      void pool.close();
    },
  });
}

/**
 * Test hooks: `betweenRenames` runs after DIR is set aside and before the new folder takes its
 * place; `writeFile` writes each file (writeFileSync; a test makes it fail as a full disk does).
 */
export interface ModelFolderHooks {
  betweenRenames?: () => void;
  writeFile?: (path: string, data: string | Uint8Array) => void;
}

/** Writes a model's two files into `dir` as one unit (a sibling folder renamed into place). */
export function writeModelFolder(
  dir: string,
  files: { manifest: string; weights: Uint8Array },
  hooks: ModelFolderHooks = {},
): void {
  const target = resolve(dir);
  mkdirSync(dirname(target), { recursive: true });
  recoverModelFolder(target);
  const fresh = `${target}.new-${process.pid}`;
  const old = `${target}.old-${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh);
  const write = hooks.writeFile ?? writeFileSync;
  try {
    write(join(fresh, WEIGHTS_FILE), files.weights);
    write(join(fresh, MANIFEST_FILE), files.manifest);
  } catch (error) {
    rmSync(fresh, { recursive: true, force: true }); // DIR is untouched so far
    if (!isDiskFull(error)) throw error;
    const bytes = files.weights.length + Buffer.byteLength(files.manifest);
    const kept = existsSync(join(target, MANIFEST_FILE)) ? 'The model there before is kept. ' : '';
    throw new DiskFullError(
      `writing the model in ${target}`,
      dirname(target),
      bytes,
      `${kept}Free some space and run again.`,
    );
  }
  // Anything else in the old folder (a checkpoint) moves over too.
  if (existsSync(target)) {
    moveExtraEntries(target, fresh);
    renameSync(target, old);
  }
  hooks.betweenRenames?.();
  renameSync(fresh, target);
  rmSync(old, { recursive: true, force: true });
}

/** Moves every entry but the model's two files from `from` into `to` (where `to` has none of that name). */
function moveExtraEntries(from: string, to: string): void {
  for (const entry of readdirSync(from)) {
    if (entry !== MANIFEST_FILE && entry !== WEIGHTS_FILE && !existsSync(join(to, entry)))
      renameSync(join(from, entry), join(to, entry));
  }
}

/**
 * Finishes or undoes a replacement a crash interrupted: of DIR, DIR.new-PID and DIR.old-PID (of
 * writers no longer running), the newest complete model goes to DIR, with any other entries DIR
 * held; the rest are removed. Without a complete model anywhere, DIR (or else the newest
 * DIR.old-*, the folder as it was) stays.
 */
export function recoverModelFolder(dir: string): void {
  const target = resolve(dir);
  const left = leftoverSiblings(target);
  if (left.length === 0) return;
  const candidates = [target, ...left].filter((folder) => existsSync(folder));
  const newest = newestCompleteModel(candidates);
  const keep = newest ?? (existsSync(target) ? target : (left.find((f) => f.includes('.old-')) ?? target));
  if (keep !== target) {
    const aside = `${target}.old-${process.pid}`;
    if (existsSync(target)) {
      moveExtraEntries(target, keep);
      rmSync(aside, { recursive: true, force: true });
      renameSync(target, aside);
    }
    renameSync(keep, target);
  }
  for (const folder of leftoverSiblings(target)) rmSync(folder, { recursive: true, force: true });
}

/** DIR.new-PID and DIR.old-PID folders of writers that are not running, newest first. */
function leftoverSiblings(target: string): string[] {
  const parent = dirname(target);
  if (!existsSync(parent)) return [];
  const pattern = new RegExp(`^${escapeRegExp(basename(target))}\\.(new|old)-(\\d+)$`);
  const found: { path: string; mtime: number }[] = [];
  for (const name of readdirSync(parent)) {
    const match = pattern.exec(name);
    if (!match || isRunningWriter(Number(match[2]))) continue;
    const path = join(parent, name);
    found.push({ path, mtime: statSync(path).mtimeMs });
  }
  return found.sort((a, b) => b.mtime - a.mtime).map((f) => f.path);
}

/** Whether process `pid` is alive and not this one (this process writes synchronously: none of its is under way). */
function isRunningWriter(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The folder whose model files check out and whose model.json is newest (the first such on a tie); null: none. */
function newestCompleteModel(folders: readonly string[]): string | null {
  let best: string | null = null;
  let bestTime = -Infinity;
  for (const folder of folders) {
    const manifestPath = join(folder, MANIFEST_FILE);
    const weightsPath = join(folder, WEIGHTS_FILE);
    if (!existsSync(manifestPath) || !existsSync(weightsPath)) continue;
    try {
      decodeModelFiles(readFileSync(manifestPath, 'utf8'), new Uint8Array(readFileSync(weightsPath)), folder);
    } catch {
      continue; // torn, damaged or of another format: not a model to restore
    }
    const time = statSync(manifestPath).mtimeMs;
    if (time > bestTime) [best, bestTime] = [folder, time];
  }
  return best;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const STATE_FILE = 'state.json';

/** A checkpoint as a folder keeps it: with the fingerprint of its data (a resume on other data is refused). */
export type SavedCheckpoint = LearnedCheckpoint & { dataFingerprint?: string };

/** Saves a training checkpoint in DIR/checkpoint (see the file comment). */
export function writeCheckpoint(
  dir: string,
  checkpoint: SavedCheckpoint,
  hooks: Pick<ModelFolderHooks, 'writeFile'> = {},
): void {
  recoverModelFolder(dir);
  const folder = join(dir, 'checkpoint');
  mkdirSync(folder, { recursive: true });
  const { weights, optimizer, bestWeights, ...rest } = checkpoint;
  const blob = encodeTensorGroups({ weights, optimizer, bestWeights });
  const dataFile = `state-${checkpoint.fit.epochsDone}.bin`;
  const state = JSON.stringify({ ...rest, dataFile, index: blob.index, crc32: blob.crc32 });
  const write = hooks.writeFile ?? writeFileSync;
  const kept = savedEpochs(folder);
  try {
    write(join(folder, dataFile), blob.bytes);
    write(join(folder, `${STATE_FILE}.tmp`), state);
  } catch (error) {
    // Not committed (state.json still names the checkpoint before): what this save wrote goes.
    rmSync(join(folder, `${STATE_FILE}.tmp`), { force: true });
    if (kept?.dataFile !== dataFile) rmSync(join(folder, dataFile), { force: true });
    if (!isDiskFull(error)) throw error;
    throw new DiskFullError(
      `saving the training checkpoint in ${folder}`,
      folder,
      blob.bytes.length + state.length,
      kept
        ? `The checkpoint of epoch ${kept.epochsDone} is kept: free some space, then train again with --resume.`
        : 'There is no earlier checkpoint: free some space and train again.',
    );
  }
  renameSync(join(folder, `${STATE_FILE}.tmp`), join(folder, STATE_FILE));
  for (const entry of readdirSync(folder))
    if (/^state-\d+\.bin$/.test(entry) && entry !== dataFile) rmSync(join(folder, entry), { force: true });
}

/** The epochs and data file of the checkpoint state.json names now; null for none or an unreadable one. */
function savedEpochs(folder: string): { epochsDone: number; dataFile: string } | null {
  try {
    const state = JSON.parse(readFileSync(join(folder, STATE_FILE), 'utf8'));
    return { epochsDone: state.fit.epochsDone, dataFile: state.dataFile };
  } catch {
    return null;
  }
}

/** The checkpoint in DIR/checkpoint, or null when there is none. */
export function readCheckpoint(dir: string): SavedCheckpoint | null {
  recoverModelFolder(dir);
  const folder = join(dir, 'checkpoint');
  const statePath = join(folder, STATE_FILE);
  if (!existsSync(statePath)) return null;
  let state: Omit<LearnedCheckpoint, 'weights' | 'optimizer' | 'bestWeights'> & {
    dataFile: string;
    index: Record<string, ModelManifest['weights']>;
    crc32: string;
  };
  try {
    state = JSON.parse(readFileSync(statePath, 'utf8'));
  } catch (error) {
    throw new ModelFileError(
      `${statePath} is not JSON (${(error as Error).message}); delete ${folder} and train again without --resume.`,
    );
  }
  if (state.format !== CHECKPOINT_FORMAT) {
    throw new ModelFileError(
      `${statePath} is not a learned-model checkpoint of this build (format '${String(state.format)}', ` +
        `expected '${CHECKPOINT_FORMAT}'); delete ${folder} and train again without --resume.`,
    );
  }
  const dataPath = join(folder, basename(state.dataFile));
  if (!existsSync(dataPath))
    throw new ModelFileError(
      `${statePath} names ${state.dataFile}, which is missing; delete ${folder} and train again without --resume.`,
    );
  const groups = decodeTensorGroups(state.index, new Uint8Array(readFileSync(dataPath)), state.crc32, folder);
  const { dataFile: _d, index: _i, crc32: _c, ...rest } = state;
  return {
    ...rest,
    weights: groups.weights ?? [],
    optimizer: groups.optimizer ?? [],
    bestWeights: groups.bestWeights ?? [],
  } as SavedCheckpoint;
}

export function removeCheckpoint(dir: string): void {
  rmSync(join(dir, 'checkpoint'), { recursive: true, force: true });
}

export type { ReplayBuffer };
