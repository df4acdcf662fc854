/**
 * A small, strict argument parser: unknown options and bad values are errors that name the
 * option and list what is valid, instead of being silently ignored.
 *
 * Why not Node's util.parseArgs: it knows only string and boolean options, so numbers, integers,
 * ranges, choices, defaults, repeats and the positional count would all stay here, and only the
 * splitting of argv would move. In strict mode its errors name neither the command nor the valid
 * options ("Unknown option '--sed'. To specify a positional argument starting with a '-', …"),
 * refuse `--quick=false`, and take `--seed -1` for a missing value; in loose mode it reads `-x` as
 * a short option where a file name is meant. The loop below is the part it would replace.
 */
import { DreamGymError } from '../core/errors';

export type OptionType = 'string' | 'number' | 'integer' | 'boolean';

export interface OptionSpec {
  type: OptionType;
  description: string;
  default?: string | number | boolean;
  /** Allowed values for string options. */
  choices?: readonly string[];
  /** Bounds of number and integer options (a value outside is a usage error naming them). */
  min?: number;
  max?: number;
}

export interface CommandSpec {
  name: string;
  summary: string;
  usage: string;
  options: Record<string, OptionSpec>;
  /** Names of the positional arguments, in order (all required). */
  positionals?: string[];
}

export class UsageError extends DreamGymError {
  constructor(
    message: string,
    readonly command?: CommandSpec,
  ) {
    super(
      command ? `${message}\nUsage: ${command.usage}\nRun 'dreamgym help ${command.name}' for the options.` : message,
      {
        code: 'usage',
        fix: command ? `Run 'dreamgym help ${command.name}' for the options.` : "Run 'dreamgym help' for the commands.",
      },
    );
    this.name = 'UsageError';
  }
}

export interface ParsedArgs {
  options: Record<string, string | number | boolean | undefined>;
  positionals: string[];
  /** The options given on the command line (the rest of `options` are defaults). */
  given?: readonly string[];
}

/** A plain decimal number (no hex, octal, binary, or blank): '0x2' is not 2 here. */
export const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

export function parseArgs(argv: string[], spec: CommandSpec): ParsedArgs {
  const options: ParsedArgs['options'] = {};
  for (const [name, o] of Object.entries(spec.options)) if (o.default !== undefined) options[name] = o.default;
  const positionals: string[] = [];
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const [rawName, inlineValue] = arg.slice(2).split(/=(.*)/s, 2);
    const option = spec.options[rawName];
    if (!option) {
      const valid =
        Object.keys(spec.options)
          .map((n) => `--${n}`)
          .join(', ') || '(none)';
      throw new UsageError(`Unknown option --${rawName} for '${spec.name}'. Valid options: ${valid}.`, spec);
    }
    // A second value would silently replace the first: say so instead.
    if (given.has(rawName)) throw new UsageError(repeatedText(rawName), spec);
    given.add(rawName);
    if (option.type === 'boolean') {
      options[rawName] = inlineValue === undefined ? true : inlineValue !== 'false';
      continue;
    }
    const value = inlineValue ?? argv[++i];
    if (value === undefined || (inlineValue === undefined && value.startsWith('--'))) {
      throw new UsageError(`Option --${rawName} needs a value (${option.description}).`, spec);
    }
    if (option.type === 'number' || option.type === 'integer') {
      const n = DECIMAL.test(value.trim()) ? Number(value) : NaN;
      if (!Number.isFinite(n) || (option.type === 'integer' && !Number.isInteger(n))) {
        throw new UsageError(
          `Option --${rawName} must be ${option.type === 'integer' ? 'an integer' : 'a number'}, got '${value}'.`,
          spec,
        );
      }
      // An integer past 2^53 is not exact (1e20 + 1 === 1e20): refused like any out-of-range value.
      const max = option.type === 'integer' ? Math.min(option.max ?? Infinity, Number.MAX_SAFE_INTEGER) : option.max;
      if ((option.min !== undefined && n < option.min) || (max !== undefined && n > max)) {
        throw new UsageError(
          `Option --${rawName} must be ${rangeText({ ...option, max })}, got ${n} (${option.description}).`,
          spec,
        );
      }
      options[rawName] = n;
    } else {
      if (option.choices && !option.choices.includes(value)) {
        throw new UsageError(`Option --${rawName} must be one of ${option.choices.join(', ')}; got '${value}'.`, spec);
      }
      options[rawName] = value;
    }
  }
  const expected = spec.positionals ?? [];
  if (positionals.length !== expected.length) {
    throw new UsageError(
      `'${spec.name}' takes ${expected.length ? expected.map((p) => `<${p}>`).join(' ') : 'no positional arguments'}; got ${positionals.length ? positionals.map((p) => `'${p}'`).join(' ') : 'none'}.`,
      spec,
    );
  }
  return { options, positionals, given: [...given] };
}

function repeatedText(name: string): string {
  const fix = name === 'set' ? 'give it once, its pairs separated by commas (--set a=1,b=2)' : 'give it once';
  return `Option --${name} is given twice, and only one value can hold: ${fix}.`;
}

function rangeText(option: OptionSpec): string {
  if (option.min !== undefined && option.max !== undefined) return `within ${option.min}..${option.max}`;
  return option.min !== undefined ? `at least ${option.min}` : `at most ${option.max}`;
}

export function helpText(spec: CommandSpec): string {
  const lines = [`${spec.name} — ${spec.summary}`, `Usage: ${spec.usage}`];
  const entries = Object.entries(spec.options);
  if (entries.length) lines.push('Options:');
  for (const [name, o] of entries) {
    const extra = [
      o.choices ? `one of ${o.choices.join('|')}` : '',
      o.default !== undefined ? `default ${o.default}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    lines.push(`  --${name.padEnd(14)} ${o.description}${extra ? ` (${extra})` : ''}`);
  }
  return lines.join('\n');
}
