import { listEnvDefinitions } from '../../core/envs/registry';
import type { CommandSpec, ParsedArgs } from '../args';
import { jsonOption } from '../common-options';
import { printJsonLast } from '../output';

export const envsCommand: CommandSpec = {
  name: 'envs',
  summary: 'list the environment ids',
  usage: 'dreamgym envs [--json]',
  options: { json: jsonOption('the list') },
};

export async function runEnvs(args: ParsedArgs): Promise<void> {
  const defs = listEnvDefinitions();
  if (args.options.json) {
    printJsonLast(defs.map((d) => ({ id: d.id, name: d.name, summary: d.summary, step_limit: d.defaultStepLimit })));
    return;
  }
  for (const d of defs)
    console.log(
      `${d.id.padEnd(18)} ${d.name.padEnd(16)} step limit ${String(d.defaultStepLimit).padEnd(4)} ${d.summary}`,
    );
}
