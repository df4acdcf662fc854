/**
 * The one engine grammar (src/core/llm/spec.ts): every kind parses in core, formats back to the
 * same text, has a label, and a bad spec is refused with a message naming the valid forms.
 */
import { describe, expect, it } from 'vitest';
import {
  ENGINE_KINDS,
  experienceLabel,
  formatLlmSpec,
  llmSpecLabel,
  LlmSpecError,
  parseLlmSpec,
} from '../../../src/core/llm/spec';

describe('parseLlmSpec', () => {
  it('parses every engine kind and formats it back', () => {
    const cases = {
      oracle: ['oracle:0.2,0', { kind: 'oracle', epsilonReward: 0.2, epsilonTransition: 0 }],
      openai: [
        'openai:https://api.example.com/v1#Qwen/Qwen2.5-1.5B-Instruct',
        { kind: 'openai', baseUrl: 'https://api.example.com/v1', model: 'Qwen/Qwen2.5-1.5B-Instruct' },
      ],
      webllm: [
        'webllm:Qwen2.5-0.5B-Instruct-q4f32_1-MLC',
        { kind: 'webllm', modelId: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC' },
      ],
      wllama: ['wllama:file:stories260K.gguf', { kind: 'wllama', source: 'file', name: 'stories260K.gguf' }],
      learned: ['learned:runs/models/webshop-m-exp', { kind: 'learned', path: 'runs/models/webshop-m-exp' }],
    } as const;
    expect(Object.keys(cases).sort()).toEqual([...ENGINE_KINDS].sort());
    for (const [text, spec] of Object.values(cases)) {
      expect(parseLlmSpec(text), text).toEqual(spec);
      expect(formatLlmSpec(parseLlmSpec(text))).toBe(text);
    }
    for (const text of [
      'wllama:https://example.org/models/tiny-q4_k_m.gguf',
      'openai:http://127.0.0.1:8000/v1#m',
      'wllama:file:my model.gguf',
    ]) {
      expect(formatLlmSpec(parseLlmSpec(text))).toBe(text);
    }
    expect(parseLlmSpec(' oracle:1, 0.05 ')).toEqual({ kind: 'oracle', epsilonReward: 1, epsilonTransition: 0.05 });
    expect(parseLlmSpec('openai:http://127.0.0.1:11434/v1/#qwen2.5:1.5b')).toEqual({
      kind: 'openai',
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'qwen2.5:1.5b',
    });
  });

  it('labels every kind; the oracle always as the oracle', () => {
    expect(llmSpecLabel(parseLlmSpec('oracle:0.2,0'))).toBe('oracle (ε_R=0.2, ε_P=0)');
    expect(llmSpecLabel('openai:http://127.0.0.1:11434/v1#qwen2.5:1.5b')).toBe(
      'openai qwen2.5:1.5b @ http://127.0.0.1:11434/v1',
    );
    expect(llmSpecLabel('webllm:X-q4f32_1-MLC')).toBe('webllm X-q4f32_1-MLC');
    expect(llmSpecLabel('wllama:file:s.gguf')).toBe('wllama s.gguf');
    expect(llmSpecLabel('learned:runs/m')).toBe('learned model at runs/m');
    expect(experienceLabel({ mode: 'real', llm: 'webllm:X' })).toBe('the real environment');
    expect(experienceLabel({ mode: 'dream', llm: 'oracle:0.1,0.2' })).toBe('dream: oracle (ε_R=0.1, ε_P=0.2)');
    expect(experienceLabel({ mode: 'dream', llm: 'wllama:file:s.gguf' })).toBe(
      'dream: reasoning experience model on wllama s.gguf',
    );
    expect(experienceLabel({ mode: 's2r', llm: 'learned:runs/m' })).toBe(
      'S2R: dream (learned model at runs/m), then a small real budget',
    );
  });

  // Issue 31: a secret in the URL passed the check and was saved with runs and printed.
  it.each([
    'openai:http://user:secret@127.0.0.1:1/v1#m',
    'openai:http://:secret@127.0.0.1:1/v1#m',
    'openai:https://secret@api.example.com/v1#m',
    'openai:http://user:secret@127.0.0.1:1/v1',
    'http://user:secret@127.0.0.1:1/v1',
    'wllama:https://user:secret@example.org/model.gguf',
  ])('refuses credentials in the URL of %s, names the fix and never repeats the secret', (text) => {
    let error: unknown;
    try {
      parseLlmSpec(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LlmSpecError);
    const message = (error as Error).message;
    expect(message).not.toMatch(/secret/);
    if (text.includes('#m') || text.startsWith('wllama')) {
      expect(message).toMatch(/must not carry credentials/);
      expect(message).toMatch(/DREAMGYM_API_KEY/);
    }
  });

  it('refuses bad specs with what is wrong and the valid forms', () => {
    const cases: [string, RegExp][] = [
      ['oracle', /two error rates/],
      ['oracle:0.2', /two error rates/],
      ['oracle:0.2,0,1', /two error rates/],
      ['oracle:1.5,0', /EPS_R.*0\.\.1.*1\.5/],
      ['oracle:0,-0.1', /EPS_P.*0\.\.1/],
      ['oracle:abc,0', /must be a number/],
      ['openai:http://127.0.0.1:11434/v1', /BASE_URL#MODEL/],
      ['openai:http://127.0.0.1:11434/v1#', /no model/],
      ['openai:#m', /no base URL/],
      ['openai:127.0.0.1:11434#m', /http/],
      ['openai:ftp://host/v1#m', /http/],
      ['http://127.0.0.1:11434/v1', /openai:http:\/\/127\.0\.0\.1:11434\/v1#MODEL/],
      ['webllm:', /needs a WebLLM model id/],
      ['wllama:file:', /needs a file name/],
      ['wllama:https://example.org/model.bin', /does not end in \.gguf/],
      ['wllama:ftp://example.org/model.gguf', /http:\/\/ or https:\/\//],
      ['wllama:model.gguf', /neither file:NAME nor a full http\(s\) URL/],
      ['learned:', /needs the path of a saved learned model/],
      ['gpt4', /Unknown engine spec 'gpt4'/],
      ['', /Unknown engine spec/],
    ];
    for (const [text, problem] of cases) {
      let error: unknown;
      try {
        parseLlmSpec(text);
      } catch (e) {
        error = e;
      }
      expect(error, text).toBeInstanceOf(LlmSpecError);
      const message = (error as Error).message;
      expect(message, text).toMatch(problem);
      expect((error as LlmSpecError).problem, text).toMatch(problem);
      for (const form of [
        'oracle:0.2,0.1',
        'openai:http://127.0.0.1:11434/v1#qwen2.5:1.5b',
        'webllm:MODEL_ID',
        'wllama:file:NAME.gguf',
        'learned:PATH',
      ]) {
        expect(message, text).toContain(form);
      }
    }
  });
});
