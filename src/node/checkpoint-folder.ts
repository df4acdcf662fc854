/**
 * NODE ONLY (src/node/): the checkpoint store of a run folder.
 *
 *   manifest.json      the latest checkpoint: state, tensor shapes, the iteration, and the weights
 *                      file's name, byte length and CRC-32
 *   weights.G.bin      its weights (float32, little-endian); G counts the saves
 *   previous.json      the checkpoint before it (its weights file is kept too)
 *
 * A save writes the new weights under a new name, copies the current manifest to previous.json,
 * then renames the new manifest into place: that rename is the commit, so a crash at any point
 * leaves the old checkpoint or the new one, whole, never weights of one save beside the manifest
 * of another. Weights no manifest names are deleted afterwards. A save the disk has no room for
 * removes what it wrote and fails with DiskFullError (the folder, the bytes needed, the checkpoint
 * kept). Each save records the run's identity (run-identity.ts), and a store given its run's
 * identity refuses a checkpoint of another run, naming both. Loading checks everything
 * (src/core/train/checkpoint.ts); a refused checkpoint's message names the file and says how to
 * resume from previous.json or start over. (Checkpoints written before this layout — manifest.json
 * beside weights.bin — still load, and are checked as far as they carry checks.)
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  CheckpointFormatError,
  blobBytes,
  deserializeCheckpoint,
  serializeCheckpoint,
  type CheckpointManifest,
  type CheckpointStore,
  type RunIdentity,
} from '../core/train/checkpoint';
import type { TrainerState } from '../core/train/loop';
import { DiskFullError, isDiskFull } from './disk-full';
import { replaceFileAtomically, writeWholeFile, type WriteChunk } from './durable-files';
import { describeRun, otherRun } from './run-identity';

export { DiskFullError };

const MANIFEST = 'manifest.json';
const PREVIOUS = 'previous.json';
const LEGACY_WEIGHTS = 'weights.bin';
const WEIGHTS_NAME = /^weights(\.\d+)?\.bin$/;

export interface FolderCheckpointOptions {
  /** The run this folder belongs to: saved in each checkpoint, and a checkpoint of another run is refused. */
  run?: RunIdentity;
  write?: WriteChunk;
}

export class FolderCheckpointStore implements CheckpointStore {
  constructor(
    readonly dir: string,
    private readonly options: FolderCheckpointOptions = {},
  ) {}

