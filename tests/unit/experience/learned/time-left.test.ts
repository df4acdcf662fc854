/**
 * The learned model's time left, measured on the training itself: tokens per second after the
 * run's first batches (start-up), the epoch's tokens left, the epochs after it and each epoch's end.
 */
import { describe, expect, it } from 'vitest';
import {
  MIN_MEASURED_BATCHES,
  TrainingSpeed,
  VALIDATION_SPEEDUP,
  WARMUP_BATCHES,
} from '../../../../src/core/experience/learned/time-left';

const work = { epochTokens: 100_000, validationTokens: 12_000, batchesPerEpoch: 100 };

describe('the time a training has left', () => {
  it('leaves the start-up batches out and gives nothing before enough batches are measured', () => {
    const speed = new TrainingSpeed(work);
    // Start-up: the first batches take far longer than their tokens.
    for (let i = 0; i < WARMUP_BATCHES; i++) speed.addBatch(1000, 30);
    expect(speed.measuredBatches).toBe(0);
    expect(speed.timeLeft(90_000, 9)).toBeNull();
    for (let i = 0; i < MIN_MEASURED_BATCHES - 1; i++) speed.addBatch(1000, 0.5);
    expect(speed.tokensPerSecond).toBeNull();
    speed.addBatch(1000, 0.5);
    expect(speed.measuredBatches).toBe(MIN_MEASURED_BATCHES);
    expect(speed.tokensPerSecond).toBe(2000);
  });

  it('weighs batches by their tokens: a long batch and a short one give the speed of the two together', () => {
    const speed = new TrainingSpeed({ ...work, batchesPerEpoch: 4 }); // a short epoch: one start-up batch
    speed.addBatch(500, 60);
    speed.addBatch(11_000, 5.5);
    speed.addBatch(660, 0.33);
    speed.addBatch(2_340, 1.17);
    expect(speed.measuredBatches).toBe(3);
    // 14,000 tokens in 7 s, whatever the batch sizes.
    expect(speed.tokensPerSecond).toBeCloseTo(2000, 6);
  });

  it("counts the tokens left, the epochs after this one and each epoch's end (estimated, then measured)", () => {
    const speed = new TrainingSpeed(work);
    for (let i = 0; i < WARMUP_BATCHES + MIN_MEASURED_BATCHES; i++) speed.addBatch(1000, 0.5); // 2,000 tokens/s
    const validation = work.validationTokens / (2000 * VALIDATION_SPEEDUP); // 2 s
    const left = speed.timeLeft(40_000, 2)!;
    expect(left.epoch).toBeCloseTo(20 + validation, 6);
    expect(left.total).toBeCloseTo(20 + validation + 2 * (50 + validation), 6);
    // An epoch's end measured (validation and checkpoint): it replaces the guess.
    speed.addEpochEnd(7);
    expect(speed.timeLeft(0, 1)).toEqual({ epoch: 7, total: 7 + 50 + 7 });
    expect(speed.timeLeft(-5, -1)).toEqual({ epoch: 7, total: 7 });
  });

  it('is not thrown off by a slow start as the old per-batch mean was', () => {
    // 100 batches an epoch, 10 epochs, 1,000 tokens and 0.5 s a batch after a 40 s start-up.
    const speed = new TrainingSpeed({ ...work, validationTokens: 0 });
    let oldSeconds = 0,
      tokens = 0;
    for (let b = 1; b <= 10; b++) {
      const seconds = b <= WARMUP_BATCHES ? 40 / WARMUP_BATCHES : 0.5;
      speed.addBatch(1000, seconds);
      oldSeconds += seconds;
      tokens += 1000;
    }
    const truth = (100 - 10) * 0.5 + 9 * 100 * 0.5;
    const old = (oldSeconds / 10) * (100 - 10 + 9 * 100);
    expect(old / truth).toBeGreaterThan(5);
    expect(speed.timeLeft(work.epochTokens - tokens, 9)!.total).toBeCloseTo(truth, 6);
  });
});
