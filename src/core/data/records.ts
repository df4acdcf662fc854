/** Reads a file that is either a JSON array of records or JSONL (one record a line). */
import { parseJsonLines, tooDeepMessage, withoutBom, type ImportProblem } from './errors';
import { firstJsonErrorOffset, firstTooDeepOffset, lineOfOffset, MAX_JSON_DEPTH } from './json-position';

export interface RecordRows {
  /** How positions in errors are counted: JSONL lines, or records of a JSON array. */
  unit: 'line' | 'record';
  rows: { line: number; value: unknown }[];
}

export function readRecords(raw: string, problems: ImportProblem[]): RecordRows {
  const text = withoutBom(raw);
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    // The file's array is one level; its records may nest MAX_JSON_DEPTH more.
    const deep = firstTooDeepOffset(text, MAX_JSON_DEPTH + 1);
    if (deep >= 0) {
      const line = lineOfOffset(text, deep);
      problems.push({ line, field: '', message: tooDeepMessage(deep - text.lastIndexOf('\n', deep - 1)) });
      return { unit: 'line', rows: [] };
    }
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
