/**
 * `dreamgym train` sized for the engine (issue 14): the cost estimate before a dream starts,
 * `--estimate` (one step tried with the engine, the cost at its measured speed, nothing trained),
 * and the live progress line while an iteration runs.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiTestServer } from '../llm/openai-test-server';
import { shopAfter } from '../llm/shop-server';
import { captureCliOutput } from '../support/cli-output';
import { cli } from './run-cli';

const dir = mkdtempSync(join(tmpdir(), 'dreamgym-sizing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const { out, err } = captureCliOutput({ keepStderr: true });
const usage = { promptTokens: 500, completionTokens: 120 };

describe('train, sized for the engine', () => {
  it("--estimate tries one step with the engine and prints the dream's cost at the measured speed, training nothing", async () => {
    await OpenAiTestServer.serving(async (server) => {
      shopAfter(server, 40, usage);
      const run = join(dir, 'estimate');
      expect(
        await cli`train --preset webshop-llm-demo --mode dream --llm openai:${server.url}#test-model --out ${run}
          --set llmConcurrency=8 --estimate --json`,
      ).toBe(0);
      const { estimate, try_step: tried } = JSON.parse(out.at(-1)!);
      expect(server.chatRequests).toHaveLength(1);
      expect(tried).toMatchObject({ valid: true, tokens: { prompt: 500, completion: 120 } });
      expect(tried.ms).toBeGreaterThanOrEqual(40);
      expect(estimate).toMatchObject({
        iterations: 30,
        episodes: 480,
        tokensPerTransition: 620,
        tokensMeasured: true,
        speed: { measured: true, parallel: 8 },
      });
      expect(estimate.transitions).toBeLessThanOrEqual(3000);
      expect(estimate.seconds).toBeCloseTo((estimate.calls * estimate.speed.secondsPerTransition) / 8);
      expect(err.join('')).toMatch(
        /try one step \(openai test-model .*\): 'search\[.*\]' on task '.*': predicted a valid action, reward 0; the real env: valid, reward 0; 500 prompt \+ 120 answer tokens, \d+ ms\./,
      );
      expect(existsSync(join(run, 'metrics.jsonl'))).toBe(false);
    });
  }, 60_000);

  it('prints the estimate before a dream starts, and a live progress line while an iteration runs', async () => {
    await OpenAiTestServer.serving(async (server) => {
      shopAfter(server, 250, usage);
      const run = join(dir, 'live');
      expect(
        await cli`train --preset webshop-easy --mode dream --llm openai:${server.url}#test-model --out ${run}
          --progress 1 --json --set
          iterations=1,tasksPerIteration=1,groupSize=2,evalInterval=0,finalEvalEpisodes=2,retrievalK=0,llmConcurrency=1`,
      ).toBe(0);
      const text = err.join('');
      expect(text).toMatch(
        /Estimate: ≈ \d+ dreamed transitions \(at most 30\) in 1 iterations.*assumed: a local server.*Every figure is an estimate; --estimate measures/,
      );
      const lines = text.split('\n').filter((l) => l.startsWith('iteration 1/1 dream steps'));
      expect(lines.length).toBeGreaterThan(0);
      expect(lines[0]).toMatch(
        /^iteration 1\/1 dream steps \d+\/(≤)?\d+ · valid \d+ invalid 0 · \d+(\.\d+)? tok\/s \d\.\d+ transitions\/s \(last \d+ s\) · (cache \d+% · )?left: iteration ≈ .+, run ≈ .+$/,
      );
    });
  }, 60_000);
});
