import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_FEATURE_CONFIG,
  Featuriser,
  GENERIC_FEATURISER,
  encodeStates,
  sliceEncoded,
  tokenize,
  type EncodedBatch,
} from '../../../src/core/policy/features';
import { emptyFeatureSchema } from '../../../src/core/policy/feature-schema';
import { webshopPolicyFeatures } from '../../../src/core/envs/webshop/policy-features';
import { householdPolicyFeatures } from '../../../src/core/envs/household/policy-features';
import { registeredEnvSchema } from '../../../src/core/train/policy-schema';
import { householdState, itemState, resultsState } from './fixtures';

// The built-in envs' schemas, mined from their offline data as a run mines them.
let webshop: Featuriser, household: Featuriser;
beforeAll(async () => {
  webshop = new Featuriser(await registeredEnvSchema('webshop-lite-v0'), webshopPolicyFeatures);
  household = new Featuriser(await registeredEnvSchema('household-v0'), householdPolicyFeatures);
});

const rowFeature = (f: Featuriser, enc: EncodedBatch, row: number, name: string): number => {
  const col = f.rowNames.indexOf(name);
  if (col < 0) throw new Error(`no row feature '${name}'`);
  return enc.rowDense[row * f.rowDim + col];
};
const stateFeature = (f: Featuriser, enc: EncodedBatch, s: number, name: string): number => {
  const col = f.stateNames.indexOf(name);
  if (col < 0) throw new Error(`no state feature '${name}'`);
  return enc.stateDense[s * f.stateDim + col];
};
const encode = (f: Featuriser, states: Parameters<typeof encodeStates>[0]) =>
  encodeStates(states, undefined, DEFAULT_FEATURE_CONFIG, f);

