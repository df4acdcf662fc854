/**
 * The Experience model page's estimate before training: the chosen data's tokens an epoch × the
 * epochs, over this browser's measured speed, or the typical page range said to be assumed.
 */
import { describe, expect, it } from 'vitest';
import { defaultSettings, TINY_SETTINGS } from '../../../src/app/state/model/expmodel-settings';
import {
  epochTokens,
  measuredFor,
  blendedSecondsLeft,
  PAGE_WORK,
  preRunEstimate,
  readMeasuredSpeeds,
  recordMeasuredSpeed,
  SPEED_STORAGE_KEY,
  TYPICAL_PAGE_SPEED,
} from '../../../src/app/state/model/expmodel-estimate';
import { memoryStorage } from '../support/memory-storage';

/** The shipped webshop dataset's real transitions (240 episodes). */
const WEBSHOP = 1740;

describe('the tokens an epoch trains', () => {
  it('matches the count on the shipped data at the default k and H; follows k, H and the episodes asked for', () => {
    const s = defaultSettings('webshop-lite-v0');
    // prepareData counted 603,191 tokens of 1,501 training transitions; 1,740 × 0.9 is near that.
    const all = epochTokens(s, WEBSHOP)!;
    expect(all.transitions).toBe(1566);
    expect(all.tokens / 603_191).toBeGreaterThan(0.95);
    expect(all.tokens / 603_191).toBeLessThan(1.1);
    expect(epochTokens({ ...s, k: 0 }, WEBSHOP)!.tokens).toBeLessThan(all.tokens * 0.55);
    expect(epochTokens({ ...s, k: 8 }, WEBSHOP)!.tokens).toBeGreaterThan(all.tokens * 1.35);
    expect(epochTokens({ ...s, k: 12 }, WEBSHOP)!.tokens).toBeGreaterThan(epochTokens({ ...s, k: 8 }, WEBSHOP)!.tokens);
    expect(epochTokens({ ...s, history: 0 }, WEBSHOP)!.tokens).toBeLessThan(all.tokens);
    expect(epochTokens({ ...s, episodes: 8 }, WEBSHOP)!.transitions).toBe(57);
    expect(epochTokens({ ...s, episodes: 100_000 }, WEBSHOP)!.transitions).toBe(1566);
    expect(epochTokens(s, 0)).toBeNull();
    expect(epochTokens({ ...s, env: 'elsewhere-v0' }, WEBSHOP)).toBeNull();
  });

  it("counts webarena's shipped data as prepareData did (446,014 tokens of 1,045 training transitions at k = 4)", () => {
    const s = defaultSettings('webarena-lite-v0');
    const all = epochTokens(s, 1181)!; // the shipped webarena dataset's real transitions
    expect(all.transitions).toBe(1063);
    expect(all.tokens / 446_014).toBeGreaterThan(0.95);
    expect(all.tokens / 446_014).toBeLessThan(1.1);
  });
});

