// Shows a trained agent's play step by step, real or dreamed — quoted in docs/results/{honest,household}-dream.md.
/**
 * A trained agent's greedy play on a few held-out tasks, step by step, in the real env or in a
 * learned model's dream: what a dream taught it, and where the two part.
 *   node --import tsx scripts/measure/watch-agent.ts RUN_DIR [EPISODES=3] [DIFFICULTY=0] [DREAM_MODEL_DIR] [K=0]
 */
import { readFileSync } from 'node:fs';
import { loadRunAgent } from '../../src/cli/commands/run-folder';
import { recordGreedyEpisode } from '../../src/core/train/evaluate';
import { getEnvDefinition, makeEnv } from '../../src/core/envs/registry';
import { HELD_OUT_SEED_BASE } from '../../src/core/envs/env';
import { terminalSafe } from '../../src/cli/output';
import { loadModelFolder } from '../../src/node/model-folder';
import { bufferFromTrajectories } from '../../src/core/experience/seed-buffer';
import { makeDreamEnv } from '../../src/core/experience/dream-env';
import { parseTrajectoriesJsonl } from '../../src/core/data/trajectory';

const [run, episodes = '3', difficulty = '0', dreamDir, k = '0'] = process.argv.slice(2);
if (!run)
  throw new Error(
    'Usage: node --import tsx scripts/measure/watch-agent.ts RUN_DIR [EPISODES] [DIFFICULTY] [MODEL_DIR] [K]',
  );
const agent = await loadRunAgent(run);
const envId = agent.trainer.config.env;
const dataset = parseTrajectoriesJsonl(readFileSync(`public/datasets/${envId}.jsonl`, 'utf8'), { knownEnvs: [envId] });
const model = dreamDir
  ? await loadModelFolder(dreamDir, {
      env: envId,
      buffer: await bufferFromTrajectories(dataset),
      seed: 1,
      k: Number(k),
      temperature: 0.7,
    })
  : null;
for (let i = 0; i < Number(episodes); i++) {
  const seed = HELD_OUT_SEED_BASE + i;
  const task = getEnvDefinition(envId).generateTask(seed, Number(difficulty));
  const env = model ? makeDreamEnv(model, { envId }) : makeEnv(envId);
  const t = await recordGreedyEpisode(agent.trainer.policy, env, task, seed);
  const end = t.steps.at(-1)!;
  console.log(`\n# ${seed}: ${terminalSafe(task.instruction)} — ${t.steps.length} steps, reward ${end.reward}`);
  console.log(`  ${t.steps.map((s) => terminalSafe(s.action)).join(' → ')}`);
  const first = t.steps.find((s) => s.action.startsWith('take'));
  if (first) console.log(`  seen at the first take: ${terminalSafe(first.observation.slice(0, 200))}`);
}
await agent.close();
