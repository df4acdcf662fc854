/**
 * Checks of a model file's settings objects (network, format options): each field a whole number
 * in its allowed range, and no field the reader does not know. A file's numbers size the arrays
 * the decoder allocates, so nothing is taken on trust.
 */

/** The range a whole-number field may take (and whether it must be odd: a centred conv kernel). */
export interface WholeRange {
  min: number;
  max: number;
  odd?: boolean;
}

/** The first problem of `value`'s fields, named as `path.field`, or null when every field is in range. */
export function wholeFieldsProblem(
  value: unknown,
  path: string,
  ranges: Readonly<Record<string, WholeRange>>,
  otherFields: readonly string[] = [],
): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${path} is missing`;
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!Object.hasOwn(ranges, key) && !otherFields.includes(key)) return `${path}.${key} is not a field of ${path}`;
  }
  for (const [key, range] of Object.entries(ranges)) {
    const problem = wholeNumberProblem(fields[key], range);
    if (problem) return `${path}.${key} is ${shown(fields[key])}; it must be ${problem}`;
  }
  return null;
}

/** What a number must be, when `value` is not it; null when it is. */
function wholeNumberProblem(value: unknown, range: WholeRange): string | null {
  const ok =
    typeof value === 'number' &&
    Number.isInteger(value) &&
    value >= range.min &&
    value <= range.max &&
    (!range.odd || value % 2 === 1);
  return ok ? null : `${range.odd ? 'an odd' : 'a'} whole number from ${range.min} to ${range.max}`;
}

/** A field's value as the message shows it (short, and 'missing' for none). */
export function shown(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}
