import { describe, expect, it } from 'vitest';
import {
  ABLATION_FIELDS,
  PESSIMISM_FIELDS,
  PRIOR_FIELD,
  SIZE_FIELDS,
  dreamEngineOptions,
  specLabel,
  type ParamField,
} from '../../../src/app/state/train/train-form';
import { DEFAULT_PARAMS, engineAbilities, type TrainParams } from '../../../src/app/state/train/train-params';

/** The labels of the fields that are off for these settings. */
function offLabels(fields: readonly ParamField[], change: Partial<TrainParams>): string[] {
  const params = { ...DEFAULT_PARAMS, ...change };
  const context = { params, abilities: engineAbilities(params.llm) };
  return fields.filter((f) => f.off?.(context) ?? false).map((f) => f.label);
}

describe('the Train form field tables', () => {
  it('bind each setting once, the size fields never off', () => {
    const keys = [...SIZE_FIELDS, ...ABLATION_FIELDS, PRIOR_FIELD, ...PESSIMISM_FIELDS].map((f) => f.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(offLabels(SIZE_FIELDS, { mode: 'real' })).toEqual([]);
  });

  it('grey out what the oracle ignores in a dream, and the oracle ε in a real run', () => {
    expect(offLabels(ABLATION_FIELDS, { mode: 'dream', llm: '', curriculum: true })).toEqual([
      'Answer tokens',
      'Retries',
      'Retrieval k',
      'History H',
      'Reasoning',
    ]);
    expect(offLabels(ABLATION_FIELDS, { mode: 'real', llm: '', curriculum: false })).toEqual([
      'Oracle ε_R',
      'Oracle ε_P',
      'Answer tokens',
      'Retries',
      'Retrieval k',
      'History H',
      'Reasoning',
      'λ (synthetic share)',
    ]);
    expect(offLabels([PRIOR_FIELD], { llm: '' })).toEqual(['LLM prior']);
  });

  it('let a learned model use k and H, the ensemble and the halt, but not the chat settings', () => {
    const learned = { mode: 's2r', llm: 'learned:local/mine', curriculum: true, halt: true, realShare: 0 } as const;
    expect(offLabels(ABLATION_FIELDS, learned)).toEqual([
      'Oracle ε_R',
      'Oracle ε_P',
      'Answer tokens',
      'Retries',
      'Reasoning',
    ]);
    expect(offLabels(PESSIMISM_FIELDS, learned)).toEqual(['Real-start horizon']);
    expect(offLabels(PESSIMISM_FIELDS, { ...learned, halt: false, realShare: 0.5 })).toEqual([
      'Success quantile',
      'Offers backed by data',
      'Redraws',
    ]);
  });

  it('turn the halt, the ensemble and the correction off for the oracle', () => {
    expect(offLabels(PESSIMISM_FIELDS, { mode: 's2r', llm: '', halt: true, realShare: 0 })).toEqual([
      'Verdict ensemble',
      'Halt on the unfamiliar',
      'Success quantile',
      'Offers backed by data',
      'Redraws',
      'Real-start horizon',
      'S2R correction share',
    ]);
  });
});

describe('the Dream engine list', () => {
  const shipped = { spec: 'learned:models/webshop-lite-v0', label: 'the shipped model' };

  it("puts Setup's choice first, then the env's learned models, then the link's own engine, each once", () => {
    expect(dreamEngineOptions('learned:local/mine', [shipped], 'wllama:https://x.test/m.gguf')).toEqual([
      { spec: 'learned:local/mine', label: `${specLabel('learned:local/mine')} (chosen on Setup)` },
      shipped,
      { spec: 'wllama:https://x.test/m.gguf', label: 'wllama (CPU): https://x.test/m.gguf' },
    ]);
    expect(dreamEngineOptions(shipped.spec, [shipped], shipped.spec)).toHaveLength(1);
    expect(dreamEngineOptions('', [], '')).toEqual([]);
  });

  it("labels a spec that does not parse with the parser's error", () => {
    expect(specLabel('bogus')).toMatch(/bogus/);
  });
});
