/** A model folder replaced by two renames survives a crash between them: opening it restores the newest model. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_FORMAT } from '../../../src/core/experience/learned/model-file';
import type { LearnedCheckpoint } from '../../../src/core/experience/learned/train-model';
import { DiskFullError } from '../../../src/node/disk-full';
import { readCheckpoint, readModelFolder, writeCheckpoint, writeModelFolder } from '../../../src/node/model-folder';
import { tinyModelFiles } from '../experience/learned/tiny-model-files';

class Killed extends Error {}

/** A model folder holding model 'first' and a checkpoint, replaced by model 'second' that dies between the renames. */
function crashedReplacement(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'model-folder-')), 'model');
  writeModelFolder(dir, tinyModelFiles('first', 0));
  mkdirSync(join(dir, 'checkpoint'));
  writeFileSync(join(dir, 'checkpoint', 'state.json'), '{"epochs":3}');
  expect(() =>
    writeModelFolder(dir, tinyModelFiles('second', 1), {
      betweenRenames: () => {
        throw new Killed('killed between the renames');
      },
    }),
  ).toThrow(Killed);
  return dir;
}

const siblings = (dir: string) => readdirSync(dirname(dir)).filter((name) => name !== basename(dir));

describe('model folder replacement', () => {
  it('restores the new model and its checkpoint when the writer died between the two renames', async () => {
    const dir = crashedReplacement();
    expect(existsSync(dir)).toBe(false); // what the crash left: DIR.old-PID and DIR.new-PID only
    expect(siblings(dir)).toHaveLength(2);
    const { manifest } = await readModelFolder(dir);
    expect(manifest.name).toBe('second');
    expect(readFileSync(join(dir, 'checkpoint', 'state.json'), 'utf8')).toBe('{"epochs":3}');
    expect(siblings(dir)).toEqual([]);
  });

  it('keeps the old model when the new one was left incomplete, and a later write replaces it whole', async () => {
    const dir = crashedReplacement();
    const fresh = siblings(dir).find((name) => name.includes('.new-'))!;
    writeFileSync(join(dirname(dir), fresh, 'weights.bin'), new Uint8Array(8)); // torn write
    expect((await readModelFolder(dir)).manifest.name).toBe('first');
    expect(siblings(dir)).toEqual([]);
    writeModelFolder(dir, tinyModelFiles('third', 2));
    expect((await readModelFolder(dir)).manifest.name).toBe('third');
  });
});

/** A file write that fills the disk: 64 bytes land, then ENOSPC (as a real full disk does). */
function fullDiskWrite(path: string, data: string | Uint8Array): void {
  writeFileSync(path, typeof data === 'string' ? data.slice(0, 64) : data.subarray(0, 64));
  throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
}

/** A learned-model checkpoint of `epochsDone` epochs with one small tensor: what a folder writes, no real training. */
function checkpointAt(epochsDone: number): LearnedCheckpoint {
  const weights = [{ name: 'w', shape: [4], data: new Float32Array([1, 2, 3, epochsDone]) }];
  return {
    format: CHECKPOINT_FORMAT,
    env: 'webshop-lite-v0',
    options: {},
    tokenizer: { format: 'dreamgym-tokenizer/1', pieces: [] },
    fit: { epochsDone },
    weights,
    optimizer: [],
    bestWeights: weights,
    seconds: 0,
  } as unknown as LearnedCheckpoint;
}

describe('model folders on a full disk', () => {
  it('a model write names the folder and the space needed, and leaves the old model alone', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'model-folder-')), 'model');
    writeModelFolder(dir, tinyModelFiles('first', 0));
    const error = (() => {
      try {
        writeModelFolder(dir, tinyModelFiles('second', 1), { writeFile: fullDiskWrite });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(DiskFullError);
    expect(error!.message).toMatch(new RegExp(`The disk is full: writing the model in ${dir} needs \\d+ bytes`));
    expect(error!.message).toMatch(/The model there before is kept/);
    expect(siblings(dir)).toEqual([]);
    expect((await readModelFolder(dir)).manifest.name).toBe('first');
  });

  it('a training checkpoint removes its partial data file and keeps the checkpoint before it', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'model-folder-')), 'model');
    writeCheckpoint(dir, checkpointAt(1));
    expect(() => writeCheckpoint(dir, checkpointAt(2), { writeFile: fullDiskWrite })).toThrow(
      /The disk is full: saving the training checkpoint in .*checkpoint needs \d+ bytes.*epoch 1 is kept.*--resume/,
    );
    expect(readdirSync(join(dir, 'checkpoint')).sort()).toEqual(['state-1.bin', 'state.json']);
    expect(readCheckpoint(dir)!.fit.epochsDone).toBe(1);
  });
});
