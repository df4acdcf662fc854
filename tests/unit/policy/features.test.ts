import { describe, expect, it } from 'vitest';
import {
  ACTION_TYPES,
  DEFAULT_FEATURE_CONFIG,
  ROW_DENSE_DIM,
  ROW_DENSE_NAMES,
  STATE_DENSE_DIM,
  STATE_DENSE_NAMES,
  classifyAction,
  encodeStates,
  pageType,
  sliceEncoded,
  tokenize,
  type EncodedBatch,
} from '../../../src/core/policy/features';
import { householdState, itemState, resultsState } from './fixtures';

const rowFeature = (enc: EncodedBatch, row: number, name: string): number =>
  enc.rowDense[row * ROW_DENSE_DIM + ROW_DENSE_NAMES.indexOf(name)];
const stateFeature = (enc: EncodedBatch, s: number, name: string): number =>
  enc.stateDense[s * STATE_DENSE_DIM + STATE_DENSE_NAMES.indexOf(name)];

describe('tokens and action types', () => {
  it('tokenizes words and prices', () => {
    expect(tokenize("L'eau D'issey 6.76 fl oz, $64.98")).toEqual([
      'l',
      'eau',
      'd',
      'issey',
      '6.76',
      'fl',
      'oz',
      '64.98',
    ]);
  });
  it('classifies WebShop and household actions', () => {
    expect(classifyAction('search[blue shirt]')).toEqual({ type: 'search', argument: 'blue shirt' });
    expect(classifyAction('click[b0abc12345]').type).toBe('click-product');
    expect(classifyAction('click[buy now]').type).toBe('click-buy');
    expect(classifyAction('click[next >]').type).toBe('click-nav');
    expect(classifyAction('click[< prev]').type).toBe('click-nav');
    expect(classifyAction('click[6.76 fl oz (pack of 1)]').type).toBe('click-option');
    expect(classifyAction('go to cabinet 3')).toEqual({ type: 'go to', argument: 'cabinet 3' });
    expect(classifyAction('take apple 1 from countertop 1').type).toBe('take');
    expect(classifyAction('put apple 1 in/on fridge 1').type).toBe('put');
    expect(classifyAction('heat egg 1 with microwave 1').type).toBe('heat');
    expect(classifyAction('inventory').type).toBe('other');
  });
  it('recognises page types', () => {
    expect(pageType('WebShop [SEP] Instruction: [SEP] x [SEP] Search', ['search[x]'])).toBe('webshop-search');
    expect(pageType(resultsState().observation, [])).toBe('webshop-results');
    expect(pageType(itemState().observation, [])).toBe('webshop-item');
    expect(pageType('Instruction: [SEP] x [SEP] Back to Search [SEP] < Prev [SEP] soft and warm', [])).toBe(
      'webshop-subpage',
    );
    expect(pageType(householdState().observation, householdState().admissible)).toBe('household');
  });
});

