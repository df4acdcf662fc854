import { visit, type ParseOptions } from 'jsonc-parser';

/**
 * How deep a record may nest (objects and arrays). JSON.parse itself copes with far deeper text,
 * but copying, storing or printing such a value overflows the stack half-way through an import,
 * so deeper records are refused up front, with their line.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The offset of the first `[` or `{` nested deeper than `limit` (−1: none), skipping strings. A
 * loop, not recursion: it is what guards the recursive code from a hostile file.
 */
export function firstTooDeepOffset(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // a backslash escapes the next character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > limit) return i;
    } else if (ch === 0x5d || ch === 0x7d) {
      depth--;
    }
  }
  return -1;
}

/** Strict JSON: what JSON.parse accepts, no comments, no trailing commas, no empty text. */
const STRICT: ParseOptions = { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false };

/**
 * Where a JSON text first breaks, as a character offset (−1: it does not): the start of the first
 * token jsonc-parser's scanner rejects. JSON.parse's messages only sometimes give a position (it
 * depends on the engine and the error), and a user fixing a 10 MB file needs the line. The parser
 * recurses per nesting level: call it on text that firstTooDeepOffset has passed.
 */
export function firstJsonErrorOffset(text: string): number {
  let first = -1;
  const onError = (_code: number, offset: number) => {
    if (first < 0) first = offset;
  };
  visit(text, { onError }, STRICT);
  return first;
}

/** 1-based line of a character offset. */
export function lineOfOffset(text: string, offset: number): number {
  let line = 1;
  for (let k = 0; k < offset && k < text.length; k++) if (text.charCodeAt(k) === 10) line++;
  return line;
}
