import { describe, expect, it } from 'vitest';
import {
  chosenLabel,
  LlmActionPrior,
  logitsFromLogprobs,
  PRIOR_LABELS,
  priorRequest,
} from '../../../src/core/policy/llm-prior';
import type { PolicyState } from '../../../src/core/policy/policy';
import type { TokenLogprob } from '../../../src/core/llm/types';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';

const state: PolicyState = {
  instruction: 'i need a blue cotton shirt, and price lower than 40.00 dollars',
  observation:
    'Instruction: [SEP] i need a blue cotton shirt [SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP] B0XYZ98765 [SEP] Blue Cotton Shirt [SEP] $25.50',
  admissible: ['click[back to search]', 'click[next >]', 'click[b0xyz98765]'],
};
const actions = state.admissible;

/** The tokens of `{"action": "<label>"}` with top alternatives at the label's token. */
function jsonTokens(label: string, top: [string, number][]): TokenLogprob[] {
  const parts = ['{"', 'action', '":', ' "', label, '"}'];
  return parts.map((token) =>
    token === label
      ? {
          token,
          logprob: top.find(([t]) => t === label)?.[1] ?? -0.1,
          top: top.map(([t, logprob]) => ({ token: t, logprob })),
        }
      : { token, logprob: 0, top: [{ token, logprob: 0 }] },
  );
}

describe('LlmActionPrior', () => {
  it('numbers the admissible actions with one-character labels and restricts the answer to them', () => {
    const { request, labels } = priorRequest(state, actions);
    expect(labels).toEqual(['1', '2', '3']);
    const user = request.messages[1].content;
    expect(user).toContain('1. click[back to search]\n2. click[next >]\n3. click[b0xyz98765]');
    expect(user).toContain(`Task: ${state.instruction}`);
    expect(request.jsonSchema).toEqual({
      type: 'object',
      properties: { action: { type: 'string', enum: ['1', '2', '3'] } },
      required: ['action'],
      additionalProperties: false,
    });
    expect(request.topLogprobs).toBeGreaterThanOrEqual(1); // WebLLM returns nothing with 0
    expect(request.temperature).toBe(1); // logprobs after temperature: 0 would collapse them
    const grammar = priorRequest(state, actions, { constraint: 'grammar' }).request;
    expect(grammar.grammar).toBe('root ::= "1" | "2" | "3"');
    expect(grammar.jsonSchema).toBeUndefined();
    expect(PRIOR_LABELS).toHaveLength(61);
    expect(new Set(PRIOR_LABELS).size).toBe(61);
    const many = priorRequest(
      state,
      Array.from({ length: 70 }, (_, i) => `a${i}`),
    ).labels;
    expect(many.slice(8, 11)).toEqual(['9', 'a', 'b']);
    expect(many).toHaveLength(61);
  });

  it('reads the chosen label from JSON or a bare answer', () => {
    expect(chosenLabel('{"action": "3"}', ['1', '2', '3'])).toEqual({ label: '3', at: 12 });
    expect(chosenLabel(' 2', ['1', '2'])).toEqual({ label: '2', at: 1 });
    expect(chosenLabel('{"action": "9"}', ['1', '2'])).toBeNull();
  });

  it('turns top logprobs into prior logits, with a floor for labels not listed', () => {
    const labels = ['1', '2', '3', '4'];
    const logprobs = jsonTokens('3', [
      ['3', Math.log(0.6)],
      ['1', Math.log(0.3)],
    ]);
    const logits = logitsFromLogprobs(logprobs, '{"action": "'.length, labels, -5);
    expect(logits![2]).toBeCloseTo(Math.log(0.6));
    expect(logits![0]).toBeCloseTo(Math.log(0.3));
    // The leftover 0.1 spread over two missing labels: log(0.05), above the floor, below the listed ones.
    expect(logits![1]).toBeCloseTo(Math.log(0.05));
    expect(logits![3]).toBeCloseTo(Math.log(0.05));
    // When almost no mass is left the floor holds.
    const sure = logitsFromLogprobs(jsonTokens('3', [['3', Math.log(0.999999)]]), 12, labels, -5);
    expect(sure![0]).toBe(-5);
    // Token variants of one label (' 1', '"1') merge by log-sum-exp.
    const merged = logitsFromLogprobs(
      jsonTokens('1', [
        ['1', Math.log(0.4)],
        ['"1', Math.log(0.2)],
        ['2', Math.log(0.3)],
      ]),
      12,
      labels,
      -5,
    );
    expect(merged![0]).toBeCloseTo(Math.log(0.6));
  });

  it('asks once per state (cache), with logprobs → logits', async () => {
    const chat = new ScriptedChatModel(() => ({
      text: '{"action": "3"}',
      logprobs: jsonTokens('3', [
        ['3', Math.log(0.7)],
        ['2', Math.log(0.2)],
        ['1', Math.log(0.05)],
      ]),
    }));
    const prior = new LlmActionPrior(chat);
    const scores = await prior.prior(state, actions);
    expect(scores[2]).toBeCloseTo(Math.log(0.7));
    expect(scores[1]).toBeCloseTo(Math.log(0.2));
    expect(scores[0]).toBeCloseTo(Math.log(0.05));
    expect(await prior.prior(state, actions)).toEqual(scores);
    expect(chat.requests).toHaveLength(1);
    expect(prior.stats).toEqual({ calls: 1, cacheHits: 1, withLogprobs: 1, fallbacks: 0 });
    await prior.prior({ ...state, observation: 'another page' }, actions);
    expect(chat.requests).toHaveLength(2);
    expect(prior.id).toBe('llm-prior:test:scripted-chat-model');
  });

  it('falls back to chosen = 0, others = floor without logprobs; no preference when the answer is unusable', async () => {
    const chat = new ScriptedChatModel(['{"action": "2"}', 'I cannot decide']);
    const prior = new LlmActionPrior(chat, { floor: -4 });
    expect(await prior.prior(state, actions)).toEqual([-4, 0, -4]);
    expect(await prior.prior({ ...state, observation: 'x' }, actions)).toEqual([0, 0, 0]);
    expect(prior.stats.fallbacks).toBe(2);
  });

  it('actions beyond the last label get the floor', async () => {
    const many = Array.from({ length: 63 }, (_, i) => `act ${i}`);
    const chat = new ScriptedChatModel(() => ({
      text: '{"action": "a"}',
      logprobs: jsonTokens('a', [['a', Math.log(0.9)]]),
    }));
    const scores = await new LlmActionPrior(chat).prior({ ...state, admissible: many }, many);
    expect(scores).toHaveLength(63);
    expect(scores[9]).toBeCloseTo(Math.log(0.9));
    expect(scores.slice(61)).toEqual([-5, -5]);
  });
});
