import { initBackend } from './src/core/policy/backend';
import { FolderCheckpointStore } from './src/cli/checkpoint-folder';
import { Trainer } from './src/core/train/loop';
import { makeEnv, getEnvDefinition } from './src/core/envs/registry';
import { Rng } from './src/core/rng';
await initBackend('wasm');
const st = await new FolderCheckpointStore('/tmp/hh-grpo-1/checkpoint').load();
const tr = await Trainer.restore(st!);
const def = getEnvDefinition('household-v0');
for (const seed of [3, 4, 5, 6]) {
  const env = makeEnv('household-v0');
  let obs = await env.reset({ seed: 1e9 + seed, task: def.generateTask(1e9 + seed, 0) });
  console.log('TASK', obs.task.instruction);
  const acts: string[] = [];
  for (let t = 0; t < 14; t++) {
    const r = await tr.policy.act([{ instruction: obs.task.instruction, observation: obs.text, admissible: obs.admissible, step: t, maxSteps: 50, previousActions: acts }], Rng.fromSeed(t), { greedy: true });
    const a = r.actions[0]; acts.push(a);
    const res = await env.step(a);
    console.log(' ', t, a, '|', res.text.slice(0, 70), res.reward, Math.max(...r.probs[0]).toFixed(2));
    obs = res; if (res.terminated || res.truncated) break;
  }
}
