import { describe, expect, it } from 'vitest';
import { CASE_CAPITAL, CASE_LOWER, CASE_UPPER, Tokenizer, caseOf, splitPieces } from '../../../../src/core/experience/learned/tokenizer';
import {
  DEFAULT_FORMAT_OPTIONS, decodeAnswer, decodeState, encodeAnswer, encodeContext, encodeInitialAnswer, commonBracketVerb, SEGMENT_COUNT, SEGMENTS, segmentCount,
} from '../../../../src/core/experience/learned/format';
import { builtInDomainCard } from '../../../../src/core/experience/domain-card';

const corpus = [
  'Page 1 (Total results: 50) | B0EUB84QR9 | Mabry Linen Sofa | $456.95',
  'click[b0eub84qr9]', 'You arrive at desk 1. On the desk 1, you see a laptop 1.', 'take laptop 1 from desk 1',
];

describe('learned tokenizer', () => {
  const tokenizer = Tokenizer.learn([...corpus, ...corpus], { minCount: 2 });

  it('round-trips the texts it learned from', () => {
    for (const text of corpus) expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
  });

  it('round-trips unseen ids, names and numbers through the character fallback', () => {
    for (const text of ['B0ZZZ999QX costs $1234567.08', 'Larkspur iPhone XR-12', 'go to drawer 17', 'q', '   spaced   out  ']) {
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text.replace(/\s+/g, ' ').trim());
    }
    const unseen = tokenizer.encode('B0ZZZ999QX');
    expect(unseen.ids.length).toBeGreaterThan(1); // spelled
  });

  it('keeps space and case out of the piece id, so ids copy between forms', () => {
    const upper = tokenizer.encode('B0EUB84QR9');
    const lower = tokenizer.encode('[b0eub84qr9');
    expect(upper.ids).toHaveLength(1);
    expect(lower.ids[1]).toBe(upper.ids[0]);
    expect(upper.cases[0]).toBe(CASE_UPPER);
    expect(lower.cases[1]).toBe(CASE_LOWER);
    expect(tokenizer.encode('Linen').cases[0]).toBe(CASE_CAPITAL);
  });

  it('splits digit runs longer than four in threes and classifies case', () => {
    expect(splitPieces('1234567').map((p) => p.piece)).toEqual(['123', '456', '7']);
    expect(splitPieces('2024').map((p) => p.piece)).toEqual(['2024']);
    expect(caseOf('iPhone')).toBeNull();
    expect(caseOf('A')?.letterCase).toBe(CASE_CAPITAL);
  });

  it('refuses a vocabulary that does not start with the special tokens', () => {
    expect(() => Tokenizer.fromJSON({ format: 'dreamgym-tokenizer/1', pieces: ['a', 'b'] })).toThrow(/special/);
    expect(() => Tokenizer.fromJSON({ format: 'other' } as never)).toThrow(/Not a DreamGym tokenizer/);
    expect(Tokenizer.fromJSON(tokenizer.toJSON()).pieces).toEqual(tokenizer.pieces);
  });
});

describe('learned answer format', () => {
  const tokenizer = Tokenizer.learn(corpus, { minCount: 1 });

  it('round-trips an answer, writing a shared verb once', () => {
    const answer = { valid: true, terminated: false, reward: 0 as const, observation: 'Page 1 | B0EUB84QR9 | Mabry Linen Sofa | $456.95',
      admissible: ['click[b0eub84qr9]', 'click[next >]'] };
    const encoded = encodeAnswer(tokenizer, answer, DEFAULT_FORMAT_OPTIONS);
    expect(decodeAnswer(tokenizer, encoded)).toEqual(answer);
    expect(commonBracketVerb(answer.admissible)).toBe('click');
    expect(commonBracketVerb(['take a', 'click[b]'])).toBeNull();
  });

  it('round-trips an invalid verdict, a terminal step and a first state', () => {
    const invalid = { valid: false, terminated: false, reward: 0 as const, observation: '', admissible: [] };
    expect(decodeAnswer(tokenizer, encodeAnswer(tokenizer, invalid, DEFAULT_FORMAT_OPTIONS))).toEqual(invalid);
    const done = { valid: true, terminated: true, reward: 1 as const, observation: 'You see a laptop 1.', admissible: [] };
    expect(decodeAnswer(tokenizer, encodeAnswer(tokenizer, done, DEFAULT_FORMAT_OPTIONS))).toEqual(done);
    const first = { observation: 'You arrive at desk 1.', admissible: ['take laptop 1 from desk 1', 'go to desk 2'] };
    expect(decodeState(tokenizer, encodeInitialAnswer(tokenizer, first, DEFAULT_FORMAT_OPTIONS))).toEqual(first);
  });
});

