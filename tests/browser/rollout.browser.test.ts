/**
 * Same seed → the same bytes in the browser as in Node: the first episodes of each shipped seed
 * dataset (written by Node, `npm run datasets`) are regenerated here in Chromium and compared.
 */
import { describe, expect, it } from 'vitest';
import { seedDatasetLines } from '../../src/core/data/seed-datasets';

/** The shipped file as the page gets it (Vite serves public/ at the root). */
async function shipped(envId: string): Promise<string> {
  const response = await fetch(`/datasets/${envId}.jsonl`);
  if (!response.ok) throw new Error(`GET /datasets/${envId}.jsonl: ${response.status}`);
  return response.text();
}

describe('rollout determinism across Node and the browser', () => {
  it.each(['webshop-lite-v0', 'household-v0'])('regenerates the first episodes of %s byte for byte', async (envId) => {
    const expected = (await shipped(envId))
      .split('\n')
      .slice(0, 8)
      .map((l) => l + '\n');
    const produced: string[] = [];
    for await (const line of seedDatasetLines(envId, 8)) produced.push(line);
    expect(navigator.userAgent).toMatch(/Chrome/);
    expect(produced).toEqual(expected);
  });
});
