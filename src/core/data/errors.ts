/**
 * Import errors. A malformed file is rejected whole: every problem is collected with its line
 * (or record) number and field, and nothing is imported, so a user can fix the file in one pass.
 */
import { firstTooDeepOffset, MAX_JSON_DEPTH } from './json-position';
import { DreamGymError } from '../errors';

export interface ImportProblem {
  /** 1-based line of a JSONL file, or 1-based record index of a JSON array file. */
  line: number;
  /** Dotted path of the offending field ('' for the whole line). */
  field: string;
  message: string;
}

export class DatasetImportError extends DreamGymError {
  readonly problems: ImportProblem[];
  constructor(
    readonly source: string,
    problems: ImportProblem[],
    readonly unit: 'line' | 'record' = 'line',
    /** What is most likely wrong with the whole file (another format), said before the fix. */
    readonly hint?: string,
  ) {
    // In file order (unparsable lines are found before the others are checked); stable within a line.
    problems = [...problems].sort((a, b) => a.line - b.line);
    const shown = problems
      .slice(0, 20)
      .map((p) => `  ${unit} ${p.line}${p.field ? `, field '${p.field}'` : ''}: ${p.message}`);
    const more = problems.length > 20 ? [`  … and ${problems.length - 20} more problems`] : [];
    super(
      `Cannot import ${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'} found, nothing was imported.\n` +
        [...shown, ...more].join('\n') +
        (hint ? `\n${hint}` : '') +
        '\nFix the listed lines (or convert the file with `dreamgym convert`) and import again.',
      {
        code: 'dataset-invalid',
        fix: 'Fix the listed lines (or convert the file with `dreamgym convert`) and import again.',
      },
    );
    this.name = 'DatasetImportError';
    this.problems = problems;
  }
}

/** Collects problems for one record; `check*` helpers return the value when it has the right type. */
export class RecordChecker {
  constructor(
    readonly line: number,
    readonly problems: ImportProblem[],
  ) {}

  problem(field: string, message: string): void {
    this.problems.push({ line: this.line, field, message });
  }

  object(value: unknown, field: string): Record<string, unknown> | undefined {
    if (value === undefined) {
      this.problem(field, 'missing field (expected an object)');
      return undefined;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.problem(field, `expected an object, got ${describe(value)}`);
      return undefined;
    }
    return value as Record<string, unknown>;
  }

  string(value: unknown, field: string, options: { optional?: boolean; nonEmpty?: boolean } = {}): string | undefined {
    if (value === undefined && options.optional) return undefined;
    if (value === undefined) {
      this.problem(field, 'missing field (expected a string)');
      return undefined;
    }
    if (typeof value !== 'string') {
      this.problem(field, `expected a string, got ${describe(value)}`);
      return undefined;
    }
    if (options.nonEmpty && value.length === 0) {
      this.problem(field, 'must not be empty');
      return undefined;
    }
    return value;
  }

  number(value: unknown, field: string, options: { optional?: boolean; integer?: boolean } = {}): number | undefined {
    if (value === undefined && options.optional) return undefined;
    if (value === undefined) {
      this.problem(field, 'missing field (expected a number)');
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      this.problem(field, `expected a finite number, got ${describe(value)}`);
      return undefined;
    }
    if (options.integer && !Number.isInteger(value)) {
      this.problem(field, `expected an integer, got ${value}`);
      return undefined;
    }
    return value;
  }

  boolean(value: unknown, field: string, options: { optional?: boolean } = {}): boolean | undefined {
    if (value === undefined && options.optional) return undefined;
    if (value === undefined) {
      this.problem(field, 'missing field (expected true or false)');
      return undefined;
    }
    if (typeof value !== 'boolean') {
      this.problem(field, `expected true or false, got ${describe(value)}`);
      return undefined;
    }
    return value;
  }

  array(value: unknown, field: string, options: { optional?: boolean } = {}): unknown[] | undefined {
    if (value === undefined && options.optional) return undefined;
    if (value === undefined) {
      this.problem(field, 'missing field (expected an array)');
      return undefined;
    }
    if (!Array.isArray(value)) {
      this.problem(field, `expected an array, got ${describe(value)}`);
      return undefined;
    }
    return value;
  }

  stringArray(value: unknown, field: string, options: { optional?: boolean } = {}): string[] | undefined {
    const items = this.array(value, field, options);
    if (!items) return undefined;
    let ok = true;
    items.forEach((item, i) => {
      if (typeof item !== 'string') {
        this.problem(`${field}[${i}]`, `expected a string, got ${describe(item)}`);
        ok = false;
      }
    });
    return ok ? (items as string[]) : undefined;
  }

  oneOf<T extends string>(
    value: unknown,
    field: string,
    allowed: readonly T[],
    options: { optional?: boolean } = {},
  ): T | undefined {
    const text = this.string(value, field, options);
    if (text === undefined) return undefined;
    if (!allowed.includes(text as T)) {
      this.problem(field, `unknown value '${text}'; valid values: ${allowed.join(', ')}`);
      return undefined;
    }
    return text as T;
  }
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/** A leading UTF-8 byte-order mark (what some editors write) is not part of the data. */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** The problem of a record nested deeper than MAX_JSON_DEPTH, at `offset` within its text. */
export function tooDeepMessage(column: number): string {
  return (
    `nested deeper than ${MAX_JSON_DEPTH} levels (from column ${column}); a record may nest objects and arrays at most ` +
    `${MAX_JSON_DEPTH} deep: flatten that field (a task spec, say) or leave it out`
  );
}

/**
 * Splits JSONL text into (line number, parsed JSON) pairs; blank lines are skipped, bad JSON and
 * over-deep records are problems. A leading byte-order mark is dropped.
 */
export function parseJsonLines(text: string, problems: ImportProblem[]): { line: number; value: unknown }[] {
  const out: { line: number; value: unknown }[] = [];
  const lines = withoutBom(text).split(/\r?\n/);
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    const deep = firstTooDeepOffset(raw);
    if (deep >= 0) {
      problems.push({ line: i + 1, field: '', message: tooDeepMessage(deep + 1) });
      return;
    }
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) });
    } catch (error) {
      problems.push({ line: i + 1, field: '', message: `not valid JSON (${(error as Error).message})` });
    }
  });
  return out;
}
