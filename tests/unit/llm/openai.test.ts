import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  OpenAiChatModel,
  backoffDelayMs,
  parseRetryAfterMs,
  type OpenAiChatModelOptions,
  type RetryInfo,
} from '../../../src/core/llm/openai';
import { mapFinishReason, parseLogprobs } from '../../../src/core/llm/chat-completion';
import { LlmError, type ChatRequest } from '../../../src/core/llm/types';
import { chatCompletion, errorBody, OpenAiTestServer } from './openai-test-server';

let server: OpenAiTestServer;
beforeEach(async () => {
  server = await OpenAiTestServer.start();
});
afterEach(async () => {
  await server.close();
});

const request: ChatRequest = {
  messages: [
    { role: 'system', content: 'You dream.' },
    { role: 'user', content: 'Next?' },
  ],
  maxTokens: 32,
};

function model(options: Partial<OpenAiChatModelOptions> = {}): OpenAiChatModel {
  return new OpenAiChatModel({
    baseUrl: server.url,
    model: 'test-model',
    backoffMs: 1,
    maxBackoffMs: 4,
    timeoutMs: 5_000,
    ...options,
  });
}

/** A clock that reads `times` in turn, one per call (and refuses a read beyond them). */
function clock(...times: number[]): () => number {
  return () => {
    const t = times.shift();
    if (t === undefined) throw new Error('the clock was read more often than the test expects');
    return t;
  };
}

/** Runs `promise`, expecting an LlmError; returns it. */
async function llmError(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlmError);
    return error as LlmError;
  }
  throw new Error('expected an LlmError');
}

