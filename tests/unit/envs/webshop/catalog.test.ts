import { describe, expect, it } from 'vitest';
import { getCatalog, MAX_CATALOG_SIZE, MIN_CATALOG_SIZE, searchText } from '../../../../src/core/envs/webshop/catalog';
import { tokenSetRatio } from '../../../../src/core/envs/webshop/fuzz';
import { normalizeColor, titleNouns } from '../../../../src/core/envs/webshop/reward';
import { analyze, Bm25Index } from '../../../../src/core/envs/webshop/search';
import {
  CATEGORIES,
  getTypeEntry,
  NOUN_VOCABULARY,
  PRODUCT_TYPES,
  PROPER_AND_TYPE_NAMES,
} from '../../../../src/core/envs/webshop/taxonomy';

describe('taxonomy', () => {
  it('has 5 categories of 5–10 types, each with a 3-level path, 10–30 attributes and option pools', () => {
    expect(CATEGORIES).toHaveLength(5);
    for (const c of CATEGORIES) {
      expect(c.types.length).toBeGreaterThanOrEqual(5);
      expect(c.types.length).toBeLessThanOrEqual(10);
      for (const t of c.types) {
        expect(t.path).toHaveLength(3);
        expect(t.attributes.length).toBeGreaterThanOrEqual(10);
        expect(t.attributes.length).toBeLessThanOrEqual(30);
        expect(t.options.length).toBeGreaterThanOrEqual(2);
        expect(t.price[0]).toBeLessThan(t.price[1]);
        expect(t.price[1]).toBeLessThan(970); // a price clause is always possible
      }
    }
  });

  it("keeps attribute phrases and option values of a type apart under WebShop's fuzzy rules", () => {
    for (const { type: t, category: c } of PRODUCT_TYPES) {
      const atts = t.attributes;
      for (let i = 0; i < atts.length; i++) {
        for (let j = i + 1; j < atts.length; j++) {
          expect(tokenSetRatio(atts[i], atts[j]), `${t.id}: ${atts[i]} ~ ${atts[j]}`).toBeLessThanOrEqual(85);
          expect(atts[i].includes(atts[j]) || atts[j].includes(atts[i]), `${t.id}: ${atts[i]} / ${atts[j]}`).toBe(
            false,
          );
        }
        for (const word of atts[i].split(' '))
          expect(PROPER_AND_TYPE_NAMES.includes(word), `${t.id}: name in '${atts[i]}'`).toBe(false);
        for (const text of [...c.closings, ...c.bulletTails]) expect(text.toLowerCase().includes(atts[i])).toBe(false);
      }
      const values = t.options.flatMap((g) => g.values);
      expect(new Set(values).size, `${t.id}: option values repeat across groups`).toBe(values.length);
      for (const g of t.options) {
        for (let i = 0; i < g.values.length; i++) {
          for (let j = i + 1; j < g.values.length; j++) {
            const a = normalizeColor(g.values[i]);
            const b = normalizeColor(g.values[j]);
            expect(a !== b && tokenSetRatio(a, b) <= 85, `${t.id}.${g.name}: ${g.values[i]} ~ ${g.values[j]}`).toBe(
              true,
            );
          }
        }
      }
    }
  });

  it('gives every noun, synonym, brand and product line to exactly one owner', () => {
    expect(new Set(PROPER_AND_TYPE_NAMES).size).toBe(PROPER_AND_TYPE_NAMES.length);
    const nouns = CATEGORIES.flatMap((c) => c.types.flatMap((t) => [t.noun, ...t.synonyms]));
    expect([...NOUN_VOCABULARY].sort()).toEqual(nouns.sort());
  });
});

