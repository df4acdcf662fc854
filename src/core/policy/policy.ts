/**
 * The candidate-scoring policy (docs/architecture.md §3.8):
 *
 *     π(a | s) = softmax_a( β · prior(a | s) + f_θ(x(s, a)) )      over the admissible actions of s
 *
 * `f_θ` is a small network over the features of `features.ts`:
 *
 *     instr = bag(E, instruction ids) / √n        [nS, D]     one shared embedding table E [B, D]
 *     obs   = bag(E, observation ids) / √n        [nS, D]
 *     act   = bag(E, action ids) / √n             [nR, D]     rows = (state, action) pairs
 *     stateX = [instr, obs, stateDense]           [nS, 2D + S]
 *     actX   = [act, act ⊙ instr(row), rowDense]  [nR, 2D + R]
 *     h      = relu(stateX W_s + actX W_a + b_1)  [nR, H]     (stateX W_s computed once per state)
 *     f      = h W_2 + b_2                        [nR]
 *
 * and a value head for PPO on the state features: V(s) = relu(stateX W_v1 + b_v1) W_v2 + b_v2.
 * β is a trainable scalar. States with different numbers of actions are batched by padding the
 * logits to [nStates, maxActions] with −1e9 on padding slots.
 *
 * Sampling uses the caller's seeded `Rng` (never tf's own randomness); every tensor op runs in
 * tf.tidy or is disposed. Matmuls and gathers use the wasm-friendly ops of `backend.ts`.
 */
import * as tf from '@tensorflow/tfjs';
import { hashString, Rng } from '../rng';
import { embeddingBag, gatherRows, matMulFast } from '../tfjs/backend';
import { emptyFeatureSchema, type FeatureSchema } from './feature-schema';
import {
  DEFAULT_FEATURE_CONFIG,
  Featuriser,
  encodeStates,
  type EncodedBatch,
  type FeatureConfig,
  type PolicyFeatureSet,
  type PolicyState,
} from './features';

export type { PolicyState, EncodedBatch } from './features';

// =============================================================================================
// Prior
// =============================================================================================

/** The LLM's own preference among the admissible actions (e.g. its log-probabilities). */
export interface ActionPrior {
  readonly id: string;
  /** One score per action, same order. */
  prior(state: PolicyState, actions: readonly string[]): Promise<number[]>;
}

/** No prior: every action scores 0 (the policy is f_θ alone). */
export class ZeroPrior implements ActionPrior {
  readonly id = 'zero';
  prior(_state: PolicyState, actions: readonly string[]): Promise<number[]> {
    return Promise.resolve(new Array<number>(actions.length).fill(0));
  }
}

// =============================================================================================
// Configuration
// =============================================================================================

export interface PolicyConfig {
  /** Feature hashing and bounds (buckets = embedding table rows). */
  features: FeatureConfig;
  /** The domain's feature schema (feature-schema.ts; none: generic features only). Saved with the weights. */
  schema: FeatureSchema;
  /** Embedding dimension D. */
  embeddingDim: number;
  /** Hidden width H of f_θ. */
  hidden: number;
  /** Hidden width of the value head. */
  valueHidden: number;
  /** Initial β (weight of the prior). */
  initialBeta: number;
  /** Seed of the weight initialisation. */
  seed: number;
}

export const DEFAULT_POLICY_CONFIG: Readonly<PolicyConfig> = Object.freeze({
  features: DEFAULT_FEATURE_CONFIG,
  schema: emptyFeatureSchema(),
  embeddingDim: 32,
  hidden: 64,
  valueHidden: 64,
  initialBeta: 1,
  seed: 0,
});

export interface PolicyWeights {
  /** Architecture signature (the schema's hash included): weights load only into a policy with the same one. */
  signature: string;
  tensors: { name: string; shape: number[]; data: Float32Array }[];
}

export interface ActResult {
  /** The chosen action strings, one per state. */
  actions: string[];
  /** Index of each chosen action in its state's admissible list. */
  actionIndices: number[];
  /** log π(a | s) of the chosen actions. */
  logProbs: number[];
  /** V(s) from the value head. */
  values: number[];
  /** π(· | s) over each state's admissible actions (for display and analysis). */
  probs: number[][];
  /** Prior scores used per state (null without a prior): store them in the step for training. */
  priors: (number[] | null)[];
}

