/** Numbers read from a URL query: a missing, blank, malformed or out-of-range value is undefined (the caller's default). */

/** A whole number in [min, max]. */
export function queryInt(value: string | null, min: number, max: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}

/** A finite number in [min, max]. */
export function queryNum(value: string | null, min: number, max: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= min && n <= max ? n : undefined;
}
