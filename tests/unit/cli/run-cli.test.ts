/** The command-line helper of the CLI tests splits as a shell would, keeping each interpolated value whole. */
import { describe, expect, it } from 'vitest';
import { argv } from './run-cli';

describe('argv', () => {
  it('splits the literal text on white space, new lines included', () => {
    expect(argv`train  --preset webshop-easy
      --json`).toEqual(['train', '--preset', 'webshop-easy', '--json']);
    expect(argv``).toEqual([]);
  });

  it('keeps a value whole within its word, spaces and all, and an empty value as an empty argument', () => {
    const run = '/tmp/a run';
    expect(argv`--llm openai:${'http://h/v1'}#m --out ${run} --set ${''}`).toEqual([
      '--llm',
      'openai:http://h/v1#m',
      '--out',
      '/tmp/a run',
      '--set',
      '',
    ]);
    expect(argv`${1}${2} x${3}`).toEqual(['12', 'x3']);
  });

  it('spreads an interpolated argv into its words', () => {
    const dream = argv`dream --env household-v0`;
    expect(argv`${dream} --json`).toEqual(['dream', '--env', 'household-v0', '--json']);
    expect(argv`x ${['a b', 'c']}`).toEqual(['x', 'a b', 'c']);
  });
});