export interface ForwardResult {
  /** Masked logits [nStates, maxActions]; padding slots are ≈ −1e9. */
  logits: tf.Tensor2D;
  /** log π over the padded slots [nStates, maxActions]. */
  logProbs: tf.Tensor2D;
  /** V(s) [nStates] (only when asked). */
  values?: tf.Tensor1D;
}

const PAD_LOGIT = -1e9;

// =============================================================================================
// The policy
// =============================================================================================

export class CandidatePolicy {
  readonly config: PolicyConfig;
  prior: ActionPrior;
  /** The domain's schema bound to its env's features: what x(s, a) is. */
  readonly featuriser: Featuriser;
  private readonly vars: Map<string, tf.Variable>;
  private disposed = false;

  /** `envFeatures`: the features the schema's env adds (its definition's policyFeatures), named in the schema. */
  constructor(
    config: Partial<PolicyConfig> = {},
    prior: ActionPrior = new ZeroPrior(),
    readonly envFeatures?: PolicyFeatureSet,
  ) {
    this.config = { ...DEFAULT_POLICY_CONFIG, ...config, features: { ...DEFAULT_FEATURE_CONFIG, ...config.features } };
    this.prior = prior;
    this.featuriser = new Featuriser(this.config.schema, envFeatures);
    const { embeddingDim: D, hidden: H, valueHidden: HV } = this.config;
    const B = this.config.features.buckets;
    const rng = Rng.fromSeed(this.config.seed, 'policy-init');
    const S = 2 * D + this.featuriser.stateDim,
      R = 2 * D + this.featuriser.rowDim;
    // Small output layer so the initial policy is near uniform (CleanRL: actor std 0.01).
    const shapes: [string, number[], (r: Rng, n: number) => Float32Array][] = [
      ['embedding', [B, D], (r, n) => uniform(r, n, 0.1 * Math.sqrt(3))],
      ['stateW1', [S, H], (r, n) => uniform(r, n, glorot(S, H))],
      ['actionW1', [R, H], (r, n) => uniform(r, n, glorot(R, H))],
      ['b1', [H], (_r, n) => new Float32Array(n)],
      ['w2', [H, 1], (r, n) => uniform(r, n, 0.01 * glorot(H, 1))],
      ['b2', [1], (_r, n) => new Float32Array(n)],
      ['beta', [], () => Float32Array.of(this.config.initialBeta)],
      ['valueW1', [S, HV], (r, n) => uniform(r, n, glorot(S, HV))],
      ['valueB1', [HV], (_r, n) => new Float32Array(n)],
      ['valueW2', [HV, 1], (r, n) => uniform(r, n, glorot(HV, 1))],
      ['valueB2', [1], (_r, n) => new Float32Array(n)],
    ];
    this.vars = new Map();
    for (const [name, shape, init] of shapes) {
      const size = shape.reduce((a, b) => a * b, 1);
      const initial = tf.tensor(init(rng.split(name), size), shape, 'float32');
      this.vars.set(name, tf.variable(initial, true, `policy/${name}/${uid()}`));
      initial.dispose();
    }
  }

  /** Architecture signature, e.g. 'candidate-policy/2 B=16384 D=32 H=64 HV=64 R=36 S=14 schema=1a2b3c4d'. */
  get signature(): string {
    const { embeddingDim, hidden, valueHidden } = this.config;
    const f = this.featuriser;
    const schema = hashString(JSON.stringify(this.config.schema)).toString(16).padStart(8, '0');
    return `candidate-policy/2 B=${this.config.features.buckets} D=${embeddingDim} H=${hidden} HV=${valueHidden} R=${f.rowDim} S=${f.stateDim} schema=${schema}`;
  }

  /** All trainable variables (policy and value head). */
  get variables(): tf.Variable[] {
    return [...this.vars.values()];
  }

  /** The variables of π only (REINFORCE and GRPO do not train the value head). */
  get policyVariables(): tf.Variable[] {
    return [...this.vars.entries()].filter(([name]) => !name.startsWith('value')).map(([, v]) => v);
  }

