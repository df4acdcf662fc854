// Measures a dream training's wall time at LLM concurrency 1 and 8 — figures: docs/results/real-llm-dream.md.
/**
 * The concurrency measurement of issue 14: a dream training of about 300 transitions against a
 * loopback OpenAI-compatible server that answers each request after a fixed 200 ms and serves
 * requests concurrently (tests/unit/llm/openai-test-server.ts; the answers are the scripted shop's,
 * a function of the prompt alone), once with llmConcurrency=1 and once with 8. Prints both wall
 * times, the speed-up, the server's peak requests in flight, and whether metrics.jsonl is byte
 * for byte the same.
 *
 *   node --import tsx scripts/measure/llm-concurrency.ts [--delay 200] [--iterations 3]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { OpenAiTestServer } from '../../tests/unit/llm/openai-test-server';
import { shopAfter } from '../../tests/unit/llm/shop-server';
import { cli } from '../../tests/unit/cli/run-cli';

const { values } = parseArgs({
  options: { delay: { type: 'string', default: '200' }, iterations: { type: 'string', default: '3' } },
});
const delayMs = Number(values.delay);
const iterations = Number(values.iterations);
const dir = mkdtempSync(join(tmpdir(), 'dreamgym-llm-concurrency-'));

async function run(concurrency: number) {
  const server = await OpenAiTestServer.start();
  shopAfter(server, delayMs, { promptTokens: 544, completionTokens: 138 });
  const out = join(dir, `n${concurrency}`);
  const settings = `iterations=${iterations},tasksPerIteration=2,groupSize=4,evalInterval=0,finalEvalEpisodes=20`;
  const started = performance.now();
  const code = await cli`train --preset webshop-easy --mode dream --llm openai:${server.url}#test-model --out ${out}
    --progress 0 --set ${settings},llmConcurrency=${concurrency} --json`;
  const seconds = (performance.now() - started) / 1000;
  await server.close();
  if (code !== 0) throw new Error(`train exited ${code}`);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  return {
    concurrency,
    seconds,
    calls: server.chatRequests.length,
    peak: server.peakInFlight,
    dreamSteps: summary.dream_steps as number,
    metrics: readFileSync(join(out, 'metrics.jsonl'), 'utf8'),
  };
}

try {
  const one = await run(1);
  const eight = await run(8);
  console.log(`\n| llmConcurrency | dreamed transitions | requests | peak in flight | wall time (s) |`);
  console.log('| ---: | ---: | ---: | ---: | ---: |');
  for (const r of [one, eight])
    console.log(`| ${r.concurrency} | ${r.dreamSteps} | ${r.calls} | ${r.peak} | ${r.seconds.toFixed(1)} |`);
  console.log(
    `speed-up ${(one.seconds / eight.seconds).toFixed(2)}× at ${delayMs} ms per answer; metrics.jsonl byte-identical: ${one.metrics === eight.metrics}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
