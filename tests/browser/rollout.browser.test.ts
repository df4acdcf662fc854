/**
 * Same seed → the same bytes in the browser as in Node: the first episodes of each shipped seed
 * dataset (written by Node, `npm run datasets`) are regenerated here in Chromium and compared.
 */
import { describe, expect, it } from 'vitest';
import { seedDatasetLines } from '../../src/core/data/seed-datasets';
import webshopDataset from '../../public/datasets/webshop-lite-v0.jsonl?raw';
import householdDataset from '../../public/datasets/household-v0.jsonl?raw';

const shipped: Record<string, string> = { 'webshop-lite-v0': webshopDataset, 'household-v0': householdDataset };

describe('rollout determinism across Node and the browser', () => {
  it.each(Object.keys(shipped))('regenerates the first episodes of %s byte for byte', async (envId) => {
    const expected = shipped[envId].split('\n').slice(0, 8).map((l) => l + '\n');
    const produced: string[] = [];
    for await (const line of seedDatasetLines(envId, 8)) produced.push(line);
    expect(navigator.userAgent).toMatch(/Chrome/);
    expect(produced).toEqual(expected);
  });
});
