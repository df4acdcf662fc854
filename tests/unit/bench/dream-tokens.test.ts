import { describe, expect, it } from 'vitest';
import { loadSeedDataset } from '../../../src/core/data/seed-datasets';
import { benchDreamTokens } from '../../../src/bench/dream-tokens';
import { bufferFromTrajectories } from '../../../src/core/experience/seed-buffer';
import { readPublicFile } from '../../../src/node/edge';
import { HOUSEHOLD, WEBSHOP } from '../experience/fixtures';

describe('benchDreamTokens (tokens ≈ chars / 4)', () => {
  it.each([WEBSHOP, HOUSEHOLD])(
    'a dreamed transition of %s at k = 4, H = 4 stays within the 700-token goal on average',
    async (env) => {
      const buffer = await bufferFromTrajectories(await loadSeedDataset(env, readPublicFile));
      const bench = await benchDreamTokens({ envId: env, buffer });
      console.log(
        `dream tokens ${env}: prompt ${JSON.stringify(bench.prompt)} completion ${JSON.stringify(bench.completion)} total ${JSON.stringify(bench.total)} over ${bench.transitions} transitions`,
      );
      expect(bench).toMatchObject({ env, k: 4, historyLength: 4, reasoning: true, examplesShown: 4 });
      expect(bench.transitions).toBeGreaterThan(40);
      expect(bench.total.mean).toBeLessThanOrEqual(700);
      expect(bench.completion.max).toBeLessThan(300);
      // The ablations are cheaper.
      const bare = await benchDreamTokens({
        envId: env,
        buffer,
        k: 0,
        historyLength: 0,
        reasoning: false,
        episodes: 4,
      });
      expect(bare.total.mean).toBeLessThan(bench.total.mean * 0.75);
      expect(bare.examplesShown).toBe(0);
    },
  );
});
