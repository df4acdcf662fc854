// Measures a dream's episode length by how it begins — figures: docs/results/honest-dream.md.
/**
 * How long a dream's episodes are, by how they begin: fits each iteration's mean episode length
 * against its share of tasks begun at a real state (least squares over the iterations of the
 * given runs), so the intercepts are the length of an episode begun at its task's first state and
 * of one begun at a real state. The estimate's `learnedStepsPerEpisode` (src/core/train/estimate.ts)
 * is the first of these for the shipped learned models.
 *
 *   node --import tsx scripts/measure/episode-lengths.ts runs/A runs/B …
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const points: { share: number; length: number }[] = [];
for (const run of process.argv.slice(2)) {
  for (const line of readFileSync(join(run, 'metrics.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const record = JSON.parse(line) as Record<string, unknown>;
    const length = record['dream/episode_length'];
    if (typeof length !== 'number') continue;
    const share = record['dream/real_start_share'];
    points.push({ share: typeof share === 'number' ? share : 0, length });
  }
}
if (points.length < 2) throw new Error('Give run folders whose metrics.jsonl hold dream iterations.');

// length = first × (1 − share) + real × share: two unknowns, the normal equations solved directly.
let aa = 0,
  ab = 0,
  bb = 0,
  ay = 0,
  by = 0;
for (const { share, length } of points) {
  const a = 1 - share;
  aa += a * a;
  ab += a * share;
  bb += share * share;
  ay += a * length;
  by += share * length;
}
const det = aa * bb - ab * ab;
if (Math.abs(det) < 1e-9)
  throw new Error('Every iteration has the same real-start share: the two lengths cannot be told apart.');
const first = (ay * bb - ab * by) / det;
const real = (aa * by - ab * ay) / det;
const mean = points.reduce((s, p) => s + p.length, 0) / points.length;
console.log(
  `${points.length} iterations: begun at the first state ${first.toFixed(1)} steps, at a real state ` +
    `${real.toFixed(1)}, mean ${mean.toFixed(1)}`,
);
