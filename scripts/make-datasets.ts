/**
 * Regenerates public/datasets/ (the offline seed data) byte for byte:
 *   npm run datasets            # all environments
 *   npm run datasets -- --check # fail if the shipped files differ from a fresh generation
 *   npm run datasets -- --episodes 1000 --out runs/datasets   # the same recipe, bigger (a superset)
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  SEED_DATASET_ENVS,
  datasetPartsFor,
  scaledDatasetParts,
  seedDatasetFile,
  seedDatasetLines,
} from '../src/core/data/seed-datasets';
import type { Trajectory } from '../src/core/types';

const check = process.argv.includes('--check');
const argument = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const scaled = argument('--episodes');
if (scaled && !(Number(scaled) >= 3)) throw new Error(`--episodes must be a number of at least 3, got '${scaled}'.`);
const root = argument('--out') ?? join(dirname(new URL(import.meta.url).pathname), '..', 'public');
const manifest: Record<string, unknown>[] = [];
let failed = false;

for (const envId of SEED_DATASET_ENVS) {
  const parts = scaled ? scaledDatasetParts(Number(scaled), envId) : datasetPartsFor(envId);
  const lines: string[] = [];
  for await (const line of seedDatasetLines(envId, Infinity, parts)) lines.push(line);
  const text = lines.join('');
  const episodes = lines.map((l) => JSON.parse(l) as Trajectory);
  const path = join(root, seedDatasetFile(envId));
  const sha256 = createHash('sha256').update(text).digest('hex');
  manifest.push({
    env: envId,
    file: seedDatasetFile(envId),
    episodes: episodes.length,
    bytes: Buffer.byteLength(text),
    sha256,
    steps: episodes.reduce((s, t) => s + t.steps.length, 0),
    success_rate: episodes.filter((t) => t.result.success).length / episodes.length,
    parts,
  });
  if (check) {
    const same = existsSync(path) && readFileSync(path, 'utf8') === text;
    console.log(
      `${envId}: ${same ? 'identical' : 'DIFFERS'} (${episodes.length} episodes, sha256 ${sha256.slice(0, 12)})`,
    );
    failed ||= !same;
  } else {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    console.log(`${envId}: wrote ${episodes.length} episodes, ${Buffer.byteLength(text)} bytes to ${path}`);
  }
}
if (!check) writeFileSync(join(root, 'datasets', 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
process.exitCode = failed ? 1 : 0;
