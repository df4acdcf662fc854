/**
 * A failed engine call costs one transition, not the run (issue 13): against a loopback
 * OpenAI-compatible server that fails one request in five (a 500, or an answer slower than the
 * timeout), `audit --n 200` and a small dream training finish with the failures counted as
 * invalid transitions; a server that is down stops a run after its first step, with a message
 * and a checkpoint to resume from. Response bodies are capped; the model's text never reaches
 * the terminal raw.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineFailureError, EngineFailureGuard } from '../../../src/core/experience/engine-failures';
import { ReasoningExperienceModel } from '../../../src/core/experience/reasoning-model';
import { OpenAiChatModel } from '../../../src/core/llm/openai';
import { LlmError } from '../../../src/core/llm/types';
import { chatCompletion, OpenAiTestServer } from './openai-test-server';
import { shopReply, shopText } from './shop-server';
import { answer, contextAt, rollouts } from '../experience/fixtures';
import { captureCliOutput } from '../support/cli-output';
import { argv, cli } from '../cli/run-cli';

const { out, err, lastJson } = captureCliOutput();

/** Every fifth chat request fails: alternately a 500 and an answer far slower than the client's timeout. */
function failingOneInFive(server: OpenAiTestServer): { failed: () => number } {
  let n = 0;
  let failed = 0;
  server.answerEveryChat((request) => {
    n++;
    if (n % 5 !== 0) return shopReply(request);
    failed++;
    return n % 10 === 0
      ? { delayMs: 3_000, ...shopReply(request) }
      : { status: 500, body: { error: { message: 'overloaded' } } };
  });
  return { failed: () => failed };
}

describe('EngineFailureGuard', () => {
  it('lets single failures through, and stops on a whole failed step or too many in a row', () => {
    const guard = new EngineFailureGuard(3);
    guard.recordStep(['timeout']); // a lone last episode failing once: one failed call
    guard.recordStep([undefined, 'timeout']);
    expect(guard.failuresInARow).toBe(1);
    expect(() => guard.recordStep(['500', '500'])).toThrow(EngineFailureError); // 3 in a row
    expect(() => new EngineFailureGuard(10).recordStep(['refused', 'refused'])).toThrow(
      /every prediction of a dream step failed \(2 of 2\)/,
    );
    expect(() => new EngineFailureGuard(10).recordStep([undefined, 'x'])).not.toThrow();
    expect(() => new EngineFailureGuard(2).recordStep(['a', undefined, 'b', 'c'])).toThrow(
      /2 engine calls in a row failed; the last error: c/,
    );
  });
});

describe('OpenAiChatModel: response bodies are capped', () => {
  it('refuses a body over maxResponseBytes, declared or streamed, without retrying', async () => {
    await OpenAiTestServer.serving(async (server) => {
      const big = JSON.stringify(chatCompletion('x'.repeat(3 << 20)));
      server.replyChat(
        { body: big, headers: { 'content-length': String(Buffer.byteLength(big)) } },
        { body: big, trickle: { pieces: 64, intervalMs: 1 } },
      );
      const model = new OpenAiChatModel({ baseUrl: server.url, model: 'test-model', retries: 2, backoffMs: 1 });
      for (const how of [/declares \d+ bytes/, /sent more than 1048576 bytes/]) {
        const error = await model
          .complete({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 5 })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LlmError);
        expect(error).toMatchObject({ code: 'bad-response', transient: true });
        expect((error as Error).message).toMatch(how);
        expect((error as Error).message).toMatch(/over the cap of 1048576 bytes \(maxResponseBytes\)/);
      }
      expect(server.chatRequests).toHaveLength(2);
    });
  });
});

describe('ReasoningExperienceModel: a failed call is one invalid prediction', () => {
  it('records the reason, caches nothing, and answers the same step on the next call', async () => {
    await OpenAiTestServer.serving(async (server) => {
      server.replyChat({ status: 503, body: { error: { message: 'busy' } } }, { body: chatCompletion(answer()) });
      const chat = new OpenAiChatModel({ baseUrl: server.url, model: 'test-model', retries: 0 });
      const model = new ReasoningExperienceModel(chat, { k: 0 });
      const [episode] = await rollouts('household-v0', 1);
      const ctx = contextAt(episode, 0);
      const failed = await model.next(ctx);
      expect(failed).toMatchObject({ valid: false, engineError: expect.stringMatching(/answered 503/) });
      expect(failed.invalidReason).toMatch(/^the engine call failed: /);
      const answered = await model.next(ctx);
      expect(answered.valid).toBe(true);
      expect(model.cacheStats).toMatchObject({ hits: 0, misses: 2 });
    });
  });
});