describe('the exact-match marks of a context (FormatOptions.matchFeature)', () => {
  it('marks the instruction words found in the rest and the rest\'s words found in the instruction, nothing else', () => {
    const tokenizer = Tokenizer.learn(['i want a red shirt', 'blue shirt | price', 'click[buy now]'], { minCount: 1 });
    const card = builtInDomainCard('webshop-lite-v0')!;
    const input = { task: { instruction: 'i want a red shirt' }, history: [], state: { text: 'blue shirt | price', admissible: [] }, action: 'click[buy now]', retrieved: [] };
    const plain = encodeContext(tokenizer, card, input, { ...DEFAULT_FORMAT_OPTIONS });
    const marked = encodeContext(tokenizer, card, input, { ...DEFAULT_FORMAT_OPTIONS, matchFeature: true });
    expect(marked.ids).toEqual(plain.ids);
    expect(segmentCount({ matchFeature: true })).toBe(2 * SEGMENT_COUNT);
    const word = (w: string, segment: number) => marked.ids.findIndex((id, i) => id === tokenizer.encode(w).ids[0] && plain.segments[i] === segment);
    const isMarked = (i: number) => marked.segments[i] === plain.segments[i] + SEGMENT_COUNT;
    expect(isMarked(word('shirt', SEGMENTS.task))).toBe(true);
    expect(isMarked(word('shirt', SEGMENTS.state))).toBe(true);
    expect(isMarked(word('red', SEGMENTS.task))).toBe(false);
    expect(isMarked(word('blue', SEGMENTS.state))).toBe(false);
    // Special tokens and unmatched words keep their segment.
    marked.segments.forEach((s, i) => { if (tokenizer.isSpecial(marked.ids[i])) expect(s).toBe(plain.segments[i]); });
  });
});

describe('the pending-choice marks of a context (FormatOptions.pendingFeature)', () => {
  it('marks the instruction words naming an admissible action not yet taken, and unmarks them once it is', () => {
    const tokenizer = Tokenizer.learn(['i want a red shirt size large', 'shirt | red | blue | large | small', 'click[buy now] click[red] click[large] search[red shirt]'], { minCount: 1 });
    const card = builtInDomainCard('webshop-lite-v0')!;
    const options = { ...DEFAULT_FORMAT_OPTIONS, pendingFeature: true };
    const admissible = ['click[red]', 'click[blue]', 'click[large]', 'click[small]', 'click[buy now]'];
    const step = (action: string) => ({ observation: '', admissible, action, reward: 0, terminated: false, truncated: false, valid: true });
    const context = (history: string[]) => encodeContext(tokenizer, card, {
      task: { instruction: 'i want a red shirt size large' }, history: history.map(step),
      state: { text: 'shirt | red | blue | large | small', admissible }, action: 'click[buy now]', retrieved: [] }, options);
    const pendingWords = (history: string[]) => {
      const seq = context(history);
      return seq.ids.filter((_, i) => seq.segments[i] === SEGMENTS.task + 2 * SEGMENT_COUNT).map((id) => tokenizer.decode({ ids: [id], spaces: [0], cases: [0] }));
    };
    expect(segmentCount(options)).toBe(3 * SEGMENT_COUNT);
    // A search that names the words chooses nothing: only the clicks do.
    expect(pendingWords(['search[red shirt]'])).toEqual(['red', 'large']);
    expect(pendingWords(['search[red shirt]', 'click[red]'])).toEqual(['large']);
    expect(pendingWords(['click[red]', 'click[large]'])).toEqual([]);
    // With no history shown (the H = 0 ablation) every choice looks open.
    expect(encodeContext(tokenizer, card, { task: { instruction: 'i want a red shirt size large' }, history: [step('click[red]')],
      state: { text: 'shirt', admissible }, action: 'click[buy now]', retrieved: [] }, { ...options, historyLength: 0 })
      .segments.filter((s) => s === SEGMENTS.task + 2 * SEGMENT_COUNT)).toHaveLength(2);
  });
});
