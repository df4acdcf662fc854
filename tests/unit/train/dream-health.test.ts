/** What a dream run's history says about its experience model (src/core/train/dream-health.ts). */
import { describe, expect, it } from 'vitest';
import { dreamWarnings } from '../../../src/core/train/dream-health';
import type { IterationRecord } from '../../../src/core/train/loop';

const dream = (iteration: number, success: number, length = 6, truncated = 0): IterationRecord => ({
  iteration,
  metrics: { 'dream/success_rate': success, 'dream/episode_length': length, 'dream/truncated_rate': truncated },
});
const kinds = (history: IterationRecord[]) => dreamWarnings(history).map((w) => w.kind);

describe('dreamWarnings', () => {
  it('says nothing of a healthy dream, of a real run, or of one iteration with no success', () => {
    expect(kinds([dream(1, 0), dream(2, 0.25), dream(3, 0.5)])).toEqual([]);
    expect(kinds([{ iteration: 1, metrics: { 'charts/success_rate': 0, 'charts/episode_length': 15 } }])).toEqual([]);
    expect(kinds([dream(1, 0)])).toEqual([]);
  });

  it('no success in the first five dream iterations, with the likely cause', () => {
    const history = [1, 2, 3, 4, 5].map((i) => dream(i, 0));
    expect(kinds(history)).toEqual(['no-success']);
    expect(dreamWarnings(history)[0].message).toMatch(
      /no episode a success in its first 5 iterations.*empty or wrong replay buffer/,
    );
    expect(kinds([...history.slice(0, 4), dream(5, 0.1)])).toEqual([]);
  });

  it('every dreamed episode at the step limit (the fresh-browser symptom), and every one ended at its first step', () => {
    expect(kinds([dream(1, 0, 15, 1), dream(2, 0, 15, 1)])).toEqual(['step-limit']);
    expect(kinds([dream(1, 0, 15, 1), dream(2, 0, 12, 0.8)])).toEqual([]);
    expect(kinds([dream(1, 1, 1), dream(2, 1, 1)])).toEqual(['first-step']);
  });

  it('next to no success: at most 2% in each of the first five iterations', () => {
    const history = [0.01, 0, 0.02, 0, 0.015].map((s, i) => dream(i + 1, s));
    expect(kinds(history)).toEqual(['no-success']);
    expect(dreamWarnings(history)[0].message).toMatch(/at most 2% of episodes a success in each of its first 5/);
    expect(kinds([...history.slice(0, 4), dream(5, 0.05)])).toEqual([]);
  });

  it('no held-out real success in two evaluations of the dream (the untrained one not counted)', () => {
    const evaluated = (iteration: number, real: number): IterationRecord => ({
      iteration,
      metrics: { ...dream(iteration, 0.3).metrics, 'eval/success_rate': real },
    });
    const untrained = { iteration: 0, metrics: { 'eval/success_rate': 0 } };
    expect(kinds([untrained, evaluated(5, 0), dream(6, 0.3)])).toEqual([]);
    const history = [untrained, evaluated(5, 0), dream(6, 0.3), evaluated(10, 0)];
    expect(kinds(history)).toEqual(['no-real-success']);
    expect(dreamWarnings(history)[0].message).toMatch(
      /no held-out real task in 2 evaluations \(the last at iteration 10\)/,
    );
    expect(kinds([untrained, evaluated(5, 0), evaluated(10, 0.01)])).toEqual([]);
  });

  it('an S2R run is judged on its dream phase only', () => {
    const s2r = [1, 2, 3, 4, 5].map((i) => dream(i, 0, 15, 1));
    s2r.push({ iteration: 6, metrics: { 'charts/success_rate': 0.5, 'charts/episode_length': 5 } });
    expect(kinds(s2r)).toEqual(['no-success', 'step-limit']);
  });
});
