#!/usr/bin/env node
/**
 * `dreamgym` — the headless entry point: the same core as the page, in Node.
 * Run it as `npm run dreamgym -- <command> [options]`.
 */
import { helpText, parseArgs, UsageError, type CommandSpec, type ParsedArgs } from './args';
import { terminalSafe } from './output';
import { envsCommand, runEnvs } from './commands/envs';
import { checkEnvCommand, runCheckEnv } from './commands/check-env';
import { rolloutCommand, runRollout } from './commands/rollout';
import { convertCommand, runConvert } from './commands/convert';
import { actCommand, runAct } from './commands/act';
import { benchCommand, runBench } from './commands/bench';
import { dreamCommand, runDream } from './commands/dream';
import { auditCommand, runAudit } from './commands/audit';
import { experimentCommand, runExperimentCommand } from './commands/experiment';
import { runTrain } from './commands/train';
import { trainCommand } from './commands/train-options';
import { evalCommand, runEval } from './commands/eval';
import {
  bufferExportCommand,
  bufferImportCommand,
  bufferQueryCommand,
  bufferStatsCommand,
  runBufferExport,
  runBufferImport,
  runBufferQuery,
  runBufferStats,
} from './commands/buffer';
import { withoutCredentials } from '../core/llm/spec';
import { domainImportCommand, domainTrainCommand, runDomainImport, runDomainTrain } from './commands/domain';
import {
  expmodelExportCommand,
  expmodelTrainCommand,
  expmodelVerdictCommand,
  runExpmodelExport,
  runExpmodelTrain,
  runExpmodelVerdict,
} from './commands/expmodel';

interface Command {
  spec: CommandSpec;
  run(args: ParsedArgs): Promise<number | void>;
}

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
  { spec: expmodelVerdictCommand, run: runExpmodelVerdict },
  { spec: actCommand, run: (args) => runAct(args) },
];

function usage(): string {
  return [
    'dreamgym — DreamGym Playground, headless',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.spec.name.padEnd(14)} ${c.spec.summary}`),
    '',
    "Run 'dreamgym help <command>' for a command's options.",
  ].join('\n');
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
    if (group.length) {
      console.error(`'${name}' needs a subcommand: ${group.join(', ')}.`);
      return 2;
    }
    console.error(
      `Unknown command '${name}'. Commands: ${[...new Set(commands.map((c) => c.spec.name.split(' ')[0]))].join(', ')}.`,
    );
    return 2;
  }
  if (rest.includes('--help')) {
    console.log(helpText(command.spec));
    return 0;
  }
  try {
    const code = await command.run(parseArgs(rest, command.spec));
    return typeof code === 'number' ? code : 0;
  } catch (error) {
    const e = error as Error;
    // Messages may quote a server's answer or an imported file: printed with control characters escaped,
    // and an option's URL without its user:password (an --llm refused for carrying one).
    const message = withoutCredentials(`dreamgym ${name}: ${fileErrorMessage(e) ?? e.message}`);
    console.error(terminalSafe(message, { keepLines: true }));
    if (!(e instanceof UsageError) && process.env.DREAMGYM_DEBUG) console.error(e.stack);
    return e instanceof UsageError ? 2 : 1;
  }
}

/** A Node file-system error (EEXIST, EACCES, ENOENT, …) as what is wrong with which path and what to do; null for other errors. */
export function fileErrorMessage(error: Error): string | null {
  const { code, path, syscall } = error as NodeJS.ErrnoException;
  if (typeof code !== 'string' || typeof path !== 'string') return null;
  switch (code) {
    case 'ENOENT':
      return `${path} does not exist (${syscall}): check the path — a folder or file this command reads (a run, a model's weights) must be there first.`;
    case 'EACCES':
    case 'EPERM':
      return (
        `No permission to ${syscall === 'open' || syscall === 'scandir' ? 'open' : 'write'} ${path}: ` +
        'pick a place you may write (another --out or --dir), or fix the permissions.'
      );
    case 'EROFS':
      return `${path} is on a read-only file system: pick another --out or --dir.`;
    case 'EEXIST':
    case 'ENOTDIR':
      return `A file is in the way at ${path}, where a folder is needed: pick another --out or --dir, or move the file away.`;
    case 'EISDIR':
      return `${path} is a folder, where a file is needed: give the path of a file.`;
    case 'ENOSPC':
      return `The disk is full (writing ${path}): free some space and run the command again.`;
    default:
      return null;
  }
}
