/** One entry point for reading and writing every trajectory format we support. */
import type { Trajectory } from '../types';
import { DatasetImportError, RecordChecker, type ImportProblem } from './errors';
import { readRecords } from './records';
import { checkTrajectoryRecord, trajectoriesToJsonl } from './trajectory';
import { readAgentGym, writeAgentGym } from './agentgym';
import { readEto, writeEto } from './eto';
import { readTrl, writeTrl } from './trl';

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

/** Parses a whole file; any problem rejects it whole with every line and field named. */
export function readTrajectories(text: string, format: TrajectoryFormat, options: ReadOptions = {}): Trajectory[] {
  const problems: ImportProblem[] = [];
  const { unit, rows } = readRecords(text, problems);
  let out: Trajectory[] = [];
  // Lines that parsed are checked even when others did not, so one pass shows every problem.
  const unparsed = problems.length;
  if (format === 'ours') out = rows.flatMap(({ line, value }) => checkTrajectoryRecord(value, new RecordChecker(line, problems), options.knownEnvs) ?? []);
  else if (format === 'agentgym') out = readAgentGym(rows, problems);
  else if (format === 'eto') out = readEto(rows, problems);
  else out = readTrl(rows, problems, options.defaultEnv);
  // Every parsed record was read without problems, so out[i] belongs to rows[i].
  if (format !== 'ours' && options.knownEnvs && problems.length === unparsed && out.length === rows.length) {
    out.forEach((t, i) => {
      if (!options.knownEnvs!.includes(t.env)) {
        problems.push({ line: rows[i].line, field: format === 'trl' ? 'env' : 'id', message: `unknown environment '${t.env}'; known: ${options.knownEnvs!.join(', ')}` });
      }
    });
  }
  if (rows.length === 0 && problems.length === 0) problems.push({ line: 1, field: '', message: 'the file holds no records' });
  if (problems.length > 0) throw new DatasetImportError(options.sourceName ?? 'the file', problems, unit);
  return out;
}

export function writeTrajectories(ts: readonly Trajectory[], format: TrajectoryFormat): string {
  switch (format) {
    case 'ours': return trajectoriesToJsonl(ts);
    case 'agentgym': return writeAgentGym(ts);
    case 'eto': return writeEto(ts);
    case 'trl': return writeTrl(ts);
  }
}