describe('OpenAiChatModel.complete', () => {
  it('sends the messages and options and maps text, usage and finish_reason', async () => {
    server.replyChat({
      body: chatCompletion('{"ok":true}', { finishReason: 'length', promptTokens: 21, completionTokens: 7 }),
    });
    const m = model({ apiKey: 'sk-secret', headers: { 'x-extra': 'yes' }, now: clock(1000, 1250) });
    const result = await m.complete({ ...request, temperature: 0, seed: 42, stop: ['\n\n'] });
    expect(result.text).toBe('{"ok":true}');
    expect(result.finishReason).toBe('length');
    expect(result.usage.promptTokens).toBe(21);
    expect(result.usage.completionTokens).toBe(7);
    expect(result.usage.ms).toBe(250); // the call's clock: from its start to its answer
    expect(result.logprobs).toBeUndefined();
    expect(m.engine).toBe('openai');
    expect(m.id).toBe('test-model');

    const [sent] = server.chatRequests;
    expect(sent.method).toBe('POST');
    expect(sent.body).toEqual({
      model: 'test-model',
      messages: request.messages,
      max_tokens: 32,
      stream: false,
      temperature: 0,
      seed: 42,
      stop: ['\n\n'],
    });
    expect(sent.headers.authorization).toBe('Bearer sk-secret');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers['x-extra']).toBe('yes');
  });

  it('omits unset options and maps finish reasons', async () => {
    await model().complete(request);
    const body = server.chatRequests[0].body;
    for (const key of ['temperature', 'seed', 'stop', 'response_format', 'logprobs', 'top_logprobs', 'grammar'])
      expect(body).not.toHaveProperty(key);
    expect(server.chatRequests[0].headers.authorization).toBeUndefined();
    expect(mapFinishReason('stop')).toBe('stop');
    expect(mapFinishReason('length')).toBe('length');
    expect(mapFinishReason(null)).toBe('stop');
    expect(mapFinishReason('content_filter')).toBe('error');
    expect(mapFinishReason('abort')).toBe('abort');
  });

  it('keeps the API key out of JSON', () => {
    const m = model({ apiKey: 'sk-secret' });
    expect(JSON.stringify(m)).not.toContain('sk-secret');
    expect(Object.values(m).join(' ')).not.toContain('sk-secret');
    expect(m.hasApiKey).toBe(true);
  });

  it('sends jsonSchema in the OpenAI json_schema shape', async () => {
    const schema = { type: 'object', properties: { reward: { type: 'number' } }, required: ['reward'] };
    await model().complete({ ...request, jsonSchema: schema });
    expect(server.chatRequests[0].body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', strict: true, schema },
    });
  });

  it('falls back once to json_object when the server rejects response_format, and remembers it', async () => {
    const schema = { type: 'object' };
    server.replyChat({ status: 400, body: errorBody("invalid response_format: 'json_schema' is not supported") });
    const m = model();
    const result = await m.complete({ ...request, jsonSchema: schema });
    expect(result.text).toBe('ok');
    expect(m.structuredOutputMode).toBe('json_object');
    await m.complete({ ...request, jsonSchema: schema });
    const formats = server.chatRequests.map((r) => r.body.response_format.type);
    expect(formats).toEqual(['json_schema', 'json_object', 'json_object']);
    expect(server.chatRequests[1].body.response_format.schema).toEqual(schema);
  });

  it('says so when the server rejects both structured-output shapes', async () => {
    server.replyChat(
      { status: 400, body: errorBody('response_format json_schema unknown') },
      { status: 400, body: errorBody('response_format not supported') },
    );
    const error = await llmError(model().complete({ ...request, jsonSchema: { type: 'object' } }));
    expect(error.code).toBe('unsupported');
    expect(error.message).toMatch(/grammar/);
  });

  it('passes grammar only when asked, and refuses grammar with jsonSchema', async () => {
    await model().complete({ ...request, grammar: 'root ::= "yes" | "no"' });
    expect(server.chatRequests[0].body.grammar).toBe('root ::= "yes" | "no"');
    expect(server.chatRequests[0].body).not.toHaveProperty('response_format');
    const error = await llmError(model().complete({ ...request, grammar: 'root ::= "a"', jsonSchema: {} }));
    expect(error.code).toBe('unsupported');
    expect(server.chatRequests).toHaveLength(1);
  });

  it('asks for logprobs and parses choices[0].logprobs.content', async () => {
    server.replyChat({
      body: chatCompletion('yes', {
        logprobs: {
          content: [
            {
              token: 'yes',
              logprob: -0.1,
              bytes: [121, 101, 115],
              top_logprobs: [
                { token: 'yes', logprob: -0.1 },
                { token: 'no', logprob: -2.4 },
              ],
            },
            { token: '!', logprob: -1.5, top_logprobs: [] },
          ],
        },
      }),
    });
    const result = await model().complete({ ...request, topLogprobs: 2 });
    expect(server.chatRequests[0].body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    expect(result.logprobs).toEqual([
      {
        token: 'yes',
        logprob: -0.1,
        top: [
          { token: 'yes', logprob: -0.1 },
          { token: 'no', logprob: -2.4 },
        ],
      },
      { token: '!', logprob: -1.5, top: [] },
    ]);
  });

  it('gives undefined, not an error, when logprobs are asked for but absent or odd', async () => {
    server.replyChat({ body: chatCompletion('yes') }, { body: chatCompletion('yes', { logprobs: null }) });
    expect((await model().complete({ ...request, topLogprobs: 1 })).logprobs).toBeUndefined();
    expect((await model().complete({ ...request, topLogprobs: 0 })).logprobs).toBeUndefined();
    expect(server.chatRequests[1].body.top_logprobs).toBe(1); // never 0: servers then leave content empty
    expect(parseLogprobs({ content: 'nope' })).toBeUndefined();
    expect(parseLogprobs({ content: [] })).toBeUndefined();
    expect(parseLogprobs({ tokens: ['a'], token_logprobs: [-0.5], top_logprobs: [{ a: -0.5, b: -1 }] })).toEqual([
      {
        token: 'a',
        logprob: -0.5,
        top: [
          { token: 'a', logprob: -0.5 },
          { token: 'b', logprob: -1 },
        ],
      },
    ]);
  });
});

