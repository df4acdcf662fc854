/**
 * Checked checkpoints (issue 13): the folder store swaps a save in as one unit (a crash leaves the
 * old checkpoint or the new one), and every corruption — flipped bytes, weights of another save,
 * NaN weights, a manifest that does not parse or lies — is refused naming the file and the fix.
 * The page's IndexedDB checkpoints are checked the same way.
 */
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDB } from 'idb';
import { initBackend } from '../../../src/core/tfjs/backend';
import { getPreset, validateConfig } from '../../../src/core/train/config';
import { CheckpointFormatError, IndexedDbCheckpointStore } from '../../../src/core/train/checkpoint';
import { Trainer, type TrainerState } from '../../../src/core/train/loop';
import { FolderCheckpointStore } from '../../../src/node/checkpoint-folder';
import { tempFolders } from '../support/temp-folders';

const freshFolder = tempFolders('checkpoint-test');

let states: TrainerState[] = [];
beforeAll(async () => {
  await initBackend('wasm');
  const trainer = new Trainer(
    validateConfig({
      ...getPreset('webshop-easy'),
      iterations: 2,
      tasksPerIteration: 1,
      groupSize: 2,
      evalInterval: 0,
      finalEvalEpisodes: 2,
    }),
  );
  states = [await trainer.state()];
  for (let i = 0; i < 2; i++) {
    await trainer.runIteration();
    states.push(await trainer.state());
  }
  trainer.dispose();
});

/** A folder holding the checkpoints of iterations 1 and 2 (manifest.json = 2, previous.json = 1). */
async function savedTwice(): Promise<{
  dir: string;
  store: FolderCheckpointStore;
  manifest: () => Record<string, any>;
  weights: () => string;
}> {
  const dir = freshFolder();
  const store = new FolderCheckpointStore(dir);
  await store.save(states[1]);
  await store.save(states[2]);
  const manifest = () => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  return { dir, store, manifest, weights: () => join(dir, manifest().weights.file) };
}

async function refusal(store: FolderCheckpointStore): Promise<string> {
  const error = await store.load().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(CheckpointFormatError);
  return (error as Error).message;
}

