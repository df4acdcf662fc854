/**
 * `dreamgym expmodel train --resume` continues the saved training exactly (issue 44, repro 6): an
 * option that differs from the checkpoint's is refused, each named with the saved value, and so is
 * a domain whose episodes changed since the checkpoint (its data fingerprint).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataFingerprint, resumeConflicts, retrievalK } from '../../../src/cli/commands/expmodel';
import { main } from '../../../src/cli/main';
import { writeTrajectories } from '../../../src/core/data/formats';
import { CHECKPOINT_FORMAT } from '../../../src/core/experience/learned/model-file';
import { learnedTrainOptions, type LearnedCheckpoint } from '../../../src/core/experience/learned/train-model';
import { loadDomainFolder } from '../../../src/node/domain-folder';
import { readCheckpoint, writeCheckpoint } from '../../../src/node/model-folder';
import { foreignOurs } from '../domain/fixtures';
import { captureCliOutput } from '../support/cli-output';

const { err } = captureCliOutput();
const root = mkdtempSync(join(tmpdir(), 'dreamgym-expmodel-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The options `expmodel train --domain app` trains with by default. */
const DEFAULTS = learnedTrainOptions({
  name: 'domain app',
  network: { dModel: 64 },
  format: { k: 4, historyLength: 4 },
  fit: { epochs: 12, batchSize: 16, learningRate: 2e-3, seed: 0 },
});

/** A checkpoint of that training after one epoch (a small tensor, no real training), of data `fingerprint`. */
function saveCheckpoint(out: string, fingerprint: string): void {
  const weights = [{ name: 'w', shape: [4], data: new Float32Array([1, 2, 3, 4]) }];
  const checkpoint = {
    format: CHECKPOINT_FORMAT,
    env: 'byo:app',
    options: DEFAULTS,
    tokenizer: { format: 'dreamgym-tokenizer/1', pieces: [] },
    fit: { epochsDone: 1 },
    weights,
    optimizer: [],
    bestWeights: weights,
    seconds: 0,
  } as unknown as LearnedCheckpoint;
  writeCheckpoint(out, { ...checkpoint, dataFingerprint: fingerprint });
}

async function importDomain(dir: string, episodes: number, replace = false): Promise<void> {
  const file = join(root, `app-${episodes}.json`);
  writeFileSync(file, writeTrajectories(await foreignOurs(episodes), 'eto'));
  const args = ['domain', 'import', file, '--format', 'eto', '--name', 'app', '--dir', dir];
  expect(await main(replace ? [...args, '--replace'] : args)).toBe(0);
}

describe('expmodel train --domain: retrieved examples', () => {
  it('a domain whose lists are inferred retrieves none unless --k is given', async () => {
    const dir = join(root, 'retrieval');
    await importDomain(dir, 12); // ETO: no lists recorded
    const card = loadDomainFolder(dir, 'app').card;
    expect(card.inferredAdmissible).toBe(true);
    expect(retrievalK(4, [], card)).toBe(0);
    expect(retrievalK(2, ['k'], card)).toBe(2);
    const listed = { ...card, inferredAdmissible: undefined };
    expect(retrievalK(4, [], listed)).toBe(4);
  }, 60_000);
});

describe('expmodel train --resume', () => {
  it('refuses every option that differs from the saved training, naming the saved value', async () => {
    const dir = join(root, 'options');
    await importDomain(dir, 12);
    const out = join(root, 'options-model');
    saveCheckpoint(out, dataFingerprint(loadDomainFolder(dir, 'app').train));
    const resume = ['expmodel', 'train', '--domain', 'app', '--dir', dir, '--out', out, '--resume'];
    const changed = ['--epochs', '5', '--k', '0', '--learning-rate', '0.5', '--d-model', '16'];
    expect(await main([...resume, ...changed])).toBe(2);
    const message = err.join('\n');
    expect(message).toMatch(/--resume continues the training saved in .*checkpoint exactly, .* these conflict:/);
    for (const line of [
      '--k 0 (the checkpoint has 4)',
      '--epochs 5 (the checkpoint has 12)',
      '--learning-rate 0.5 (the checkpoint has 0.002)',
      '--d-model 16 (the checkpoint has 64)',
    ])
      expect(message).toContain(line);
    expect(message).toContain('Drop them to resume, or train anew without --resume in another --out.');
    expect(message).not.toMatch(/changed since the checkpoint/);
    expect(readCheckpoint(out)!.fit.epochsDone).toBe(1); // untouched
  }, 60_000);

  it('refuses a domain whose episodes changed since the checkpoint', async () => {
    const dir = join(root, 'data');
    await importDomain(dir, 12);
    const out = join(root, 'data-model');
    saveCheckpoint(out, dataFingerprint(loadDomainFolder(dir, 'app').train));
    await importDomain(dir, 15, true);
    expect(await main(['expmodel', 'train', '--domain', 'app', '--dir', dir, '--out', out, '--resume'])).toBe(2);
    const message = err.join('\n');
    expect(message).toMatch(/--resume: the episodes of domain app changed since the checkpoint in .* was saved/);
    expect(message).toMatch(/\(data [0-9a-f]{16}, checkpoint [0-9a-f]{16}\), so the training would go on half on each/);
    expect(message).toMatch(/Train anew without --resume \(another --out, or delete .*checkpoint\)/);
  }, 60_000);

  it('takes options equal to the saved ones, and only the given ones count', () => {
    const options = { k: 4, history: 4, seed: 0, epochs: 12, 'learning-rate': 0.002, 'd-model': 64, name: 'x' };
    expect(resumeConflicts(['k', 'epochs', 'learning-rate', 'd-model', 'seed', 'history'], options, DEFAULTS)).toEqual(
      [],
    );
    expect(resumeConflicts([], { ...options, epochs: 5 }, DEFAULTS)).toEqual([]);
    expect(resumeConflicts(['generator-verdict'], { 'generator-verdict': true }, DEFAULTS)).toEqual([
      '--generator-verdict true (the checkpoint has false)',
    ]);
  });
});
