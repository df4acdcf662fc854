import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PARAMS,
  canCorrect,
  configFromParams,
  dreamTokenEstimate,
  engineRuntimeFromParams,
  llmSpec,
  paramsFromConfig,
  paramsFromQuery,
  paramsToQuery,
  type TrainParams,
} from '../../../src/app/state/train/train-params';
import { experienceLabel } from '../../../src/core/llm/spec';
import { getPreset } from '../../../src/core/train/config';

describe('Train settings in the URL', () => {
  it('round-trips every setting, the engine and the ablation switches included', () => {
    const p: TrainParams = {
      ...DEFAULT_PARAMS,
      preset: 'household-easy',
      env: 'household-v0',
      mode: 'dream',
      algo: 'ppo',
      seed: 7,
      epsR: 0.2,
      epsP: 0.05,
      tasks: 1,
      group: 2,
      iterations: 3,
      evalEvery: 0,
      evalEpisodes: 5,
      backend: 'cpu',
      llm: 'wllama:file:stories260K.gguf',
      curriculum: true,
      lambda: 0.4,
      grouping: 'cluster',
      variations: 'both',
      k: 0,
      history: 2,
      reasoning: false,
      prior: true,
      answerTokens: 96,
      retries: 0,
      members: 3,
      halt: false,
      haltSuccessQ: 0.95,
      offers: false,
      redraws: 1,
      realShare: 0.25,
      realHorizon: 5,
      correct: 0.3,
    };
    const query = paramsToQuery(p);
    expect(query).toMatch(/^preset=household-easy&mode=dream&algo=ppo&seed=7&/);
    expect(query).toMatch(
      /llm=wllama%3Afile%3Astories260K.gguf&curriculum=1&lambda=0.4&grouping=cluster&variations=both&k=0&history=2&reasoning=0&prior=1&tokens=96&retries=0&/,
    );
    expect(query).toMatch(/&members=3&halt=0&haltSq=0.95&offers=0&redraws=1&realShare=0.25&realHorizon=5&correct=0.3$/);
    expect(paramsFromQuery(query)).toEqual(p);
  });

  it('falls back to the preset for missing or bad values, and to the oracle for a bad engine', () => {
    const p = paramsFromQuery(
      'preset=webshop-easy&k=-1&history=x&lambda=2&curriculum=maybe&tokens=3&retries=99&llm=gpt4',
    );
    expect(p).toMatchObject({
      k: 4,
      history: 4,
      lambda: 0.25,
      curriculum: false,
      answerTokens: 400,
      retries: 2,
      llm: '',
    });
    expect(paramsFromQuery('llm=oracle:0.1,0.1').llm).toBe('');
    expect(paramsFromQuery('llm=webllm:SmolLM2-360M-Instruct-q4f32_1-MLC').llm).toBe(
      'webllm:SmolLM2-360M-Instruct-q4f32_1-MLC',
    );
    // The oracle is written into the URL too (a link without an engine dreams with the opener's Setup choice),
    // and its ε come back from it when the link has no epsR / epsP of its own.
    expect(paramsToQuery({ ...DEFAULT_PARAMS, epsR: 0.2, epsP: 0 })).toMatch(/&llm=oracle%3A0.2%2C0&/);
    expect(paramsFromQuery('mode=dream&llm=oracle:0.5,0.3')).toMatchObject({ llm: '', epsR: 0.5, epsP: 0.3 });
    expect(paramsFromQuery('llm=oracle:0.5,0.3&epsR=0.2')).toMatchObject({ llm: '', epsR: 0.2, epsP: 0.3 });
    expect(paramsFromQuery(paramsToQuery(DEFAULT_PARAMS))).toEqual(DEFAULT_PARAMS);
  });

  it('maps the settings onto the TrainConfig fields', () => {
    const config = configFromParams({
      ...DEFAULT_PARAMS,
      mode: 'dream',
      llm: 'openai:http://127.0.0.1:11434/v1#qwen',
      curriculum: true,
      lambda: 0.5,
      k: 0,
      history: 0,
      reasoning: false,
      prior: true,
    });
    expect(config).toMatchObject({
      mode: 'dream',
      llm: 'openai:http://127.0.0.1:11434/v1#qwen',
      curriculum: true,
      lambda: 0.5,
      retrievalK: 0,
      historyLength: 0,
      reasoning: false,
      llmPrior: true,
    });
    expect(configFromParams({ ...DEFAULT_PARAMS, epsR: 0.3, epsP: 0 }).llm).toBe('oracle:0.3,0');
    expect(() => llmSpec({ llm: 'wllama:nope', epsR: 0, epsP: 0 })).toThrow(
      /neither file:NAME nor a full http\(s\) URL/,
    );
    expect(engineRuntimeFromParams({ answerTokens: 96, retries: 1 })).toEqual({ maxTokens: 96, retries: 1 });
  });

  it("gives the dream's pessimism the preset's defaults, bounds a link's values, and corrects only where it can", () => {
    const preset = getPreset('household-easy');
    expect(paramsFromQuery('preset=household-easy')).toMatchObject({
      members: preset.verdictMembers,
      halt: preset.halt,
      haltSuccessQ: preset.haltSuccessQuantile,
      offers: preset.haltOffers,
      redraws: preset.haltRedraws,
      realShare: preset.realStartShare,
      realHorizon: preset.realStartHorizon,
      correct: 0,
    });
    const bad = paramsFromQuery('preset=household-easy&members=0&haltSq=0.2&redraws=99&realShare=2&halt=maybe');
    expect(bad).toMatchObject({ members: preset.verdictMembers, haltSuccessQ: preset.haltSuccessQuantile });
    expect(bad).toMatchObject({ redraws: preset.haltRedraws, realShare: preset.realStartShare, halt: preset.halt });
    const learned = 'learned:models/household-v0';
    const base = { ...DEFAULT_PARAMS, llm: learned, members: 3, halt: false, realShare: 0.25, correct: 0.4 };
    expect(configFromParams({ ...base, mode: 's2r' })).toMatchObject({
      verdictMembers: 3,
      halt: false,
      realStartShare: 0.25,
      s2rCorrectFraction: 0.4,
    });
    // A dream has no real budget to correct with, nor has the oracle a verdict to refit: the share is dropped.
    expect(configFromParams({ ...base, mode: 'dream' }).s2rCorrectFraction).toBe(0);
    expect(configFromParams({ ...base, mode: 's2r', llm: '' }).s2rCorrectFraction).toBe(0);
    expect(canCorrect({ mode: 's2r', llm: learned })).toBe(true);
    expect(paramsFromConfig(configFromParams({ ...base, mode: 's2r' }))).toMatchObject({
      members: 3,
      halt: false,
      realShare: 0.25,
      correct: 0.4,
    });
  });

  it("names where experience comes from with core's one label", () => {
    const label = (p: Partial<typeof DEFAULT_PARAMS>) =>
      experienceLabel({ mode: p.mode ?? 'dream', llm: llmSpec({ ...DEFAULT_PARAMS, ...p }) });
    expect(label({ epsR: 0.1, epsP: 0.2 })).toBe('dream: oracle (ε_R=0.1, ε_P=0.2)');
    expect(label({ llm: 'wllama:file:s.gguf' })).toBe('dream: reasoning experience model on wllama s.gguf');
    expect(label({ mode: 's2r', llm: 'webllm:X-q4f32_1-MLC' })).toMatch(
      /^S2R: dream \(reasoning experience model on webllm X-q4f32_1-MLC\), then/,
    );
    expect(label({ mode: 'real', llm: 'webllm:X' })).toBe('the real environment');
  });
});

describe('the dream token counter', () => {
  it('sums tokens per transition × the dream steps of each iteration', () => {
    const iterations = [1, 2, 3];
    const values = { 'dream/tokens_per_transition': [100, null, 50], 'budget/dream_steps': [10, 10, 14] };
    expect(dreamTokenEstimate(iterations, values)).toBe(100 * 10 + 50 * 4);
  });

  it('is 0 for real runs and empty series', () => {
    expect(dreamTokenEstimate([], {})).toBe(0);
    expect(dreamTokenEstimate([1, 2], { 'budget/dream_steps': [0, 0] })).toBe(0);
  });
});
