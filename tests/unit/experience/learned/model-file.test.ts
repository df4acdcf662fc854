/** model.json checked whole: its own checksum, every field's range, and its agreement with the weights. */
import { describe, expect, it } from 'vitest';
import {
  decodeModelFiles,
  MODEL_FORMAT,
  ModelFileError,
  sealManifest,
  type ModelManifest,
} from '../../../../src/core/experience/learned/model-file';
import { weightShapes } from '../../../../src/core/experience/learned/weights';
import { tinyModelConfig, tinyModelFiles } from './tiny-model-files';

const config = tinyModelConfig();

/** The manifest changed by `edit`, and sealed again (as a buggy writer would leave it: a valid checksum). */
function resealed(files: { manifest: string }, edit: (m: Record<string, any>) => void): string {
  const manifest = JSON.parse(files.manifest);
  delete manifest.manifestCrc32;
  edit(manifest);
  return sealManifest(manifest as ModelManifest);
}

describe('model.json checked whole', () => {
  it('round-trips a sealed manifest', () => {
    const files = tinyModelFiles();
    const { manifest, weights } = decodeModelFiles(files.manifest, files.weights);
    expect(manifest.format).toBe(MODEL_FORMAT);
    expect(weights.map((w) => w.name)).toEqual(weightShapes(config).map(([name]) => name));
  });

  it('refuses a model.json changed after it was written (its own checksum)', () => {
    const files = tinyModelFiles();
    const edited = files.manifest.replace('"heads": 1', '"heads": 2');
    expect(edited).not.toBe(files.manifest);
    expect(() => decodeModelFiles(edited, files.weights)).toThrow(ModelFileError);
    expect(() => decodeModelFiles(edited, files.weights)).toThrow(/model\.json .* was changed after it was written/);
    const unsealed = JSON.stringify({ ...JSON.parse(files.manifest), manifestCrc32: undefined });
    expect(() => decodeModelFiles(unsealed, files.weights)).toThrow(/manifestCrc32/);
  });

  it('refuses an out-of-range or inconsistent field by name, with the fix', () => {
    const files = tinyModelFiles();
    const refusal = (edit: (m: Record<string, any>) => void) => {
      try {
        decodeModelFiles(resealed(files, edit), files.weights);
      } catch (error) {
        expect(error).toBeInstanceOf(ModelFileError);
        expect((error as Error).message).toMatch(/train the model again/);
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refusal(() => {})).toBe('accepted');
    expect(refusal((m) => (m.network.heads = 0))).toMatch(/network\.heads is 0/);
    expect(refusal((m) => (m.network.heads = 3))).toMatch(
      /network\.heads \(3\) does not divide network\.selfDim \(8\)/,
    );
    expect(refusal((m) => (m.network.dModel = 16.5))).toMatch(/network\.dModel is 16\.5/);
    expect(refusal((m) => (m.network.kernel = 4))).toMatch(/network\.kernel .* odd/);
    expect(refusal((m) => (m.network.vocabSize = 5))).toMatch(/network\.vocabSize \(5\) .* tokenizer .* pieces/);
    expect(refusal((m) => (m.network.depth = 2))).toMatch(/network\.depth is not a field/);
    expect(refusal((m) => (m.formatOptions.k = -3))).toMatch(/formatOptions\.k is -3/);
    expect(refusal((m) => (m.formatOptions.contextTokens = 400))).toMatch(
      /formatOptions\.contextTokens \(400\) .* network\.maxContext \(160\)/,
    );
    expect(refusal((m) => (m.formatOptions.answerStateTokens = 80))).toMatch(/network\.maxAnswer \(96\)/);
    expect(refusal((m) => (m.formatOptions.freshIds = { count: 4, prefix: 'b0', length: 0 }))).toMatch(
      /formatOptions\.freshIds\.length is 0/,
    );
    expect(refusal((m) => delete m.weights)).toMatch(/'weights' list is missing/);
    expect(refusal((m) => delete m.formatOptions)).toMatch(/formatOptions is missing/);
    expect(refusal((m) => (m.weights[3].shape = [config.segments + 1, config.dModel]))).toMatch(
      /weight 'seg' has shape \[8,16\]; network needs \[7,16\]/,
    );
    expect(
      refusal((m) => {
        const [a, b] = [m.weights[6], m.weights[7]]; // two tensors of one length, offsets swapped
        [a.offset, b.offset] = [b.offset, a.offset];
      }),
    ).toMatch(/weight 'enc0\/ln1_g' starts at \d+; it must start where the one before it ends \(\d+\)/);
    expect(refusal((m) => m.weights.pop())).toMatch(/no weight 'gate_cont_w'/);
  });

  it('refuses a model of the previous format, naming the command that re-makes it', () => {
    const files = tinyModelFiles();
    const older = resealed(files, (m) => (m.format = 'dreamgym-learned-model/2'));
    expect(() => decodeModelFiles(older, files.weights)).toThrow(
      /format 'dreamgym-learned-model\/2'.*'npm run models'/,
    );
  });
});
