/**
 * Live progress inside an iteration (src/core/train/progress.ts): the meter counts the dreamed
 * steps as they complete, measures speed over the last minute, estimates the time left for the
 * iteration and the run, and — wired into a Trainer — sees every step of every iteration without
 * changing the run.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { formatDuration, formatProgressLine, ProgressMeter } from '../../../src/core/train/progress';
import { Trainer } from '../../../src/core/train/loop';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import { getPreset, validateConfig } from '../../../src/core/train/config';
import { initBackend } from '../../../src/core/tfjs/backend';
import type { StepResult } from '../../../src/core/types';

beforeAll(async () => {
  await initBackend('wasm');
});

function dreamed(tokens: number, options: { cached?: boolean; invalid?: boolean } = {}): StepResult {
  return {
    text: 's',
    admissible: ['a'],
    task: { id: 't', env: 'e', instruction: 'i', difficulty: 0, origin: 'generated' },
    reward: 0,
    terminated: false,
    truncated: false,
    info: {
      valid: !options.invalid,
      success: false,
      steps: 1,
      dream: {
        predicted: true,
        reasoning: '',
        tokens,
        cached: options.cached === true,
        invalid: options.invalid === true,
      },
    },
  };
}

describe('ProgressMeter', () => {
  it('counts steps, answers and tokens as they complete, and estimates the time left from the last minute', () => {
    let now = 0;
    const meter = new ProgressMeter(() => now, 10);
    meter.startIteration(1, 'dream');
    meter.stepPlanned(40); // 8 episodes × 5 steps at most
    now = 2000;
    meter.stepDone(dreamed(600));
    now = 4000;
    meter.stepDone(dreamed(0, { cached: true }));
    now = 6000;
    meter.stepDone(dreamed(500, { invalid: true }));
    now = 8000;
    meter.stepDone(dreamed(700));
    const p = meter.snapshot();
    expect(p).toMatchObject({ iteration: 1, iterations: 10, phase: 'dream', stage: 'rollout', done: 4, planned: 40 });
    expect(p.current).toEqual({ steps: 4, predictions: 4, invalid: 1, cacheHits: 1, tokens: 1800 });
    expect(p.windowSeconds).toBe(8);
    expect(p.transitionsPerSecond).toBe(0.5);
    expect(p.callsPerSecond).toBe(0.375); // the cache hit cost no call
    expect(p.tokensPerSecond).toBe(225);
    expect(p.cacheHitRate).toBe(0.25);
    expect(p.iterationSecondsLeft).toBe(72); // 36 steps at 0.5/s
    expect(p.runSecondsLeft).toBe(72 + 9 * 80); // no iteration finished yet: 40 planned steps at 0.5/s each
    // Episodes end: the plan tightens (12 s for the iteration, then 9 × 20 s: 10 steps at 0.5/s).
    meter.stepPlanned(6);
    expect(meter.snapshot().planned).toBe(10);
    expect(formatProgressLine(meter.snapshot())).toBe(
      'iteration 1/10 dream steps 4/≤10 · valid 3 invalid 1 · 225 tok/s 0.50 transitions/s (last 8 s) · cache 25% · left: iteration ≈ 12 s, run ≈ 3 min',
    );
  });

  it('forgets steps older than a minute, and goes by the finished iterations for the run', () => {
    let now = 0;
    const meter = new ProgressMeter(() => now, 3);
    meter.startIteration(1, 'dream');
    meter.stepPlanned(2);
    now = 1000;
    meter.stepDone(dreamed(100));
    now = 2000;
    meter.stepDone(dreamed(100));
    meter.stage('update');
    expect(meter.snapshot().iterationSecondsLeft).toBe(0);
    now = 100_000;
    meter.endIteration(); // the update took long: 100 s for the iteration
    meter.startIteration(2, 'dream');
    meter.stepPlanned(2);
    now = 101_000;
    meter.stepDone(dreamed(50));
    const p = meter.snapshot();
    expect(p.windowSeconds).toBe(60);
    expect(p.transitionsPerSecond).toBeCloseTo(1 / 60);
    expect(p.tokensPerSecond).toBeCloseTo(50 / 60);
    expect(p.total).toMatchObject({ steps: 3, predictions: 3, tokens: 250 });
    expect(p.iterationSecondsLeft).toBeCloseTo(60);
    expect(p.runSecondsLeft).toBeCloseTo(60 + 100);
    expect(p.iterationSeconds).toBe(1);
  });

  it('formats durations for a progress line', () => {
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(42.4)).toBe('42 s');
    expect(formatDuration(600)).toBe('10 min');
    expect(formatDuration(3 * 3600 + 20 * 60)).toBe('3 h 20 min');
    expect(formatDuration(7200)).toBe('2 h');
    expect(formatDuration(160 * 3600)).toBe('6.7 days');
  });
});

describe('a Trainer with a progress meter', () => {
  it('reports every dreamed step of each iteration as it completes, and the run is the same as without one', async () => {
    const config = validateConfig({
      ...getPreset('webshop-easy'),
      mode: 'dream',
      llm: 'oracle:0.1,0.1',
      iterations: 2,
      tasksPerIteration: 2,
      groupSize: 2,
      evalInterval: 0,
      curriculum: false,
    });
    let clock = 0;
    const meter = new ProgressMeter(() => clock, config.iterations);
    const seen: number[] = [];
    const spy = {
      startIteration: (i: number, phase: 'real' | 'dream') => meter.startIteration(i, phase),
      stepPlanned: (n: number) => meter.stepPlanned(n),
      stepDone: (r: StepResult) => {
        clock += 10;
        meter.stepDone(r);
        seen.push(meter.snapshot().done);
      },
      stage: (s: 'rollout' | 'update' | 'evaluation') => meter.stage(s),
      endIteration: () => meter.endIteration(),
    };
    const watched = new Trainer(config, {
      experienceModel: new NoisyOracleModel(config.env, { epsilonReward: 0.1, epsilonTransition: 0.1, seed: 1 }),
      progress: spy,
    });
    const plain = new Trainer(config, {
      experienceModel: new NoisyOracleModel(config.env, { epsilonReward: 0.1, epsilonTransition: 0.1, seed: 1 }),
    });
    try {
      for (let i = 0; i < 2; i++) {
        const a = await watched.runIteration();
        const b = await plain.runIteration();
        expect(a).toEqual(b);
        const p = meter.snapshot();
        expect(p.iteration).toBe(i + 1);
        expect(p.stage).toBe('evaluation');
        expect(p.done).toBe(p.planned);
      }
      expect(meter.snapshot().total.steps).toBe(watched.dreamSteps);
      expect(seen.length).toBe(watched.dreamSteps);
      expect(seen.slice(0, 3)).toEqual([1, 2, 3]);
    } finally {
      watched.dispose();
      plain.dispose();
    }
  });
});