describe('tokens and templates', () => {
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
  it("sorts the built-in envs' actions into their mined templates", () => {
    const template = (f: Featuriser, a: string) => f.schema.templates[f.parseAction(a).index] ?? 'other';
    expect(template(webshop, 'search[blue shirt]')).toBe('search [ <text> ]');
    expect(webshop.parseAction('search[blue shirt]').argument).toBe('blue shirt ]');
    expect(template(webshop, 'click[b0abc12345]')).toBe('click [ <id> ]');
    expect(template(webshop, 'click[buy now]')).toBe('click [ buy now ]');
    expect(template(webshop, 'click[next >]')).toBe('click [ next > ]');
    expect(template(webshop, 'click[< prev]')).toBe('click [ < prev ]');
    expect(template(webshop, 'click[large]')).toBe('click [ <text> ]');
    expect(template(household, 'go to cabinet 3')).toBe('go to <name#>');
    expect(household.parseAction('go to cabinet 3')).toMatchObject({ verb: 'go to', argument: 'cabinet 3' });
    expect(template(household, 'take apple 1 from countertop 1')).toBe('take <name#> from <name#>');
    expect(template(household, 'put apple 1 in/on fridge 1')).toBe('put <name#> in/on <name#>');
    expect(template(household, 'inventory')).toBe('inventory');
    expect(template(household, 'juggle apple 1')).toBe('other');
  });
  it("finds the built-in envs' observation kinds", () => {
    expect(webshop.kindOf({ ...resultsState() }).key).toMatch(/ page$/);
    expect(webshop.kindOf({ ...itemState() }).key).toMatch(/ prev$/);
    const arrived = {
      ...householdState(),
      observation: 'You arrive at countertop 1. On the countertop 1, you see a mug 1.',
    };
    expect(household.kindOf(arrived).key).toBe('you arrive at');
    // The first room's welcome holds under a tenth of household's states: content, not a kind (minKindShare).
    expect(household.kindOf(householdState()).key).toBe('other');
    expect(GENERIC_FEATURISER.kindOf(householdState()).key).toBe('other');
  });
  it('refuses env features the schema does not name, naming both', () => {
    expect(() => new Featuriser(emptyFeatureSchema(), webshopPolicyFeatures)).toThrow(
      /names the env features row \[\], state \[\], and the features given are row \[title_overlap_ratio/,
    );
    expect(() => new Featuriser(webshop.schema)).toThrow(/build the policy with the features of the env/);
  });
});

describe('encodeStates', () => {
  it('lays out rows, bags and padding', () => {
    const states = [resultsState(), householdState(), itemState()];
    for (const f of [GENERIC_FEATURISER, webshop]) {
      const enc = encode(f, states);
      expect(enc.nStates).toBe(3);
      expect(enc.nRows).toBe(5 + 6 + 8);
      expect(enc.maxActions).toBe(8);
      expect([enc.rowDim, enc.stateDim]).toEqual([f.rowDim, f.stateDim]);
      expect([...enc.actionCounts]).toEqual([5, 6, 8]);
      expect([...enc.rowOffset]).toEqual([0, 5, 11]);
      expect(enc.rowDense.length).toBe(enc.nRows * f.rowDim);
      expect(enc.stateDense.length).toBe(3 * f.stateDim);
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
      for (let r = 0; r < enc.nRows; r++) expect(rowFeature(f, enc, r, 'bias')).toBe(1);
      for (let s = 0; s < 3; s++) expect(stateFeature(f, enc, s, 'bias')).toBe(1);
      // one template per row, one kind per state
      for (let r = 0; r < enc.nRows; r++) {
        let sum = 0;
        for (let t = 0; t < f.templateCount; t++) sum += enc.rowDense[r * f.rowDim + t];
        expect(sum).toBe(1);
      }
      for (let s = 0; s < 3; s++) {
        let sum = 0;
        for (let k = 0; k < f.kindCount; k++) sum += enc.stateDense[s * f.stateDim + k];
        expect(sum).toBe(1);
      }
    }
  });

  it("adds the env's features: the clicked product's title and price against the instruction", () => {
    const f = webshop;
    const enc = encode(f, [resultsState()]);
    // rows: back, next, sofa (b0abc12345), blue shirt $25.50 (b0xyz98765), blue shirt $45 (b0qqq11111)
    expect(rowFeature(f, enc, 2, 'template=click [ <id> ]')).toBe(1);
    expect(rowFeature(f, enc, 0, 'template=click [ back to search ]')).toBe(1);
    expect(rowFeature(f, enc, 2, 'env:has_title')).toBe(1);
    expect(rowFeature(f, enc, 3, 'env:title_overlap_ratio')).toBeGreaterThan(
      rowFeature(f, enc, 2, 'env:title_overlap_ratio'),
    );
    expect(rowFeature(f, enc, 2, 'env:title_overlap_ratio')).toBe(0);
    expect(rowFeature(f, enc, 3, 'env:price_within_bound')).toBe(1);
    expect(rowFeature(f, enc, 4, 'env:price_over_bound')).toBe(1);
    expect(rowFeature(f, enc, 2, 'env:price_over_bound')).toBe(1);
    expect(rowFeature(f, enc, 0, 'env:has_title')).toBe(0);
    expect(rowFeature(f, enc, 3, 'rank_in_template')).toBeCloseTo(0.1, 6);
    expect(stateFeature(f, enc, 0, `kind=${f.kindOf(resultsState()).key}`)).toBe(1);
    expect(stateFeature(f, enc, 0, 'offered=click [ <id> ]')).toBe(1);
    expect(stateFeature(f, enc, 0, 'offered=click [ buy now ]')).toBe(0);
    expect(stateFeature(f, enc, 0, 'env:has_price_bound')).toBe(1);
    expect(stateFeature(f, enc, 0, 'step_fraction')).toBeCloseTo(1 / 15, 6);
  });

  it('scores option clicks and household actions by overlap with the instruction', () => {
    const item = encode(webshop, [itemState()]);
    expect(rowFeature(webshop, item, 3, 'phrase_in_instruction')).toBe(1); // click[large]
    expect(rowFeature(webshop, item, 2, 'phrase_in_instruction')).toBe(0); // click[small]
    expect(rowFeature(webshop, item, 3, 'slot1_in_instruction')).toBe(1);
    expect(rowFeature(webshop, item, 7, 'template=click [ buy now ]')).toBe(1);
    expect(rowFeature(webshop, item, 7, 'env:price_within_bound')).toBe(1); // buy: the item's price
    expect(stateFeature(webshop, item, 0, 'offered=click [ buy now ]')).toBe(1);
    const f = household;
    const enc = encode(f, [householdState()]);
    const fridge = 2,
      cabinet = 0;
    expect(rowFeature(f, enc, fridge, 'template=go to <name#>')).toBe(1);
    expect(rowFeature(f, enc, fridge, 'overlap_any')).toBe(1);
    expect(rowFeature(f, enc, cabinet, 'overlap_any')).toBe(0);
    expect(rowFeature(f, enc, fridge, 'slot1_in_instruction')).toBe(1);
    expect(rowFeature(f, enc, cabinet, 'slot1_in_instruction')).toBe(0);
    expect(stateFeature(f, enc, 0, `kind=${f.kindOf(householdState()).key}`)).toBe(1);
    expect(f.kindOf(householdState()).key).toBe('other');
  });

  it('marks what the household env adds: an object in hand that the instruction names', () => {
    const f = household;
    const holding = { ...householdState(), previousActions: ['go to countertop 1', 'take apple 1 from countertop 1'] };
    const putDown = { ...holding, previousActions: [...holding.previousActions, 'put apple 1 in/on fridge 1'] };
    const other = { ...householdState(), previousActions: ['take mug 1 from countertop 1'] };
    const enc = encode(f, [holding, putDown, other]);
    expect(rowFeature(f, enc, 0, 'env:holding_instruction_object')).toBe(1);
    expect(rowFeature(f, enc, 6, 'env:holding_instruction_object')).toBe(0);
    expect(rowFeature(f, enc, 12, 'env:holding_instruction_object')).toBe(0);
  });

  it('marks repeated actions', () => {
    const s = { ...householdState(), previousActions: ['go to fridge 1', 'look', 'go to fridge 1'] };
    const f = GENERIC_FEATURISER;
    const enc = encode(f, [s]);
    expect(rowFeature(f, enc, 2, 'repeat_count')).toBeCloseTo(2 / 3, 6);
    expect(rowFeature(f, enc, 2, 'repeat_last')).toBe(1);
    expect(rowFeature(f, enc, 5, 'repeat_count')).toBeCloseTo(1 / 3, 6);
    expect(rowFeature(f, enc, 5, 'repeat_last')).toBe(0);
  });

  it('is deterministic and slices without re-encoding', () => {
    const states = [resultsState(), householdState(), itemState()];
    const a = encodeStates(states, [[1, 2, 3, 4, 5], null, undefined], DEFAULT_FEATURE_CONFIG, webshop);
    const b = encodeStates(states, [[1, 2, 3, 4, 5], null, undefined], DEFAULT_FEATURE_CONFIG, webshop);
    expect(a).toEqual(b);
    expect([...a.prior.slice(0, 6)]).toEqual([1, 2, 3, 4, 5, 0]);
    const sliced = sliceEncoded(a, [2, 0]);
    const direct = encodeStates([states[2], states[0]], [undefined, [1, 2, 3, 4, 5]], DEFAULT_FEATURE_CONFIG, webshop);
    expect(sliced).toEqual(direct);
  });

  it('rejects states without actions and mismatched priors', () => {
    expect(() => encodeStates([{ ...resultsState(), admissible: [] }])).toThrow(/no admissible actions/);
    expect(() => encodeStates([resultsState()], [[1, 2]])).toThrow(/prior for state 0 has 2 scores for 5/);
  });
});