describe('encodeStates', () => {
  it('lays out rows, bags and padding', () => {
    const states = [resultsState(), householdState(), itemState()];
    const enc = encodeStates(states);
    expect(enc.nStates).toBe(3);
    expect(enc.nRows).toBe(5 + 6 + 8);
    expect(enc.maxActions).toBe(8);
    expect([...enc.actionCounts]).toEqual([5, 6, 8]);
    expect([...enc.rowOffset]).toEqual([0, 5, 11]);
    expect(enc.rowDense.length).toBe(enc.nRows * ROW_DENSE_DIM);
    expect(enc.stateDense.length).toBe(3 * STATE_DENSE_DIM);
    // bags: sorted segment ids, every segment present (bias id), ids inside the table
    for (const [ids, seg, n] of [
      [enc.instrIds, enc.instrSeg, 3],
      [enc.obsIds, enc.obsSeg, 3],
      [enc.actIds, enc.actSeg, enc.nRows],
    ] as const) {
      for (let j = 1; j < seg.length; j++) expect(seg[j]).toBeGreaterThanOrEqual(seg[j - 1]);
      expect(new Set(seg).size).toBe(n);
      for (const id of ids) expect(id >= 0 && id < DEFAULT_FEATURE_CONFIG.buckets).toBe(true);
    }
    // padding: state 0 has 5 real slots of 8
    expect([...enc.slotMask.slice(0, 8)]).toEqual([1, 1, 1, 1, 1, 0, 0, 0]);
    expect([...enc.slotRow.slice(0, 8)]).toEqual([0, 1, 2, 3, 4, 19, 19, 19]);
    // every row's bias column is 1 (the dense columns line up with their names)
    for (let r = 0; r < enc.nRows; r++) expect(rowFeature(enc, r, 'bias')).toBe(1);
    for (let s = 0; s < 3; s++) expect(stateFeature(enc, s, 'bias')).toBe(1);
    // one action type per row
    for (let r = 0; r < enc.nRows; r++) {
      let sum = 0;
      for (let t = 0; t < ACTION_TYPES.length; t++) sum += enc.rowDense[r * ROW_DENSE_DIM + t];
      expect(sum).toBe(1);
    }
  });

  it('finds the clicked product title after its ASIN and compares it to the instruction', () => {
    const enc = encodeStates([resultsState()]);
    // rows: back, next, sofa (b0abc12345), blue shirt $25.50 (b0xyz98765), blue shirt $45 (b0qqq11111)
    expect(rowFeature(enc, 2, 'type=click-product')).toBe(1);
    expect(rowFeature(enc, 0, 'type=click-nav')).toBe(1);
    expect(rowFeature(enc, 2, 'has_title')).toBe(1);
    expect(rowFeature(enc, 3, 'title_overlap_ratio')).toBeGreaterThan(rowFeature(enc, 2, 'title_overlap_ratio'));
    expect(rowFeature(enc, 2, 'title_overlap_ratio')).toBe(0);
    expect(rowFeature(enc, 3, 'price_within_bound')).toBe(1);
    expect(rowFeature(enc, 4, 'price_over_bound')).toBe(1);
    expect(rowFeature(enc, 2, 'price_over_bound')).toBe(1);
    expect(rowFeature(enc, 0, 'has_title')).toBe(0);
    expect(rowFeature(enc, 3, 'rank_in_type')).toBeCloseTo(0.1, 6);
    expect(stateFeature(enc, 0, 'page=webshop-results')).toBe(1);
    expect(stateFeature(enc, 0, 'has_price_bound')).toBe(1);
    expect(stateFeature(enc, 0, 'step_fraction')).toBeCloseTo(1 / 15, 6);
  });

  it('scores option clicks and household actions by overlap with the instruction', () => {
    const enc = encodeStates([itemState(), householdState()]);
    expect(rowFeature(enc, 3, 'phrase_in_instruction')).toBe(1); // click[large]
    expect(rowFeature(enc, 2, 'phrase_in_instruction')).toBe(0); // click[small]
    expect(rowFeature(enc, 7, 'type=click-buy')).toBe(1);
    expect(rowFeature(enc, 7, 'price_within_bound')).toBe(1); // buy: the item's price
    const fridge = 8 + 2,
      cabinet = 8 + 0;
    expect(rowFeature(enc, fridge, 'type=go to')).toBe(1);
    expect(rowFeature(enc, fridge, 'overlap_any')).toBe(1);
    expect(rowFeature(enc, cabinet, 'overlap_any')).toBe(0);
    expect(stateFeature(enc, 1, 'page=household')).toBe(1);
  });

  it('marks repeated actions', () => {
    const s = { ...householdState(), previousActions: ['go to fridge 1', 'look', 'go to fridge 1'] };
    const enc = encodeStates([s]);
    expect(rowFeature(enc, 2, 'repeat_count')).toBeCloseTo(2 / 3, 6);
    expect(rowFeature(enc, 2, 'repeat_last')).toBe(1);
    expect(rowFeature(enc, 5, 'repeat_count')).toBeCloseTo(1 / 3, 6);
    expect(rowFeature(enc, 5, 'repeat_last')).toBe(0);
  });

  it('is deterministic and slices without re-encoding', () => {
    const states = [resultsState(), householdState(), itemState()];
    const a = encodeStates(states, [[1, 2, 3, 4, 5], null, undefined]);
    const b = encodeStates(states, [[1, 2, 3, 4, 5], null, undefined]);
    expect(a).toEqual(b);
    expect([...a.prior.slice(0, 6)]).toEqual([1, 2, 3, 4, 5, 0]);
    const sliced = sliceEncoded(a, [2, 0]);
    const direct = encodeStates([states[2], states[0]], [undefined, [1, 2, 3, 4, 5]]);
    expect(sliced).toEqual(direct);
  });

  it('rejects states without actions and mismatched priors', () => {
    expect(() => encodeStates([{ ...resultsState(), admissible: [] }])).toThrow(/no admissible actions/);
    expect(() => encodeStates([resultsState()], [[1, 2]])).toThrow(/prior for state 0 has 2 scores for 5/);
  });
});
