// Measures the halt's novelty thresholds at several success quantiles — figures: docs/results/table2-pessimism.md.
/**
 * The halt's calibrated novelty thresholds (src/core/experience/novelty.ts) of each built-in env's shipped
 * offline episodes, at several success quantiles: where two quantiles give the same thresholds, a dream
 * with either is the same dream (docs/results/table2-pessimism.md).
 *   node --import tsx scripts/measure/halt-thresholds.ts [SUCCESS_QUANTILE…=0.8 0.9 0.95] [--quantile 0.99]
 */
import { readFileSync } from 'node:fs';
import { parseTrajectoriesJsonl } from '../../src/core/data/trajectory';
import { NoveltyIndex, trajectoryNoveltySteps } from '../../src/core/experience/novelty';

const args = process.argv.slice(2);
const at = args.indexOf('--quantile');
const quantile = at >= 0 ? Number(args.splice(at, 2)[1]) : 0.99;
const successQuantiles = args.length ? args.map(Number) : [0.8, 0.9, 0.95];
for (const env of ['webshop-lite-v0', 'household-v0']) {
  const real = parseTrajectoriesJsonl(readFileSync(`public/datasets/${env}.jsonl`, 'utf8'))
    .filter((t) => t.env === env)
    .map(trajectoryNoveltySteps);
  for (const successQuantile of successQuantiles) {
    const { thresholds, heldOutHaltRate } = NoveltyIndex.fromEpisodes(real, { quantile, successQuantile }).calibration;
    const halted = (100 * heldOutHaltRate).toFixed(2);
    console.log(
      `${env} quantile ${quantile}, success ${successQuantile}: ${JSON.stringify(thresholds)}; held-out real steps halted ${halted} %`,
    );
  }
}
