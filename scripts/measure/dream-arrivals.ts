// Measures how often a household dream shows the asked object — figures: docs/results/household-dream.md.
/**
 * How often a household dream shows the object a task asks for, against the real rooms: a
 * scripted player (take the asked object where offered, put it where offered, else go somewhere
 * at random) plays held-out difficulty-0 tasks in the learned model's dream; the share of its
 * arrivals whose dreamed room holds the asked object, and its dream-judged successes.
 *   node --import tsx scripts/measure/dream-arrivals.ts [MODEL_DIR=public/models] [EPISODES=24] [T=0.7]
 * The real figure for comparison: the shipped dataset's random episodes at difficulty 0.
 */
import { readFileSync } from 'node:fs';
import { initBackend } from '../../src/core/tfjs/backend';
import { loadModelFolder } from '../../src/node/model-folder';
import { bufferFromTrajectories } from '../../src/core/experience/seed-buffer';
import { makeDreamEnv } from '../../src/core/experience/dream-env';
import { getEnvDefinition } from '../../src/core/envs/registry';
import { parseTrajectoriesJsonl } from '../../src/core/data/trajectory';
import { HELD_OUT_SEED_BASE } from '../../src/core/envs/env';
import { Rng } from '../../src/core/rng';
import type { Observation, Trajectory } from '../../src/core/types';

const ENV = 'household-v0';
const [dir = 'public/models', episodes = '24', temperature = '0.7'] = process.argv.slice(2);
const askedObject = (instruction: string) => /put (?:a|some) (\w+)/.exec(instruction)?.[1] ?? '';
const askedPlace = (instruction: string) => /(?:in|on) (\w+)\.$/.exec(instruction)?.[1] ?? '';

function scriptedMove(obs: Observation, object: string, rng: Rng): string {
  const offered = (verb: string) => obs.admissible.find((a) => a.startsWith(verb) && a.includes(object));
  const goes = obs.admissible.filter((a) => a.startsWith('go to'));
  return offered('put ') ?? offered('take ') ?? rng.pick(goes.length ? goes : obs.admissible);
}

function realArrivals(dataset: readonly Trajectory[]): { arrivals: number; hits: number } {
  let arrivals = 0;
  let hits = 0;
  for (const t of dataset.filter((d) => d.source === 'random' && d.task.difficulty === 0)) {
    const object = askedObject(t.task.instruction);
    t.steps.slice(0, -1).forEach((s, i) => {
      if (!object || !s.action.startsWith('go to')) return;
      arrivals++;
      if (t.steps[i + 1].observation.includes(object)) hits++;
    });
  }
  return { arrivals, hits };
}

await initBackend('wasm');
const dataset = parseTrajectoriesJsonl(readFileSync(`public/datasets/${ENV}.jsonl`, 'utf8'), { knownEnvs: [ENV] });
const buffer = await bufferFromTrajectories(dataset);
const model = await loadModelFolder(dir, { env: ENV, buffer, temperature: Number(temperature), seed: 1 });
const definition = getEnvDefinition(ENV);
const dream = { arrivals: 0, hits: 0, successes: 0, atPlace: 0, stockedPlace: 0 };
await Promise.all(
  Array.from({ length: Number(episodes) }, async (_, i) => {
    const rng = Rng.fromSeed(i, 'scripted');
    const env = makeDreamEnv(model, { envId: ENV });
    const task = definition.generateTask(HELD_OUT_SEED_BASE + i, 0);
    const object = askedObject(task.instruction);
    let obs = await env.reset({ seed: HELD_OUT_SEED_BASE + i, task });
    for (;;) {
      const action = scriptedMove(obs, object, rng);
      const result = await env.step(action);
      if (action.startsWith('go to')) {
        dream.arrivals++;
        if (result.text.includes(object)) dream.hits++;
        // The place the task asks for never holds the asked object at the start in the real rooms.
        if (action.includes(askedPlace(task.instruction))) {
          dream.atPlace++;
          if (result.text.includes(object)) dream.stockedPlace++;
        }
      }
      obs = result;
      if (result.terminated || result.truncated) {
        if (result.info.success) dream.successes++;
        break;
      }
    }
  }),
);
const real = realArrivals(dataset);
const share = (x: { arrivals: number; hits: number }) =>
  `${x.hits}/${x.arrivals} (${((100 * x.hits) / x.arrivals).toFixed(1)} %)`;
console.log(`${model.label}, T=${temperature}, ${episodes} episodes`);
console.log(`dream: arrivals showing the asked object ${share(dream)}; dream-judged successes ${dream.successes}`);
console.log(
  `dream: arrivals at the asked place showing the asked object ` +
    `${share({ arrivals: dream.atPlace, hits: dream.stockedPlace })} (real: none, by construction)`,
);
console.log(`real (shipped dataset, random play at difficulty 0): arrivals showing the asked object ${share(real)}`);
model.dispose();
await buffer.store.close();
