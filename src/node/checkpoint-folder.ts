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
 * of another. Weights no manifest names are deleted afterwards. Loading checks everything
 * (src/core/train/checkpoint.ts); a refused checkpoint's message names the file and says how to
 * resume from previous.json or start over. (Checkpoints written before this layout — manifest.json
 * beside weights.bin — still load, and are checked as far as they carry checks.)
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  CheckpointFormatError,
  blobBytes,
  deserializeCheckpoint,
  serializeCheckpoint,
  type CheckpointManifest,
  type CheckpointStore,
} from '../core/train/checkpoint';
import type { TrainerState } from '../core/train/loop';

const MANIFEST = 'manifest.json';
const PREVIOUS = 'previous.json';
const LEGACY_WEIGHTS = 'weights.bin';
const WEIGHTS_NAME = /^weights(\.\d+)?\.bin$/;

export class FolderCheckpointStore implements CheckpointStore {
  constructor(readonly dir: string) {}

  async save(state: TrainerState): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const { manifest, blob } = serializeCheckpoint(state);
    const current = this.text(MANIFEST);
    const file = `weights.${nextGeneration([current, this.text(PREVIOUS)])}.bin`;
    this.writeDurable(file, blobBytes(blob));
    if (current !== null) this.writeAtomic(PREVIOUS, current);
    this.writeAtomic(MANIFEST, JSON.stringify({ ...manifest, weights: { ...manifest.weights!, file } }, null, 1));
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
    return deserializeCheckpoint(manifest, blob, { manifest: path, weights: weightsPath, fix });
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

  private writeDurable(name: string, bytes: Uint8Array): void {
    const fd = openSync(join(this.dir, name), 'w');
    try {
      for (let offset = 0; offset < bytes.length;) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Writes `name.tmp`, then renames it over `name` (the rename is atomic). */
  private writeAtomic(name: string, text: string): void {
    this.writeDurable(`${name}.tmp`, Buffer.from(text, 'utf8'));
    renameSync(join(this.dir, `${name}.tmp`), join(this.dir, name));
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

/** One more than the highest save number the manifests name. */
function nextGeneration(texts: (string | null)[]): number {
  let highest = 0;
  for (const text of texts) {
    const match = /^weights\.(\d+)\.bin$/.exec(weightsFileOf(text) ?? '');
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest + 1;
}
