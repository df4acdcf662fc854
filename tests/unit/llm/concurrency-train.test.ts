/**
 * Concurrency where the engine has it (issue 14): a dream training against a loopback
 * OpenAI-compatible server that answers each request after a fixed delay, concurrently. With
 * llmConcurrency=8 the server sees several requests at once (never more than 8), with 1 never
 * more than one — and the two runs write byte-identical metrics. (How much faster 8 is, is a
 * measurement, not an assertion here: `node --import tsx scripts/measure/llm-concurrency.ts`.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiTestServer } from './openai-test-server';
import { shopAfter } from './shop-server';
import { captureCliOutput } from '../support/cli-output';
import { cli } from '../cli/run-cli';

const { lastJson } = captureCliOutput();
const dir = mkdtempSync(join(tmpdir(), 'dreamgym-concurrency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function train(
  concurrency: number,
): Promise<{ metrics: string; peak: number; calls: number; dreamSteps: number }> {
  return OpenAiTestServer.serving(async (server) => {
    shopAfter(server, 15, { promptTokens: 500, completionTokens: 120 });
    const out = join(dir, `n${concurrency}`);
    const settings = 'iterations=2,tasksPerIteration=2,groupSize=4,evalInterval=0,finalEvalEpisodes=4';
    expect(
      await cli`train --preset webshop-easy --mode dream --llm openai:${server.url}#test-model --out ${out}
        --set ${settings},llmConcurrency=${concurrency} --json`,
    ).toBe(0);
    return {
      metrics: readFileSync(join(out, 'metrics.jsonl'), 'utf8'),
      peak: server.peakInFlight,
      calls: server.chatRequests.length,
      dreamSteps: lastJson().dream_steps,
    };
  });
}

describe('llmConcurrency with an OpenAI-compatible server', () => {
  it('keeps up to N requests in flight, fed by the rollout step, and the run is the same at any N', async () => {
    const one = await train(1);
    const eight = await train(8);
    expect(one.peak).toBe(1);
    expect(eight.peak).toBeGreaterThan(1);
    expect(eight.peak).toBeLessThanOrEqual(8);
    expect(eight.calls).toBe(one.calls);
    expect(eight.dreamSteps).toBe(one.dreamSteps);
    expect(one.metrics.length).toBeGreaterThan(0);
    expect(eight.metrics).toBe(one.metrics);
  }, 120_000);
});
