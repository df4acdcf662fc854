/** The trainer worker grounds a dream before it starts (src/app/workers/trainer/offline-data.ts). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { groundDream, dreamRetrieves, publicFileReader } from '../../../src/app/workers/trainer/offline-data';
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import { getPreset, validateConfig, type TrainConfig } from '../../../src/core/train/config';

const config = (overrides: Partial<TrainConfig>) =>
  validateConfig({ ...getPreset('webshop-easy'), mode: 'dream', llm: 'learned:models/webshop-lite-v0', ...overrides });
const fetchPublic = (async (url: string) => {
  const path = new URL(url).pathname.replace(/^\/app\//, '');
  try {
    return new Response(readFileSync(`public/${path}`, 'utf8'));
  } catch {
    return new Response('', { status: 404 });
  }
}) as typeof fetch;

describe('grounding a page dream', () => {
  it('a dream that retrieves with a model that reads the buffer; not a real run, k = 0 or the oracle', () => {
    expect(dreamRetrieves(config({}))).toBe(true);
    expect(dreamRetrieves(config({ mode: 's2r' }))).toBe(true);
    expect(dreamRetrieves(config({ mode: 'real' }))).toBe(false);
    expect(dreamRetrieves(config({ retrievalK: 0 }))).toBe(false);
    expect(dreamRetrieves(config({ llm: 'oracle:0.1,0.1' }))).toBe(false);
  });

  it("loads the shipped data into an empty buffer from the app's public files, and says so; a second run adds nothing", async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const read = publicFileReader('http://127.0.0.1/app/', fetchPublic);
    expect(await groundDream(config({}), buffer, read)).toMatch(
      /held no real transitions of webshop-lite-v0: loaded its shipped offline data \(240 episodes, [\d,]+ transitions\)/,
    );
    expect(await groundDream(config({}), buffer, read)).toMatch(
      /^The replay buffer holds [\d,]+ real transitions of webshop-lite-v0\.$/,
    );
  });

  it("a build without the env's dataset seeds nothing (the run builder then refuses the learned model)", async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const none = publicFileReader('http://127.0.0.1/', (async () => new Response('', { status: 404 })) as typeof fetch);
    expect(await groundDream(config({}), buffer, none)).toBeNull();
    expect((await buffer.stats()).transitions).toBe(0);
  });
});
