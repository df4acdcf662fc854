/** A model that answers but never usably (every answer unparseable) fails audit and dream with a non-zero exit. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import { captureCliOutput } from '../support/cli-output';
import { OpenAiTestServer } from '../llm/openai-test-server';

const { err, lastJson } = captureCliOutput();
let server: OpenAiTestServer;
beforeAll(async () => {
  server = await OpenAiTestServer.start(); // answers every chat with 'ok': no engine error, no usable answer
});
afterAll(() => server.close());

describe('a model with nothing usable', () => {
  it('fails audit, after printing its report', async () => {
    const llm = `openai:${server.url}#test-model`;
    expect(await main(['audit', '--env', 'webshop-lite-v0', '--llm', llm, '--n', '4', '--json'])).toBe(1);
    expect(lastJson()).toMatchObject({ n: 4, invalid_rate: 1, failed_calls: 0 });
    expect(err.join('\n')).toMatch(/none of its 4 answers was usable \(0 failed engine calls\)/);
  });

  it('fails dream, after printing its episodes', async () => {
    const llm = `openai:${server.url}#test-model`;
    const args = ['dream', '--env', 'webshop-lite-v0', '--llm', llm, '--episodes', '1', '--policy', 'random'];
    expect(await main([...args, '--json'])).toBe(1);
    expect(lastJson()).toMatchObject({ invalid_rate: 1, failed_calls: 0 });
    expect(err.join('\n')).toMatch(/none of its \d+ answers was usable/);
  });
});
