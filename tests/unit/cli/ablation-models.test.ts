import { describe, expect, it } from 'vitest';
import { baseModelDir, RETRAINED_ABLATIONS, retrainOptions } from '../../../src/cli/experiments/ablation-models';
import { learnedTrainOptions } from '../../../src/core/experience/learned/train-model';
import { readModelFolder } from '../../../src/node/model-folder';

describe('retrained ablation models', () => {
  it("remake the shipped webshop model's recipe (npm run models) with only k or H changed", async () => {
    const dir = baseModelDir('public/models', 'webshop-lite-v0');
    expect(dir).toBe('public/models/webshop-lite-v0');
    const { manifest } = await readModelFolder(dir);
    // scripts/make-models.ts: learnedTrainOptions({ name, format: { k: 0 }, fit: { epochs: 10, seed: 0 } }).
    const shipped = learnedTrainOptions({ name: 'webshop-lite-v0', format: { k: 0 }, fit: { epochs: 10, seed: 0 } });
    for (const [row, change] of Object.entries(RETRAINED_ABLATIONS)) {
      const options = retrainOptions(manifest, change, row);
      expect(options.name).toBe(`webshop-lite-v0 ${row}`);
      expect({ ...options, name: shipped.name }).toEqual({ ...shipped, format: { ...shipped.format, ...change } });
    }
    expect(retrainOptions(manifest, { k: 0 }, 'x').format.k).toBe(0);
    expect(retrainOptions(manifest, { historyLength: 0 }, 'x').format.historyLength).toBe(0);
  });
});
