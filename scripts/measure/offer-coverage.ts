// Measures the real offered actions the halt's offer filter leaves out — figures: docs/results/honest-dream.md.
/**
 * How many of the actions real states offer would the halt's offer filter leave out (novelty.ts
 * offerable)? Two folds over each env's shipped offline episodes: index one half, check every
 * offered action of the other half's states, and print a few of those left out.
 *   node --import tsx scripts/measure/offer-coverage.ts
 */
import { readFileSync } from 'node:fs';
import { bufferFromTrajectories } from '../../src/core/experience/seed-buffer';
import { parseTrajectoriesJsonl } from '../../src/core/data/trajectory';
import { NoveltyIndex, recordedNoveltySteps } from '../../src/core/experience/novelty';
import { realEpisodes } from '../../src/core/experience/learned/sft-data';
for (const ENV of ['household-v0', 'webshop-lite-v0']) {
  const dataset = parseTrajectoriesJsonl(readFileSync(`public/datasets/${ENV}.jsonl`, 'utf8'), { knownEnvs: [ENV] });
  const buffer = await bufferFromTrajectories(dataset);
  const eps = (await realEpisodes(buffer, ENV)).episodes.map(recordedNoveltySteps);
  let offered = 0,
    dropped = 0;
  const examples: string[] = [];
  for (const fold of [0, 1]) {
    const train = eps.filter((_, i) => i % 2 !== fold),
      test = eps.filter((_, i) => i % 2 === fold);
    const index = NoveltyIndex.fromEpisodes(train, {});
    for (const steps of test)
      for (const s of steps) {
        const list = s.offered ?? [];
        offered += list.length;
        const kept = new Set(index.offerable(s, list));
        for (const a of list)
          if (!kept.has(a)) {
            dropped++;
            if (examples.length < 8) examples.push(`${a}  @ ${s.state.slice(0, 60)}`);
          }
      }
  }
  console.log(ENV, 'held-out real offers dropped', dropped, '/', offered, ((100 * dropped) / offered).toFixed(2) + '%');
  console.log(examples.join('\n'));
}
