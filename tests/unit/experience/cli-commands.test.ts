import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main';
import { answer, AUDIT_REPORT_KEYS, PERFECT_ORACLE_AUDIT } from './fixtures';
import { OpenAiTestServer } from '../llm/openai-test-server';
import { shopText } from '../llm/shop-server';
import { captureCliOutput } from '../support/cli-output';
import { cli } from '../cli/run-cli';

const { out, err, lastJson } = captureCliOutput();

/**
 * A stand-in OpenAI-compatible server (a test double on a local port): it answers chat
 * completions with the scripted shop world, and records the authorization headers it saw.
 */
let server: OpenAiTestServer;
beforeAll(async () => {
  server = await OpenAiTestServer.answering(
    (request) =>
      request.body.messages[0].content.includes('WebShop')
        ? shopText(request)
        : answer({
            observation: 'You arrive at desk 1. On the desk 1, you see nothing.',
            admissible: ['examine desk 1'],
          }),
    { promptTokens: 500, completionTokens: 100 },
  );
});
afterAll(() => server.close());

describe('dreamgym audit', () => {
  it('prints the audit JSON as the last line (oracle at 0, 0: perfect)', async () => {
    expect(await main(['audit', '--env', 'webshop-lite-v0', '--llm', 'oracle:0,0', '--n', '60', '--json'])).toBe(0);
    expect(lastJson()).toMatchObject({ env: 'webshop-lite-v0', llm: 'oracle:0,0', n: 60, ...PERFECT_ORACLE_AUDIT });
    expect(Object.keys(lastJson())).toEqual(AUDIT_REPORT_KEYS);
  });

  it('prints a readable table without --json, labelled as the oracle', async () => {
    expect(await main(['audit', '--env', 'household-v0', '--llm', 'oracle:0.2,0.1', '--n', '20'])).toBe(0);
    const text = out.join('\n');
    expect(text).toContain('oracle (ε_R=0.2, ε_P=0.1) on household-v0: 20 held-out transitions');
    expect(text).toMatch(/reward accuracy\s+\d\.\d{4}/);
  });

  it('explains a missing or malformed --llm and --env (usage errors, exit 2)', async () => {
    expect(await main(['audit', '--env', 'webshop-lite-v0'])).toBe(2);
    expect(err.join('\n')).toMatch(/needs --llm/);
    expect(await main(['audit', '--env', 'webshop-lite-v0', '--llm', 'oracle:0.2'])).toBe(2);
    expect(err.join('\n')).toMatch(/needs two error rates/);
    expect(await main(['dream', '--llm', 'oracle:0,0'])).toBe(2);
    expect(err.join('\n')).toMatch(/needs --env/);
    expect(await main(['dream', '--env', 'atari-v5', '--llm', 'oracle:0,0'])).toBe(1);
    expect(err.join('\n')).toMatch(/Unknown environment 'atari-v5'/);
    // A browser engine named in Node: the error says where it runs.
    expect(await main(['dream', '--env', 'webshop-lite-v0', '--llm', 'wllama:file:stories260K.gguf'])).toBe(1);
    expect(err.join('\n')).toMatch(
      /'wllama:file:stories260K\.gguf' runs in the browser only.*From the command line use an OpenAI-compatible server/s,
    );
  });

  it('audits an LLM behind an OpenAI-compatible server, with the key from DREAMGYM_API_KEY', async () => {
    vi.stubEnv('DREAMGYM_API_KEY', 'sk-test-key');
    try {
      expect(
        await main(['audit', '--env', 'webshop-lite-v0', '--llm', `openai:${server.url}#fake`, '--n', '8', '--json']),
      ).toBe(0);
    } finally {
      vi.unstubAllEnvs();
    }
    const report = lastJson();
    expect(report).toMatchObject({
      env: 'webshop-lite-v0',
      llm: `openai:${server.url}#fake`,
      n: 8,
      invalid_rate: 0,
      tokens_per_transition: 600,
    });
    expect(report.valid_agreement).toBeGreaterThan(0);
    expect(server.chatRequests.at(-1)!.headers.authorization).toBe('Bearer sk-test-key');
  });
});

describe('dreamgym dream', () => {
  it('rolls out dreamed episodes with the reasoning (oracle, expert)', async () => {
    expect(await cli`dream --env webshop-lite-v0 --llm oracle:0,0 --policy expert --episodes 2 --seed 3 --json`).toBe(
      0,
    );
    const summary = lastJson();
    expect(summary).toMatchObject({
      env: 'webshop-lite-v0',
      llm: 'oracle:0,0',
      label: 'oracle (ε_R=0, ε_P=0)',
      policy: 'expert',
      episodes: 2,
      success_rate: 1,
      invalid_rate: 0,
    });
    expect(summary.trajectories).toHaveLength(2);
    expect(summary.trajectories[0].steps[0]).toMatchObject({ t: 1, expert: true, valid: true });
    expect(summary.trajectories[0].steps[0].reasoning).toMatch(/^Oracle: the real env accepts/);
    expect(
      await main(['dream', '--env', 'household-v0', '--llm', 'oracle:0,0', '--policy', 'random', '--episodes', '1']),
    ).toBe(0);
    expect(out.join('\n')).toMatch(/episode 1\/1 \(seed 0\)/);
    expect(out.join('\n')).toMatch(/reasoning: Oracle:/);
  });

  it('dreams with an LLM: the expert falls back to the dreamed actions when the dream diverges', async () => {
    expect(
      await cli`dream --env webshop-lite-v0 --llm openai:${server.url}#fake --policy expert --episodes 1 --k 2
        --history 1 --json`,
    ).toBe(0);
    const summary = lastJson();
    expect(summary).toMatchObject({ k: 2, history: 1, reasoning: true, invalid_rate: 0 });
    const halt = String.raw`halt beyond novelty [\d.]+, successes [\d.]+ \(q 0.99/0.9 of \d+ real steps\)`;
    expect(summary.label).toMatch(new RegExp(String.raw`^openai fake \(k=2, H=1\), ${halt}$`));
    const steps = summary.trajectories[0].steps;
    expect(steps[0]).toMatchObject({ expert: true, reasoning: 'the action works' }); // the real search page: the expert's query is offered
    expect(steps.some((s: { expert: boolean }) => s.expert === false)).toBe(true); // dreamed results list other products
    expect(summary.tokens_per_transition).toBeGreaterThan(0);
  });
});
