/** A model folder replaced by two renames survives a crash between them: opening it restores the newest model. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readModelFolder, writeModelFolder } from '../../../src/node/model-folder';
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
