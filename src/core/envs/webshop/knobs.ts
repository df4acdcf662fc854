/**
 * Difficulty knobs of mini-WebShop (docs/architecture.md §3.3) and the scalar level 0..1 they map
 * from. Count knobs may be fractional: 2.4 options means 2 options, or 3 with probability 0.4,
 * so a level moves smoothly; `mutateTask` moves one knob by one notch.
 */
import type { Direction } from '../env';
import { DEFAULT_CATALOG_SIZE } from './catalog';

export interface WebShopKnobs {
  /** Products in the catalog (200–5,000); keep to a few fixed values so the cache works. */
  catalogSize: number;
  /** Goal attributes k_att, 1–4 (fractional: expected count). */
  attributes: number;
  /** Goal options k_opt, 0–3 (fractional: expected count). */
  options: number;
  /** Near-miss distractors planted per task, 0–10. */
  distractors: number;
  /** Share of goal attributes the target's title does not show, 0–1. */
  hiddenAttributeShare: number;
  /** Chance of a human-like paraphrase and of a synonym noun (couch for sofa), 0–1. */
  paraphraseRate: number;
  /** Chance the price bound is the first multiple of 10 above the price (else WebShop's rule), 0–1. */
  priceTightness: number;
  /** Chance the first satisfying product is forced onto results page 2+ under every candidate query, 0–1. */
  rankPush: number;
  /** Suggested step limit (the env itself never truncates; makeEnv wraps TimeLimit). */
  stepLimit: number;
}

export const KNOB_RANGES: { readonly [K in keyof WebShopKnobs]: readonly [number, number] } = {
  catalogSize: [200, 5000],
  attributes: [1, 4],
  options: [0, 3],
  distractors: [0, 10],
  hiddenAttributeShare: [0, 1],
  paraphraseRate: [0, 1],
  priceTightness: [0, 1],
  rankPush: [0, 1],
  stepLimit: [10, 100],
};

/** One notch of each knob `mutateTask` may move. */
export const KNOB_NOTCHES: Partial<Record<keyof WebShopKnobs, number>> = {
  attributes: 1,
  options: 1,
  distractors: 2,
  hiddenAttributeShare: 0.25,
  paraphraseRate: 0.25,
  priceTightness: 0.25,
  rankPush: 0.5,
};

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * Level 0: one attribute, 0–1 option, 2 distractors, titles show the goal attributes, synthetic
 * wording. Level 1: 3–4 attributes, 2–3 options, 10 distractors, attributes hidden from titles,
 * paraphrases and synonyms, tighter prices, the first match pushed onto page 2+.
 */
export function knobsForLevel(level: number, catalogSize: number = DEFAULT_CATALOG_SIZE): WebShopKnobs {
  if (!Number.isFinite(level)) throw new RangeError(`webshop: difficulty must be a number in [0, 1], got ${level}`);
  const l = clamp(level, 0, 1);
  return {
    catalogSize,
    attributes: round6(1 + 2.9 * l),
    options: round6(0.5 + 2 * l),
    distractors: Math.round(2 + 8 * l),
    hiddenAttributeShare: round6(l),
    paraphraseRate: round6(l),
    priceTightness: round6(0.5 * l),
    rankPush: round6(clamp(2 * l - 1, 0, 1)),
    stepLimit: 15,
  };
}

/** An approximate scalar level of a knob vector (exact for knobsForLevel(l) with l ≤ 1). */
export function difficultyOfKnobs(k: WebShopKnobs): number {
  const parts = [
    (k.attributes - 1) / 2.9,
    (k.options - 0.5) / 2,
    (k.distractors - 2) / 8,
    k.hiddenAttributeShare,
    k.paraphraseRate,
    k.priceTightness / 0.5,
  ];
  return round6(clamp(parts.reduce((a, b) => a + b, 0) / parts.length, 0, 1));
}

/** Validates and clamps a knob vector (throws on non-numbers). */
export function normalizeKnobs(k: WebShopKnobs): WebShopKnobs {
  const out = { ...k };
  for (const key of Object.keys(KNOB_RANGES) as (keyof WebShopKnobs)[]) {
    const v = out[key];
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new RangeError(`webshop: knob ${key} must be a finite number, got ${v}`);
    const [lo, hi] = KNOB_RANGES[key];
    out[key] = clamp(v, lo, hi);
  }
  out.catalogSize = Math.round(out.catalogSize);
  out.distractors = Math.round(out.distractors);
  out.stepLimit = Math.round(out.stepLimit);
  return out;
}

/** The knobs that can move one notch in the direction. */
export function movableKnobs(k: WebShopKnobs, direction: Direction): (keyof WebShopKnobs)[] {
  return (Object.keys(KNOB_NOTCHES) as (keyof WebShopKnobs)[]).filter((key) => {
    const [lo, hi] = KNOB_RANGES[key];
    return direction === 'harder' ? k[key] < hi : k[key] > lo;
  });
}

/** The knob vector with one knob moved one notch (clamped). */
export function moveKnob(k: WebShopKnobs, key: keyof WebShopKnobs, direction: Direction): WebShopKnobs {
  const [lo, hi] = KNOB_RANGES[key];
  const step = (KNOB_NOTCHES[key] ?? 1) * (direction === 'harder' ? 1 : -1);
  return { ...k, [key]: round6(clamp(k[key] + step, lo, hi)) };
}
