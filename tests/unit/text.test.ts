import { describe, expect, it } from 'vitest';
import { singular, stem } from '../../src/core/text';

describe('the core word reductions', () => {
  it('stems by Porter, and keeps numbers', () => {
    expect(['shoes', 'running', 'cooled', 'cooling', '64.98', '16'].map(stem)).toEqual([
      'shoe',
      'run',
      'cool',
      'cool',
      '64.98',
      '16',
    ]);
  });
  it("drops a plural's s and nothing else", () => {
    expect(['apples', 'glass', 'bus', 'heated', 'knives'].map(singular)).toEqual([
      'apple',
      'glass',
      'bus',
      'heated',
      'knive',
    ]);
  });
});