describe('retries and errors', () => {
  it('retries 500s with exponential backoff, then succeeds', async () => {
    server.replyChat(
      { status: 500, body: errorBody('boom') },
      { status: 503, body: 'overloaded' },
      { body: chatCompletion('fine') },
    );
    const retries: RetryInfo[] = [];
    const m = model({ backoffMs: 5, maxBackoffMs: 100, onRetry: (r) => retries.push(r), now: clock(3000, 3600) });
    const result = await m.complete(request);
    expect(result.text).toBe('fine');
    expect(result.usage.ms).toBe(600); // the whole call, its retries included
    expect(server.chatRequests).toHaveLength(3);
    expect(retries).toEqual([
      { retry: 1, delayMs: 5, reason: 'HTTP 500' },
      { retry: 2, delayMs: 10, reason: 'HTTP 503' },
    ]);
    expect([0, 1, 2, 3, 4, 5].map((i) => backoffDelayMs(i, 500, 8000))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
  });

  it('gives up after the retries with an error naming the status and the fix', async () => {
    server.replyChat(...[1, 2, 3].map(() => ({ status: 500, body: errorBody('CUDA out of memory', 'server_error') })));
    const error = await llmError(model({ retries: 2 }).complete(request));
    expect(error.code).toBe('http');
    expect(error.message).toMatch(/500.*3 attempt/);
    expect(error.message).toContain('CUDA out of memory');
    expect(error.message).toMatch(/retries/);
    expect(server.chatRequests).toHaveLength(3);
  });

  it('honours Retry-After on 429, capped by maxRetryAfterMs', async () => {
    server.replyChat(
      { status: 429, headers: { 'retry-after': '1' }, body: errorBody('slow down') },
      { body: chatCompletion('ok') },
    );
    const retries: RetryInfo[] = [];
    const started = Date.now();
    await model({ backoffMs: 1, onRetry: (r) => retries.push(r) }).complete(request);
    expect(retries).toEqual([{ retry: 1, delayMs: 1000, reason: 'HTTP 429 (Retry-After)' }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);

    server.replyChat({ status: 429, headers: { 'retry-after': '3600' } }, { body: chatCompletion('ok') });
    const capped: RetryInfo[] = [];
    await model({ maxRetryAfterMs: 20, onRetry: (r) => capped.push(r) }).complete(request);
    expect(capped[0].delayMs).toBe(20);

    expect(parseRetryAfterMs('2')).toBe(2000);
    expect(parseRetryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfterMs('soon')).toBeUndefined();
    expect(parseRetryAfterMs(null)).toBeUndefined();
  });

  it('does not retry a 400 and passes on the server message', async () => {
    server.replyChat({ status: 400, body: errorBody("This model's maximum context length is 2048 tokens") });
    const error = await llmError(model().complete(request));
    expect(error.code).toBe('http');
    expect(error.message).toContain('maximum context length is 2048');
    expect(error.message).toMatch(/not retried/);
    expect(server.chatRequests).toHaveLength(1);
  });

  it('explains a missing model (Ollama 404) with ollama pull and the /models list', async () => {
    server.replyChat({
      status: 404,
      body: errorBody('model "qwen2.5:1.5b" not found, try pulling it first', 'api_error'),
    });
    const error = await llmError(model({ model: 'qwen2.5:1.5b' }).complete(request));
    expect(error.code).toBe('model-not-found');
    expect(error.message).toContain('ollama pull qwen2.5:1.5b');
    expect(error.message).toContain('/models');
    expect(server.chatRequests).toHaveLength(1);
  });

  it('explains a 404 without a model as a wrong base URL', async () => {
    const m = new OpenAiChatModel({ baseUrl: server.url.replace(/\/v1$/, ''), model: 'test-model', retries: 0 });
    const error = await llmError(m.complete(request));
    expect(error.code).toBe('http');
    expect(error.message).toMatch(/\/v1/);
  });

  it('names the API key on 401', async () => {
    server.replyChat({ status: 401, body: errorBody('Incorrect API key provided') });
    const error = await llmError(model().complete(request));
    expect(error.code).toBe('http');
    expect(error.message).toMatch(/API key/);
    expect(error.message).toMatch(/OPENAI_API_KEY|DREAMGYM_API_KEY/);
    expect(server.chatRequests).toHaveLength(1);
  });

  it('times out a slowly trickled body, naming timeoutMs, without retrying', async () => {
    // Headers arrive at once; the body takes ~2 s: the timeout must cover the body too.
    server.replyChat({ body: chatCompletion('slow'), trickle: { pieces: 20, intervalMs: 100 } });
    const error = await llmError(model({ timeoutMs: 250 }).complete(request));
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('timeoutMs');
    expect(error.message).toContain('250 ms');
    expect(server.repliesFinished).toBe(0); // timed out while the body was still coming, not after it
    expect(server.chatRequests).toHaveLength(1);
  });

  it('reads a trickled body that finishes in time', async () => {
    server.replyChat({ body: chatCompletion('slow but fine'), trickle: { pieces: 5, intervalMs: 20 } });
    expect((await model({ timeoutMs: 2_000 }).complete(request)).text).toBe('slow but fine');
  });

  it('aborts mid-request with code aborted and no retry', async () => {
    server.replyChat({ delayMs: 3_000, body: chatCompletion('late') });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await llmError(model().complete(request, controller.signal));
    expect(error.code).toBe('aborted');
    expect(server.repliesFinished).toBe(0); // rejected before the server's 3 s reply, not after it
    expect(server.chatRequests).toHaveLength(1);
  });

  it('aborts during a trickled body, during a backoff wait, and before starting', async () => {
    server.replyChat({ body: chatCompletion('slow'), trickle: { pieces: 20, intervalMs: 100 } });
    const mid = new AbortController();
    setTimeout(() => mid.abort(), 150);
    expect((await llmError(model().complete(request, mid.signal))).code).toBe('aborted');

    server.replyChat({ status: 503 });
    const backoff = new AbortController();
    const waiting = model({ backoffMs: 5_000, maxBackoffMs: 5_000, onRetry: () => backoff.abort() }).complete(
      request,
      backoff.signal,
    );
    expect((await llmError(waiting)).code).toBe('aborted');

    const before = AbortSignal.abort();
    const count = server.requests.length;
    expect((await llmError(model().complete(request, before))).code).toBe('aborted');
    expect(server.requests.length).toBe(count);
  });

  it('reports connection refused with the URL and how to start a server', async () => {
    const closed = await OpenAiTestServer.start();
    const url = closed.url;
    await closed.close();
    const retries: RetryInfo[] = [];
    const error = await llmError(
      new OpenAiChatModel({ baseUrl: url, model: 'm', backoffMs: 1, onRetry: (r) => retries.push(r) }).complete(
        request,
      ),
    );
    expect(error.code).toBe('connection-refused');
    expect(error.message).toContain(url);
    expect(error.message).toContain('ollama serve');
    expect(error.message).toContain('vllm serve');
    expect(error.message).toContain('llama-server');
    expect(retries).toHaveLength(2); // network errors are retried
  });

  it('retries a hang-up, then succeeds', async () => {
    server.replyChat({ hangUp: true }, { body: chatCompletion('after hang-up') });
    expect((await model().complete(request)).text).toBe('after hang-up');
  });

  it('explains CORS for a failed cross-origin fetch in a browser', async () => {
    const failing: typeof fetch = async () => {
      throw new TypeError('Failed to fetch');
    };
    const m = new OpenAiChatModel({
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'm',
      fetch: failing,
      pageOrigin: 'http://localhost:5173',
    });
    const error = await llmError(m.complete(request));
    expect(error.code).toBe('cors');
    expect(error.message).toContain('OLLAMA_ORIGINS=http://localhost:5173');
    expect(error.message).toContain('--allowed-origins');
    expect(error.message).toContain('--cors-origins');
    expect(error.message).toContain('ollama serve');

    const https = new OpenAiChatModel({
      baseUrl: 'http://gpu-box.lan:8000/v1',
      model: 'm',
      fetch: failing,
      pageOrigin: 'https://app.example',
    });
    expect((await llmError(https.complete(request))).message).toMatch(/mixed content/);

    const sameOrigin = new OpenAiChatModel({
      baseUrl: 'http://localhost:5173/v1',
      model: 'm',
      fetch: failing,
      pageOrigin: 'http://localhost:5173',
      retries: 0,
    });
    expect((await llmError(sameOrigin.complete(request))).code).toBe('connection-refused');
  });

  it('reports a malformed body as bad-response with a snippet', async () => {
    server.replyChat({ body: '<html>Welcome to nginx</html>' });
    const error = await llmError(model().complete(request));
    expect(error.code).toBe('bad-response');
    expect(error.message).toContain('Welcome to nginx');

    server.replyChat({ body: { hello: 'world' } });
    const shape = await llmError(model().complete(request));
    expect(shape.code).toBe('bad-response');
    expect(shape.message).toContain('choices');
  });

  it('rejects a base URL that is not http(s)', () => {
    expect(() => new OpenAiChatModel({ baseUrl: 'localhost:11434', model: 'm' })).toThrow(
      /http:\/\/127\.0\.0\.1:11434\/v1/,
    );
  });
});

describe('listModels and testConnection', () => {
  it('lists the served models', async () => {
    server.models = ['a', 'test-model'];
    expect(await model().listModels()).toEqual(['a', 'test-model']);
    server.replyModels({ body: { models: [{ name: 'llama3:8b' }] } });
    expect(await model().listModels()).toEqual(['llama3:8b']);
    expect(server.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/models' });
  });

  it('tests a good connection', async () => {
    const result = await model({ now: clock(40, 115) }).testConnection();
    expect(result).toMatchObject({ ok: true, models: ['test-model'], modelFound: true });
    expect(result.ms).toBe(75);
    expect(result.error).toBeUndefined();
  });

  it('says when the model is not served', async () => {
    const result = await model({ model: 'missing' }).testConnection();
    expect(result.ok).toBe(true);
    expect(result.modelFound).toBe(false);
    expect(result.error).toContain('ollama pull missing');
  });

  it('reports a refused connection without throwing or retrying', async () => {
    const closed = await OpenAiTestServer.start();
    const url = closed.url;
    await closed.close();
    const result = await new OpenAiChatModel({ baseUrl: url, model: 'm', backoffMs: 10_000 }).testConnection();
    expect(result.ok).toBe(false);
    expect(result.code).toBe('connection-refused');
    expect(result.error).toContain(url);
  });

  it('reports a 401 as an API key problem', async () => {
    server.replyModels({ status: 401, body: errorBody('invalid key') });
    const result = await model().testConnection();
    expect(result).toMatchObject({ ok: false, code: 'http' });
    expect(result.error).toMatch(/API key/);
  });
});
