import { describe, expect, it } from 'vitest';
import {
  CASE_CAPITAL,
  CASE_LOWER,
  CASE_UPPER,
  Tokenizer,
  caseOf,
  isIdLike,
  splitPieces,
} from '../../../../src/core/experience/learned/tokenizer';
import {
  DEFAULT_FORMAT_OPTIONS,
  decodeAnswer,
  decodeState,
  encodeAnswer,
  encodeContext,
  encodeInitialAnswer,
  commonBracketVerb,
  freshIdShape,
  freshNames,
  SEGMENT_COUNT,
  SEGMENTS,
} from '../../../../src/core/experience/learned/format';
import { builtInDomainCard } from '../../../../src/core/experience/domain-card';

const corpus = [
  'Page 1 (Total results: 50) | B0EUB84QR9 | Mabry Linen Sofa | $456.95',
  'click[b0eub84qr9]',
  'You arrive at desk 1. On the desk 1, you see a laptop 1.',
  'take laptop 1 from desk 1',
];

describe('learned tokenizer', () => {
  const tokenizer = Tokenizer.learn([...corpus, ...corpus], { minCount: 2 });

  it('round-trips the texts it learned from', () => {
    for (const text of corpus) expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
  });

  it('round-trips unseen ids, names and numbers through the character fallback', () => {
    for (const text of [
      'B0ZZZ999QX costs $1234567.08',
      'Larkspur iPhone XR-12',
      'go to drawer 17',
      'q',
      '   spaced   out  ',
    ]) {
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
    const answer = {
      valid: true,
      terminated: false,
      reward: 0 as const,
      observation: 'Page 1 | B0EUB84QR9 | Mabry Linen Sofa | $456.95',
      admissible: ['click[b0eub84qr9]', 'click[next >]'],
    };
    const encoded = encodeAnswer(tokenizer, answer, DEFAULT_FORMAT_OPTIONS);
    expect(decodeAnswer(tokenizer, encoded)).toEqual(answer);
    expect(commonBracketVerb(answer.admissible)).toBe('click');
    expect(commonBracketVerb(['take a', 'click[b]'])).toBeNull();
  });

  it('round-trips an invalid verdict, a terminal step and a first state', () => {
    const invalid = { valid: false, terminated: false, reward: 0 as const, observation: '', admissible: [] };
    expect(decodeAnswer(tokenizer, encodeAnswer(tokenizer, invalid, DEFAULT_FORMAT_OPTIONS))).toEqual(invalid);
    const done = {
      valid: true,
      terminated: true,
      reward: 1 as const,
      observation: 'You see a laptop 1.',
      admissible: [],
    };
    expect(decodeAnswer(tokenizer, encodeAnswer(tokenizer, done, DEFAULT_FORMAT_OPTIONS))).toEqual(done);
    const first = { observation: 'You arrive at desk 1.', admissible: ['take laptop 1 from desk 1', 'go to desk 2'] };
    expect(decodeState(tokenizer, encodeInitialAnswer(tokenizer, first, DEFAULT_FORMAT_OPTIONS))).toEqual(first);
  });
});

describe('the action marks of a context', () => {
  it("marks where the state writes the action's argument, an id spelled letter by letter found whole, and nothing else", () => {
    const tokenizer = Tokenizer.learn(
      [
        'Page 1 | B0EUB84QR9 | Linen Sofa | $456.95 | B0AAAA1111 | Velvet Sofa | $99.00',
        'click[b0eub84qr9] click[linen]',
      ],
      { minCount: 1 },
    );
    const card = builtInDomainCard('webshop-lite-v0')!;
    const state =
      'Page 1 [SEP] B0EUB84QR9 [SEP] Linen Sofa [SEP] $456.95 [SEP] B0ZZZ9Q7XK [SEP] Velvet Sofa [SEP] $99.00';
    const marked = (action: string) => {
      const input = {
        task: { instruction: 'a linen sofa' },
        history: [],
        state: { text: state, admissible: [] },
        action,
        retrieved: [],
      };
      const seq = encodeContext(tokenizer, card, input, DEFAULT_FORMAT_OPTIONS);
      // Only state tokens move, and only to the action-mark segment, one row of the network's table.
      seq.segments.forEach((segment) => expect(segment).toBeLessThan(SEGMENT_COUNT));
      return tokenizer
        .decode({ ...seq, ids: seq.ids.map((id, i) => (seq.segments[i] === SEGMENTS.actionMark ? id : 0)) })
        .trim();
    };
    expect(marked('click[b0eub84qr9]')).toBe('B0EUB84QR9');
    // An id the vocabulary never saw is spelled: the whole spelling is marked, not its letters elsewhere.
    expect(marked('click[b0zzz9q7xk]')).toBe('B0ZZZ9Q7XK');
    expect(marked('click[linen]')).toBe('Linen');
    expect(marked('click[buy now]')).toBe('');
  });
});

describe('fresh ids (FormatOptions.freshIds)', () => {
  const tokenizer = Tokenizer.learn(corpus, { minCount: 1, freshIds: 3 });
  const shape = { count: 3, prefix: 'b0', length: 10 };
  const format = { ...DEFAULT_FORMAT_OPTIONS, freshIds: shape };
  const page = (a: string, b: string) => ({
    valid: true,
    terminated: false,
    reward: 0 as const,
    observation: `Page 1 | ${a.toUpperCase()} | Mabry Linen Sofa | $456.95 | ${b.toUpperCase()} | Sofa | $9.99`,
    admissible: [`click[${a}]`, `click[${b}]`],
  });

  it('learns placeholders only when asked, after the characters', () => {
    expect(Tokenizer.learn(corpus, { minCount: 1 }).freshIdTokens).toEqual([]);
    expect(tokenizer.freshIdTokens.map((id) => tokenizer.pieces[id])).toEqual(['<id1>', '<id2>', '<id3>']);
    expect(tokenizer.freshIdTokens.map((id) => tokenizer.freshIndex(id))).toEqual([0, 1, 2]);
    expect(isIdLike('b0eub84qr9')).toBe(true);
    for (const word of ['sofa', 'b0a1', '16oz', '4x6inch', 'linen']) expect(isIdLike(word)).toBe(false);
  });

  it("writes an answer's ids the context does not show as placeholders in order of first use, the same id the same one", () => {
    const seen = { known: new Set(['b0eub84qr9']), assigned: new Map<string, number>() };
    const encoded = encodeAnswer(tokenizer, page('b0eub84qr9', 'b0new00001'), format, { knownIds: [...seen.known] });
    const placeholders = encoded.ids.filter((id) => tokenizer.freshIndex(id) >= 0);
    // The new id twice (page and list) as <id1>; the shown one copied as it is.
    expect(placeholders).toEqual([tokenizer.freshIdTokens[0], tokenizer.freshIdTokens[0]]);
    expect(tokenizer.decodeWithMarkers(encoded)).toContain('B0EUB84QR9 | Mabry');
    const names = ['b0zzzzzz11', 'b0yyyyyy22', 'b0xxxxxx33'];
    // Read back with new names: the page and its list agree, in their own case.
    expect(decodeAnswer(tokenizer, encoded, names)).toEqual(page('b0eub84qr9', 'b0zzzzzz11'));
    // Without the option nothing is replaced; placeholders run out after `count`.
    expect(
      encodeAnswer(tokenizer, page('b0new00001', 'b0new00002'), DEFAULT_FORMAT_OPTIONS).ids.some(
        (id) => tokenizer.freshIndex(id) >= 0,
      ),
    ).toBe(false);
    const many = encodeAnswer(
      tokenizer,
      { ...page('b0new00001', 'b0new00002'), admissible: ['click[b0new00003]', 'click[b0new00004]'] },
      format,
      { knownIds: [] },
    );
    expect(many.ids.filter((id) => tokenizer.freshIndex(id) >= 0)).toHaveLength(3);
    expect(tokenizer.decode(many)).toContain('b0new00004');
  });

  it("records a context's ids, and draws new ones of the shape from the context alone, never one it shows", () => {
    const context = encodeContext(
      tokenizer,
      builtInDomainCard('webshop-lite-v0')!,
      {
        task: { instruction: 'i want a linen sofa' },
        history: [],
        action: 'click[b0eub84qr9]',
        retrieved: [],
        state: { text: 'Page 1 | B0EUB84QR9 | Mabry Linen Sofa | $456.95', admissible: ['click[b0eub84qr9]'] },
      },
      format,
    );
    expect(context.knownIds).toEqual(['b0eub84qr9']);
    const names = freshNames(shape, context);
    expect(names).toHaveLength(3);
    for (const name of names) {
      expect(name).toMatch(/^b0[a-z0-9]{8}$/);
      expect(isIdLike(name)).toBe(true);
    }
    expect(new Set([...names, 'b0eub84qr9']).size).toBe(4);
    expect(freshNames(shape, context)).toEqual(names);
    expect(freshNames(shape, { ...context, ids: [...context.ids, context.ids[1]] })).not.toEqual(names);
    expect(freshIdShape(['Page 1 | B0EUB84QR9 | Sofa', 'click[b0cp2j7v0g]', 'B0I5I5U9N0X'], 3)).toEqual(shape);
    expect(freshIdShape(['go to desk 1'], 3)).toBeNull();
  });
});
