/**
 * Throughput of the candidate-scoring policy on the current tfjs backend, in (state, action)
 * rows per second, next to the backend's raw matmul GFLOP/s measured in the same run (the
 * reference that says whether a slow figure is the policy's fault or the machine's).
 *
 * States are synthetic WebShop-style results pages (a few nav clicks plus products), generated
 * from a seed; nothing here depends on the environments.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../core/rng';
import { CandidatePolicy, type PolicyConfig } from '../core/policy/policy';
import type { PolicyState } from '../core/policy/features';
import { applyClippedGradients, makeOptimizer } from '../core/rl/batch';
import { reinforceLoss } from '../core/rl/reinforce';

export interface BenchPolicyOptions {
  /** (state, action) rows per batch. */
  rows: number;
  /** Candidates per state (states = rows / actionsPerState). */
  actionsPerState: number;
  /** Timed repetitions of each measurement (after one warm-up). */
  iterations?: number;
  seed?: number;
  /** Policy architecture (defaults: DEFAULT_POLICY_CONFIG). */
  policy?: Partial<PolicyConfig>;
  /** Matmul reference size [m, k] @ [k, n] (default 512 × 4096 @ 4096 × 256). */
  matmul?: { m: number; k: number; n: number };
}

export interface BenchPolicyResult {
  backend: string;
  rows: number;
  states: number;
  actionsPerState: number;
  parameters: number;
  /** Strings → typed arrays (feature extraction), rows/s. */
  encodeRowsPerSecond: number;
  /** One batched forward pass (logits, log-probs, values) on an encoded batch, rows/s. */
  forwardRowsPerSecond: number;
  /** One gradient step (forward, backward, clip, Adam) on an encoded batch, rows/s. */
  updateRowsPerSecond: number;
  /** Encode + gradient step, rows/s (what an update on freshly collected steps costs). */
  updateWithEncodeRowsPerSecond: number;
  /** ms per batch of each stage. */
  encodeMs: number;
  forwardMs: number;
  updateMs: number;
  /** Raw A @ B on this backend, GFLOP/s (2·m·k·n per product). */
  matmulGflops: number;
}

const WORDS = (
  'red blue green black white wood metal leather cotton soft large small waterproof wireless portable ' +
  'organic gluten free vegan sofa chair table lamp shirt shoe jacket phone case charger cable bottle shampoo ' +
  'lotion cream snack coffee tea pack set kit pro max mini ultra classic modern vintage slim heavy duty'
).split(' ');

/** Synthetic WebShop-like results pages with `actionsPerState` candidates each. */
export function syntheticStates(nStates: number, actionsPerState: number, seed = 1): PolicyState[] {
  const rng = Rng.fromSeed(seed, 'bench-states');
  const phrase = (k: number): string => Array.from({ length: k }, () => rng.pick(WORDS)).join(' ');
  const asin = (): string =>
    'B0' + Array.from({ length: 8 }, () => '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'[rng.int(0, 35)]).join('');
  const states: PolicyState[] = [];
  for (let s = 0; s < nStates; s++) {
    const instruction = `i need ${phrase(5)}, and price lower than ${rng.int(2, 9) * 10}.00 dollars`;
    const nav = Math.min(2, actionsPerState);
    const parts = ['Instruction:', instruction, 'Back to Search', 'Page 1 (Total results: 50)', 'Next >'];
    const admissible = ['click[back to search]', 'click[next >]'].slice(0, nav);
    for (let j = nav; j < actionsPerState; j++) {
      const id = asin();
      parts.push(id, phrase(rng.int(6, 12)), `$${rng.uniform(5, 120).toFixed(2)}`);
      admissible.push(`click[${id.toLowerCase()}]`);
    }
    states.push({ instruction, observation: parts.join(' [SEP] '), admissible, step: rng.int(0, 10), maxSteps: 15 });
  }
  return states;
}

async function timeIt(iterations: number, fn: () => Promise<void> | void): Promise<number> {
  for (let i = 0; i < 2; i++) await fn(); // warm-up (kernels, Adam slots, wasm memory growth, JIT)
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) await fn();
  return (performance.now() - t0) / iterations;
}

/** Measure encode / forward / update throughput and the backend's matmul GFLOP/s. */
export async function benchPolicy(options: BenchPolicyOptions): Promise<BenchPolicyResult> {
  const iterations = options.iterations ?? 5;
  const actionsPerState = Math.max(1, options.actionsPerState);
  const nStates = Math.max(1, Math.round(options.rows / actionsPerState));
  const states = syntheticStates(nStates, actionsPerState, options.seed ?? 1);
  const policy = new CandidatePolicy({ seed: options.seed ?? 1, ...options.policy });
  const optimizer = makeOptimizer(1e-3);
  const actRng = Rng.fromSeed(options.seed ?? 1, 'bench-actions');
  const actions = Int32Array.from(states, (s) => actRng.int(0, s.admissible.length - 1));
  const advantages = Float32Array.from(states, () => actRng.normal());
  try {
    let enc = policy.encode(states);
    const rows = enc.nRows;
    const encodeMs = await timeIt(iterations, () => {
      enc = policy.encode(states);
    });

    const forwardMs = await timeIt(iterations, async () => {
      const [lp, v] = tf.tidy(() => {
        const f = policy.forward(enc, { value: true });
        return [f.logProbs, f.values!];
      });
      await Promise.all([lp.data(), v.data()]);
      tf.dispose([lp, v]);
    });

    const step = async (): Promise<void> => {
      const adv = tf.tensor1d(advantages);
      const { value, grads } = tf.variableGrads(() => {
        const { logProbs, entropy } = policy.evaluate(enc, actions);
        return tf.sub(reinforceLoss(logProbs, adv), tf.mul(0.01, tf.mean(entropy))) as tf.Scalar;
      }, policy.policyVariables);
      applyClippedGradients(optimizer, grads, 0.5);
      await value.data(); // wait for the step to finish
      tf.dispose([value, adv]);
    };
    const updateMs = await timeIt(iterations, step);
    const updateWithEncodeMs = await timeIt(iterations, async () => {
      enc = policy.encode(states);
      await step();
    });

    // ---- the backend's raw matmul, same run -------------------------------------------------
    const { m, k, n } = options.matmul ?? { m: 512, k: 4096, n: 256 };
    const mmRng = Rng.fromSeed(options.seed ?? 1, 'bench-matmul');
    const a = tf.tensor2d(
      Float32Array.from({ length: m * k }, () => mmRng.next() - 0.5),
      [m, k],
    );
    const b = tf.tensor2d(
      Float32Array.from({ length: k * n }, () => mmRng.next() - 0.5),
      [k, n],
    );
    const mmMs = await timeIt(Math.max(2, Math.min(iterations, 5)), async () => {
      const c = tf.matMul(a, b);
      await c.data();
      c.dispose();
    });
    tf.dispose([a, b]);

    return {
      backend: tf.getBackend(),
      rows,
      states: nStates,
      actionsPerState,
      parameters: policy.numParameters,
      encodeRowsPerSecond: rows / (encodeMs / 1000),
      forwardRowsPerSecond: rows / (forwardMs / 1000),
      updateRowsPerSecond: rows / (updateMs / 1000),
      updateWithEncodeRowsPerSecond: rows / (updateWithEncodeMs / 1000),
      encodeMs,
      forwardMs,
      updateMs,
      matmulGflops: (2 * m * k * n) / (mmMs / 1000) / 1e9,
    };
  } finally {
    optimizer.dispose();
    policy.dispose();
  }
}
