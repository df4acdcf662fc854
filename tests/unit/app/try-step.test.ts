import { describe, expect, it } from 'vitest';
import { tryAnswer } from '../../../src/app/state/setup/try-step.svelte';
import type { TryStepResult } from '../../../src/core/experience/try-step';

const usage = { promptTokens: 12, completionTokens: 5, ms: 40 };
const result = (prediction: Record<string, unknown>) => ({ prediction: { usage, ...prediction } }) as TryStepResult;

describe("Setup's Try one step: the answer panel", () => {
  it('shows the prompt, raw answer and tries where the engine kept them', () => {
    const tries = [{ raw: '{}', usage }];
    expect(tryAnswer(result({ prompt: 'p', raw: 'r', tries }))).toEqual({ prompt: 'p', raw: 'r', tries, usage });
  });

  it('leaves out what the engine did not keep (the oracle, a learned model), an empty raw answer kept', () => {
    expect(tryAnswer(result({}))).toEqual({ usage });
    expect(tryAnswer(result({ prompt: '', raw: '' }))).toEqual({ raw: '', usage });
  });
});
