/** Reads a file that is either a JSON array of records or JSONL (one record a line). */
import { parseJsonLines, type ImportProblem } from './errors';
import { firstJsonErrorOffset, lineOfOffset } from './json-position';

export interface RecordRows {
  /** How positions in errors are counted: JSONL lines, or records of a JSON array. */
  unit: 'line' | 'record';
  rows: { line: number; value: unknown }[];
}

export function readRecords(text: string, problems: ImportProblem[]): RecordRows {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    try {
      const parsed = JSON.parse(text) as unknown[];
      return { unit: 'record', rows: parsed.map((value, i) => ({ line: i + 1, value })) };
    } catch (error) {
      // Report where the JSON broke, as a line number of the file.
      const offset = firstJsonErrorOffset(text);
      const line = offset >= 0 ? lineOfOffset(text, offset) : 1;
      problems.push({ line, field: '', message: `not valid JSON (${(error as Error).message})` });
      return { unit: 'line', rows: [] };
    }
  }
  return { unit: 'line', rows: parseJsonLines(text, problems) };
}
