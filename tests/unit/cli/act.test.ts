/**
 * `dreamgym act --run RUN` (issue 45, item 5): a saved agent answers each JSON line of stdin with
 * the action it chooses among the admissible ones and its probability; a bad line gets an error
 * line and the next is read.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import { stateOfLine } from '../../../src/cli/commands/act';
import { getEnvDefinition, makeEnv } from '../../../src/core/envs/registry';
import { captureCliOutput } from '../support/cli-output';
import { act } from './run-cli';

captureCliOutput();

describe('dreamgym act', () => {
  it("answers each state with the saved agent's action, its probability and the top candidates", async () => {
    const run = join(mkdtempSync(join(tmpdir(), 'dreamgym-act-')), 'run');
    const settings = 'iterations=2,tasksPerIteration=2,groupSize=2,finalEvalEpisodes=4';
    expect(await main(['train', '--preset', 'household-easy', '--seed', '3', '--set', settings, '--out', run])).toBe(0);

    const task = getEnvDefinition('household-v0').generateTask(1_000_000_000, 0);
    const obs = await makeEnv('household-v0').reset({ seed: 1_000_000_000, task });
    const state = { instruction: task.instruction, observation: obs.text, admissible: obs.admissible };
    const input = [
      JSON.stringify(state),
      'not json',
      JSON.stringify({ ...state, admissible: [] }),
      JSON.stringify({ ...state, previous_actions: [obs.admissible[0]], step: 1 }),
      '',
    ].join('\n');
    const { code, lines } = await act(['--run', run, '--top', '2'], input);
    expect(code).toBe(1); // two lines could not be used
    expect(lines).toHaveLength(4);
    const [first, notJson, empty, later] = lines;
    expect(obs.admissible).toContain(first.action);
    expect(first.probability).toBeGreaterThan(0);
    const top = first.top as { action: string; probability: number }[];
    expect(top).toHaveLength(2);
    expect(top[0].probability).toBeGreaterThanOrEqual(top[1].probability);
    expect(top[0]).toEqual({ action: first.action, probability: first.probability }); // greedy: the most probable
    expect(notJson).toMatchObject({ line: 2, error: expect.stringMatching(/^not JSON/) });
    expect(empty).toMatchObject({ line: 3, error: expect.stringMatching(/'admissible' lists no action/) });
    expect(later).toMatchObject({ line: 4 });
    expect(obs.admissible).toContain(later.action);
    // The same input gives the same answers (greedy, and a seeded stream with --sample).
    expect((await act(['--run', run, '--top', '2'], input)).lines).toEqual(lines);
    const sampled = await act(['--run', run, '--sample', '--seed', '4'], input);
    expect((await act(['--run', run, '--sample', '--seed', '4'], input)).lines).toEqual(sampled.lines);
  }, 120_000);

  it('reads a state strictly', () => {
    expect(() => stateOfLine('[1]', 30)).toThrow(/a state is a JSON object/);
    expect(() => stateOfLine('{"instruction":1}', 30)).toThrow(/'admissible' lists no action/);
    expect(() => stateOfLine('{"instruction":1,"admissible":["a"]}', 30)).toThrow(/'instruction' must be a string/);
    const ok = '{"instruction":"i","observation":"o","admissible":["a"],"previous_actions":["b","c"]}';
    expect(stateOfLine(ok, 30)).toEqual({
      instruction: 'i',
      observation: 'o',
      admissible: ['a'],
      step: 2,
      maxSteps: 30,
      previousActions: ['b', 'c'],
    });
    expect(() => stateOfLine(ok.replace('}', ',"step":-1}'), 30)).toThrow(/'step' must be a whole number/);
  });
});
