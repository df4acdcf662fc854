/**
 * The CLI run in-process by the tests. Command lines are written as one reads them in a shell:
 * cli`train --preset webshop-easy --out ${run} --json` runs `main` on
 * ['train', '--preset', 'webshop-easy', '--out', run, '--json'] and resolves to its exit code;
 * `act` runs `dreamgym act` on a given stdin.
 */
import { PassThrough } from 'node:stream';
import { parseArgs } from '../../../src/cli/args';
import { actCommand, runAct } from '../../../src/cli/commands/act';
import { main } from '../../../src/cli/main';

/**
 * The words of a command line: the literal text split on white space (new lines included), each
 * `${value}` kept whole within its word, so a path with a space in it stays one argument; an
 * array value (another argv) stands for its words, each a word of its own.
 */
export function argv(strings: TemplateStringsArray, ...values: unknown[]): string[] {
  const words: string[] = [];
  let word: string | null = null;
  strings.forEach((text, i) => {
    for (const piece of text.split(/(\s+)/)) {
      if (/^\s+$/.test(piece)) {
        if (word !== null) words.push(word);
        word = null;
      } else if (piece !== '') word = (word ?? '') + piece;
    }
    if (i >= values.length) return;
    const value = values[i];
    if (!Array.isArray(value)) {
      word = (word ?? '') + String(value);
      return;
    }
    if (word !== null) words.push(word);
    words.push(...value.map(String));
    word = null;
  });
  if (word !== null) words.push(word);
  return words;
}

/** Runs the command line in-process; resolves to the exit code. */
export function cli(strings: TemplateStringsArray, ...values: unknown[]): Promise<number> {
  return main(argv(strings, ...values));
}

/** `dreamgym act` with `input` as its stdin: the exit code and each JSON line it wrote. */
export async function act(args: string[], input: string): Promise<{ code: number; lines: Record<string, unknown>[] }> {
  const inStream = new PassThrough();
  const outStream = new PassThrough();
  const chunks: string[] = [];
  outStream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  inStream.end(input);
  const code = await runAct(parseArgs(args, actCommand), { input: inStream, output: outStream });
  const lines = chunks
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, lines };
}
