/**
 * The one API-key rule (src/node/edge.ts): DREAMGYM_API_KEY, else OPENAI_API_KEY, an empty
 * variable counting as unset — and every command that talks to an openai: server follows it.
 * With DREAMGYM_API_KEY="" and OPENAI_API_KEY set, each command sends the OpenAI key to a
 * stand-in OpenAI-compatible server (a test double on a local port).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main';
import { edgeDeps } from '../../../src/cli/commands/experiment';
import type { ChatRequest } from '../../../src/core/llm/types';
import { apiKeyFromEnv } from '../../../src/node/edge';
import { foreignAgentGym, scriptedDomainChat } from '../domain/fixtures';
import { scriptedShop } from '../experience/fixtures';

describe('apiKeyFromEnv', () => {
  it('takes DREAMGYM_API_KEY, else OPENAI_API_KEY; an empty or blank variable counts as unset', () => {
    expect(apiKeyFromEnv({ DREAMGYM_API_KEY: 'sk-d', OPENAI_API_KEY: 'sk-o' })).toBe('sk-d');
    expect(apiKeyFromEnv({ DREAMGYM_API_KEY: '', OPENAI_API_KEY: 'sk-o' })).toBe('sk-o');
    expect(apiKeyFromEnv({ DREAMGYM_API_KEY: '  ', OPENAI_API_KEY: 'sk-o' })).toBe('sk-o');
    expect(apiKeyFromEnv({ OPENAI_API_KEY: 'sk-o' })).toBe('sk-o');
    expect(apiKeyFromEnv({ DREAMGYM_API_KEY: '', OPENAI_API_KEY: '' })).toBeUndefined();
    expect(apiKeyFromEnv({})).toBeUndefined();
  });
});

let dir: string;
let out: string[];
let server: Server;
let baseUrl = '';
const authorizations: (string | undefined)[] = [];
const domainChat = scriptedDomainChat();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', async () => {
      authorizations.push(req.headers.authorization);
      const request = JSON.parse(body) as { messages: ChatRequest['messages'] };
      const text = request.messages[0].content.includes('WebShop')
        ? scriptedShop({ messages: request.messages, maxTokens: 1 })
        : (await domainChat.complete({ messages: request.messages, maxTokens: 400 })).text;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          model: 'fake',
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  out = [];
  dir = mkdtempSync(join(tmpdir(), 'dreamgym-api-key-'));
  vi.stubEnv('DREAMGYM_API_KEY', '');
  vi.stubEnv('OPENAI_API_KEY', 'sk-openai');
  vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => {
    out.push(a.join(' '));
  });
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  authorizations.length = 0;
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a command and returns the authorizations the server saw. */
async function sentKeys(argv: string[]): Promise<Set<string | undefined>> {
  const code = await main(argv);
  expect(code, `${argv.join(' ')}: ${out.join('\n')}`).toBe(0);
  expect(authorizations.length, argv[0]).toBeGreaterThan(0);
  return new Set(authorizations);
}

describe('DREAMGYM_API_KEY="" falls back to OPENAI_API_KEY in every command', () => {
  const llm = () => `openai:${baseUrl}#fake`;
  const openAiKey = new Set(['Bearer sk-openai']);

  it('audit', async () => {
    expect(await sentKeys(['audit', '--env', 'webshop-lite-v0', '--llm', llm(), '--n', '2', '--json'])).toEqual(
      openAiKey,
    );
  });

  it('dream', async () => {
    expect(await sentKeys(['dream', '--env', 'webshop-lite-v0', '--llm', llm(), '--episodes', '1', '--json'])).toEqual(
      openAiKey,
    );
  });

  it('train', async () => {
    expect(
      await sentKeys([
        'train',
        '--preset',
        'webshop-easy',
        '--mode',
        'dream',
        '--llm',
        llm(),
        '--iterations',
        '1',
        '--out',
        join(dir, 'run'),
        '--set',
        'tasksPerIteration=1,groupSize=1,evalInterval=0,finalEvalEpisodes=1,curriculum=false',
        '--json',
      ]),
    ).toEqual(openAiKey);
  });

  it('domain train', async () => {
    const file = join(dir, 'myapp.json');
    writeFileSync(file, await foreignAgentGym(20));
    expect(await main(['domain', 'import', file, '--name', 'myapp', '--format', 'agentgym', '--dir', dir])).toBe(0);
    expect(
      await sentKeys([
        'domain',
        'train',
        '--name',
        'myapp',
        '--dir',
        dir,
        '--llm',
        llm(),
        '--iterations',
        '1',
        '--tasks-per-iteration',
        '1',
        '--group-size',
        '1',
        '--step-limit',
        '3',
        '--eval-episodes',
        '1',
        '--audit-n',
        '1',
        '--json',
      ]),
    ).toEqual(openAiKey);
  });

  it('experiment (its runs get the key the same way)', () => {
    expect(edgeDeps(() => {}).engine?.apiKey).toBe('sk-openai');
  });
});
