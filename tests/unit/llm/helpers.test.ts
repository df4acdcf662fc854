/** The helpers the chat engines share: URLs, numbers from an answer, and error text. */
import { describe, expect, it } from 'vitest';
import { absoluteUrl, errorText, finiteOr } from '../../../src/core/llm/helpers';

describe('engine helpers', () => {
  it('resolves an absolute URL, and gives undefined for what is not one (no page address in Node)', () => {
    expect(absoluteUrl('https://example.org/models/a.gguf?x=1')).toBe('https://example.org/models/a.gguf?x=1');
    expect(absoluteUrl('HTTP://Example.org')).toBe('http://example.org/');
    expect(absoluteUrl('models/a.gguf')).toBeUndefined();
    expect(absoluteUrl('http://')).toBeUndefined();
  });

  it('keeps a finite number and replaces anything else', () => {
    expect([finiteOr(7, 0), finiteOr(-0.5, 0)]).toEqual([7, -0.5]);
    expect([finiteOr(NaN, 1), finiteOr(Infinity, 2), finiteOr('3', 3), finiteOr(undefined, 4)]).toEqual([1, 2, 3, 4]);
  });

  it("names an error's kind and message, and prints anything else thrown as text", () => {
    expect(errorText(new TypeError('Failed to fetch'))).toBe('TypeError: Failed to fetch');
    expect(errorText('quota exceeded')).toBe('quota exceeded');
    expect(errorText({ toString: () => 'odd' })).toBe('odd');
  });
});
