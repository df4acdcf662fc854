/** `audit --mistakes M`: the wrong outcome calls, counted and spelled out (the worked example of where a dream goes wrong). */
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import { captureCliOutput } from '../support/cli-output';
import { cli } from './run-cli';

const { out, lastJson } = captureCliOutput();

describe('audit --mistakes', () => {
  it('lists the outcome steps an always-wrong reward gets wrong, with instruction, actions and both rewards', async () => {
    expect(await cli`audit --env webshop-lite-v0 --llm oracle:1,0 --n 16 --mistakes 2 --json`).toBe(0);
    const audit = lastJson();
    const header = out.find((l) => l.startsWith('wrong outcomes:'))!;
    const [wrong, outcomeSteps] = /wrong outcomes: (\d+) of (\d+)/.exec(header)!.slice(1).map(Number);
    expect(outcomeSteps).toBeGreaterThan(0);
    expect(wrong).toBe(outcomeSteps); // ε_R = 1 flips every outcome
    expect(audit.reward_accuracy).toBe(0);
    const listed = out
      .join('\n')
      .split('\n')
      .filter((l) => l.startsWith('  episode '));
    expect(listed).toHaveLength(Math.min(2, wrong));
    expect(out.join('\n')).toMatch(/ {4}actions: .*(click\[buy now\]|search\[)/);
    expect(out.join('\n')).toMatch(/ {4}real: score \d\.\d\d, (success|failure); predicted: reward /);
  });

  it('lists nothing by default', async () => {
    expect(await main(['audit', '--env', 'webshop-lite-v0', '--llm', 'oracle:1,0', '--n', '4', '--json'])).toBe(0);
    expect(out.some((l) => l.startsWith('wrong outcomes:'))).toBe(false);
  });
});
