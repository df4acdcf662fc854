/**
 * Where a JSON text first breaks, as a character offset. JSON.parse's messages only sometimes
 * give a position (it depends on the engine and the error), and a user fixing a 10 MB file needs
 * the line, so this small scanner walks the grammar and stops at the first bad character.
 */
export function firstJsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => { throw i; };
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const literal = (word: string) => { for (const ch of word) { if (text[i] !== ch) fail(); i++; } };
  const string = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail();
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') { for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) { i += k; fail(); } i += 5; continue; }
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
    if (ch === '{') {
      i++; ws();
      if (text[i] === '}') { i++; return; }
      for (;;) {
        ws(); if (text[i] !== '"') fail();
        string(); ws();
        if (text[i] !== ':') fail();
        i++; value(); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return; }
        fail();
      }
    }
    if (ch === '[') {
      i++; ws();
      if (text[i] === ']') { i++; return; }
      for (;;) {
        value(); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return; }
        fail();
      }
    }
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    if (ch === '-' || (ch >= '0' && ch <= '9')) return number();
    fail();
  };
  try {
    value(); ws();
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
