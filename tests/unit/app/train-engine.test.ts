/**
 * A learned experience model as the dream engine, in the page's plain logic: what each engine can
 * use of the Train form (the prior and LLM variations need a chat model), the refusal with the
 * reason, the Setup choice of a learned model, and its label (never the oracle's, never a chat model's).
 */
import { describe, expect, it } from 'vitest';
import {
  CHOICE_KEY,
  DEFAULT_CHOICE,
  choiceSpec,
  engineLabel,
  loadChoice,
  saveChoice,
  type EngineChoice,
} from '../../../src/app/state/setup/engine';
import {
  configFromParams,
  engineAbilities,
  engineConflict,
  engineForEnv,
  paramsForPreset,
  paramsFromQuery,
  paramsToQuery,
  withEngine,
} from '../../../src/app/state/train/train-params';
import { parseLlmSpec } from '../../../src/core/llm/spec';
import { memoryStorage } from '../support/memory-storage';

describe('dream engines on the Train form', () => {
  it('a learned model reads k and H but is not a chat model; the oracle reads neither; an LLM everything', () => {
    expect(engineAbilities('learned:local/mine')).toMatchObject({ kind: 'learned', chat: false, context: true });
    expect(engineAbilities('learned:local/mine').reason).toMatch(
      /not a chat model: the LLM prior, LLM-written variations, reasoning and the answer budget do not apply/,
    );
    expect(engineAbilities('')).toMatchObject({ kind: 'oracle', chat: false, context: false });
    expect(engineAbilities('oracle:0.1,0.1').kind).toBe('oracle');
    expect(engineAbilities('webllm:X-q4f32_1-MLC')).toEqual({ kind: 'llm', chat: true, context: true, reason: '' });
  });

  it('picking a learned model turns the prior off and the variations procedural; an LLM keeps them', () => {
    const p = {
      ...paramsForPreset('webshop-easy'),
      mode: 'dream' as const,
      prior: true,
      variations: 'llm' as const,
      curriculum: true,
    };
    expect(withEngine(p, 'learned:models/webshop-lite-v0')).toMatchObject({
      llm: 'learned:models/webshop-lite-v0',
      prior: false,
      variations: 'procedural',
    });
    expect(withEngine(p, 'openai:http://h/v1#m')).toMatchObject({ prior: true, variations: 'llm' });
  });

  it('a learned model belongs to its env: on another env the shipped one follows, one trained here is dropped', () => {
    expect(engineForEnv('learned:models/webshop-lite-v0', 'household-v0')).toBe('learned:models/household-v0');
    expect(engineForEnv('learned:local/mine', 'household-v0')).toBe('');
    expect(engineForEnv('webllm:X', 'household-v0')).toBe('webllm:X');
    expect(engineForEnv('', 'household-v0')).toBe('');
  });

  it('a link asking for the LLM prior with a learned model is refused with the reason; its variations stay procedural', () => {
    const p = paramsFromQuery(
      'preset=webshop-easy&mode=dream&llm=learned%3Alocal%2Fmine&prior=1&curriculum=1&variations=llm',
    );
    expect(p.llm).toBe('learned:local/mine');
    expect(engineConflict(p)).toMatch(
      /The LLM prior needs a chat model, and the chosen engine is not one\. The learned experience model .* Turn "LLM prior" off/,
    );
    expect(engineConflict({ ...p, prior: false })).toBeNull();
    expect(engineConflict({ llm: 'openai:http://h/v1#m', prior: true })).toBeNull();
    const config = configFromParams({ ...p, prior: false });
    expect(config).toMatchObject({ llm: 'learned:local/mine', curriculumVariations: 'procedural', llmPrior: false });
    expect(paramsFromQuery(paramsToQuery(p)).llm).toBe('learned:local/mine');
  });
});

describe('a learned model chosen on Setup', () => {
  it('persists, gives its spec, and says what is missing', () => {
    const storage = memoryStorage();
    const choice: EngineChoice = {
      ...structuredClone(DEFAULT_CHOICE),
      kind: 'learned',
      learned: { path: 'models/household-v0' },
    };
    saveChoice(choice, storage);
    expect(loadChoice(storage)).toEqual(choice);
    expect(choiceSpec(choice)).toEqual({ spec: 'learned:models/household-v0' });
    expect(choiceSpec({ ...choice, learned: { path: 'local/mine' } })).toEqual({ spec: 'learned:local/mine' });
    expect(choiceSpec({ ...choice, learned: { path: '' } })).toEqual({
      error: expect.stringMatching(/No learned experience model is picked yet/),
    });
    expect(choiceSpec({ ...choice, learned: { path: 'runs/m' } })).toEqual({
      error: expect.stringMatching(/command line only/),
    });
    // An old saved choice without the learned entry still loads.
    expect(loadChoice(memoryStorage({ [CHOICE_KEY]: JSON.stringify({ kind: 'learned' }) }))).toMatchObject({
      kind: 'learned',
      learned: { path: '' },
    });
  });

  it('labels it as a learned experience model, not a chat model and not the oracle', () => {
    expect(engineLabel(parseLlmSpec('learned:models/webshop-lite-v0'))).toBe(
      'learned experience model (tfjs, not a chat model): shipped for webshop-lite-v0',
    );
    expect(engineLabel(parseLlmSpec('learned:local/mine'))).toBe(
      "learned experience model (tfjs, not a chat model): 'mine', trained in this browser",
    );
    expect(engineLabel(parseLlmSpec('learned:runs/m'))).toBe('learned experience model: runs/m');
  });
});
