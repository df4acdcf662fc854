import { envReport } from '../../core/data/env-report';
import { getEnvDefinition } from '../../core/envs/registry';
import type { CommandSpec, ParsedArgs } from '../args';
import { jsonOption } from '../common-options';
import { printJsonLast, progressBar, round } from '../output';

export const checkEnvCommand: CommandSpec = {
  name: 'check-env',
  summary: 'check an environment: contract, expert and random baselines per difficulty, determinism, speed',
  usage: 'dreamgym check-env <id> [--episodes N] [--seed S] [--json]',
  positionals: ['id'],
  options: {
    episodes: {
      type: 'integer',
      description: 'episodes per policy, spread over difficulty levels 0, .25, .5, .75, 1',
      default: 100,
      min: 1,
      max: 10_000,
    },
    seed: { type: 'integer', description: 'first seed', default: 0, min: 0 },
    json: jsonOption('the report'),
  },
};

export async function runCheckEnv(args: ParsedArgs): Promise<number> {
  const id = args.positionals[0];
  getEnvDefinition(id); // fails early with the list of valid ids
  const episodes = args.options.episodes as number;
  const bar = progressBar(`check-env ${id}`);
  const report = await envReport(id, {
    episodes,
    seed: args.options.seed as number,
    onProgress: (d, t) => bar.update(d, t),
  });
  bar.end();
  const summary = {
    env: report.env,
    episodes: report.episodes,
    contract: report.contract,
    ...(report.contract_failures ? { contract_failures: report.contract_failures } : {}),
    expert: {
      success: round(report.expert.success),
      score: round(report.expert.score),
      mean_steps: round(report.expert.mean_steps, 2),
    },
    random: { success: round(report.random.success), score: round(report.random.score) },
    deterministic: report.deterministic,
    steps_per_second: Math.round(report.steps_per_second),
    expert_by_level: Object.fromEntries(
      Object.entries(report.expert.by_level).map(([l, s]) => [
        l,
        { success: round(s.success), mean_steps: round(s.mean_steps, 2) },
      ]),
    ),
    random_by_level: Object.fromEntries(
      Object.entries(report.random.by_level).map(([l, s]) => [l, { success: round(s.success) }]),
    ),
    reset_ms: round(report.reset_ms, 3),
  };
  if (!args.options.json) {
    console.log(
      `${report.env}: contract ${report.contract}${report.contract_failures ? `\n  - ${report.contract_failures.join('\n  - ')}` : ''}`,
    );
    console.log(
      `  expert  success ${summary.expert.success}  score ${summary.expert.score}  mean steps ${summary.expert.mean_steps}`,
    );
    for (const [level, s] of Object.entries(summary.expert_by_level))
      console.log(`    level ${level.padEnd(5)} success ${s.success}  mean steps ${s.mean_steps}`);
    console.log(`  random  success ${summary.random.success}  score ${summary.random.score}`);
    console.log(
      `  deterministic ${report.deterministic}   ${summary.steps_per_second} steps/s   reset ${summary.reset_ms} ms`,
    );
  } else {
    printJsonLast(summary);
  }
  return report.contract === 'ok' && report.deterministic ? 0 : 1;
}
