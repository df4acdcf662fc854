import { describe, expect, it } from 'vitest';
import { indelDistance, pythonRound, ratio, tokenSetRatio } from '../../../../src/core/envs/webshop/fuzz';
import {
  attributeMatched,
  getReward,
  normalizeColor,
  optionMatchCount,
  titleNouns,
  typeReward,
  type RewardGoal,
  type RewardProduct,
} from '../../../../src/core/envs/webshop/reward';

// A tiny noun vocabulary for hand-worked cases (the env uses the taxonomy's).
const NOUNS = new Set([
  'sofa',
  'couch',
  'chair',
  'acme',
  'zeta',
  'n1',
  'n2',
  'n3',
  'n4',
  'n5',
  'n6',
  'n7',
  'n8',
  'n9',
  'n10',
  'n11',
]);

function product(overrides: Partial<RewardProduct> = {}): RewardProduct {
  return {
    title: 'Acme Living Room Sofa',
    query: 'sofas and couches',
    productCategory: 'Home & Kitchen › Living Room Furniture › Sofas & Couches',
    attributes: ['living room', 'easy assemble'],
    bullets: ['EASY ASSEMBLE - simple to put together.'],
    description: 'A sofa for every home.',
    ...overrides,
  };
}

function goal(overrides: Partial<RewardGoal> = {}): RewardGoal {
  return {
    name: 'Acme Wood Frame Sofa',
    query: 'sofas and couches',
    productCategory: 'Home & Kitchen › Living Room Furniture › Sofas & Couches',
    attributes: ['wood frame', 'living room'],
    goalOptions: ['grey'],
    priceUpper: 490,
    ...overrides,
  };
}

describe('token_set_ratio (TheFuzz)', () => {
  it('reproduces TheFuzz documentation and test-suite values', () => {
    expect(tokenSetRatio('fuzzy was a bear', 'fuzzy fuzzy was a bear')).toBe(100);
    expect(tokenSetRatio('new york mets vs atlanta braves', 'atlanta braves vs new york mets')).toBe(100);
    expect(tokenSetRatio('{a', '{a', { fullProcess: false })).toBe(100);
    expect(tokenSetRatio('a{', '{b', { fullProcess: false })).toBe(50);
    expect(tokenSetRatio('', '')).toBe(0);
    expect(tokenSetRatio('Some', '')).toBe(0);
    expect(tokenSetRatio('', 'Some')).toBe(0);
  });

  it('matches rapidfuzz-backed thefuzz on WebShop-like phrases', () => {
    // Values computed with thefuzz 0.22 / rapidfuzz 3 (int(round(score))).
    const cases: [string, string, number][] = [
      ['essential oils', 'essential oil', 96],
      ['short sleeve', 'long sleeve', 71],
      ['pack of 2', 'pack of 3', 89],
      ['x-large', 'large', 100],
      ['12 fl oz', '16 fl oz', 88],
      ['wood frame', 'living room', 29],
      ['New York Mets', 'the wonderful new york mets', 100],
      ['grey', 'gray', 75],
      ['size 10', 'size 11', 86],
      ['3 tier', '5 tier', 83],
      ['hand wash', 'machine wash', 67],
      ['Café', 'Cafe', 86],
      ['memory foam', 'foam memory', 100],
      // 62.5 exactly: Python's round() goes to the even neighbour.
      ['acea xx', 'aaaccd xx', 62],
    ];
    for (const [a, b, expected] of cases) expect(tokenSetRatio(a, b), `${a} | ${b}`).toBe(expected);
  });

  it('has the Indel building blocks right', () => {
    expect(indelDistance('oils', 'oil')).toBe(1);
    expect(indelDistance('kitten', 'sitting')).toBe(5);
    expect(indelDistance('', 'abc')).toBe(3);
    expect(ratio('', '')).toBe(100);
    expect(ratio('this is a test', 'this is a test!')).toBe(97);
    expect(pythonRound(2.5)).toBe(2);
    expect(pythonRound(3.5)).toBe(4);
    expect(pythonRound(85.71)).toBe(86);
  });
});

