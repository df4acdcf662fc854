import { describe, expect, it } from 'vitest';
import { dreamTokensCell } from '../../../src/app/state/train/train-params';

describe("the Train page's Dream tokens counter", () => {
  it("counts a language model's tokens", () => {
    expect(dreamTokensCell('llm', 3_531_596)).toEqual({
      value: '≈ 3,531,596',
      note: 'tokens per dreamed transition × dream steps',
    });
  });

  it("shows no figure for a learned model's own decoder tokens (issue 46: 'Dream tokens ≈ 3,531,596')", () => {
    const cell = dreamTokensCell('learned', 3_531_596);
    expect(cell.value).toBe('—');
    expect(cell.note).toBe('no language model: the learned model decodes its own small tokens (≈ 3,531,596)');
  });

  it('shows none for the oracle or a real run', () => {
    expect(dreamTokensCell('oracle', 0)).toEqual({ value: '—', note: 'no language model in this run' });
  });
});