  get numParameters(): number {
    let n = 0;
    for (const v of this.vars.values()) n += v.size;
    return n;
  }

  /** Current β (the prior's weight). */
  async readBeta(): Promise<number> {
    return (await this.v('beta').data())[0];
  }

  private v(name: string): tf.Variable {
    if (this.disposed) throw new Error('CandidatePolicy used after dispose()');
    return this.vars.get(name)!;
  }

  /** Encode states with priors given (e.g. cached in collected steps), without calling the prior. */
  encode(states: readonly PolicyState[], priors?: readonly (readonly number[] | null | undefined)[]): EncodedBatch {
    return encodeStates(states, priors, this.config.features, this.featuriser);
  }

  /** Ask the prior for every state (null for the ZeroPrior: nothing to compute or store). */
  async priors(states: readonly PolicyState[]): Promise<(number[] | null)[]> {
    if (this.prior instanceof ZeroPrior) return states.map(() => null);
    return Promise.all(states.map((s) => this.prior.prior(s, s.admissible)));
  }

  // ------------------------------------------------------------------------------------------
  // Forward pass (call inside tf.tidy or a gradient closure)
  // ------------------------------------------------------------------------------------------

  forward(batch: EncodedBatch, options: { value?: boolean } = {}): ForwardResult {
    const { nStates, nRows, maxActions } = batch;
    if (batch.rowDim !== this.featuriser.rowDim || batch.stateDim !== this.featuriser.stateDim)
      throw new Error(
        `The batch was encoded with ${batch.rowDim} row and ${batch.stateDim} state features, and this policy reads ` +
          `${this.featuriser.rowDim} and ${this.featuriser.stateDim}: encode it with this policy (policy.encode).`,
      );
    const E = this.v('embedding') as tf.Tensor2D;
    // ---- embedding bags ----------------------------------------------------------------------
    const bag = (ids: Int32Array, seg: Int32Array, scale: Float32Array): tf.Tensor2D =>
      tf.mul(embeddingBag(E, ids, seg), tf.tensor2d(scale, [scale.length, 1]));
    const instr = bag(batch.instrIds, batch.instrSeg, batch.instrScale); // [nS, D]
    const obs = bag(batch.obsIds, batch.obsSeg, batch.obsScale); // [nS, D]
    const act = bag(batch.actIds, batch.actSeg, batch.actScale); // [nR, D]
    // ---- f_θ -----------------------------------------------------------------------------
    const stateX = tf.concat([instr, obs, tf.tensor2d(batch.stateDense, [nStates, batch.stateDim])], 1); // [nS, 2D+S]
    const hState = matMulFast(stateX, this.v('stateW1') as tf.Tensor2D); // [nS, H]
    const H = this.config.hidden,
      D = this.config.embeddingDim;
    const rowState = tf.tensor1d(batch.rowState, 'int32');
    const perRow = gatherRows(tf.concat([hState, instr], 1), rowState); // [nR, H+D]
    const [hRow, instrRow] = tf.split(perRow, [H, D], 1);
    const actX = tf.concat([act, tf.mul(act, instrRow), tf.tensor2d(batch.rowDense, [nRows, batch.rowDim])], 1); // [nR, 2D+R]
    const h = tf.relu(tf.add(tf.add(hRow, matMulFast(actX, this.v('actionW1') as tf.Tensor2D)), this.v('b1'))); // [nR, H]
    const score = tf.reshape(tf.add(matMulFast(h, this.v('w2') as tf.Tensor2D), this.v('b2')), [nRows]); // [nR]
    const rowLogit = tf.add(score, tf.mul(this.v('beta'), tf.tensor1d(batch.prior))); // [nR]
    // ---- pad to [nS, maxA] -----------------------------------------------------------------
    const withPad = tf.concat([rowLogit, tf.zeros([1])]); // [nR+1]
    const padded = tf.reshape(gatherRows(withPad, tf.tensor1d(batch.slotRow, 'int32')), [nStates, maxActions]);
    const mask = tf.tensor2d(batch.slotMask, [nStates, maxActions]);
    const logits = tf.add(padded, tf.mul(tf.sub(1, mask), PAD_LOGIT)) as tf.Tensor2D; // [nS, maxA]
    const logProbs = tf.logSoftmax(logits) as tf.Tensor2D; // [nS, maxA]
    const out: ForwardResult = { logits, logProbs };
    if (options.value) out.values = this.valueOf(stateX);
    return out;
  }

