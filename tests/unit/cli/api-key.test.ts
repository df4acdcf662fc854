/**
 * The one API-key rule (src/node/edge.ts): DREAMGYM_API_KEY, else OPENAI_API_KEY, an empty
 * variable counting as unset — and every command that talks to an openai: server follows it.
 * With DREAMGYM_API_KEY="" and OPENAI_API_KEY set, each command sends the OpenAI key to a
 * stand-in OpenAI-compatible server (a test double on a local port).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main';
import { edgeDeps } from '../../../src/cli/commands/experiment';
import { apiKeyFromEnv } from '../../../src/node/edge';
import { foreignAgentGym, scriptedDomainChat } from '../domain/fixtures';
import { OpenAiTestServer } from '../llm/openai-test-server';
import { shopText } from '../llm/shop-server';
import { captureCliOutput } from '../support/cli-output';
import { argv } from './run-cli';

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
let server: OpenAiTestServer;
const domainChat = scriptedDomainChat();

beforeAll(async () => {
  server = await OpenAiTestServer.answering(
    async (request) =>
      request.body.messages[0].content.includes('WebShop')
        ? shopText(request)
        : (await domainChat.complete({ messages: request.body.messages, maxTokens: 400 })).text,
    { promptTokens: 10, completionTokens: 10 },
  );
});
afterAll(() => server.close());

const { out, err } = captureCliOutput();
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dreamgym-api-key-'));
  vi.stubEnv('DREAMGYM_API_KEY', '');
  vi.stubEnv('OPENAI_API_KEY', 'sk-openai');
  server.requests.length = 0;
});
afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a command and returns the authorizations the server saw. */
async function sentKeys(args: string[]): Promise<Set<string | undefined>> {
  const code = await main(args);
  expect(code, `${args.join(' ')}: ${[...out, ...err].join('\n')}`).toBe(0);
  const authorizations = server.chatRequests.map((request) => request.headers.authorization as string | undefined);
  expect(authorizations.length, args[0]).toBeGreaterThan(0);
  return new Set(authorizations);
}

describe('DREAMGYM_API_KEY="" falls back to OPENAI_API_KEY in every command', () => {
  const llm = () => `openai:${server.url}#fake`;
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
      await sentKeys(
        argv`train --preset webshop-easy --mode dream --llm ${llm()} --iterations 1 --out ${join(dir, 'run')}
          --set tasksPerIteration=1,groupSize=1,evalInterval=0,finalEvalEpisodes=1,curriculum=false --json`,
      ),
    ).toEqual(openAiKey);
  });

  it('domain train', async () => {
    const file = join(dir, 'myapp.json');
    writeFileSync(file, await foreignAgentGym(20));
    expect(await main(['domain', 'import', file, '--name', 'myapp', '--format', 'agentgym', '--dir', dir])).toBe(0);
    expect(
      await sentKeys(
        argv`domain train --name myapp --dir ${dir} --llm ${llm()} --iterations 1 --tasks-per-iteration 1
          --group-size 1 --step-limit 3 --eval-episodes 1 --audit-n 1 --json`,
      ),
    ).toEqual(openAiKey);
  });

  it('experiment (its runs get the key the same way)', () => {
    expect(edgeDeps(() => {}).engine?.apiKey).toBe('sk-openai');
  });
});
