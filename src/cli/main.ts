#!/usr/bin/env node
/**
 * `dreamgym` — the headless entry point: the same core as the page, in Node.
 * Run it as `npm run dreamgym -- <command> [options]`.
 */
import { helpText, parseArgs, UsageError, type CommandSpec, type ParsedArgs } from './args';
import { envsCommand, runEnvs } from './commands/envs';
import { checkEnvCommand, runCheckEnv } from './commands/check-env';
import { rolloutCommand, runRollout } from './commands/rollout';
import { convertCommand, runConvert } from './commands/convert';
import { benchCommand, runBench } from './commands/bench';
import { dreamCommand, runDream } from './commands/dream';
import { auditCommand, runAudit } from './commands/audit';
import { experimentCommand, runExperimentCommand } from './commands/experiment';
import { evalCommand, runEval, runTrain, trainCommand } from './commands/train';
import { bufferExportCommand, bufferImportCommand, bufferQueryCommand, bufferStatsCommand, runBufferExport, runBufferImport, runBufferQuery, runBufferStats } from './commands/buffer';
import { domainImportCommand, domainTrainCommand, runDomainImport, runDomainTrain } from './commands/domain';
import { expmodelExportCommand, expmodelTrainCommand, runExpmodelExport, runExpmodelTrain } from './commands/expmodel';

interface Command { spec: CommandSpec; run(args: ParsedArgs): Promise<number | void> }

const commands: Command[] = [
  { spec: envsCommand, run: runEnvs },
  { spec: checkEnvCommand, run: runCheckEnv },
  { spec: rolloutCommand, run: runRollout },
  { spec: convertCommand, run: runConvert },
  { spec: trainCommand, run: runTrain },
  { spec: evalCommand, run: runEval },
  { spec: bufferImportCommand, run: runBufferImport },
  { spec: bufferStatsCommand, run: runBufferStats },
  { spec: bufferQueryCommand, run: runBufferQuery },
  { spec: bufferExportCommand, run: runBufferExport },
  { spec: benchCommand, run: runBench },
  { spec: dreamCommand, run: runDream },
  { spec: auditCommand, run: runAudit },
  { spec: domainImportCommand, run: runDomainImport },
  { spec: domainTrainCommand, run: runDomainTrain },
  { spec: experimentCommand, run: runExperimentCommand },
  { spec: expmodelTrainCommand, run: runExpmodelTrain },
  { spec: expmodelExportCommand, run: runExpmodelExport },
];

function usage(): string {
  return ['dreamgym — DreamGym Playground, headless', '', 'Commands:',
    ...commands.map((c) => `  ${c.spec.name.padEnd(14)} ${c.spec.summary}`),
    '', "Run 'dreamgym help <command>' for a command's options."].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  // Two-word commands ('buffer import') are looked up by their first two words.
  const twoWords = argv.length >= 2 && commands.some((c) => c.spec.name === `${argv[0]} ${argv[1]}`);
  const [name, ...rest] = twoWords ? [`${argv[0]} ${argv[1]}`, ...argv.slice(2)] : argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    const target = commands.find((c) => c.spec.name === rest.join(' '));
    console.log(target ? helpText(target.spec) : usage());
    return 0;
  }
  const command = commands.find((c) => c.spec.name === name);
  if (!command) {
    const group = commands.filter((c) => c.spec.name.startsWith(`${name} `)).map((c) => c.spec.name);
    if (group.length) { console.error(`'${name}' needs a subcommand: ${group.join(', ')}.`); return 2; }
    console.error(`Unknown command '${name}'. Commands: ${[...new Set(commands.map((c) => c.spec.name.split(' ')[0]))].join(', ')}.`);
    return 2;
  }
  if (rest.includes('--help')) { console.log(helpText(command.spec)); return 0; }
  try {
    const code = await command.run(parseArgs(rest, command.spec));
    return typeof code === 'number' ? code : 0;
  } catch (error) {
    const e = error as Error;
    console.error(`dreamgym ${name}: ${e.message}`);
    if (!(e instanceof UsageError) && process.env.DREAMGYM_DEBUG) console.error(e.stack);
    return e instanceof UsageError ? 2 : 1;
  }
}
