/**
 * Reports quote what the user typed (issue 44, repro 10): a model path with `|`, a backtick or
 * `<img onerror>` stays text in docs/results/*.md, and the regenerate line runs the same command
 * when pasted into a shell.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { commandLine } from '../../../src/cli/commands/experiment';
import { inlineCode, markdownText, renderReport, renderTable } from '../../../src/cli/experiments/report';
import type { Stat, TableResult } from '../../../src/core/experiments/experiment';

const HOSTILE = "models/a|b`c <img src=x onerror=alert(1)> it's";

const stat = (x: number): Stat => ({ mean: x, std: 0, values: [x] }) as Stat;

function table(experienceModel: string): TableResult {
  const row = { success: stat(0.5), score: stat(0.5), realSteps: stat(0), dreamSteps: stat(9), wallSeconds: stat(1) };
  return {
    table: 1,
    split: 'test',
    llm: `learned:${HOSTILE}`,
    experienceModel,
    oracle: false,
    seeds: [1],
    quick: true,
    envs: [
      {
        setup: {
          env: 'webshop-lite-v0',
          preset: 'webshop-easy',
          difficulty: 0.5,
          split: 'test',
          heldOutTasks: 8,
          iterations: 2,
          tasksPerIteration: 4,
          groupSize: 4,
          realStepBudget: 0,
          s2rRealBudget: 0,
        },
        rows: [
          {
            id: 'dream-grpo',
            label: 'DreamGym GRPO',
            kind: 'train',
            mode: 'dream',
            experienceModel,
            seeds: [1],
            ...row,
          },
        ],
      },
    ],
    notes: [],
    computeSeconds: 1,
  } as unknown as TableResult;
}

/** The cells of a markdown table row, split where GFM splits them (an unescaped `|`). */
function cells(line: string): string[] {
  return line
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

describe('reports escape what they quote', () => {
  it('keeps a hostile model path inside its table cell, as text', () => {
    const label = `learned model at ${HOSTILE}`;
    const text = renderTable(table(label));
    const header = text.split('\n').find((l) => l.startsWith('| method'))!;
    const row = text.split('\n').find((l) => l.startsWith('| DreamGym GRPO'))!;
    expect(cells(row)).toHaveLength(cells(header).length);
    expect(text).not.toContain('<img');
    expect(cells(row)[1]).toBe(markdownText(label));
    expect(markdownText(label)).toBe("learned model at models/a\\|b\\`c &lt;img src=x onerror=alert(1)&gt; it's");
  });

  it('quotes the regenerate line for the shell, and shows it whole in one code span', () => {
    const args = ['experiment', '--report', '--table', '1', '--llm', `learned:${HOSTILE}`];
    const command = commandLine(args);
    // The shell reads the same arguments back.
    const echoed = execFileSync('sh', ['-c', `printf '%s\\n' ${command.replace('npm run dreamgym -- ', '')}`], {
      encoding: 'utf8',
    });
    expect(echoed.split('\n').slice(0, -1)).toEqual(args);
    const report = renderReport('## Table 1\n', {
      command,
      date: new Date('2026-12-04T00:00:00Z'),
      provenances: [],
      jobs: 1,
      reused: 0,
      runs: 'out`x/jobs',
    });
    expect(report).toContain(`Regenerate: ${inlineCode(command)}`);
    expect(inlineCode(command)).toMatch(/^``[^`].*[^`]``$/); // one backtick inside: a fence of two
    expect(report).toContain('kept in ``out`x/jobs``');
  });
});
