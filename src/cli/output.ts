/** Terminal output helpers: a progress bar on stderr and the JSON-last-line convention. */
export function progressBar(label: string): { update(done: number, total: number, extra?: string): void; end(): void } {
  const tty = process.stderr.isTTY;
  let lastPercent = -1;
  return {
    update(done, total, extra = '') {
      const percent = Math.floor((100 * done) / Math.max(1, total));
      if (!tty && percent === lastPercent) return;
      if (!tty && percent % 10 !== 0 && done !== total) return;
      lastPercent = percent;
      const width = 24;
      const filled = Math.round((width * done) / Math.max(1, total));
      const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}${extra ? ` ${extra}` : ''}`;
      process.stderr.write(tty ? `\r${line}` : `${line}\n`);
    },
    end() {
      if (tty) process.stderr.write('\n');
    },
  };
}

/** Characters JSON.stringify leaves raw that a terminal (or a JavaScript parser) may act on: DEL, C1, line and bidi controls. */
const RAW_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `--json` contract: exactly one JSON object, alone on the last line of stdout (every control character escaped). */
export function printJsonLast(value: unknown): void {
  process.stdout.write(safeJson(value) + '\n');
}

/** JSON with every control character escaped, the ones JSON.stringify leaves raw too. */
export function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(RAW_IN_JSON, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

const UNSAFE_FOR_TERMINALS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text from a model, a server or an imported file, made safe to print: control characters (C0,
 * DEL, C1 — the escape sequences that retitle the window or clear the screen) and bidi overrides
 * are shown as escapes (\x1b, \n, \u202e) instead of acting on the terminal. `keepLines` keeps
 * newlines and tabs (multi-line messages).
 */
export function terminalSafe(text: string, options: { keepLines?: boolean } = {}): string {
  return text.replace(UNSAFE_FOR_TERMINALS, (ch) => {
    if (options.keepLines && (ch === '\n' || ch === '\t')) return ch;
    const code = ch.charCodeAt(0);
    return (
      NAMED_ESCAPES[ch] ??
      (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
    );
  });
}
