/** NODE ONLY (src/node/): the checkpoint store of a run folder, DIR/manifest.json + DIR/weights.bin (float32, little-endian). */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deserializeCheckpoint, serializeCheckpoint, type CheckpointManifest, type CheckpointStore } from '../core/train/checkpoint';
import type { TrainerState } from '../core/train/loop';

export class FolderCheckpointStore implements CheckpointStore {
  constructor(readonly dir: string) {}

  async save(state: TrainerState): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const { manifest, blob } = serializeCheckpoint(state);
    // Write both files under temporary names first, so a crash never leaves a torn checkpoint.
    writeFileSync(join(this.dir, 'weights.bin.tmp'), new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength));
    writeFileSync(join(this.dir, 'manifest.json.tmp'), JSON.stringify(manifest, null, 1));
    renameSync(join(this.dir, 'weights.bin.tmp'), join(this.dir, 'weights.bin'));
    renameSync(join(this.dir, 'manifest.json.tmp'), join(this.dir, 'manifest.json'));
  }

  async load(): Promise<TrainerState | null> {
    const manifestPath = join(this.dir, 'manifest.json');
    if (!existsSync(manifestPath)) return null;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as CheckpointManifest;
    const bytes = readFileSync(join(this.dir, 'weights.bin'));
    const blob = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    return deserializeCheckpoint(manifest, blob);
  }
}
