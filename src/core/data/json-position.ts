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

/**
 * Where a JSON text first breaks, as a character offset. JSON.parse's messages only sometimes
 * give a position (it depends on the engine and the error), and a user fixing a 10 MB file needs
 * the line, so this small scanner walks the grammar and stops at the first bad character. It
 * recurses per nesting level: call it on text that firstTooDeepOffset has passed (deeper text
 * stops at the first level beyond `maxDepth`).
 */
export function firstJsonErrorOffset(text: string, maxDepth = 4 * MAX_JSON_DEPTH): number {
  let i = 0;
  let depth = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) fail();
      i++;
    }
  };
  const string = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail();
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          for (let k = 1; k <= 4; k++)
            if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) {
              i += k;
              fail();
            }
          i += 5;
          continue;
        }
        if (!'"\\/bfnrt'.includes(text[i] ?? '')) fail();
      }
      i++;
    }
    if (text[i] !== '"') fail();
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0] === '' || m[0] === '-') fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if ((ch === '{' || ch === '[') && depth >= maxDepth) fail();
    if (ch === '{' || ch === '[') {
      depth++;
      container(ch);
      depth--;
      return;
    }
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    if (ch === '-' || (ch >= '0' && ch <= '9')) return number();
    fail();
  };
  const container = (ch: string): void => {
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail();
      }
    }
    if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail();
      }
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return -1;
  } catch (offset) {
    if (typeof offset === 'number') return offset;
    throw offset;
  }
}

/** 1-based line of a character offset. */
export function lineOfOffset(text: string, offset: number): number {
  let line = 1;
  for (let k = 0; k < offset && k < text.length; k++) if (text.charCodeAt(k) === 10) line++;
  return line;
}