describe('normalize_color and title nouns', () => {
  it('returns the first COLOR_SET entry contained in the value', () => {
    expect(normalizeColor('navy blue')).toBe('blue');
    expect(normalizeColor('light blue')).toBe('blue');
    expect(normalizeColor('dark grey')).toBe('dark'); // 'dark' precedes 'grey' in the list
    expect(normalizeColor('standard')).toBe('tan'); // WebShop's substring quirk
    expect(normalizeColor('large')).toBe('large');
  });

  it('keeps vocabulary tokens of a title in order, duplicates included', () => {
    expect(titleNouns('Acme Sofa Couch, Sofa', NOUNS)).toEqual(['acme', 'sofa', 'couch', 'sofa']);
    expect(titleNouns('Wood Frame', NOUNS)).toEqual([]);
  });
});

describe('get_reward (WebShop goal.py)', () => {
  it('worked example: 2 attributes, 1 option, bought with 1 attribute + option + price ok → 0.75', () => {
    const r = getReward(product(), goal(), 300, { color: 'grey' }, NOUNS);
    expect(r.rType).toBe(1);
    expect(r.attributeMatches).toBe(1);
    expect(r.optionMatches).toBe(1);
    expect(r.priceOk).toBe(true);
    expect(r.reward).toBe(0.75);
  });

  it('everything matched → exactly 1', () => {
    const p = product({ attributes: ['wood frame', 'living room'] });
    expect(getReward(p, goal(), 300, { color: 'grey' }, NOUNS).reward).toBe(1);
    // Options may be given as a list of chosen values too.
    expect(getReward(p, goal(), 300, ['grey'], NOUNS).reward).toBe(1);
  });

  it('r_price: price above the bound loses its share; no bound (1e6) always passes', () => {
    const p = product({ attributes: ['wood frame', 'living room'] });
    const over = getReward(p, goal(), 490.01, { color: 'grey' }, NOUNS);
    expect(over.priceOk).toBe(false);
    expect(over.reward).toBe(0.75);
    expect(getReward(p, goal(), 490, { color: 'grey' }, NOUNS).reward).toBe(1);
    expect(getReward(p, goal({ priceUpper: 1_000_000 }), 5000, { color: 'grey' }, NOUNS).reward).toBe(1);
  });

  it('an option not chosen scores no option match', () => {
    const p = product({ attributes: ['wood frame', 'living room'] });
    const r = getReward(p, goal(), 300, {}, NOUNS);
    expect(r.optionMatches).toBe(0);
    expect(r.reward).toBe(0.75);
    const oneOfTwo = getReward(
      p,
      goal({ goalOptions: ['grey', 'large'] }),
      300,
      { color: 'grey', size: 'small' },
      NOUNS,
    );
    expect(oneOfTwo.optionMatches).toBe(1);
    expect(oneOfTwo.reward).toBe(0.8);
  });

  it('options match after normalize_color and with token_set_ratio > 85', () => {
    expect(optionMatchCount(['light blue'], ['navy blue'])).toBe(1); // both → 'blue'
    expect(optionMatchCount(['x-large'], ['large'])).toBe(1); // token subset → 100
    expect(optionMatchCount(['dark grey'], ['grey'])).toBe(0); // 'dark' vs 'grey'
    expect(optionMatchCount(['pack of 3'], ['pack of 2'])).toBe(1); // 89 > 85
    expect(optionMatchCount(['3 tier'], ['5 tier'])).toBe(0); // 83
    // One chosen value may satisfy several goal options.
    expect(optionMatchCount(['grey'], ['grey', 'grey'])).toBe(2);
  });

  it('attributes: fuzzy against the attribute list (essential oils ~ essential oil)', () => {
    const p = product({ attributes: ['essential oil'], title: 'Acme Sofa', description: '', bullets: [] });
    expect(attributeMatched(p, 'essential oils')).toBe(true);
    expect(attributeMatched(p, 'olive oil')).toBe(false); // 'essential' vs 'olive' ≤ 85
  });

  it('attributes: substring fallback in title, then bullets, then description', () => {
    const bare = product({
      attributes: ['easy assemble'],
      title: 'Acme Sofa',
      bullets: ['SOFT - comfy.'],
      description: 'Nice.',
    });
    expect(attributeMatched(bare, 'natural ingredients')).toBe(false);
    expect(attributeMatched({ ...bare, title: 'Acme Natural Ingredients Sofa' }, 'natural ingredients')).toBe(true);
    expect(
      attributeMatched({ ...bare, bullets: ['MADE WITH NATURAL INGREDIENTS - yes.'] }, 'natural ingredients'),
    ).toBe(true);
    expect(
      attributeMatched({ ...bare, description: 'Made with natural ingredients only.' }, 'natural ingredients'),
    ).toBe(true);
  });

  it('r_type: query match with low title score keeps 1.0', () => {
    const g = goal({ name: 'n1 n2 n3 n4 n5', productCategory: 'A › B › C' });
    const p = product({ title: 'n1 zzz', productCategory: 'X › Y › Z' });
    const t = typeReward(p, g, NOUNS);
    expect(t).toEqual({ rType: 1, queryMatch: true, categoryMatch: false, titleScore: 0.2 });
  });

  it('r_type: ≥2 shared category components is a match; one is not', () => {
    const g = goal({ name: 'n1 n2 n3 n4 n5', query: 'q1', productCategory: 'Home › Living Room › Sofas' });
    const two = typeReward(
      product({ title: 'n1', query: 'q2', productCategory: 'Home › Living Room › Chairs' }),
      g,
      NOUNS,
    );
    expect(two.categoryMatch).toBe(true);
    expect(two.rType).toBe(1);
    const one = typeReward(product({ title: 'n1', query: 'q2', productCategory: 'Home › Office › Desks' }), g, NOUNS);
    expect(one.categoryMatch).toBe(false);
    expect(one.titleScore).toBe(0.2);
    expect(one.rType).toBe(0.5); // no match and title score not > 0.2
  });

  it('r_type: title noun overlap > 0.2 alone is a match', () => {
    const g = goal({ name: 'Acme Sofa', query: 'q1', productCategory: 'A › B › C' });
    const t = typeReward(product({ title: 'Zeta Sofa', query: 'q2', productCategory: 'X › Y › Z' }), g, NOUNS);
    expect(t.titleScore).toBe(0.5);
    expect(t.rType).toBe(1);
  });

  it('r_type: title score below 0.1 → 0.1, zero → 0 (even with a query match)', () => {
    const eleven = 'n1 n2 n3 n4 n5 n6 n7 n8 n9 n10 n11';
    const low = typeReward(product({ title: 'n1' }), goal({ name: eleven }), NOUNS);
    expect(low.titleScore).toBeCloseTo(1 / 11);
    expect(low.rType).toBe(0.1);
    const none = typeReward(product({ title: 'Zeta Chair' }), goal({ name: 'Acme Sofa' }), NOUNS);
    expect(none.queryMatch).toBe(true);
    expect(none.titleScore).toBe(0);
    expect(none.rType).toBe(0);
    const r = getReward(
      product({ title: 'Zeta Chair', attributes: ['wood frame', 'living room'] }),
      goal(),
      300,
      { color: 'grey' },
      NOUNS,
    );
    expect(r.reward).toBe(0);
  });

  it('r_type: a goal name without nouns scores title 0.2', () => {
    const g = goal({ name: 'Wood Frame Thing', query: 'q1', productCategory: 'A › B › C' });
    expect(typeReward(product(), g, NOUNS)).toEqual({
      rType: 0.5,
      queryMatch: false,
      categoryMatch: false,
      titleScore: 0.2,
    });
    expect(typeReward(product(), { ...g, query: 'sofas and couches' }, NOUNS).rType).toBe(1);
  });

  it('r_type multiplies the whole score (0.5 gate)', () => {
    const g = goal({ name: 'n1 n2 n3 n4 n5', query: 'q1', productCategory: 'A › B › C' });
    const p = product({ title: 'n1 Sofa', productCategory: 'X › Y › Z', attributes: ['wood frame', 'living room'] });
    const r = getReward(p, g, 300, { color: 'grey' }, NOUNS);
    expect(r.rType).toBe(0.5);
    expect(r.reward).toBe(0.5);
  });
});