describe('the CLI against a server that fails one request in five', () => {
  const transport = 'llmTimeoutMs=250,llmRetries=0';
  const smallDream = 'iterations=2,tasksPerIteration=2,groupSize=2,evalInterval=0,retrievalK=0';

  it('audit --n 200 finishes and counts the failed calls as invalid transitions', async () => {
    await OpenAiTestServer.serving(async (server) => {
      const failing = failingOneInFive(server);
      expect(
        await cli`audit --env webshop-lite-v0 --llm openai:${server.url}#test-model --n 200 --k 0
          --set ${transport} --json`,
      ).toBe(0);
      const report = lastJson();
      expect(report.n).toBe(200);
      expect(report.failed_calls).toBeGreaterThanOrEqual(failing.failed()); // a reply slowed past the timeout by a busy machine fails too
      expect(report.failed_calls).toBeGreaterThanOrEqual(35);
      expect(report.invalid_rate).toBeGreaterThanOrEqual(report.failed_calls / 200);
    });
  }, 60_000);

  it('a small dream training finishes, its failed calls invalid transitions never learned from', async () => {
    const server = await OpenAiTestServer.start();
    const run = mkdtempSync(join(tmpdir(), 'dreamgym-failing-run-'));
    try {
      failingOneInFive(server);
      expect(
        await cli`train --preset webshop-easy --mode dream --llm openai:${server.url}#test-model --out ${run}
          --set ${smallDream},finalEvalEpisodes=4,${transport} --json`,
      ).toBe(0);
      const summary = lastJson();
      expect(summary).toMatchObject({ mode: 'dream', iterations: 2, real_steps: 0 });
      expect(summary.invalid_rate).toBeGreaterThan(0);
      const metrics = readFileSync(join(run, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(metrics.every((m) => m['dream/invalid_rate'] > 0)).toBe(true);
    } finally {
      await server.close();
      rmSync(run, { recursive: true, force: true });
    }
  }, 60_000);

  it('a server that is down stops the run after one step, naming the checkpoint to resume from; once it is back, --resume finishes', async () => {
    const first = await OpenAiTestServer.start();
    const { url, port } = first;
    await first.close(); // nothing listens there now: every call is refused
    const run = mkdtempSync(join(tmpdir(), 'dreamgym-down-run-'));
    let back: OpenAiTestServer | null = null;
    try {
      expect(
        await cli`train --preset webshop-easy --mode dream --llm openai:${url}#test-model --out ${run}
          --set ${smallDream},finalEvalEpisodes=2,${transport}`,
      ).toBe(1);
      const message = err.join('\n');
      expect(message).toMatch(
        /engine is not answering: every prediction of a dream step failed \(4 of 4\); the last error: Connection refused/,
      );
      expect(message).toContain(`the checkpoint of iteration 0 is in ${join(run, 'checkpoint')}`);
      expect(message).toContain(`dreamgym train --resume --out ${run}`);
      back = await OpenAiTestServer.start(port);
      back.answerEveryChat((request) => shopReply(request));
      const resumed = await cli`train --resume --out ${run} --set llmRetries=1 --json`;
      expect(resumed, err.join('\n')).toBe(0);
      expect(lastJson()).toMatchObject({ iterations: 2, mode: 'dream' });
    } finally {
      await back?.close();
      rmSync(run, { recursive: true, force: true });
    }
  }, 60_000);

  it("dream prints the model's text with control characters escaped (no raw ESC reaches the terminal)", async () => {
    await OpenAiTestServer.serving(async (server) => {
      const hostile = '\u001b]0;pwned\u0007\u001b[2J\u009b31m';
      // Every answer's reasoning carries escape sequences that would retitle the window and clear the screen.
      server.answerEveryChat((request) => {
        const reply = JSON.parse(shopText(request));
        return { body: chatCompletion(JSON.stringify({ ...reply, reasoning: `ok ${hostile}` })) };
      });
      const dream = argv`dream --env webshop-lite-v0 --llm openai:${server.url}#test-model --policy random --episodes 1 --k 0`;
      expect(await cli`${dream}`).toBe(0);
      const printed = out.join('\n');
      expect(printed).toContain('reasoning: ok \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m');
      expect(printed).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      // --json escapes them too (JSON.stringify alone would leave the C1 control U+009B raw).
      expect(await cli`${dream} --json`).toBe(0);
      expect(out.at(-1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      expect(lastJson().trajectories[0].steps[0].reasoning).toBe(`ok ${hostile}`);
    });
  }, 60_000);
});
