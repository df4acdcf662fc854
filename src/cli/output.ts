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
    end() { if (tty) process.stderr.write('\n'); },
  };
}

/** `--json` contract: exactly one JSON object, alone on the last line of stdout. */
export function printJsonLast(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

export function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
