/**
 * What an import refuses before it can hurt later (issue 44): an observation too long to be a
 * state (repro 9: a 50 MB one-token observation imported, and `expmodel train` then died with
 * "Maximum call stack size exceeded" in the tokenizer), and a file that is not UTF-8 (repro 13,
 * first: its bytes were replaced with U+FFFD without a word). Each names the line and the fix.
 */
import { describe, expect, it } from 'vitest';
import { DatasetImportError } from '../../../src/core/data/errors';
import {
  MAX_OBSERVATION_CHARS,
  readTrajectories,
  writeTrajectories,
  type TrajectoryFormat,
} from '../../../src/core/data/formats';
import { householdEpisode } from './fixtures';

const episodes = [householdEpisode(3), householdEpisode(4), householdEpisode(5)].map((t, i) => ({
  ...t,
  id: `episode-${i}`,
}));

function refusal(text: string, format: TrajectoryFormat): DatasetImportError {
  try {
    readTrajectories(text, format, { sourceName: 'big.jsonl' });
  } catch (error) {
    if (error instanceof DatasetImportError) return error;
    throw error;
  }
  throw new Error('the import was not refused');
}

describe('import limits', () => {
  it.each(['eto', 'ours'] as const)(
    'refuses a 50 MB one-token observation (%s), naming the line and the limit',
    (format) => {
      const huge = 'x'.repeat(50_000_000);
      const withHuge = episodes.map((t, i) =>
        i === 1 ? { ...t, steps: t.steps.map((s, j) => (j === 1 ? { ...s, observation: huge } : s)) } : t,
      );
      const error = refusal(writeTrajectories(withHuge, format), format);
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0].line).toBe(2);
      expect(error.message).toMatch(
        /(line|record) 2: episode '[^']+': step 2's observation holds 50,000,000 characters, more than the 200,000 one may hold\. Cut it to what the agent reads/,
      );
      expect(error.message).toMatch(/nothing was imported/);
      // At the limit it imports.
      const atLimit = episodes.map((t) => ({
        ...t,
        steps: t.steps.map((s, j) => (j === 0 ? { ...s, observation: 'y'.repeat(MAX_OBSERVATION_CHARS) } : s)),
      }));
      expect(readTrajectories(writeTrajectories(atLimit, format), format)).toHaveLength(3);
    },
  );

  it('refuses a file that is not UTF-8, naming the line and how to convert it', () => {
    const text = writeTrajectories(episodes, 'ours');
    const bytes = Buffer.from(text, 'utf8');
    const line3 = bytes.indexOf('\n', bytes.indexOf('\n') + 1) + 1;
    const at = bytes.indexOf('"observation":"', line3) + 20; // inside a text of line 3
    bytes[at] = 0xe9; // 'é' in Latin-1: not UTF-8
    const read = bytes.toString('utf8'); // what readFileSync(file, 'utf8') gives: U+FFFD, no error
    expect(read).toContain('\uFFFD');
    const error = refusal(read, 'ours');
    expect(error.problems.map((p) => p.line)).toEqual([3]);
    expect(error.message).toMatch(/line 3: holds U\+FFFD .*not UTF-8.*iconv -f latin1 -t utf-8/);
  });
});
