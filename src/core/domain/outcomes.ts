/**
 * How a domain's episodes end, and what that lets the experience model learn. The CLI's import
 * and the page's Domains card both say it in these words.
 *
 * The verdict learns from recorded endings: a success, a failed ending (the episode ended by
 * itself without success), a step limit reached. With no failed ending it can learn only which
 * steps reach the goal (a goal head, verdict.ts), never what failure looks like; with no success
 * it learns nothing to reward.
 */
import type { Trajectory } from '../types';

export interface OutcomeCoverage {
  episodes: number;
  /** Ended in success (assumed ones included). */
  successes: number;
  /** Ended by themselves without success. */
  failures: number;
  /** Ran out of steps (no ending recorded, but the last step did not end the episode). */
  truncated: number;
  /** No outcome recorded at all (AgentGym has no reward): their last steps teach no verdict. */
  unrecorded: number;
  /** Successes the import was told to assume for episodes with no recorded outcome. */
  assumedSuccesses: number;
}

/** How `episodes` end (as buildDomain left them: assumed successes already count as successes). */
export function outcomeCoverage(episodes: readonly Trajectory[], assumedSuccesses = 0): OutcomeCoverage {
  const coverage: OutcomeCoverage = {
    episodes: episodes.length,
    successes: 0,
    failures: 0,
    truncated: 0,
    unrecorded: 0,
    assumedSuccesses,
  };
  for (const t of episodes) {
    if (t.result.success) coverage.successes++;
    else if (t.result.terminate_reason === 'terminated' || t.steps.at(-1)?.terminated) coverage.failures++;
    else if (t.result.terminate_reason === 'truncated') coverage.truncated++;
    else coverage.unrecorded++;
  }
  return coverage;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** One line: '12 succeed (3 assumed), 0 fail, 8 hit the step limit, 0 unrecorded, of 20 episodes'. */
export function outcomeLine(c: OutcomeCoverage): string {
  const assumed = c.assumedSuccesses > 0 ? ` (${c.assumedSuccesses} assumed)` : '';
  return (
    `${c.successes} succeed${assumed}, ${c.failures} fail, ${c.truncated} hit the step limit, ` +
    `${c.unrecorded} unrecorded, of ${plural(c.episodes, 'episode')}`
  );
}

/**
 * What the endings keep the experience model from learning (empty: nothing). Episodes with no
 * recorded outcome are buildDomain's own warning, not repeated here.
 */
export function outcomeWarnings(c: OutcomeCoverage): string[] {
  const recorded = c.successes + c.failures + c.truncated;
  if (recorded === 0) return [];
  const warnings: string[] = [];
  if (c.successes === 0) {
    warnings.push(
      'No successful endings: no episode reaches its goal, so the experience model cannot learn what success ' +
        'looks like and a dream trained on it rewards nothing. Include episodes that succeed.',
    );
  }
  if (c.failures === 0) {
    warnings.push(
      'No failed endings: no episode ends by itself without success, so the verdict cannot learn failure; ' +
        'it learns only which steps reach the goal. If the application has endings that fail (a wrong ' +
        'purchase, an error page), include episodes that end that way.',
    );
  }
  if (c.assumedSuccesses > 0 && c.assumedSuccesses === c.successes) {
    warnings.push(
      `Every success (${c.assumedSuccesses}) was assumed, not recorded: the import was told that episodes with ` +
        'no recorded outcome reached their goal. A verdict learned from them is only as true as that.',
    );
  }
  return warnings;
}