describe('FolderCheckpointStore', () => {
  it('keeps the latest and the previous checkpoint, with checksums, shapes and the iteration, and loads them exactly', async () => {
    const { dir, store, manifest } = await savedTwice();
    expect(readdirSync(dir).sort()).toEqual(['manifest.json', 'previous.json', 'weights.1.bin', 'weights.2.bin']);
    expect(manifest()).toMatchObject({
      iteration: 2,
      weights: { file: 'weights.2.bin', bytes: expect.any(Number), crc32: expect.stringMatching(/^[0-9a-f]{8}$/) },
    });
    expect(manifest().policy[0].shape.length).toBeGreaterThan(0);
    const loaded = (await store.load())!;
    expect(loaded.iteration).toBe(2);
    expect(loaded.policy.tensors.map((t) => Array.from(t.data))).toEqual(
      states[2].policy.tensors.map((t) => Array.from(t.data)),
    );
    await store.save(states[2]);
    expect(readdirSync(dir).sort()).toEqual(['manifest.json', 'previous.json', 'weights.2.bin', 'weights.3.bin']);
  });

  it('is swapped in as one unit: a save interrupted before its manifest rename leaves the previous checkpoint', async () => {
    const { dir, store } = await savedTwice();
    // The next save wrote its weights and its temp manifest, then the process died.
    writeFileSync(join(dir, 'weights.3.bin'), Buffer.alloc(64, 7));
    writeFileSync(join(dir, 'manifest.json.tmp'), '{"torn');
    expect((await store.load())!.iteration).toBe(2);
    await store.save(states[1]);
    expect(existsSync(join(dir, 'manifest.json.tmp'))).toBe(false);
  });

  it('refuses flipped bytes in the weights, naming the file, and says how to resume from the previous checkpoint', async () => {
    const { dir, store, weights } = await savedTwice();
    const bytes = readFileSync(weights());
    bytes[17] ^= 0xff;
    writeFileSync(weights(), bytes);
    const message = await refusal(store);
    expect(message).toContain(`${weights()}: the weights do not match the manifest`);
    expect(message).toContain(
      `The previous checkpoint (iteration 1) is intact: to resume from it, move ${join(dir, 'previous.json')} to ${join(dir, 'manifest.json')}`,
    );
    expect(message).toContain('Or start over: train without --resume');
  });

  it('refuses weights of another save beside the manifest (mixed iterations)', async () => {
    const { dir, store, manifest } = await savedTwice();
    renameSync(join(dir, 'weights.1.bin'), join(dir, manifest().weights.file)); // iteration-1 weights under iteration 2's name
    expect(await refusal(store)).toMatch(
      /the weights do not match the manifest .* from another save \(a mix of two iterations\)/,
    );
  });

  it('refuses NaN weights even when the checksum agrees (a run that diverged)', async () => {
    const { store, weights, manifest } = await savedTwice();
    const floats = new Float32Array(new Uint8Array(readFileSync(weights())).buffer);
    floats[3] = Number.NaN;
    const bytes = new Uint8Array(floats.buffer);
    writeFileSync(weights(), bytes);
    const { crc32 } = await import('../../../src/core/experience/learned/model-file');
    const m = manifest();
    writeFileSync(
      join(store.dir, 'manifest.json'),
      JSON.stringify({ ...m, weights: { ...m.weights, crc32: crc32(bytes) } }),
    );
    expect(await refusal(store)).toMatch(
      /tensor '.*' holds NaN at index \d+: the weights are damaged or the run diverged/,
    );
  });

  it('refuses a manifest that does not parse, or whose fields are wrong, naming manifest.json', async () => {
    const { dir, store, manifest } = await savedTwice();
    const good = readFileSync(join(dir, 'manifest.json'), 'utf8');
    writeFileSync(join(dir, 'manifest.json'), good.slice(0, 200));
    expect(await refusal(store)).toMatch(
      new RegExp(`${join(dir, 'manifest.json')} is not JSON .*: the checkpoint is damaged`),
    );
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...JSON.parse(good), iteration: 'abc' }));
    expect(await refusal(store)).toContain(
      `${join(dir, 'manifest.json')}: 'iteration' must be a whole number ≥ 0, got "abc"`,
    );
    const m = JSON.parse(good);
    m.policy[0].shape = [m.policy[0].shape[0] + 1, ...m.policy[0].shape.slice(1)];
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(m));
    expect(await refusal(store)).toMatch(/tensor '.*' \(shape \[.*\], \d+ values at \d+\) does not fit/);
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({ ...manifest(), weights: { ...manifest().weights, file: '../../etc/passwd' } }),
    );
    expect(await refusal(store)).toMatch(
      /names the weights file '..\/..\/etc\/passwd', which is not a checkpoint weights file/,
    );
    rmSync(join(dir, 'weights.2.bin'));
    writeFileSync(join(dir, 'manifest.json'), good);
    expect(await refusal(store)).toContain(`${join(dir, 'weights.2.bin')} is missing`);
  });

  it('says there is nothing to fall back on when the previous checkpoint is damaged too', async () => {
    const { dir, store } = await savedTwice();
    writeFileSync(join(dir, 'previous.json'), '{');
    writeFileSync(join(dir, 'manifest.json'), '{');
    expect(await refusal(store)).toMatch(/There is no intact earlier checkpoint to resume from/);
  });
});

describe('IndexedDbCheckpointStore', () => {
  it('refuses a stored checkpoint whose weights were damaged, naming the run', async () => {
    const store = new IndexedDbCheckpointStore('run-damaged');
    await store.save(states[1]);
    expect((await store.load())!.iteration).toBe(1);
    await store.close();
    const db = await openDB(IndexedDbCheckpointStore.DB_NAME, IndexedDbCheckpointStore.DB_VERSION);
    const record = await db.get('checkpoints', 'run-damaged');
    record.blob[0] += 1;
    await db.put('checkpoints', record, 'run-damaged');
    db.close();
    const error = await new IndexedDbCheckpointStore('run-damaged').load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointFormatError);
    expect((error as Error).message).toMatch(
      /The saved checkpoint of run 'run-damaged' .*its weights: the weights do not match the manifest.*start the run again/,
    );
  });
});
