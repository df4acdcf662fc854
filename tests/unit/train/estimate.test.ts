/**
 * Sized for the engine (issue 14): the cost of a dream before it starts — transitions, the calls
 * left after the transition cache, tokens, and time at the engine's speed (measured, else the
 * engine kind's typical one, said to be assumed) — and the learning-rate schedule that helps a
 * small dream learn.
 */
import { describe, expect, it } from 'vitest';
import { assumedSpeed, describeEstimate, ENV_TYPICALS, estimateDreamCost } from '../../../src/core/train/estimate';
import { getPreset } from '../../../src/core/train/config';
import { formatDuration } from '../../../src/core/train/progress';
import { scheduledLearningRate } from '../../../src/core/rl/batch';

describe('estimateDreamCost', () => {
  const demo = { ...getPreset('webshop-llm-demo'), mode: 'dream' as const };

  it("counts episodes × the env's typical length, the calls after the cache, tokens and time at an assumed speed", () => {
    const e = estimateDreamCost({ ...demo, llm: 'webllm:Qwen2.5-0.5B-Instruct-q4f32_1-MLC' });
    const typical = ENV_TYPICALS['webshop-lite-v0'];
    expect(e.episodes).toBe(30 * 4 * 4);
    expect(e.transitions).toBe(Math.round(480 * typical.stepsPerEpisode));
    expect(e.transitions).toBeLessThanOrEqual(3000);
    expect(e.transitionsAtMost).toBe(480 * 15);
    expect(e.calls).toBe(Math.round(e.transitions * (1 - typical.cacheHitRate)));
    expect(e.tokens).toBe(e.calls * typical.tokensPerTransition);
    expect(e.speed).toMatchObject({ measured: false, parallel: 1, secondsPerTransition: 3 });
    expect(e.seconds).toBeCloseTo(e.calls * 3);
    const text = describeEstimate(e, formatDuration);
    expect(text).toMatch(
      /^Estimate: ≈ [\d,]+ dreamed transitions \(at most 7,200\) in 30 iterations, 15% of them from the transition cache \(assumed\); ≈ [\d,]+ model calls, ≈ [\d.]+ M tokens \(682 a transition, estimated\); ≈ 1 h 48 min of model time at 3\.0 s per transition \(assumed: WebLLM, a 0\.5–1\.5B model on a laptop GPU\)\.$/,
    );
  });

  it('goes by a measured speed, tokens and cache; an OpenAI-compatible server serves llmConcurrency at once; the oracle costs no tokens', () => {
    const measured = estimateDreamCost(
      { ...demo, llm: 'openai:http://127.0.0.1:8000/v1#m', llmConcurrency: 8 },
      {
        speed: { secondsPerTransition: 1.2, parallel: 8, measured: true, source: 'measured: Try one step' },
        tokensPerTransition: 800,
        cacheHitRate: 0.5,
      },
    );
    expect(measured).toMatchObject({ cacheMeasured: true, tokensMeasured: true, tokensPerTransition: 800 });
    expect(measured.calls).toBe(Math.round(measured.transitions / 2));
    expect(measured.seconds).toBeCloseTo((measured.calls * 1.2) / 8);
    expect(assumedSpeed('openai:http://x/v1#m', { llmConcurrency: 16 })).toMatchObject({
      parallel: 16,
      measured: false,
    });
    // A learned model goes by its env's measured batch speed (webshop's long pages are slower), else a generic figure.
    const webshop = assumedSpeed('learned:models/webshop-lite-v0', { llmConcurrency: 4, env: 'webshop-lite-v0' });
    const household = assumedSpeed('learned:models/household-v0', { llmConcurrency: 4, env: 'household-v0' });
    expect(webshop.secondsPerTransition).toBeGreaterThan(household.secondsPerTransition);
    expect(webshop.secondsPerTransition).toBeCloseTo(1 / ENV_TYPICALS['webshop-lite-v0'].learnedTransitionsPerSecond!);
    expect(webshop.source).toMatch(/typical: the shipped webshop-lite-v0 learned model/);
    expect(assumedSpeed('learned:local/mine', { llmConcurrency: 4, env: 'my-domain' }).source).toMatch(
      /assumed: a learned model/,
    );
    expect(describeEstimate(measured, formatDuration)).toMatch(
      /50% of them from the transition cache \(measured\).*800 a transition, measured.* with 8 calls at once \(measured: Try one step\)/,
    );
    // A learned model's halt ends household episodes sooner than the oracle's 48 steps; real starts at horizon 10.
    const easy = {
      ...getPreset('household-easy'),
      mode: 'dream' as const,
      llm: 'learned:models/household-v0' as const,
    };
    const typical = ENV_TYPICALS['household-v0'].learnedStepsPerEpisode!;
    expect(estimateDreamCost(easy).transitions).toBe(Math.round(60 * 64 * (0.5 * typical + 0.5 * 10)));
    expect(estimateDreamCost({ ...easy, realStartShare: 0 }).transitions).toBe(Math.round(60 * 64 * typical));
    expect(estimateDreamCost({ ...easy, realStartHorizon: 0 }).transitions).toBe(Math.round(60 * 64 * typical));
    expect(estimateDreamCost(easy).transitionsAtMost).toBe(60 * 64 * 50);
    const oracle = estimateDreamCost({ ...demo, llm: 'oracle:0.1,0.1' });
    expect(oracle).toMatchObject({ cacheHitRate: 0, tokens: 0 });
    expect(oracle.calls).toBe(oracle.transitions);
    expect(estimateDreamCost({ ...demo, mode: 'real', llm: 'oracle:0,0' }).transitions).toBe(0);
  });
});

describe('scheduledLearningRate', () => {
  it('is constant, or decays along a cosine or a line to a tenth at the last iteration (later ones keep it)', () => {
    expect(scheduledLearningRate(0.01, 'constant', 7, 30)).toBe(0.01);
    expect(scheduledLearningRate(0.01, 'cosine', 1, 30)).toBeCloseTo(0.01);
    expect(scheduledLearningRate(0.01, 'cosine', 30, 30)).toBeCloseTo(0.001);
    expect(scheduledLearningRate(0.01, 'cosine', 15.5, 30)).toBeCloseTo(0.0055);
    expect(scheduledLearningRate(0.01, 'linear', 11, 21)).toBeCloseTo(0.0055);
    expect(scheduledLearningRate(0.01, 'linear', 40, 30)).toBeCloseTo(0.001);
    expect(scheduledLearningRate(0.01, 'cosine', 1, 1)).toBeCloseTo(0.001);
  });
});
