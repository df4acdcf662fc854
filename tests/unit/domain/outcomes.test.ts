/**
 * How a domain's episodes end (outcomes.ts), and the command lines the CLI and the page print
 * (commands.ts): the words both show for the same domain.
 */
import { describe, expect, it } from 'vitest';
import { importCommandLine, nextCommandLines, shellWord } from '../../../src/core/domain/commands';
import { buildDomain } from '../../../src/core/domain/domain';
import { outcomeCoverage, outcomeLine, outcomeWarnings } from '../../../src/core/domain/outcomes';
import type { Trajectory } from '../../../src/core/types';
import { foreignOurs, foreignTrajectories } from './fixtures';

/** `t` ending as `reason` says (its last step marked to match). */
function ending(t: Trajectory, reason: Trajectory['result']['terminate_reason']): Trajectory {
  const success = reason === 'success';
  const last = { ...t.steps[t.steps.length - 1], terminated: success || reason === 'terminated' };
  return {
    ...t,
    steps: [...t.steps.slice(0, -1), last],
    result: { ...t.result, success, reward: success ? 1 : 0, terminate_reason: reason },
  };
}

describe('outcomeCoverage', () => {
  it('counts successes, failed endings, step limits and unrecorded outcomes', async () => {
    const [a, b, c, d] = await foreignOurs(4);
    const coverage = outcomeCoverage([
      ending(a, 'success'),
      ending(b, 'terminated'),
      ending(c, 'truncated'),
      ending(d, 'unfinished'),
    ]);
    expect(coverage).toEqual({
      episodes: 4,
      successes: 1,
      failures: 1,
      truncated: 1,
      unrecorded: 1,
      assumedSuccesses: 0,
    });
    expect(outcomeLine(coverage)).toBe('1 succeed, 1 fail, 1 hit the step limit, 1 unrecorded, of 4 episodes');
    expect(outcomeWarnings(coverage)).toEqual([]);
  });

  it('warns of no failed endings: household succeeds or runs out of steps, never fails', async () => {
    const domain = buildDomain('myapp', await foreignOurs(20));
    const coverage = outcomeCoverage([...domain.train, ...domain.heldOut]);
    expect(coverage.failures).toBe(0);
    expect(coverage.successes).toBeGreaterThan(0);
    expect(coverage.truncated).toBeGreaterThan(0);
    const warnings = outcomeWarnings(coverage);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^No failed endings: .* the verdict cannot learn failure/);
  });

  it('warns of no successes, and of successes that were all assumed', async () => {
    const episodes = await foreignOurs(3);
    const none = outcomeCoverage(episodes.map((t) => ending(t, 'terminated')));
    expect(outcomeWarnings(none)).toEqual([expect.stringMatching(/^No successful endings/)]);

    const agentGym = await foreignTrajectories(12); // AgentGym: no outcome recorded
    const unknown = buildDomain('myapp', agentGym);
    const unrecorded = outcomeCoverage([...unknown.train, ...unknown.heldOut]);
    expect(unrecorded.unrecorded).toBe(12);
    expect(outcomeWarnings(unrecorded)).toEqual([]); // buildDomain's own warning says it

    const assumed = buildDomain('myapp', agentGym, { unrecordedOutcome: 'success' });
    const coverage = outcomeCoverage([...assumed.train, ...assumed.heldOut], assumed.stats.assumedSuccesses);
    expect(coverage).toMatchObject({ successes: 12, assumedSuccesses: 12, unrecorded: 0 });
    expect(outcomeLine(coverage)).toMatch(/^12 succeed \(12 assumed\)/);
    expect(outcomeWarnings(coverage).map((w) => w.slice(0, 20))).toEqual([
      'No failed endings: n',
      'Every success (12) w',
    ]);
  });
});

describe('the command lines', () => {
  it('rebuild the same domain in the CLI, then train on it', () => {
    const base = {
      file: 'my app.jsonl',
      name: 'myapp',
      format: 'eto' as const,
      heldOutShare: 0.2,
      seed: 0,
      unrecordedOutcome: 'unknown' as const,
      extraTasks: false,
    };
    expect(importCommandLine(base)).toBe("npm run dreamgym -- domain import 'my app.jsonl' --name myapp --format eto");
    expect(
      importCommandLine({ ...base, heldOutShare: 0.3, seed: 2, unrecordedOutcome: 'success', extraTasks: true }),
    ).toBe(
      "npm run dreamgym -- domain import 'my app.jsonl' --name myapp --format eto --held-out 0.3 --seed 2 " +
        '--unrecorded-outcome success --tasks TASKS.txt',
    );
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    expect(nextCommandLines('myapp', ' --dir d')).toEqual([
      'npm run dreamgym -- expmodel train --domain myapp --dir d --out runs/models/myapp',
      'npm run dreamgym -- domain train --name myapp --dir d --llm learned:runs/models/myapp',
    ]);
  });
});