  private valueOf(stateX: tf.Tensor2D): tf.Tensor1D {
    const hv = tf.relu(tf.add(matMulFast(stateX, this.v('valueW1') as tf.Tensor2D), this.v('valueB1'))); // [nS, HV]
    return tf.reshape(tf.add(matMulFast(hv, this.v('valueW2') as tf.Tensor2D), this.v('valueB2')), [-1]) as tf.Tensor1D; // [nS]
  }

  /**
   * Everything training needs for the taken actions: log π(a|s) [nS], entropy of π(·|s) [nS],
   * V(s) [nS] (when asked) and the padded log-probabilities [nS, maxA].
   */
  evaluate(
    batch: EncodedBatch,
    actions: ArrayLike<number>,
    options: { value?: boolean } = {},
  ): {
    logProbs: tf.Tensor1D;
    entropy: tf.Tensor1D;
    values?: tf.Tensor1D;
    allLogProbs: tf.Tensor2D;
  } {
    checkActions(batch, actions);
    const f = this.forward(batch, options);
    const oneHot = tf.oneHot(tf.tensor1d(Int32Array.from(actions), 'int32'), batch.maxActions); // [nS, maxA]
    const logProbs = tf.sum(tf.mul(f.logProbs, oneHot), 1) as tf.Tensor1D; // [nS]
    const entropy = tf.neg(tf.sum(tf.mul(tf.exp(f.logProbs), f.logProbs), 1)) as tf.Tensor1D; // [nS]
    return { logProbs, entropy, values: f.values, allLogProbs: f.logProbs };
  }

  /** log π(a|s) of the given actions [nS] (states are encoded with cached priors if given). */
  logProbs(batch: EncodedBatch | readonly PolicyState[], actions: ArrayLike<number>): tf.Tensor1D {
    const enc = isEncoded(batch) ? batch : this.encode(batch);
    return tf.tidy(() => this.evaluate(enc, actions).logProbs);
  }

  /** Entropy of π(·|s) [nS]. */
  entropy(batch: EncodedBatch | readonly PolicyState[]): tf.Tensor1D {
    const enc = isEncoded(batch) ? batch : this.encode(batch);
    return tf.tidy(() => {
      const lp = this.forward(enc).logProbs;
      return tf.neg(tf.sum(tf.mul(tf.exp(lp), lp), 1)) as tf.Tensor1D;
    });
  }

  /** V(s) [nS]. */
  values(batch: EncodedBatch | readonly PolicyState[]): tf.Tensor1D {
    const enc = isEncoded(batch) ? batch : this.encode(batch);
    return tf.tidy(() => this.forward(enc, { value: true }).values!);
  }

  // ------------------------------------------------------------------------------------------
  // Acting
  // ------------------------------------------------------------------------------------------

  /**
   * Choose one action per state: sampled from π with the caller's seeded Rng, or the most
   * probable one with `greedy` (ties → first). Priors are asked once per state and returned.
   */
  async act(
    states: readonly PolicyState[],
    rng: Rng,
    options: { greedy?: boolean; priors?: readonly (readonly number[] | null | undefined)[] } = {},
  ): Promise<ActResult> {
    const priors = options.priors ? options.priors.map((p) => (p ? [...p] : null)) : await this.priors(states);
    const enc = this.encode(states, priors);
    const [lpT, vT] = tf.tidy(() => {
      const f = this.forward(enc, { value: true });
      return [f.logProbs, f.values!];
    });
    const [lp, values] = await Promise.all([lpT.data() as Promise<Float32Array>, vT.data() as Promise<Float32Array>]);
    lpT.dispose();
    vT.dispose();

    const result: ActResult = { actions: [], actionIndices: [], logProbs: [], values: [], probs: [], priors };
    const W = enc.maxActions;
    for (let s = 0; s < states.length; s++) {
      const n = enc.actionCounts[s];
      const probs = new Array<number>(n);
      for (let j = 0; j < n; j++) probs[j] = Math.exp(lp[s * W + j]);
      let chosen = 0;
      if (options.greedy) {
        for (let j = 1; j < n; j++) if (lp[s * W + j] > lp[s * W + chosen]) chosen = j;
      } else {
        // Inverse-CDF sampling with our own stream (deterministic across backends).
        let total = 0;
        for (let j = 0; j < n; j++) total += probs[j];
        let u = rng.next() * total;
        chosen = n - 1;
        for (let j = 0; j < n; j++) {
          u -= probs[j];
          if (u < 0) {
            chosen = j;
            break;
          }
        }
      }
      result.actions.push(states[s].admissible[chosen]);
      result.actionIndices.push(chosen);
      result.logProbs.push(lp[s * W + chosen]);
      result.values.push(values[s]);
      result.probs.push(probs);
    }
    return result;
  }

