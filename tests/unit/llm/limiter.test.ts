/**
 * How many calls an engine serves at once (src/core/llm/limiter.ts): at most `limit` run, the rest
 * wait first come first served, a waiting call can be cancelled, and the OpenAI-compatible engine
 * keeps at most `concurrency` requests in flight at the server — with the same answers at any limit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConcurrencyLimiter } from '../../../src/core/llm/limiter';
import { OpenAiChatModel } from '../../../src/core/llm/openai';
import { LlmError } from '../../../src/core/llm/types';
import { chatCompletion, OpenAiTestServer } from './openai-test-server';

/** A task that resolves when the test says so, recording when it started. */
function gate(log: string[], name: string): { task: () => Promise<string>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    task: async () => {
      log.push(name);
      await opened;
      return name;
    },
    open,
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('ConcurrencyLimiter', () => {
  it('runs at most `limit` tasks at once, the rest in arrival order', async () => {
    const limiter = new ConcurrencyLimiter(2);
    const started: string[] = [];
    const gates = ['a', 'b', 'c', 'd'].map((n) => gate(started, n));
    const results = gates.map((g) => limiter.run(g.task));
    await tick();
    expect(started).toEqual(['a', 'b']);
    expect(limiter.running).toBe(2);
    expect(limiter.waiting).toBe(2);
    gates[1].open();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    // A call arriving as a slot is handed over does not squeeze in beside the waiter.
    const late = gate(started, 'e');
    const lateResult = limiter.run(late.task);
    gates[0].open();
    await tick();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(limiter.running).toBe(2);
    gates[2].open();
    gates[3].open();
    late.open();
    expect(await Promise.all([...results, lateResult])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(limiter.peak).toBe(2);
    expect(limiter.running).toBe(0);
  });

  it('drops a waiting task whose signal fires, and frees the slot of a task that throws', async () => {
    const limiter = new ConcurrencyLimiter(1);
    const started: string[] = [];
    const first = gate(started, 'first');
    const running = limiter.run(first.task);
    const controller = new AbortController();
    const waiting = limiter.run(
      () => Promise.resolve('never'),
      controller.signal,
      () => new Error('cancelled while waiting'),
    );
    controller.abort();
    await expect(waiting).rejects.toThrow('cancelled while waiting');
    expect(limiter.waiting).toBe(0);
    first.open();
    await running;
    await expect(limiter.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limiter.run(async () => 'after')).toBe('after');
    expect(() => new ConcurrencyLimiter(0)).toThrow(/integer ≥ 1/);
  });
});

describe('OpenAiChatModel concurrency', () => {
  let server: OpenAiTestServer;
  beforeEach(async () => {
    server = await OpenAiTestServer.start();
  });
  afterEach(async () => {
    await server.close();
  });

  /** 12 concurrent requests, each answered after 30 ms with a text naming the request. */
  async function burst(concurrency: number): Promise<string[]> {
    for (let i = 0; i < 12; i++)
      server.replyChat((r) => ({ delayMs: 30, body: chatCompletion(`answer to ${r.body.messages[0].content}`) }));
    const model = new OpenAiChatModel({ baseUrl: server.url, model: 'test-model', concurrency });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        model.complete({ messages: [{ role: 'user', content: `q${i}` }], maxTokens: 8 }),
      ),
    );
    expect(model.concurrency).toEqual({ limit: concurrency, peak: concurrency });
    return answers.map((a) => a.text);
  }

  it('keeps at most `concurrency` requests in flight at the server, with the same answers at any limit', async () => {
    const one = await burst(1);
    expect(server.peakInFlight).toBe(1);
    server.peakInFlight = 0;
    const four = await burst(4);
    expect(server.peakInFlight).toBe(4);
    expect(four).toEqual(one);
    expect(one[5]).toBe('answer to q5');
  });

  it('a request cancelled while it waits for a slot is never sent', async () => {
    server.replyChat({ delayMs: 50, body: chatCompletion('slow') });
    const model = new OpenAiChatModel({ baseUrl: server.url, model: 'test-model', concurrency: 1 });
    const slow = model.complete({ messages: [{ role: 'user', content: 'slow' }], maxTokens: 8 });
    const controller = new AbortController();
    const queued = model.complete({ messages: [{ role: 'user', content: 'queued' }], maxTokens: 8 }, controller.signal);
    controller.abort();
    const error = await queued.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).code).toBe('aborted');
    expect((await slow).text).toBe('slow');
    expect(server.chatRequests).toHaveLength(1);
  });
});
