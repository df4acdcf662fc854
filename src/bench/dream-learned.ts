/**
 * How fast a learned experience model dreams: transitions per second when `batch` predictions are
 * asked together (what one rollout step of `batch` episodes does), on real states of held-out
 * episodes, with the transition cache off so every prediction is decoded. In the same run, the
 * real environment's steps per second and the noisy oracle's predictions per second over the same
 * transitions are the references.
 */
import * as tf from '@tensorflow/tfjs';
import { makeEnv } from '../core/envs/registry';
import { heldOutContexts } from '../core/experience/held-out';
import { NoisyOracleModel } from '../core/experience/noisy-oracle';
import type { ExperienceModel } from '../core/experience/types';

export interface SpeedRow {
  batch: number;
  /** Floating-point operations per transition the fused decoder counted (0: the tfjs decoder does not count). */
  flopsPerTransition: number;
  transitions: number;
  seconds: number;
  transitionsPerSecond: number;
  tokensPerTransition: number;
}

export interface LearnedSpeedBench {
  env: string;
  model: string;
  rows: SpeedRow[];
  realStepsPerSecond: number;
  oraclePredictionsPerSecond: number;
  invalidRate: number;
}

export async function benchLearnedSpeed(
  model: ExperienceModel & { readonly decoderFlops?: number },
  envId: string,
  options: { batches: number[]; transitions: number; now: () => number },
): Promise<LearnedSpeedBench> {
  const samples = await heldOutContexts(envId, options.transitions);
  const rows: SpeedRow[] = [];
  let invalid = 0,
    asked = 0;
  // Warm-up: one batch at the largest size (JIT, wasm kernels, first allocations).
  await Promise.all(samples.slice(0, Math.max(...options.batches)).map((s) => model.next(s.ctx)));
  for (const batch of options.batches) {
    let tokens = 0;
    const flopsBefore = model.decoderFlops ?? 0;
    const started = options.now();
    for (let start = 0; start < samples.length; start += batch) {
      const predictions = await Promise.all(samples.slice(start, start + batch).map((s) => model.next(s.ctx)));
      for (const p of predictions) {
        tokens += p.usage.completionTokens;
        asked++;
        if (!p.valid) invalid++;
      }
    }
    const seconds = (options.now() - started) / 1000;
    rows.push({
      batch,
      transitions: samples.length,
      seconds,
      transitionsPerSecond: samples.length / seconds,
      flopsPerTransition: ((model.decoderFlops ?? 0) - flopsBefore) / samples.length,
      tokensPerTransition: tokens / samples.length,
    });
  }
  // References over the same transitions: the real env replaying them, and the oracle predicting them.
  let started = options.now();
  for (const s of samples) {
    const env = makeEnv(envId);
    await env.reset({ seed: s.replay.task.seed ?? 0, task: s.replay.task });
    for (const a of s.replay.actions) await env.step(a);
  }
  const replayedSteps = samples.reduce((n, s) => n + s.replay.actions.length, 0);
  const realStepsPerSecond = replayedSteps / ((options.now() - started) / 1000);
  const oracle = new NoisyOracleModel(envId, { epsilonReward: 0, epsilonTransition: 0 });
  started = options.now();
  for (const s of samples) await oracle.next(s.ctx);
  const oraclePredictionsPerSecond = samples.length / ((options.now() - started) / 1000);
  return {
    env: envId,
    model: model.label,
    rows,
    realStepsPerSecond,
    oraclePredictionsPerSecond,
    invalidRate: asked ? invalid / asked : 0,
  };
}

/** tfjs's matmul speed on its current backend, in GFLOP/s, at the shape kernelGflops measures. */
export async function tfjsMatmulGflops(now: () => number, seconds = 0.5, m = 512, k = 320, n = 64): Promise<number> {
  const [a, b] = [tf.randomNormal([m, k], 0, 1, 'float32', 1), tf.randomNormal([k, n], 0, 1, 'float32', 2)];
  const once = async () => {
    const c = tf.matMul(a, b);
    await c.data();
    c.dispose();
  };
  await once();
  let runs = 0;
  const started = now();
  while (now() - started < seconds * 1000 || runs < 3) {
    await once();
    runs++;
  }
  const gflops = (2 * m * k * n * runs) / ((now() - started) / 1000) / 1e9;
  tf.dispose([a, b]);
  return gflops;
}
