import { writeFileSync } from 'node:fs';
import { getEnvDefinition, makeEnv } from '../../core/envs/registry';
import { BASELINE_POLICIES, makeBaselinePolicy, rolloutEpisode } from '../../core/data/rollout';
import { trajectoryToJsonLine } from '../../core/data/trajectory';
import { UsageError, type CommandSpec, type ParsedArgs } from '../args';
import { jsonOption } from '../common-options';
import { printJsonLast, progressBar, round } from '../output';

export const rolloutCommand: CommandSpec = {
  name: 'rollout',
  summary: 'play episodes with a baseline policy and write them as trajectory JSONL',
  usage:
    'dreamgym rollout <id> --policy expert|random|noisy-expert|decoy-expert [--epsilon E] [--finish-early Q] --episodes N --seed S [--difficulty D] --out FILE.jsonl [--json]',
  positionals: ['id'],
  options: {
    policy: { type: 'string', description: 'who acts', choices: BASELINE_POLICIES, default: 'expert' },
    epsilon: {
      type: 'number',
      description: 'noisy-expert: chance of a random action each step',
      default: 0.3,
      min: 0,
      max: 1,
    },
    'finish-early': {
      type: 'number',
      description:
        "noisy-expert: chance of ending the episode early wherever an action other than the expert's would (a premature buy)",
      min: 0,
      max: 1,
    },
    episodes: { type: 'integer', description: 'number of episodes', default: 10, min: 1, max: 100_000 },
    seed: { type: 'integer', description: 'seed of the first episode (episode i uses seed + i)', default: 0, min: 0 },
    difficulty: { type: 'number', description: 'task difficulty 0..1', default: 0.5, min: 0, max: 1 },
    out: { type: 'string', description: 'output JSONL file (our trajectory format)' },
    json: jsonOption('a summary'),
  },
};

export async function runRollout(args: ParsedArgs): Promise<void> {
  const id = args.positionals[0];
  const definition = getEnvDefinition(id);
  const {
    policy: policyName,
    epsilon,
    episodes,
    seed,
    difficulty,
    out,
    'finish-early': finishEarly,
  } = args.options as {
    policy: string;
    epsilon: number;
    episodes: number;
    seed: number;
    difficulty: number;
    out?: string;
    'finish-early'?: number;
  };
  if (!out) throw new UsageError('rollout needs --out FILE.jsonl (where to write the episodes).', rolloutCommand);
  if (finishEarly !== undefined && policyName !== 'noisy-expert')
    throw new UsageError(
      '--finish-early is a noisy-expert setting: add --policy noisy-expert, or drop it.',
      rolloutCommand,
    );
  const policy = makeBaselinePolicy(policyName, { epsilon, ...(finishEarly !== undefined ? { finishEarly } : {}) });
  const env = makeEnv(id);
  const lines: string[] = [];
  let successes = 0,
    score = 0,
    steps = 0;
  const bar = progressBar(`rollout ${id} ${policyName}`);
  for (let i = 0; i < episodes; i++) {
    const task = definition.generateTask(seed + i, difficulty);
    const t = await rolloutEpisode(env, policy, { seed: seed + i, task });
    lines.push(trajectoryToJsonLine(t) + '\n');
    successes += t.result.success ? 1 : 0;
    score += t.result.score;
    steps += t.result.steps;
    bar.update(i + 1, episodes, `success ${(successes / (i + 1)).toFixed(2)}`);
  }
  bar.end();
  writeFileSync(out, lines.join(''));
  const summary = {
    env: id,
    policy: policyName,
    ...(policyName === 'noisy-expert' ? { epsilon, ...(finishEarly !== undefined ? { finishEarly } : {}) } : {}),
    episodes,
    seed,
    difficulty,
    success: round(successes / episodes),
    score: round(score / episodes),
    steps,
    out,
  };
  if (args.options.json) printJsonLast(summary);
  else
    console.log(
      `wrote ${episodes} episodes (${steps} steps) to ${out}: success ${summary.success}, score ${summary.score}`,
    );
}
