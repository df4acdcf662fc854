/**
 * A tiny OpenAI-protocol server for tests: `/v1/chat/completions` and `/v1/models` on 127.0.0.1
 * (port 0), scriptable per test (status, headers, body, delay before answering, a body trickled in
 * pieces, a hang-up), recording every request it gets. Bounded: loopback clients only, request
 * bodies ≤ 1 MiB, at most 1,000 requests, and close() ends every connection and timer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedReply {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as is (for malformed bodies). */
  body?: unknown;
  /** Wait this long before sending anything. */
  delayMs?: number;
  /** Send the headers at once, then the body in `pieces` parts, `intervalMs` apart. */
  trickle?: { pieces: number; intervalMs: number };
  /** Destroy the socket without answering (a network error for the client). */
  hangUp?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, the raw text when it is not JSON, undefined when empty. */
  body: any;
}

/** A reply, or a function of the request to one (it may wait, e.g. on a scripted chat model). */
export type Script = ScriptedReply | ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>);

const MAX_BODY_BYTES = 1 << 20;
const MAX_REQUESTS = 1000;

/** An OpenAI chat.completion body. */
export function chatCompletion(
  text: string,
  options: {
    finishReason?: string | null;
    promptTokens?: number;
    completionTokens?: number;
    logprobs?: unknown;
    model?: string;
  } = {},
): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 0,
    model: options.model ?? 'test-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text },
        finish_reason: options.finishReason === undefined ? 'stop' : options.finishReason,
        ...(options.logprobs !== undefined ? { logprobs: options.logprobs } : {}),
      },
    ],
    usage: {
      prompt_tokens: options.promptTokens ?? 10,
      completion_tokens: options.completionTokens ?? 3,
      total_tokens: (options.promptTokens ?? 10) + (options.completionTokens ?? 3),
    },
  };
}

/** An OpenAI-style error body. */
export function errorBody(
  message: string,
  type = 'invalid_request_error',
  code: string | null = null,
): Record<string, unknown> {
  return { error: { message, type, param: null, code } };
}

export class OpenAiTestServer {
  readonly requests: RecordedRequest[] = [];
  /** Chat requests received and not yet answered, and the most there ever were at once. */
  inFlight = 0;
  peakInFlight = 0;
  /** Replies sent to their last byte (a reply the client hung up on, or still trickling, is not counted). */
  repliesFinished = 0;
  /** What GET /v1/models lists when no models reply is scripted. */
  models: string[] = ['test-model'];
  #chat: Script[] = [];
  #everyChat: Script = { body: chatCompletion('ok') };
  #modelReplies: Script[] = [];
  #timers = new Set<ReturnType<typeof setTimeout>>();
  #sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on `port` (default 0: a free one; a test may reopen the port of a server it closed). */
  static async start(listenPort = 0): Promise<OpenAiTestServer> {
    const server = createServer();
    server.maxConnections = 64;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listenPort, '127.0.0.1', () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const instance = new OpenAiTestServer(server, port);
    server.on('connection', (socket) => instance.#onConnection(socket));
    server.on('request', (req, res) => {
      void instance.#onRequest(req, res);
    });
    return instance;
  }

  /** Starts a server, hands it to `use`, and closes it however `use` ends. */
  static async serving<T>(use: (server: OpenAiTestServer) => Promise<T>): Promise<T> {
    const server = await OpenAiTestServer.start();
    try {
      return await use(server);
    } finally {
      await server.close();
    }
  }

  /** A server on a free port whose every chat answer is `text(request)`, reporting `usage` tokens. */
  static async answering(
    text: (request: RecordedRequest) => string | Promise<string>,
    usage: { promptTokens?: number; completionTokens?: number } = {},
  ): Promise<OpenAiTestServer> {
    const server = await OpenAiTestServer.start();
    return server.answerEveryChat(async (request) => ({ body: chatCompletion(await text(request), usage) }));
  }

  /** Base URL of the API, e.g. http://127.0.0.1:PORT/v1. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Queue replies for the next chat requests, in order; when empty, answers as `answerEveryChat` says. */
  replyChat(...scripts: Script[]): this {
    this.#chat.push(...scripts);
    return this;
  }

  /** The reply to every chat request that finds no queued one (default: chatCompletion('ok')). */
  answerEveryChat(script: Script): this {
    this.#everyChat = script;
    return this;
  }

  /** Queue replies for the next GET /v1/models requests; when empty, lists `models`. */
  replyModels(...scripts: Script[]): this {
    this.#modelReplies.push(...scripts);
    return this;
  }

  get chatRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.path === '/v1/chat/completions');
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  #onConnection(socket: Socket): void {
    const remote = socket.remoteAddress ?? '';
    if (remote !== '127.0.0.1' && remote !== '::ffff:127.0.0.1' && remote !== '::1') {
      socket.destroy();
      return;
    }
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
  }

  #later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, ms);
    this.#timers.add(timer);
  }

  async #onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.requests.length >= MAX_REQUESTS) {
      res.writeHead(503).end();
      return;
    }
    let raw: string;
    try {
      raw = await readBody(req);
    } catch {
      res.writeHead(413).end();
      return;
    }
    let body: unknown;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const path = (req.url ?? '/').split('?')[0];
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path, headers: { ...req.headers }, body };
    this.requests.push(recorded);

    let script: Script | undefined;
    if (path === '/v1/chat/completions' && req.method === 'POST') {
      script = this.#chat.shift() ?? this.#everyChat;
    } else if (path === '/v1/models' && req.method === 'GET') {
      script = this.#modelReplies.shift() ?? {
        body: {
          object: 'list',
          data: this.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'test' })),
        },
      };
    } else {
      script = { status: 404, body: errorBody(`Not found: ${req.method} ${path}`, 'not_found_error') };
    }
    res.on('finish', () => {
      this.repliesFinished++;
    });
    const chat = path === '/v1/chat/completions';
    if (chat) this.peakInFlight = Math.max(this.peakInFlight, ++this.inFlight);
    const reply = typeof script === 'function' ? await script(recorded) : script;
    const send = () => {
      if (chat) this.inFlight--;
      this.#send(res, reply);
    };
    if (reply.delayMs) this.#later(reply.delayMs, send);
    else send();
  }

  #send(res: ServerResponse, reply: ScriptedReply): void {
    if (res.destroyed || res.writableEnded) return;
    if (reply.hangUp) {
      res.socket?.destroy();
      return;
    }
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
    if (!reply.trickle) {
      res.end(text);
      return;
    }
    res.flushHeaders();
    const { pieces, intervalMs } = reply.trickle;
    const size = Math.ceil(text.length / Math.max(1, pieces));
    let offset = 0;
    const next = () => {
      if (res.destroyed) return;
      const part = text.slice(offset, offset + size);
      offset += size;
      if (offset >= text.length) {
        res.end(part);
        return;
      }
      res.write(part);
      this.#later(intervalMs, next);
    };
    next();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