  // ------------------------------------------------------------------------------------------
  // Weights
  // ------------------------------------------------------------------------------------------

  /** A copy of every weight. Async: webgpu cannot read tensors synchronously (dataSync gives zeros there). */
  async getWeights(): Promise<PolicyWeights> {
    const entries = [...this.vars.entries()];
    const data = await Promise.all(entries.map(([, v]) => v.data() as Promise<Float32Array>));
    return {
      signature: this.signature,
      tensors: entries.map(([name, v], i) => ({ name, shape: [...v.shape], data: Float32Array.from(data[i]) })),
    };
  }

  setWeights(weights: PolicyWeights): void {
    const describe = (ts: { name: string; shape: number[] }[]): string =>
      ts.map((t) => `${t.name}[${t.shape.join('×')}]`).join(' ');
    const mine = [...this.vars.entries()].map(([name, v]) => ({ name, shape: [...v.shape] }));
    const fits =
      weights.signature === this.signature &&
      weights.tensors.length === mine.length &&
      weights.tensors.every(
        (t, i) =>
          t.name === mine[i].name &&
          t.shape.length === mine[i].shape.length &&
          t.shape.every((d, k) => d === mine[i].shape[k]) &&
          t.data.length === mine[i].shape.reduce((a, b) => a * b, 1),
      );
    if (!fits) {
      throw new Error(
        `Policy weights do not fit this policy: the weights are '${weights.signature}' (${describe(weights.tensors)}), ` +
          `this policy is '${this.signature}' (${describe(mine)}). Build the policy with the config the weights were saved with.`,
      );
    }
    tf.tidy(() => {
      for (const t of weights.tensors) this.v(t.name).assign(tf.tensor(t.data, t.shape, 'float32'));
    });
  }

  /** An independent copy with the same weights (e.g. the frozen reference policy of GRPO's KL). */
  async clone(): Promise<CandidatePolicy> {
    const copy = new CandidatePolicy(this.config, this.prior, this.envFeatures);
    copy.setWeights(await this.getWeights());
    return copy;
  }

  dispose(): void {
    if (this.disposed) return;
    for (const v of this.vars.values()) v.dispose();
    this.vars.clear();
    this.disposed = true;
  }
}

// =============================================================================================
// Helpers
// =============================================================================================

let uidCounter = 0;
function uid(): number {
  return ++uidCounter;
}

function glorot(fanIn: number, fanOut: number): number {
  return Math.sqrt(6 / (fanIn + fanOut));
}

function uniform(rng: Rng, n: number, limit: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rng.next() * 2 - 1) * limit;
  return out;
}

function isEncoded(x: EncodedBatch | readonly PolicyState[]): x is EncodedBatch {
  return !Array.isArray(x) && typeof (x as EncodedBatch).nRows === 'number';
}

function checkActions(batch: EncodedBatch, actions: ArrayLike<number>): void {
  if (actions.length !== batch.nStates) throw new Error(`${actions.length} actions given for ${batch.nStates} states`);
  for (let s = 0; s < actions.length; s++) {
    const a = actions[s];
    if (!Number.isInteger(a) || a < 0 || a >= batch.actionCounts[s]) {
      throw new Error(`action index ${a} out of range for state ${s} with ${batch.actionCounts[s]} admissible actions`);
    }
  }
}
