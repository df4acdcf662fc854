/**
 * The Train page's run estimate (train-estimate.ts): the measured work of a dream with the shipped
 * webshop model over this machine's speed-check score, the time left weighed with the run's records,
 * and the last timed run's correction.
 */
import { describe, expect, it } from 'vitest';
import { estimateDreamCost } from '../../../src/core/train/estimate';
import {
  dreamShareBy,
  evaluatedBy,
  LAST_RUN_KEY,
  lastRunTime,
  readLastRunTime,
  RUN_WORK,
  runBeforeSentence,
  runSeconds,
  runSecondsLeft,
  runWorkFor,
  workBy,
} from '../../../src/app/state/train/train-estimate';

const SHIPPED = 'learned:models/webshop-lite-v0' as const;
const config = {
  mode: 'dream' as const,
  env: 'webshop-lite-v0',
  llm: SHIPPED,
  iterations: 4,
  tasksPerIteration: 4,
  groupSize: 8,
  llmConcurrency: 1,
  evalInterval: 2,
  evalEpisodes: 20,
  finalEvalEpisodes: 20,
};
const work = RUN_WORK['webshop-lite-v0'];

describe('the run estimate before the click', () => {
  it('is made only for a dream with the env’s shipped learned model (the one measured)', () => {
    expect(runWorkFor(config)).toBe(work);
    expect(runWorkFor({ ...config, mode: 'real' })).toBeNull();
    expect(runWorkFor({ ...config, mode: 's2r' })).toBeNull();
    expect(runWorkFor({ ...config, llm: 'oracle:0.1,0.1' as const })).toBeNull();
    expect(runWorkFor({ ...config, llm: 'learned:local/mine' as const })).toBeNull();
    expect(runWorkFor({ ...config, env: 'household-v0', llm: 'learned:models/household-v0' as const })).toBeNull();
  });

  it('counts every held-out evaluation: iteration 0, every evalInterval, and the final one', () => {
    expect(evaluatedBy(config, 0)).toBe(20); // iteration 0's
    expect(evaluatedBy(config, 1)).toBe(20);
    expect(evaluatedBy(config, 2)).toBe(40);
    expect(evaluatedBy(config, 3)).toBe(40);
    expect(evaluatedBy(config, 4)).toBe(60); // iteration 4 is the last: the final evaluation replaces its scheduled one
    expect(evaluatedBy({ ...config, evalInterval: 0 }, 4)).toBe(20);
  });

  it('is the start, the dreamed transitions and the evaluated episodes over the score, times the last run’s factor', () => {
    const dreamed = estimateDreamCost(config).transitions;
    const total = work.start + dreamed * work.perDreamed + 60 * work.perEvaluated;
    expect(workBy(work, config, 4)).toBeCloseTo(total, 6);
    expect(workBy(work, config, 0)).toBeCloseTo(work.start + 20 * work.perEvaluated, 6);
    expect(runSeconds(work, config, 500_000, 1)).toBeCloseTo(total / 500_000, 9);
    expect(runSeconds(work, config, 500_000, 1.2)).toBeCloseTo((total * 1.2) / 500_000, 9);
    expect(runSeconds(work, { ...config, iterations: 8 }, 500_000, 1)).toBeGreaterThan(total / 500_000);
    // The first iterations take a larger share of the dream than the last (the policy learns to finish sooner).
    expect(dreamShareBy(0, 12)).toBe(0);
    expect(dreamShareBy(12, 12)).toBeCloseTo(1, 12);
    expect(dreamShareBy(1, 12)).toBeGreaterThan(1 / 12);
    expect(dreamShareBy(11, 12) - dreamShareBy(10, 12)).toBeLessThan(dreamShareBy(1, 12) / 2);
  });

  it('says what it rests on', () => {
    expect(runBeforeSentence(42, null)).toBe(
      "The whole run (dream, policy updates, held-out evaluations): ≈ 42 s on this machine (from this machine's speed, checked just now for a second).",
    );
    expect(runBeforeSentence(75, { factor: 1.1, seconds: 70, at: 1 })).toMatch(
      /≈ 1 min 15 s on this machine \(from this machine's speed, checked just now, and its last timed run here \(1 min 10 s\)\)\.$/,
    );
  });
});

describe('the time left while it trains', () => {
  const total = 30e6,
    prior = 1 / 1e6; // 30 s at the prior pace

  it('counts down at the prior pace until a record comes', () => {
    expect(runSecondsLeft({ total, next: 20e6, prior, elapsed: 0, records: [] })).toBeCloseTo(30, 9);
    expect(runSecondsLeft({ total, next: 20e6, prior, elapsed: 10, records: [] })).toBeCloseTo(20, 9);
  });

  it('goes from the last record at a pace that weighs the prior with the pace of the last records', () => {
    // One record: the pace since the click, weighed with the prior; the work after the record, from when it came.
    const one = runSecondsLeft({ total, next: 12e6, prior, elapsed: 9, records: [{ work: 6e6, seconds: 8 }] });
    expect(one).toBeCloseTo(((6e6 * prior + 8) / 12e6) * 24e6 - 1, 9);
    // Records twice as slow as the prior after the first: the prior weighs 6 M of work against 10 M measured.
    const records = [
      { work: 4e6, seconds: 5 },
      { work: 14e6, seconds: 25 },
    ];
    const pace = (6e6 * prior + 20) / (6e6 + 10e6);
    expect(runSecondsLeft({ total, next: 20e6, prior, elapsed: 26, records })).toBeCloseTo(pace * 16e6 - 1, 9);
    // Over the last 4 records only: a faster stretch lately shortens the time left.
    const six = [0, 1, 2, 3, 4, 5].map((i) => ({
      work: (i + 1) * 4e6,
      seconds: i < 2 ? (i + 1) * 8 : 16 + (i - 1) * 4,
    }));
    const recent = (6e6 * prior + (six[5].seconds - six[1].seconds)) / (6e6 + 16e6);
    expect(runSecondsLeft({ total, next: 28e6, prior, elapsed: 36, records: six })).toBeCloseTo(
      recent * (total - 24e6) - (36 - six[5].seconds),
      9,
    );
  });

  it('a record late by the pace moves the pace halfway to the one its lateness shows, and keeps the work after it', () => {
    const left = runSecondsLeft({ total, next: 10e6, prior, elapsed: 20, records: [] });
    const pace = (prior + 20 / 10e6) / 2;
    expect(left).toBeCloseTo(Math.max(pace * total - 20, pace * 20e6), 9);
    expect(left).toBeGreaterThan(10);
    expect(runSecondsLeft({ total, next: null, prior, elapsed: 40, records: [] })).toBe(0);
  });
});

describe("the last run's correction", () => {
  it('is the measured time over the predicted, kept within [1/3, 3], and read back only well-formed', () => {
    expect(lastRunTime(20, 30, 5)).toEqual({ factor: 1.5, seconds: 30, at: 5 });
    expect(lastRunTime(10, 100, 5).factor).toBe(3);
    expect(lastRunTime(90, 10, 5).factor).toBeCloseTo(1 / 3, 9);
    const stored = (v: unknown) => ({ getItem: (k: string) => (k === LAST_RUN_KEY ? JSON.stringify(v) : null) });
    expect(readLastRunTime(stored({ factor: 1.2, seconds: 30, at: 5 }))).toEqual({ factor: 1.2, seconds: 30, at: 5 });
    expect(readLastRunTime(stored({ factor: -1, seconds: 30, at: 5 }))).toBeNull();
    expect(readLastRunTime(stored({ factor: 1, seconds: 30 }))).toBeNull();
    expect(readLastRunTime({ getItem: () => '{' })).toBeNull();
    expect(readLastRunTime(null)).toBeNull();
  });
});
