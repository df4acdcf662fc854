/**
 * The two word reductions the core uses, one place each (docs/architecture.md §2.1: the ground layer, so every layer
 * may use them):
 *
 * - `stem`: the Porter stemmer (the `stemmer` package), cached, numbers kept as they are. The policy's features and
 *   WebShop's search index match words by it (shoes, shoe → shoe; cooling, cooled → cool).
 * - `singular`: a plural's s dropped, nothing else (apples → apple; glass stays). The experience model's verdict and
 *   novelty checks match the things an instruction names by it, where a verb's form tells a different thing apart
 *   (a 'heated' state against a 'heat' action); their figures were measured with this rule.
 */
import { stemmer } from 'stemmer';

const stemCache = new Map<string, string>();

/** A token's Porter stem; a number is its own stem. */
export function stem(token: string): string {
  let s = stemCache.get(token);
  if (s === undefined) {
    s = /^[0-9.]+$/.test(token) ? token : stemmer(token);
    if (stemCache.size > 200_000) stemCache.clear();
    stemCache.set(token, s);
  }
  return s;
}

/** A word without a plural's s (words of 3 letters or fewer, and words ending in ss, stay). */
export function singular(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}
