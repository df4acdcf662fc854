import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  SEED_DATASET_ENVS,
  datasetPartsFor,
  seedDatasetEpisodes,
  seedDatasetFile,
  seedDatasetLines,
} from '../../../src/core/data/seed-datasets';
import { parseTrajectoriesJsonl } from '../../../src/core/data/trajectory';
import { envIds } from '../../../src/core/envs/registry';

describe('shipped seed datasets', () => {
  it.each(SEED_DATASET_ENVS)(
    '%s: regenerating gives the same bytes (first 12 episodes of each part)',
    async (envId) => {
      const lines = readFileSync(`public/${seedDatasetFile(envId)}`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => l + '\n');
      const produced: string[] = [];
      for await (const line of seedDatasetLines(envId)) {
        produced.push(line);
        if (produced.length >= 12) break;
      }
      expect(produced).toEqual(lines.slice(0, 12));
    },
  );

  it.each(SEED_DATASET_ENVS)(
    '%s: parses, mixes expert, noisy and random episodes, and the expert always succeeds',
    (envId) => {
      const episodes = parseTrajectoriesJsonl(readFileSync(`public/${seedDatasetFile(envId)}`, 'utf8'), {
        knownEnvs: envIds(),
      });
      expect(episodes).toHaveLength(datasetPartsFor(envId).reduce((s, p) => s + p.episodes, 0));
      const bySource = (source: string) => episodes.filter((t) => t.source === source);
      expect(bySource('expert').every((t) => t.result.success)).toBe(true);
      expect(bySource('noisy-expert').length).toBe(80);
      expect(bySource('random').filter((t) => t.result.success).length).toBeLessThanOrEqual(4);
      expect(new Set(episodes.map((t) => t.id)).size).toBe(episodes.length);
      expect(episodes.every((t) => t.seed < 1_000_000_000)).toBe(true); // held-out range stays unseen
    },
  );

  it.each(SEED_DATASET_ENVS)("%s: the episode count the pages quote is the file's", (envId) => {
    const lines = readFileSync(`public/${seedDatasetFile(envId)}`, 'utf8')
      .split('\n')
      .filter(Boolean);
    expect(seedDatasetEpisodes(envId)).toBe(lines.length);
  });

  it('household holds goal-like steps that do not end an episode; webshop, whose failures end, has no decoys', () => {
    const read = (envId: string) =>
      parseTrajectoriesJsonl(readFileSync(`public/${seedDatasetFile(envId)}`, 'utf8'), { knownEnvs: envIds() });
    const decoys = read('household-v0').filter((t) => t.source === 'decoy-expert');
    expect(decoys).toHaveLength(60);
    const misses = decoys.flatMap((t) => t.steps.filter((s) => /^(put|use) /.test(s.action) && !s.terminated));
    expect(misses.length).toBeGreaterThanOrEqual(60);
    expect(misses.every((s) => s.reward === 0 && !s.truncated)).toBe(true);
    expect(read('webshop-lite-v0').some((t) => t.source === 'decoy-expert')).toBe(false);
  });

  it('webarena holds all three task kinds, each solved by the expert', () => {
    const episodes = parseTrajectoriesJsonl(readFileSync(`public/${seedDatasetFile('webarena-lite-v0')}`, 'utf8'), {
      knownEnvs: envIds(),
    });
    const expert = episodes.filter((t) => t.source === 'expert');
    const kinds = new Set(expert.map((t) => (t.task.spec as { kind: string }).kind));
    expect([...kinds].sort()).toEqual(['change', 'information', 'navigation']);
    expect(expert.every((t) => t.result.success && t.steps[t.steps.length - 1].reward === 1)).toBe(true);
  });
});
