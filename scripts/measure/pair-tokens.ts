// Measures the learned model's training pairs of an imported domain, in tokens — figures: docs/results/imported-domains.md.
/**
 * The tokens a training pair of the experience model holds (context and answer), for a domain
 * imported with `dreamgym domain import`, at the retrieved examples asked for: the size that decides
 * an epoch's time. Prints the pairs, the mean context and answer tokens, and their sum.
 *
 *   node --import tsx scripts/measure/pair-tokens.ts DIR NAME [--k K] [--history H]
 */
import { learnedTrainOptions, prepareData } from '../../src/core/experience/learned/train-model';
import { openDomainFolder } from '../../src/node/domain-folder';

function argValue(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);

async function main(): Promise<void> {
  const [dir, name] = process.argv.slice(2);
  if (!dir || !name) throw new Error('usage: pair-tokens.ts DIR NAME [--k K] [--history H]');
  const k = argValue('--k', 4);
  const historyLength = argValue('--history', 4);
  const { domain, buffer } = await openDomainFolder(dir, name);
  try {
    const options = learnedTrainOptions({ format: { k, historyLength } });
    const data = await prepareData(buffer, domain.envId, domain.card, options);
    const context = mean(data.train.map((p) => p.context.ids.length));
    const answer = mean(data.train.map((p) => p.answer.ids.length));
    const lists = domain.card.inferredAdmissible ? 'inferred, not modelled' : 'modelled';
    console.log(
      `${name}: ${data.train.length} training pairs at k = ${k}, H = ${historyLength} (lists ${lists}): ` +
        `context ${context.toFixed(1)} + answer ${answer.toFixed(1)} = ${(context + answer).toFixed(1)} tokens a pair`,
    );
  } finally {
    await buffer.store.close();
  }
}

await main();
