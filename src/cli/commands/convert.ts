import { readFileSync, writeFileSync } from 'node:fs';
import {
  assertFormat,
  assertReadFormat,
  FORMATS,
  READ_FORMATS,
  readTrajectoriesAs,
  writeTrajectories,
} from '../../core/data/formats';
import { envIds } from '../../core/envs/registry';
import { UsageError, type CommandSpec, type ParsedArgs } from '../args';
import { jsonOption } from '../common-options';
import { printJsonLast } from '../output';

export const convertCommand: CommandSpec = {
  name: 'convert',
  summary: 'convert trajectories between formats (ours, AgentGym, ETO, TRL)',
  usage: 'dreamgym convert [--from FMT] --to FMT IN OUT [--env ID] [--json]',
  positionals: ['in', 'out'],
  options: {
    from: {
      type: 'string',
      description: "input format (auto: the one the first record's fields say)",
      choices: READ_FORMATS,
      default: 'auto',
    },
    to: { type: 'string', description: 'output format', choices: FORMATS },
    env: { type: 'string', description: 'env id for TRL records without an env key' },
    json: jsonOption('a summary'),
  },
};

export async function runConvert(args: ParsedArgs): Promise<void> {
  const [input, output] = args.positionals;
  if (!args.options.to) throw new UsageError(`convert needs --to (formats: ${FORMATS.join(', ')}).`, convertCommand);
  const to = assertFormat(args.options.to as string);
  const text = readFileSync(input, 'utf8');
  const { format: from, trajectories } = readTrajectoriesAs(text, assertReadFormat(args.options.from as string), {
    sourceName: input,
    knownEnvs: envIds(),
    defaultEnv: args.options.env as string | undefined,
  });
  writeFileSync(output, writeTrajectories(trajectories, to));
  const summary = {
    from,
    to,
    in: input,
    out: output,
    episodes: trajectories.length,
    steps: trajectories.reduce((s, t) => s + t.steps.length, 0),
  };
  if (args.options.json) printJsonLast(summary);
  else console.log(`converted ${summary.episodes} episodes (${summary.steps} steps) from ${from} to ${to}: ${output}`);
}
