// Measures how a scripted household player's dreamed episodes end — figures: docs/results/honest-dream.md.
/**
 * A scripted household player in the shipped learned model's dream, with the halt as a run builds
 * it: take the asked object where offered, put it at the asked place where offered, else go
 * somewhere at random. Prints how its episodes end (success, halted, truncated) and which role
 * patterns halted most (novelty.ts explain, finest level).
 *   node --import tsx scripts/measure/scripted-dream.ts [EPISODES=48] [nohalt]   (REDRAWS=3 by default)
 */
import { readFileSync } from 'node:fs';
import { initBackend } from '../../src/core/tfjs/backend';
import { loadModelFolder } from '../../src/node/model-folder';
import { bufferFromTrajectories } from '../../src/core/experience/seed-buffer';
import { makeDreamEnv } from '../../src/core/experience/dream-env';
import { getEnvDefinition } from '../../src/core/envs/registry';
import { parseTrajectoriesJsonl } from '../../src/core/data/trajectory';
import { HaltingExperienceModel, noveltyStepOf } from '../../src/core/experience/halting-model';
import type { DreamContext, ExperienceModel } from '../../src/core/experience/types';
import { NoveltyIndex, recordedNoveltySteps } from '../../src/core/experience/novelty';
import { realEpisodes } from '../../src/core/experience/learned/sft-data';
import { Rng } from '../../src/core/rng';
import type { Observation } from '../../src/core/types';
const ENV = 'household-v0';
const N = Number(process.argv[2] ?? 48);
const haltOn = process.argv[3] !== 'nohalt';
await initBackend('wasm');
const dataset = parseTrajectoriesJsonl(readFileSync('public/datasets/household-v0.jsonl', 'utf8'), {
  knownEnvs: [ENV],
});
const buffer = await bufferFromTrajectories(dataset);
const inner = await loadModelFolder('public/models', {
  env: ENV,
  buffer,
  k: 4,
  historyLength: 4,
  seed: 1,
  verdictMembers: 5,
});
const real = (await realEpisodes(buffer, ENV)).episodes.map(recordedNoveltySteps);
const index = NoveltyIndex.fromEpisodes(real, { quantile: 0.99, successQuantile: 0.95 });
const tally = new Map<string, number>();
/** The model, tallying the role patterns of its draws that are beyond the threshold. */
const spy: ExperienceModel = {
  label: 'learned household-v0 (k=4, H=4)',
  initial: (task, signal) => inner.initial(task, signal),
  next: async (ctx: DreamContext) => {
    const p = await inner.next(ctx);
    const st = noveltyStepOf(ctx, p);
    if (index.distance(st) > index.threshold(st)) {
      const f = index.explain(st).features;
      const k =
        f[f.length - 1] +
        ' || same-place=' +
        (st.action.startsWith('go to') && st.state.includes('arrive at ' + st.action.slice(6) + '.'));
      tally.set(k, (tally.get(k) ?? 0) + 1);
    }
    return p;
  },
};
const model = haltOn
  ? new HaltingExperienceModel(spy, index, { penalty: 0, redraws: Number(process.env.REDRAWS ?? 3) })
  : inner;
const definition = getEnvDefinition(ENV);
const askedObject = (i: string) => /put (?:a|some) (\w+)/.exec(i)?.[1] ?? '';
const askedPlace = (i: string) => /(?:in|on) (\w+)\.$/.exec(i)?.[1] ?? '';
function scripted(obs: Observation, object: string, place: string, holding: boolean, rng: Rng): string {
  const f = (p: (a: string) => boolean) => obs.admissible.find(p);
  if (holding)
    return (
      f((a) => a.startsWith('put ') && a.includes(object) && a.includes(place)) ??
      rng.pick(obs.admissible.filter((a) => a.startsWith('go to')))
    );
  return (
    f((a) => a.startsWith('take ') && a.includes(object)) ??
    rng.pick(obs.admissible.filter((a) => a.startsWith('go to')))
  );
}
const out = { success: 0, halted: 0, failEnd: 0, trunc: 0, tookObject: 0, putAttempts: 0 };
const ends: string[] = [];
await Promise.all(
  Array.from({ length: N }, async (_, i) => {
    const rng = Rng.fromSeed(i, 'scripted');
    const env = makeDreamEnv(model, { envId: ENV });
    const task = definition.generateTask(i, 0);
    const object = askedObject(task.instruction),
      place = askedPlace(task.instruction);
    let obs = await env.reset({ seed: i, task });
    let holding = false;
    const acts: string[] = [];
    for (;;) {
      const a = scripted(obs, object, place, holding, rng);
      acts.push(a);
      const r = await env.step(a);
      if (a.startsWith('take ') && r.text.includes('pick up')) {
        holding = true;
        out.tookObject++;
      }
      if (a.startsWith('put ')) out.putAttempts++;
      obs = r;
      if (r.terminated || r.truncated) {
        const d = r.info.dream;
        if (r.info.success) out.success++;
        else if (d?.halted) out.halted++;
        else if (r.truncated) out.trunc++;
        else out.failEnd++;
        if (i < 10)
          ends.push(
            `${task.instruction} | ${acts.slice(-3).join(' > ')} | ${r.text.slice(0, 80)} | ` +
              `succ=${r.info.success} halted=${d?.halted ?? false} nov=${d?.novelty}`,
          );
        break;
      }
    }
  }),
);
console.log([...tally].sort((a, b) => b[1] - a[1]).slice(0, 15));
console.log(model.label);
console.log(out);
for (const e of ends) console.log(e);
