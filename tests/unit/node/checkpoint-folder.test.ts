/**
 * A run folder's checkpoint store on a full disk (issue 31 item 6), and a checkpoint copied from
 * another run (item 7): both refused with a message that names what is wrong and the fix.
 */
import { cpSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import { initBackend } from '../../../src/core/tfjs/backend';
import { CheckpointFormatError } from '../../../src/core/train/checkpoint';
import { getPreset, validateConfig } from '../../../src/core/train/config';
import { Trainer, type TrainerState } from '../../../src/core/train/loop';
import { DiskFullError, FolderCheckpointStore } from '../../../src/node/checkpoint-folder';
import { captureCliOutput } from '../support/cli-output';
import { tempFolders } from '../support/temp-folders';

const freshFolder = tempFolders('checkpoint-folder');
const { err } = captureCliOutput();

let states: TrainerState[] = [];
beforeAll(async () => {
  await initBackend('wasm');
  const config = { ...getPreset('webshop-easy'), iterations: 1, tasksPerIteration: 1, groupSize: 2, evalInterval: 0 };
  const trainer = new Trainer(validateConfig(config));
  states = [await trainer.state()];
  await trainer.runIteration();
  states.push(await trainer.state());
  trainer.dispose();
});

/** A write that fills the disk: the first 64 bytes go out, then ENOSPC (as a real full disk does). */
function fullDiskWrite(fd: number, bytes: Uint8Array, offset: number, length: number): number {
  writeSync(fd, bytes, offset, Math.min(length, 64));
  throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
}

describe('checkpoint folder on a full disk', () => {
  it('names the folder and the space needed, removes the partial file and keeps the previous checkpoint', async () => {
    const dir = freshFolder();
    let full = false;
    const store = new FolderCheckpointStore(dir, {
      write: (fd, bytes, offset, length) => (full ? fullDiskWrite : writeSync)(fd, bytes, offset, length),
    });
    await store.save(states[0]);
    full = true;
    const error = await store.save(states[1]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiskFullError);
    expect((error as Error).message).toMatch(
      new RegExp(`The disk is full: saving the checkpoint in ${dir} needs \\d+ bytes \\(.* MB\\)`),
    );
    expect((error as Error).message).toMatch(/checkpoint of iteration 0 is kept.*--resume/);
    expect(readdirSync(dir).sort()).toEqual(['manifest.json', 'weights.1.bin']);
    full = false;
    expect((await store.load())!.iteration).toBe(0);
  });
});

describe('a checkpoint of another run', () => {
  it('is refused by the store, naming both runs', async () => {
    const dir = freshFolder();
    const runA = { id: 'run-a', seed: 1, preset: 'webshop-easy' };
    const runB = { id: 'run-b', seed: 2, preset: 'webshop-easy' };
    await new FolderCheckpointStore(dir, { run: runB }).save(states[1]);
    const error = await new FolderCheckpointStore(dir, { run: runA }).load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointFormatError);
    expect((error as Error).message).toMatch(
      new RegExp(
        'belongs to run run-b \\(seed 2, preset webshop-easy\\), ' +
          "not to this folder's run run-a \\(seed 1, preset webshop-easy\\)",
      ),
    );
  });

  it('is refused by eval and train --resume, and the run folder keeps its own seed', async () => {
    const root = freshFolder();
    const train = (name: string, seed: string) =>
      main(
        ['train', '--preset', 'webshop-easy', '--mode', 'real', '--seed', seed, '--out', join(root, name)].concat([
          '--set',
          'iterations=1,tasksPerIteration=1,groupSize=2,evalInterval=0,finalEvalEpisodes=2',
          '--json',
        ]),
      );
    expect(await train('a', '1')).toBe(0);
    expect(await train('b', '2')).toBe(0);
    rmSync(join(root, 'a', 'checkpoint'), { recursive: true });
    cpSync(join(root, 'b', 'checkpoint'), join(root, 'a', 'checkpoint'), { recursive: true });
    const both = /belongs to run \S+ \(seed 2, preset webshop-easy\), not to this folder's run \S+ \(seed 1, /;
    expect(await main(['eval', '--run', join(root, 'a'), '--episodes', '2'])).not.toBe(0);
    expect(err.join('\n')).toMatch(both);
    err.length = 0;
    expect(await main(['train', '--resume', '--out', join(root, 'a'), '--iterations', '2'])).not.toBe(0);
    expect(err.join('\n')).toMatch(both);
    expect(JSON.parse(readFileSync(join(root, 'a', 'config.json'), 'utf8')).seed).toBe(1);
  }, 120_000);
});
