/**
 * What a CLI test reads of the commands it runs in-process: console.log / stdout lines (`out`),
 * console.error lines (`err`), and the `--json` object on the last line. Call it at the top of a
 * test file; it captures in beforeEach and restores in afterEach. Writes to stderr (the progress
 * lines) are dropped, or with `keepStderr` added to `err` as written, for a test of the progress itself.
 */
import { afterEach, beforeEach, vi } from 'vitest';

export interface CliOutput {
  out: string[];
  err: string[];
  lastJson(): any;
}

export function captureCliOutput({ keepStderr = false } = {}): CliOutput {
  const output: CliOutput = { out: [], err: [], lastJson: () => JSON.parse(output.out[output.out.length - 1]) };
  beforeEach(() => {
    output.out.length = 0;
    output.err.length = 0;
    vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => {
      output.out.push(a.join(' '));
    });
    vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => {
      output.err.push(a.join(' '));
    });
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      output.out.push(String(chunk).replace(/\n$/, ''));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      if (keepStderr) output.err.push(String(chunk));
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());
  return output;
}
