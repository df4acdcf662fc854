// Measures whether the halt's novelty tells false dreamed successes from true — figures: docs/results/honest-dream.md.
/**
 * Does the halt's novelty (src/core/experience/novelty.ts) tell a dream's false successes from
 * true ones? It indexes the env's shipped offline episodes, calibrates the threshold (each episode
 * left out of its own search), and measures:
 *   - held-out real successes: the offline successes, each with its own episode left out;
 *   - a dream run's claimed successes (its buffer's dreamed episodes that ended with reward ≥ 0.5),
 *     each replayed in the real env to label it true (the real env succeeds at the same step) or false.
 *   node --import tsx scripts/measure/novelty-separation.ts RUN_DIR [QUANTILE=0.99] [SUCCESS_QUANTILE=0.95]
 * RUN_DIR is a `train --mode dream --out RUN_DIR` folder (best made with `--set halt=false`, so that
 * the dream's successes were not already halted).
 */
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { FolderBufferStore } from '../../src/node/buffer-folder';
import { groupEpisodes, type RecordedEpisode } from '../../src/core/experience/learned/sft-data';
import { NoveltyIndex, recordedNoveltySteps, trajectoryNoveltySteps } from '../../src/core/experience/novelty';
import { makeEnv } from '../../src/core/envs/registry';
import { parseTrajectoriesJsonl } from '../../src/core/data/trajectory';
import type { Task } from '../../src/core/types';

const [run, quantileText = '0.99', successText = '0.95'] = process.argv.slice(2);
if (!run) throw new Error('usage: scripts/measure/novelty-separation.ts RUN_DIR [QUANTILE]');
const config = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')) as { env: string };
const env = config.env;
const dataset = parseTrajectoriesJsonl(readFileSync(`public/datasets/${env}.jsonl`, 'utf8')).filter(
  (t) => t.env === env,
);
const real = dataset.map(trajectoryNoveltySteps);
const index = NoveltyIndex.fromEpisodes(real, { quantile: Number(quantileText), successQuantile: Number(successText) });
console.log('calibration', JSON.stringify(index.calibration));

// Held-out real successes: each measured with its own episode left out of the search.
const realSuccess = real.flatMap((steps, i) => steps.filter((s) => s.success).map((s) => index.heldOutDistance(s, i)));

const store = await FolderBufferStore.open(join(run, 'buffer'), { readOnly: true });
const dreamed = groupEpisodes(await store.listTransitions({ env, source: ['dream'] }));
const tasks = new Map((await store.listTasks(env)).map((e) => [e.id, e.task]));
await store.close();

/** Whether the real env, replaying the dream's actions, succeeds at the same step. */
async function trulySucceeds(episode: RecordedEpisode, task: Task | undefined): Promise<boolean> {
  if (!task) return false;
  const realEnv = makeEnv(env);
  await realEnv.reset({ seed: task.seed ?? 0, task });
  for (const t of episode.steps) {
    if (!t.valid) continue;
    const result = await realEnv.step(t.action);
    if (result.terminated || result.truncated) return result.info.success && t.terminated;
    if (!result.info.valid) return false;
  }
  return false;
}

const claimed = { true: [] as number[], false: [] as number[] };
/** Claimed successes whose episode has a step beyond its threshold anywhere (the halt would have ended it). */
const caught = { true: 0, false: 0 };
for (const episode of dreamed) {
  const last = episode.steps[episode.steps.length - 1];
  if (!last?.terminated || last.reward < 0.5) continue;
  const steps = recordedNoveltySteps(episode);
  steps[steps.length - 1] = { ...steps[steps.length - 1], success: true };
  const truth = await trulySucceeds(episode, tasks.get(episode.taskId));
  claimed[truth ? 'true' : 'false'].push(index.distance(steps[steps.length - 1]));
  if (steps.some((s) => index.isNovel(s))) caught[truth ? 'true' : 'false']++;
}
// Real successful episodes that a halt anywhere would have ended (each episode left out of its own search).
const realEpisodesHalted = real.filter(
  (steps, i) => steps.some((s) => s.success) && steps.some((s) => index.heldOutDistance(s, i) > index.threshold(s)),
).length;
const realSuccessful = real.filter((steps) => steps.some((s) => s.success)).length;

function summary(name: string, values: number[]): void {
  const sorted = values.slice().sort((a, b) => a - b);
  const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN);
  const above = values.filter((v) => v > index.threshold({ terminated: true, success: true })).length;
  console.log(
    `${name.padEnd(34)} n=${String(values.length).padStart(5)}  median ${at(0.5).toFixed(3)}  ` +
      `p90 ${at(0.9).toFixed(3)}  halted ${above} (${((100 * above) / Math.max(1, values.length)).toFixed(1)} %)`,
  );
}
console.log(`thresholds ${JSON.stringify(index.calibration.thresholds)} (quantile ${quantileText})`);
summary('held-out real successes', realSuccess);
summary("dream's claimed successes, true", claimed.true);
summary("dream's claimed successes, false", claimed.false);
console.log(
  `episodes halted anywhere: real successful ${realEpisodesHalted}/${realSuccessful}, ` +
    `dream's false successes ${caught.false}/${claimed.false.length}, true ${caught.true}/${claimed.true.length}`,
);