describe('catalog', () => {
  it('is seeded, cached, with unique WebShop-like ASINs and a smaller catalog a prefix of a larger one', () => {
    const small = getCatalog(0, MIN_CATALOG_SIZE);
    const big = getCatalog(0, 1000);
    expect(getCatalog(0, 1000)).toBe(big);
    expect(big.products).toHaveLength(1000);
    expect(new Set(big.products.map((p) => p.asin)).size).toBe(1000);
    for (const p of big.products) expect(p.asin).toMatch(/^B0[0-9A-Z]{8}$/);
    expect(small.products.map((p) => p.asin)).toEqual(big.products.slice(0, MIN_CATALOG_SIZE).map((p) => p.asin));
    expect(getCatalog(1, MIN_CATALOG_SIZE).products[0].asin).not.toBe(small.products[0].asin);
    expect(() => getCatalog(0, MAX_CATALOG_SIZE + 1)).toThrow(RangeError);
  });

  it('builds products like WebShop records', () => {
    for (const p of getCatalog(0, 1000).products.slice(0, 200)) {
      expect(p.attributes.length).toBeGreaterThanOrEqual(3);
      expect(titleNouns(p.title)).toContain(getTypeEntry(p.typeId).type.noun);
      expect(p.title).toContain(p.brand);
      for (const a of p.attributes.slice(0, p.titleAttributeCount)) expect(p.title.toLowerCase()).toContain(a);
      // Every attribute is discoverable in the bullets (the Features page).
      for (const a of p.attributes) expect(p.bullets.join(' ').toLowerCase()).toContain(a);
      if (p.pricing.length === 2) {
        expect(p.priceTag).toBe(`$${p.pricing[0].toFixed(2)} to $${p.pricing[1].toFixed(2)}`);
        expect(p.price).toBeGreaterThanOrEqual(p.pricing[0]);
        expect(p.price).toBeLessThanOrEqual(p.pricing[1]);
      } else {
        expect(p.priceTag).toBe(`$${p.pricing[0].toFixed(2)}`);
        expect(p.price).toBe(p.pricing[0]);
      }
      expect(p.productCategory.split(' › ')).toHaveLength(3);
    }
  });
});

describe('BM25 search', () => {
  it("analyses like Lucene's English analyzer (stop words, possessives, Porter stems)", () => {
    expect(analyze("The Women's Running Shoes, for the gym!")).toEqual(['women', 'run', 'shoe', 'gym']);
  });

  it('ranks a product first for its exact title (sanity: ≥ 90% first, all in the top 3)', () => {
    const catalog = getCatalog(0, 1000);
    let first = 0;
    for (const p of catalog.products) {
      const rank = catalog.index.search(p.title).indexOf(p.asin);
      expect(rank, p.title).toBeGreaterThanOrEqual(0);
      expect(rank, p.title).toBeLessThan(3);
      if (rank === 0) first++;
    }
    expect(first / catalog.products.length).toBeGreaterThanOrEqual(0.9);
  });

  it('returns at most 50 hits, scored docs only, ties broken by ASIN', () => {
    const index = new Bm25Index([
      { asin: 'B0000000C', text: 'red sofa' },
      { asin: 'B0000000A', text: 'red sofa' },
      { asin: 'B0000000B', text: 'blue chair' },
    ]);
    expect(index.search('red sofa')).toEqual(['B0000000A', 'B0000000C']);
    expect(index.search('nothing matches')).toEqual([]);
    const catalog = getCatalog(0, 1000);
    expect(catalog.index.search('color size').length).toBe(50);
  });

  it('scores overlay documents with the base statistics', () => {
    const catalog = getCatalog(0, 1000);
    const p = catalog.products.find((q) => catalog.index.search(q.title)[0] === q.asin)!;
    const base = catalog.index.searchBase(p.title);
    const overlayDoc = { asin: 'B0ZZZZZZZZ', termFrequencies: new Map<string, number>(), length: 0 };
    for (const t of analyze(searchText(p)))
      overlayDoc.termFrequencies.set(t, (overlayDoc.termFrequencies.get(t) ?? 0) + 1);
    overlayDoc.length = analyze(searchText(p)).length;
    // An exact copy scores exactly like the original, so the two sit side by side (ties by ASIN).
    expect(catalog.index.scoreExternal(p.title, overlayDoc)).toBeCloseTo(base[0].score, 12);
    const merged = catalog.index.search(p.title, [overlayDoc]);
    expect(merged.slice(0, 2).sort()).toEqual([p.asin, 'B0ZZZZZZZZ'].sort());
    expect(catalog.index.searchBase(p.title)).toBe(base); // base results are cached, untouched
  });
});
