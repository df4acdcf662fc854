/** One entry point for reading and writing every trajectory format we support. */
import type { Trajectory } from '../types';
import { DatasetImportError, RecordChecker, type ImportProblem } from './errors';
import { readRecords } from './records';
import { parseChatFormatId } from './conversation';
import { checkTrajectoryRecord, trajectoriesToJsonl } from './trajectory';
import { fromAgentGymRecord, writeAgentGym } from './agentgym';
import { fromEtoRecord, writeEto } from './eto';
import { fromTrlRecord, writeTrl } from './trl';
import { DreamGymError } from '../errors';

export const FORMATS = ['ours', 'agentgym', 'eto', 'trl'] as const;
export type TrajectoryFormat = (typeof FORMATS)[number];

export class UnknownFormatError extends DreamGymError {
  constructor(readonly requested: string) {
    super(`Unknown trajectory format '${requested}'. Valid formats: ${FORMATS.join(', ')}.`, {
      code: 'unknown-format',
      fix: `Use one of the valid formats: ${FORMATS.join(', ')}.`,
    });
    this.name = 'UnknownFormatError';
  }
}

export function assertFormat(name: string): TrajectoryFormat {
  if (!(FORMATS as readonly string[]).includes(name)) throw new UnknownFormatError(name);
  return name as TrajectoryFormat;
}

/** A format to read with, or 'auto': the one the file's first record says (formatOfRecord). */
export type ReadFormat = TrajectoryFormat | 'auto';
export const READ_FORMATS: readonly ReadFormat[] = ['auto', ...FORMATS];

export function assertReadFormat(name: string): ReadFormat {
  return name === 'auto' ? 'auto' : assertFormat(name);
}

/** What each format's records look like, to name it in a message. */
export const FORMAT_SIGNS: Record<TrajectoryFormat, string> = {
  ours: "records with 'format', 'task' and 'steps'",
  agentgym: "records with 'item_id' and 'conversations'",
  eto: "records with 'id' and 'conversations', and no 'item_id'",
  trl: "records with 'messages', or 'prompt' and 'completion'",
};

/** The format a record's fields say it is in; null: none of ours. */
export function formatOfRecord(value: unknown): TrajectoryFormat | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  if (typeof record.format === 'string' && Array.isArray(record.steps)) return 'ours';
  if (Array.isArray(record.conversations)) return 'item_id' in record ? 'agentgym' : 'eto';
  if (Array.isArray(record.messages) || ('prompt' in record && 'completion' in record)) return 'trl';
  return null;
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
  return readTrajectoriesAs(text, format, options).trajectories;
}

/**
 * readTrajectories with the format given or detected ('auto': the first record's, else an error that
 * names each format's signs). A file rejected in one format that looks like another says so.
 */
export function readTrajectoriesAs(
  text: string,
  requested: ReadFormat,
  options: ReadOptions = {},
): { format: TrajectoryFormat; trajectories: Trajectory[] } {
  const source = options.sourceName ?? 'the file';
  const problems: ImportProblem[] = replacedBytes(text);
  if (problems.length > 0) throw new DatasetImportError(source, problems, 'line');
  const { unit, rows } = readRecords(text, problems);
  const detected = rows.length > 0 ? formatOfRecord(rows[0].value) : null;
  if (requested === 'auto' && !detected && problems.length === 0 && rows.length > 0) {
    const signs = FORMATS.map((f) => `${f}: ${FORMAT_SIGNS[f]}`).join('; ');
    problems.push({ line: rows[0].line, field: '', message: `no format of ours has records like this one (${signs})` });
  }
  const format = requested === 'auto' ? (detected ?? 'ours') : requested;
  const hint =
    detected && detected !== format
      ? `The file looks like ${detected} (${FORMAT_SIGNS[detected]}), not ${format}: import it as ${detected}.`
      : undefined;
  const trajectories = readRows(rows, unit, format, options, problems);
  if (problems.length > 0) throw new DatasetImportError(source, problems, unit, hint);
  return { format, trajectories };
}

function readRows(
  rows: ReturnType<typeof readRecords>['rows'],
  unit: 'line' | 'record',
  format: TrajectoryFormat,
  options: ReadOptions,
  problems: ImportProblem[],
): Trajectory[] {
  const out: Trajectory[] = [];
  const firstLine = new Map<string, number>();
  for (const { line, value } of rows) {
    const check = new RecordChecker(line, problems);
    if (format !== 'ours' && options.knownEnvs) checkEnv(format, value, check, options);
    const t = READERS[format](value, check, options);
    if (!t || !withinSizeLimits(t, check)) continue;
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
  return out;
}

/**
 * Most characters one observation (or instruction) may hold, and one action. Anything longer is no
 * state a model reads whole (a learned model sees a few hundred tokens), and one 50 MB token
 * overflows the stack of the tokenizer's regular expressions long after the import said yes.
 */
export const MAX_OBSERVATION_CHARS = 200_000;
export const MAX_ACTION_CHARS = 20_000;

/** Whether every text of `t` is within the limits; each one that is not is a problem of its line. */
function withinSizeLimits(t: Trajectory, check: RecordChecker): boolean {
  const before = check.problems.length;
  const limit = (what: string, text: string, max: number) => {
    if (text.length <= max) return;
    check.problem(
      '',
      `episode '${t.id}': ${what} holds ${text.length.toLocaleString('en-US')} characters, more than the ` +
        `${max.toLocaleString('en-US')} one may hold. Cut it to what the agent reads (the visible text of the ` +
        'page, the last lines of a log) or leave that step out, and import again.',
    );
  };
  limit('the instruction', t.task.instruction, MAX_OBSERVATION_CHARS); // in chat formats, the first turn's text
  t.steps.forEach((s, i) => {
    limit(`step ${i + 1}'s observation`, s.observation, MAX_OBSERVATION_CHARS);
    limit(`step ${i + 1}'s action`, s.action, MAX_ACTION_CHARS);
  });
  limit('the final observation', t.final_observation, MAX_OBSERVATION_CHARS);
  return check.problems.length === before;
}

/**
 * The lines holding U+FFFD, the character a reader puts where a file's bytes are not UTF-8 (Node's
 * readFileSync(…, 'utf8') and the page's File.text() both replace them without a word).
 */
function replacedBytes(text: string): ImportProblem[] {
  if (!text.includes('\uFFFD')) return [];
  const problems: ImportProblem[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.includes('\uFFFD')) return;
    problems.push({
      line: i + 1,
      field: '',
      message:
        'holds U+FFFD (\uFFFD), the mark of bytes that are not UTF-8: the file is in another encoding or damaged. ' +
        'Convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8) and import that; if the character ' +
        'is really in your data, remove it.',
    });
  });
  return problems;
}

/** A chat-format record's env (from its id, or TRL's env key) must be known, checked whatever else is wrong with it. */
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
      `unknown environment '${env}'; known: ${options.knownEnvs!.join(', ')} ` +
        "(another application's file is imported as a domain: the Domains page, or dreamgym domain import)",
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
