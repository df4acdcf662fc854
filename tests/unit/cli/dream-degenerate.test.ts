/**
 * `dream` says when its dream is degenerate, as `train` does (issue 44, repro 13, last): a
 * learned model with zeroed weights and recomputed checksums dreamed "success 1, mean length 1"
 * with no word.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main';
import { crc32, sealManifest, type ModelManifest } from '../../../src/core/experience/learned/model-file';
import { captureCliOutput } from '../support/cli-output';

const { lastJson } = captureCliOutput();

/** What the command wrote to stderr (the capture drops it). */
function stderrText(): string {
  return vi
    .mocked(process.stderr.write)
    .mock.calls.map((call) => String(call[0]))
    .join('');
}

/** The shipped webshop model with every weight zero, its checksums made to match (loads without a word). */
function zeroedModel(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dreamgym-zeroed-'));
  const shipped = join('public', 'models', 'webshop-lite-v0');
  copyFileSync(join(shipped, 'model.json'), join(dir, 'model.json'));
  const zeros = new Uint8Array(readFileSync(join(shipped, 'weights.bin')).length);
  writeFileSync(join(dir, 'weights.bin'), zeros);
  const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as ModelManifest;
  manifest.weightsFile = { bytes: zeros.length, crc32: crc32(zeros) };
  writeFileSync(join(dir, 'model.json'), sealManifest(manifest));
  return dir;
}

describe('dream of a degenerate model', () => {
  it('warns that every episode ended at its first step, on stderr and in the summary', async () => {
    const llm = `learned:${zeroedModel()}`;
    const args = ['dream', '--env', 'webshop-lite-v0', '--llm', llm, '--episodes', '3', '--policy', 'random'];
    expect(await main([...args, '--json'])).toBe(0);
    const summary = lastJson();
    expect(summary).toMatchObject({ mean_length: 1 });
    const warning = /Every dreamed episode so far ended at its first step: the experience model ends episodes at once/;
    expect(stderrText()).toMatch(new RegExp(`warning: ${warning.source}`));
    expect(summary.warnings).toEqual([expect.stringMatching(warning)]);
  }, 120_000);
});
