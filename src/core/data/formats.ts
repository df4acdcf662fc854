/** One entry point for reading and writing every trajectory format we support. */
import type { Trajectory } from '../types';
import { DatasetImportError, RecordChecker, type ImportProblem } from './errors';
import { readRecords } from './records';
import { parseChatFormatId } from './conversation';
import { checkTrajectoryRecord, trajectoriesToJsonl } from './trajectory';
import { fromAgentGymRecord, writeAgentGym } from './agentgym';
import { fromEtoRecord, writeEto } from './eto';
import { fromTrlRecord, writeTrl } from './trl';

export const FORMATS = ['ours', 'agentgym', 'eto', 'trl'] as const;
export type TrajectoryFormat = (typeof FORMATS)[number];

export class UnknownFormatError extends Error {
  constructor(readonly requested: string) {
    super(`Unknown trajectory format '${requested}'. Valid formats: ${FORMATS.join(', ')}.`);
    this.name = 'UnknownFormatError';
  }
}

export function assertFormat(name: string): TrajectoryFormat {
  if (!(FORMATS as readonly string[]).includes(name)) throw new UnknownFormatError(name);
  return name as TrajectoryFormat;
}

export interface ReadOptions {
  /** Environment ids records may name; records naming others are rejected. */
  knownEnvs?: readonly string[];
  /** Env for TRL records that carry no `env` key. */
  defaultEnv?: string;
  /** Shown in errors (the file name). */
  sourceName?: string;
}

type RecordReader = (value: unknown, check: RecordChecker, options: ReadOptions) => Trajectory | undefined;

/** One record of each format; ours checks the env itself, the chat formats are checked by `checkEnv`. */
const READERS: Record<TrajectoryFormat, RecordReader> = {
  ours: (value, check, options) => checkTrajectoryRecord(value, check, options.knownEnvs),
  agentgym: (value, check) => fromAgentGymRecord(value, check),
  eto: (value, check) => fromEtoRecord(value, check),
  trl: (value, check, options) => fromTrlRecord(value, check, options.defaultEnv),
};

/** The field of a record that names its episode id (and, in the chat formats, its env). */
const ID_FIELD: Record<TrajectoryFormat, string> = { ours: 'id', agentgym: 'item_id', eto: 'id', trl: 'id' };

/**
 * Parses a whole file; any problem rejects it whole with every line and field named: bad JSON, a
 * record nested too deep, a bad field, an unknown environment (checked on every record that
 * could be read, whatever else is wrong), and an episode id used twice.
 */
export function readTrajectories(text: string, format: TrajectoryFormat, options: ReadOptions = {}): Trajectory[] {
  const problems: ImportProblem[] = [];
  const { unit, rows } = readRecords(text, problems);
  const out: Trajectory[] = [];
  const firstLine = new Map<string, number>();
  for (const { line, value } of rows) {
    const check = new RecordChecker(line, problems);
    if (format !== 'ours' && options.knownEnvs) checkEnv(format, value, check, options);
    const t = READERS[format](value, check, options);
    if (!t) continue;
    const first = firstLine.get(t.id);
    if (first !== undefined) {
      check.problem(
        ID_FIELD[format],
        `episode id '${t.id}' is already used by ${unit} ${first}; every episode needs an id of its own ` +
          '(convert the file again with `dreamgym convert`, which writes unique ids, or rename the repeat)',
      );
    } else {
      firstLine.set(t.id, line);
    }
    out.push(t);
  }
  if (rows.length === 0 && problems.length === 0)
    problems.push({ line: 1, field: '', message: 'the file holds no records' });
  if (problems.length > 0) throw new DatasetImportError(options.sourceName ?? 'the file', problems, unit);
  return out;
}

/** A chat-format record's env (from its id, or TRL's env key) must be known — checked whatever else is wrong with the record. */
function checkEnv(
  format: Exclude<TrajectoryFormat, 'ours'>,
  value: unknown,
  check: RecordChecker,
  options: ReadOptions,
): void {
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  const field = format === 'trl' && record.env !== undefined ? 'env' : ID_FIELD[format];
  const named = format === 'trl' ? (record.env ?? options.defaultEnv) : record[ID_FIELD[format]];
  if (typeof named !== 'string' || named === '') return; // a missing id or env is the reader's problem to report
  const env = format === 'trl' ? named : parseChatFormatId(named).env;
  if (!options.knownEnvs!.includes(env)) {
    check.problem(
      field,
      `unknown environment '${env}'; known: ${options.knownEnvs!.join(', ')} (import a domain first for other envs)`,
    );
  }
}

export function writeTrajectories(ts: readonly Trajectory[], format: TrajectoryFormat): string {
  switch (format) {
    case 'ours':
      return trajectoriesToJsonl(ts);
    case 'agentgym':
      return writeAgentGym(ts);
    case 'eto':
      return writeEto(ts);
    case 'trl':
      return writeTrl(ts);
  }
}