  async save(state: TrainerState): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const { manifest, blob } = serializeCheckpoint(state);
    const current = this.text(MANIFEST);
    const file = `weights.${nextGeneration([current, this.text(PREVIOUS)])}.bin`;
    const run = this.options.run ? { run: this.options.run } : {};
    const text = JSON.stringify({ ...manifest, ...run, weights: { ...manifest.weights!, file } }, null, 1);
    const bytes = blobBytes(blob);
    try {
      this.writeDurable(file, bytes);
      if (current !== null) this.writeAtomic(PREVIOUS, current);
      this.writeAtomic(MANIFEST, text);
    } catch (error) {
      rmSync(join(this.dir, file), { force: true }); // not committed: no manifest names it
      if (!isDiskFull(error)) throw error;
      const needed = bytes.length + text.length + (current?.length ?? 0);
      const kept = iterationOf(current);
      throw new DiskFullError(
        `saving the checkpoint in ${this.dir}`,
        this.dir,
        needed,
        kept === null
          ? 'There is no earlier checkpoint: free some space and start the run again.'
          : `The checkpoint of iteration ${kept} is kept: free some space, then continue with --resume.`,
      );
    }
    this.removeUnnamedWeights();
  }

  /** The latest checkpoint, checked; null when the folder has none. */
  async load(): Promise<TrainerState | null> {
    return this.read(MANIFEST, true);
  }

  /** Reads and checks the checkpoint of one manifest (`manifest.json` or `previous.json`). */
  private read(name: string, withFix: boolean): TrainerState | null {
    const text = this.text(name);
    if (text === null) return null;
    const path = join(this.dir, name);
    const fix = withFix ? this.fix() : '';
    let manifest: CheckpointManifest;
    try {
      manifest = JSON.parse(text.replace(/^\uFEFF/, '')) as CheckpointManifest;
    } catch (error) {
      throw new CheckpointFormatError(
        `${path} is not JSON (${(error as Error).message}): the checkpoint is damaged. ${fix}`,
      );
    }
    const file = manifest?.weights?.file ?? LEGACY_WEIGHTS;
    const weightsPath = join(this.dir, file);
    if (!WEIGHTS_NAME.test(file))
      throw new CheckpointFormatError(
        `${path} names the weights file '${file}', which is not a checkpoint weights file. ${fix}`,
      );
    if (!existsSync(weightsPath))
      throw new CheckpointFormatError(`${weightsPath} is missing: ${path} needs it. ${fix}`);
    const bytes = readFileSync(weightsPath);
    if (bytes.length % 4 !== 0)
      throw new CheckpointFormatError(
        `${weightsPath}: ${bytes.length} bytes is not a whole number of float32 values; the file is damaged. ${fix}`,
      );
    const blob = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    const state = deserializeCheckpoint(manifest, blob, { manifest: path, weights: weightsPath, fix });
    this.checkRun(manifest, path);
    return state;
  }

  /** Refuses a checkpoint another run saved (copied in), naming both runs. */
  private checkRun(manifest: CheckpointManifest, path: string): void {
    const expected = this.options.run;
    const saved = manifest.run ?? { seed: manifest.config.seed, preset: manifest.config.preset };
    if (!expected || !otherRun(saved, expected)) return;
    throw new CheckpointFormatError(
      `${path} belongs to run ${describeRun(saved)}, not to this folder's run ${describeRun(expected)}: ` +
        `it was copied from another run. Put this run's own checkpoint back in ${this.dir}, or start over: ` +
        `train without --resume (the run folder ${join(this.dir, '..')} is rewritten).`,
    );
  }

  /** What to do about a refused latest checkpoint: resume from previous.json when it checks out, else start over. */
  private fix(): string {
    const startOver = `Or start over: train without --resume (the run folder ${join(this.dir, '..')} is rewritten).`;
    try {
      const previous = this.read(PREVIOUS, false);
      if (previous) {
        return (
          `The previous checkpoint (iteration ${previous.iteration}) is intact: to resume from it, ` +
          `move ${join(this.dir, PREVIOUS)} to ${join(this.dir, MANIFEST)} and run with --resume again. ${startOver}`
        );
      }
    } catch {
      /* the previous one is damaged too */
    }
    return `There is no intact earlier checkpoint to resume from. ${startOver}`;
  }

  private text(name: string): string | null {
    const path = join(this.dir, name);
    return existsSync(path) ? readFileSync(path, 'utf8') : null;
  }

  /** Deletes weight files neither manifest names (what an interrupted save, or the save before the previous, left). */
  private removeUnnamedWeights(): void {
    const named = new Set([MANIFEST, PREVIOUS].map((name) => weightsFileOf(this.text(name))));
    for (const name of readdirSync(this.dir)) {
      if ((WEIGHTS_NAME.test(name) && !named.has(name)) || name.endsWith('.tmp'))
        rmSync(join(this.dir, name), { force: true });
    }
  }

  /** Writes and syncs `name`; on any failure the partial file is removed (it would hold the disk full). */
  private writeDurable(name: string, bytes: Uint8Array): void {
    writeWholeFile(join(this.dir, name), [bytes], { write: this.options.write });
  }

  /** Writes `name.tmp`, then renames it over `name` (the rename is atomic). */
  private writeAtomic(name: string, text: string): void {
    replaceFileAtomically(join(this.dir, name), text, { write: this.options.write });
  }
}

/** The weights file a manifest's text names (legacy manifests: weights.bin); null for none or an unreadable one. */
function weightsFileOf(text: string | null): string | null {
  if (text === null) return null;
  try {
    return (JSON.parse(text) as CheckpointManifest).weights?.file ?? LEGACY_WEIGHTS;
  } catch {
    return null;
  }
}

/** The iteration of a manifest's text; null for none or an unreadable one. */
function iterationOf(text: string | null): number | null {
  if (text === null) return null;
  try {
    const iteration = (JSON.parse(text) as CheckpointManifest).iteration;
    return typeof iteration === 'number' ? iteration : null;
  } catch {
    return null;
  }
}

/** One more than the highest save number the manifests name. */
function nextGeneration(texts: (string | null)[]): number {
  let highest = 0;
  for (const text of texts) {
    const match = /^weights\.(\d+)\.bin$/.exec(weightsFileOf(text) ?? '');
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest + 1;
}