describe('the estimate before training', () => {
  it('unmeasured here: a range at the typical page speed, said to be assumed, for one wasm thread in a worker', () => {
    const s = defaultSettings('webshop-lite-v0');
    const e = preRunEstimate(s, WEBSHOP, {})!;
    const tokens = e.epochTokens * 10;
    expect(e.low).toBeCloseTo(tokens / TYPICAL_PAGE_SPEED.standard.high, 6);
    expect(e.high).toBeCloseTo(tokens / TYPICAL_PAGE_SPEED.standard.low, 6);
    // The standard size's 10 epochs: far above the old label's "up to ~15 min".
    expect(e.low / 60).toBeGreaterThan(20);
    expect(e.high / 60).toBeLessThan(90);
    expect(e.measured).toBeNull();
    expect(e.text).toMatch(/^Estimate: 2\d min to 1 h \d\d min for 10 epochs at most \(early stopping may end sooner/);
    expect(e.text).toMatch(/ of ≈ [\d,]+ tokens each \(≈ 1,566 real transitions trained on\), at 1,300–3,900 tokens/);
    expect(e.text).toMatch(/an assumed typical speed of the standard size on one wasm thread in a page worker, not/);
    expect(e.text).toMatch(/CLI in Node trains the standard size at ≈ 6,046 tokens\/s\)\. WebGPU, where it is used/);
    expect(preRunEstimate({ ...s, backend: 'wasm' }, WEBSHOP, {})!.text).not.toMatch(/WebGPU/);
    // The tiny demo size: seconds.
    const tiny = preRunEstimate({ ...s, ...TINY_SETTINGS }, WEBSHOP, {})!;
    expect(tiny.high).toBeLessThan(60);
    expect(tiny.text).toMatch(/for 2 epochs at most/);
  });

  it('measured here: that speed, its backend, size, env and day', () => {
    const s = { ...defaultSettings('household-v0'), epochs: 4 };
    const at = Date.UTC(2025, 2, 4, 12);
    const speeds = { 'standard|wasm': { tokensPerSecond: 2500, env: 'webshop-lite-v0', measuredAt: at } };
    const e = preRunEstimate(s, 4000, speeds)!;
    expect(e.measured).toMatchObject({ backend: 'wasm', tokensPerSecond: 2500 });
    expect(e.low).toBe(e.high);
    expect(e.low).toBeCloseTo((epochTokens(s, 4000)!.tokens * 4) / 2500, 6);
    expect(e.text).toMatch(/^Estimate: about \d+ min for 4 epochs at most .* at 2,500 tokens\/s — from the speed this/);
    expect(e.text).toMatch(/measured training the standard size on one wasm thread in this page's worker/);
    expect(e.text).toMatch(/\(webshop-lite-v0, 2025-03-04\)\.$/);
    // Another size has no measurement: the typical range again.
    expect(preRunEstimate({ ...s, size: 'small' }, 4000, speeds)!.measured).toBeNull();
    // webgpu asked for: only a webgpu measurement counts; auto takes the newer.
    expect(measuredFor(speeds, 'standard', 'webgpu')).toBeNull();
    const both = { ...speeds, 'standard|webgpu': { tokensPerSecond: 9000, env: 'household-v0', measuredAt: at + 1 } };
    expect(measuredFor(both, 'standard', 'auto')).toMatchObject({ backend: 'webgpu', tokensPerSecond: 9000 });
    expect(measuredFor(both, 'standard', 'wasm')).toMatchObject({ backend: 'wasm' });
  });

  it("with a speed check and no measured training: the size's page work over this machine's score", () => {
    const s = { ...defaultSettings('webshop-lite-v0'), epochs: 2 };
    const tokens = epochTokens(s, WEBSHOP)!.tokens * 2;
    const e = preRunEstimate(s, WEBSHOP, {}, 400_000)!;
    expect(e.basis).toBe('speed-check');
    expect(e.low).toBe(e.high);
    expect(e.low).toBeCloseTo((PAGE_WORK.start + tokens * PAGE_WORK.perToken.standard) / 400_000, 6);
    // Twice the score, half the time; a smaller network, less work a token.
    expect(preRunEstimate(s, WEBSHOP, {}, 800_000)!.low).toBeCloseTo(e.low / 2, 6);
    expect(preRunEstimate({ ...s, size: 'tiny' }, WEBSHOP, {}, 400_000)!.low).toBeLessThan(e.low);
    expect(e.text).toMatch(/tokens\/s — from this machine's speed, checked just now for a second, and the standard/);
    // A training measured here wins over the check, and the check adds the start it measured.
    const at = Date.UTC(2025, 2, 4, 12);
    const speeds = { 'standard|wasm': { tokensPerSecond: 2500, env: 'webshop-lite-v0', measuredAt: at } };
    const m = preRunEstimate({ ...s, backend: 'wasm' }, WEBSHOP, speeds, 400_000)!;
    expect(m.basis).toBe('last-training');
    expect(m.low).toBeCloseTo(PAGE_WORK.start / 400_000 + tokens / 2500, 6);
    expect(preRunEstimate(s, WEBSHOP, {})!.basis).toBe('typical');
  });

  it("weighs core's time left with the estimate before the click by the share done", () => {
    expect(blendedSecondsLeft(null, 60, 0.1)).toBeNull();
    expect(blendedSecondsLeft(40, null, 0.1)).toBe(40);
    // At the start the estimate before the click; later mostly the measured time left.
    expect(blendedSecondsLeft(90, 60, 0)).toBe(60);
    expect(blendedSecondsLeft(90, 60, 0.02)).toBeCloseTo((0.2 * 60 * 0.98 + 0.02 * 90) / 0.22, 9);
    expect(blendedSecondsLeft(10, 60, 0.8)).toBeCloseTo((0.2 * 60 * 0.2 + 0.8 * 10) / 1, 9);
    expect(blendedSecondsLeft(0, 60, 1)).toBe(0);
  });

  it('keeps measured speeds in storage, and reads back only well-formed ones', () => {
    const storage = memoryStorage();
    let speeds = readMeasuredSpeeds(storage);
    expect(speeds).toEqual({});
    const speed = { tokensPerSecond: 4200, env: 'household-v0', measuredAt: 5 };
    speeds = recordMeasuredSpeed(storage, speeds, 'small', 'wasm', speed);
    recordMeasuredSpeed(storage, speeds, 'small', 'wasm', { ...speed, tokensPerSecond: 0, measuredAt: 6 });
    expect(readMeasuredSpeeds(storage)).toEqual({ 'small|wasm': speed });
    expect(readMeasuredSpeeds(memoryStorage({ [SPEED_STORAGE_KEY]: 'not json' }))).toEqual({});
    expect(readMeasuredSpeeds(memoryStorage({ [SPEED_STORAGE_KEY]: '{"a":{"tokensPerSecond":"x"}}' }))).toEqual({});
    expect(readMeasuredSpeeds(undefined)).toEqual({});
    const refusing = {
      getItem: () => null,
      setItem: () => {
        throw new Error('quota');
      },
    };
    expect(recordMeasuredSpeed(refusing, {}, 'tiny', 'wasm', speed)).toHaveProperty('tiny|wasm');
  });
});
