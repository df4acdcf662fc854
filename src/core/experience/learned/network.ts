/**
 * The learned experience model's network: a small encoder–decoder in tfjs with a copy pointer.
 *
 *   encoder   e_j = E_tok[id] + E_space + E_case + E_seg + E_pos(j)        context tokens, [B, Lc, d]
 *             blocks: e ← e + W·gelu(conv_k(LN(e)));  e ← e + MLP(LN(e))   (k-wide, both sides)
 *   decoder   x_t = E_tok[id] + E_space + E_case + E_pos'(t)               answer tokens, [B, La, d]
 *             layers: causal self-attention (h heads) → cross-attention on e (one head, width a) → MLP
 *   heads     p_gen = softmax(h W_out)    write a word                     [V]
 *             a     = softmax(q(h) · k(e)ᵀ / √a)                          [Lc]  point at a context token
 *             g     = σ(h w_g);  p(w) = g·p_gen(w) + (1 − g)·Σ_{j: ctx_j = w} a_j   (pointer-generator)
 *             space, case = softmax(h W + (Σ_j a_j form_j) U)             the token's form: its own
 *                   guess plus the space and case of the tokens the pointer looks at (copies keep their case)
 *   copy continuation: the pointer's logits gain s₁(h)·[ctx_{j−1} = y_{t−1}]
 *             + s₂(h)·[ctx_{j−2..j−1} = y_{t−2..t−1}], s = h W_c + b_c, and the gate gains learned weights on
 *             whether any such position exists — an explicit induction head, so a copy, once started,
 *             goes on through a title or a product line instead of being found again token by token
 *
 * Why this shape (not decoder-only): on tfjs-wasm a batched matmul runs a naive kernel (~1 GMAC/s
 * against ~15 for a 2-D matmul), so full self-attention over a 300–500-token context costs
 * seconds per batch. The encoder mixes the context with convolutions written as shifted copies
 * and one 2-D matmul (fast, and wasm has no conv filter gradient), so its cost is linear in the
 * context; attention runs only from the short answer to the context. The pointer earns its place:
 * most of a next state is copied from the current one or from a retrieved example (product ids,
 * titles, prices, object names), including ids the vocabulary never saw.
 *
 * Determinism: rows are right-padded and padded positions are zeroed, so a row's sums see the
 * same terms in the same order whatever else is in the batch; batched matmuls always run with a
 * batch of at least two (a batch of one takes another kernel with other rounding); decoding's
 * cross-attention runs per group of rows (DecodeGroup, decode-cache.ts) where other rows' weights
 * are exactly 0. So batched decoding gives exactly the unbatched result. wasm: attention runs as
 * 2-D matmuls on groups of rows (groupedAttention, below), matmul gradients use explicit transposes,
 * embeddings go through `gatherRows` (docs/architecture.md §11.1).
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../../rng';
import { gatherRows, matMulFast, useInPlaceSplit } from '../../tfjs/backend';
import { SPECIAL_TOKENS } from './tokenizer';
import {
  checkedWeights,
  weightShapes,
  type NamedWeight,
  type NetworkConfig,
  type TokenRows,
  type TrainBatch,
} from './weights';

export type { ContextRows, NamedWeight, NetworkConfig, TokenRows, TrainBatch } from './weights';

type CustomGradFn = Parameters<typeof tf.customGrad>[0];

/**
 * p(target) under softmax(h W + b), row by row → [N]. One Softmax kernel: wasm's Exp is ~10× slower
 * than its Softmax, so logSumExp cost ~200 ms a batch. The gradient c·(onehot − P) (c = dy·p) goes
 * through the matmuls as −c·P; the one-hot part is row gathers and scatters, never a dense [N, V].
 */
function targetProbability(hidden: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D, targets: Int32Array): tf.Tensor1D {
  const [[n, width], vocab] = [hidden.shape, w.shape[1]];
  const flatTargets = Int32Array.from(targets, (t, i) => i * vocab + t); // into P as [N·V]
  const op = tf.customGrad(((h: tf.Tensor2D, wIn: tf.Tensor2D, bIn: tf.Tensor1D, save: tf.GradSaveFunc) => {
    const probabilities = tf.softmax(tf.add(tf.matMul(h, wIn), bIn)); // [N, V]
    const flat = tf.tensor1d(flatTargets, 'int32');
    const value = tf.reshape(gatherRows(tf.reshape(probabilities, [n * vocab, 1]), flat), [n]);
    save([h, wIn, probabilities, value]);
    return {
      value,
      gradFunc: (dy: tf.Tensor1D, saved: tf.Tensor[]) => {
        const [hs, ws, p, pTarget] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor1D];
        const c = tf.expandDims(tf.mul(dy, pTarget), 1); // [N, 1]
        const spread = tf.mul(p, tf.neg(c)); // −c·P [N, V]
        const rows = tf.tensor2d(targets, [n, 1], 'int32');
        const wRows = tf.transpose(ws); // [V, d]
        const dh = tf.add(tf.matMul(spread, wRows), tf.mul(c, gatherRows(wRows, tf.reshape(rows, [n]))));
        const dw = tf.add(
          tf.matMul(tf.transpose(hs), spread),
          tf.transpose(tf.scatterND(rows, tf.mul(hs, c), [vocab, width])),
        );
        const db = tf.add(
          tf.reshape(tf.matMul(tf.ones([1, n]), spread), [vocab]),
          tf.scatterND(rows, tf.reshape(c, [n]), [vocab]),
        );
        return [dh, dw, db];
      },
    };
  }) as unknown as CustomGradFn) as unknown as (h: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D) => tf.Tensor1D;
  return op(hidden, w, b);
}

const gelu = (x: tf.Tensor): tf.Tensor => tf.mul(x, tf.sigmoid(tf.mul(x, 1.702)));

export interface LossParts {
  total: tf.Scalar;
  token: tf.Scalar;
  copyShare: tf.Scalar;
}

let instances = 0;

export class ExperienceNetwork {
  readonly variables = new Map<string, tf.Variable>();
  private readonly uid = instances++;
  /** Small weights copied to JS for decoding (decode-cache.ts; weights are frozen then). */
  private tables: Map<string, Float32Array> | null = null;

  private constructor(readonly config: NetworkConfig) {}

  /** Fresh weights from a seeded stream: N(0, 0.02), residual outputs scaled down, LayerNorm gains 1. */
  static create(config: NetworkConfig, seed: number | string): ExperienceNetwork {
    const net = new ExperienceNetwork(config);
    const rng = Rng.fromSeed(seed, 'learned-network');
    const residualStd = 0.02 / Math.sqrt(2 * (config.encoderBlocks + config.decoderLayers));
    for (const [name, shape] of net.shapes()) {
      const values = new Float32Array(shape.reduce((a, b) => a * b, 1));
      if (name.endsWith('_g')) values.fill(1);
      else if (!name.endsWith('_b')) {
        const std = /\/(out|w2|proj)_w$/.test(name) ? residualStd : 0.02;
        const stream = rng.split(name);
        for (let i = 0; i < values.length; i++) values[i] = stream.normal(0, std);
      }
      net.addVariable(name, values, shape);
    }
    return net;
  }

  /** A network with the given weights (a checkpoint); every weight must be there with its shape. */
  static fromWeights(config: NetworkConfig, weights: readonly NamedWeight[]): ExperienceNetwork {
    const net = new ExperienceNetwork(config);
    for (const { name, shape, data } of checkedWeights(config, weights)) net.addVariable(name, data, shape);
    return net;
  }

  /** A trainable variable of `data` (the variable keeps the data; its initial tensor is released). */
  private addVariable(name: string, data: Float32Array, shape: number[]): void {
    const initial = tf.tensor(data, shape);
    this.variables.set(name, tf.variable(initial, true, `learned${this.uid}/${name}`));
    initial.dispose();
  }

  /** Every weight's name and shape, in checkpoint order. */
  shapes(): [string, number[]][] {
    return weightShapes(this.config);
  }

  private v(name: string): tf.Variable {
    const variable = this.variables.get(name);
    if (!variable) throw new Error(`ExperienceNetwork: no weight '${name}'`);
    return variable;
  }

  get parameterCount(): number {
    let n = 0;
    for (const v of this.variables.values()) n += v.size;
    return n;
  }

  trainableVariables(): tf.Variable[] {
    return [...this.variables.values()];
  }

  // ---- blocks (training here; decoding with the KV cache in decode-cache.ts) ----------------------

  linear(x: tf.Tensor2D, name: string, bias = true): tf.Tensor2D {
    const y = matMulFast(x, this.v(`${name}_w`));
    return bias ? tf.add(y, this.v(`${name}_b`)) : y;
  }

  layerNorm(x: tf.Tensor2D, name: string): tf.Tensor2D {
    const mean = tf.mean(x, 1, true);
    const centred = tf.sub(x, mean);
    const variance = tf.mean(tf.square(centred), 1, true);
    return tf.add(tf.mul(tf.mul(centred, tf.rsqrt(tf.add(variance, 1e-5))), this.v(`${name}_g`)), this.v(`${name}_b`));
  }

  private embedInGraph(rows: TokenRows, positionTable: string): tf.Tensor2D {
    const lookup = (table: string, ids: Int32Array) =>
      gatherRows(this.v(table) as tf.Tensor2D, tf.tensor1d(ids, 'int32'));
    const parts = [
      lookup('tok', rows.ids),
      lookup('space', rows.spaces),
      lookup('case', rows.cases),
      lookup(positionTable, rows.positions),
    ];
    if (rows.segments) parts.push(lookup('seg', rows.segments));
    return tf.addN(parts) as tf.Tensor2D;
  }

  /** JS copies of the weights decoding reads outside tfjs (embeddings, the space and case heads, the continuation). */
  weightsInJs(): Map<string, Float32Array> {
    return (this.tables ??= this.readTables());
  }

  private readTables(): Map<string, Float32Array> {
    const names = [
      'tok',
      'space',
      'case',
      'seg',
      'enc_pos',
      'dec_pos',
      'space_w',
      'space_b',
      'space_ptr_w',
      'case_w',
      'case_b',
      'case_ptr_w',
      'ptr_cont_w',
      'ptr_cont_b',
      'gate_cont_w',
    ];
    return new Map(names.map((n) => [n, this.v(n).dataSync() as Float32Array]));
  }

  /** Forgets the JS copies of the embeddings (after training changed them). */
  weightsChanged(): void {
    this.tables = null;
  }

  /** Context [B·Lc, d] → encoded memory [B·Lc, d], padded positions zero. */
  encode(x: tf.Tensor2D, mask: tf.Tensor2D, rows: number, length: number): tf.Tensor2D {
    const { kernel, dModel: d } = this.config;
    const half = (kernel - 1) / 2;
    let e = tf.mul(x, mask) as tf.Tensor2D;
    for (let i = 0; i < this.config.encoderBlocks; i++) {
      const p = `enc${i}`;
      // conv_k as shifted copies side by side and one matmul [B·Lc, k·d] @ [k·d, d]
      const normed = tf.reshape(tf.mul(this.layerNorm(e, `${p}/ln1`), mask), [rows, length, d]);
      const padded = tf.pad(normed, [
        [0, 0],
        [half, half],
        [0, 0],
      ]);
      const shifted = Array.from({ length: kernel }, (_, s) => tf.slice(padded, [0, s, 0], [rows, length, d]));
      const windows = tf.reshape(tf.concat(shifted, 2), [rows * length, kernel * d]) as tf.Tensor2D;
      const conv = gelu(this.linear(windows, `${p}/conv`)) as tf.Tensor2D;
      e = tf.mul(tf.add(e, this.linear(conv, `${p}/proj`)), mask) as tf.Tensor2D;
      const hidden = gelu(this.linear(this.layerNorm(e, `${p}/ln2`), `${p}/w1`)) as tf.Tensor2D;
      e = tf.mul(tf.add(e, this.linear(hidden, `${p}/w2`)), mask) as tf.Tensor2D;
    }
    return tf.mul(this.layerNorm(e, 'enc_ln'), mask) as tf.Tensor2D;
  }

  mlp(x: tf.Tensor2D, layer: number): tf.Tensor2D {
    const hidden = gelu(this.linear(this.layerNorm(x, `dec${layer}/ln3`), `dec${layer}/w1`)) as tf.Tensor2D;
    return tf.add(x, this.linear(hidden, `dec${layer}/w2`));
  }

  /** [B·T, d] → q, k, v as [B·h, T, dh] with h·dh = selfDim (q pre-scaled). */
  selfHeads(x: tf.Tensor2D, layer: number, rows: number, length: number): tf.Tensor3D[] {
    const { selfDim: d, heads: h } = this.config;
    const dh = d / h;
    const qkv = this.linear(this.layerNorm(x, `dec${layer}/ln1`), `dec${layer}/qkv`);
    return [0, 1, 2].map((i) => {
      let part: tf.Tensor = tf.slice(qkv, [0, i * d], [rows * length, d]);
      if (i === 0) part = tf.mul(part, 1 / Math.sqrt(dh));
      return length === 1
        ? (tf.reshape(part, [rows * h, 1, dh]) as tf.Tensor3D)
        : (tf.reshape(tf.transpose(tf.reshape(part, [rows, length, h, dh]), [0, 2, 1, 3]), [
            rows * h,
            length,
            dh,
          ]) as tf.Tensor3D);
    });
  }

  mergeHeads(x: tf.Tensor3D, rows: number, length: number): tf.Tensor2D {
    const { selfDim: d, heads: h } = this.config;
    if (length === 1) return tf.reshape(x, [rows, d]);
    return tf.reshape(tf.transpose(tf.reshape(x, [rows, h, length, d / h]), [0, 2, 1, 3]), [rows * length, d]);
  }

  // ---- training --------------------------------------------------------------------------------

  /** Mean negative log-likelihood per answer token: the id through the pointer mixture, plus space and case. */
  /** The teacher-forced decoder: final hidden states [B·La, d] and the last layer's cross-attention per group. */
  private forwardTrain(batch: TrainBatch): {
    hidden: tf.Tensor2D;
    pointer: tf.Tensor2D[];
    groups: AttentionGroup[];
    flags: tf.Tensor2D;
  } {
    const { rows: B, contextLength: Lc, answerLength: La } = batch;
    const { attentionDim: a, selfDim, heads } = this.config;
    useInPlaceSplit();
    const ctxMask = tf.tensor2d(batch.contextMask, [B * Lc, 1]);
    const memory = this.encode(this.embedInGraph(batch.context, 'enc_pos'), ctxMask, B, Lc);
    const { groups, flags } = attentionGroups(batch);
    let x = this.embedInGraph(batch.decoder, 'dec_pos');
    for (let l = 0; l < this.config.decoderLayers; l++) {
      const qkv = this.linear(this.layerNorm(x, `dec${l}/ln1`), `dec${l}/qkv`); // [B·La, 3s]
      const part = (i: number) => tf.slice(qkv, [0, i * selfDim], [B * La, selfDim]) as tf.Tensor2D;
      const self = groupedAttention(
        tf.mul(part(0), 1 / Math.sqrt(selfDim / heads)) as tf.Tensor2D,
        part(1),
        part(2),
        groups,
        'self',
        La,
        La,
        heads,
      );
      x = tf.add(x, this.linear(self.output!, `dec${l}/out`));
      const q = tf.mul(
        this.linear(this.layerNorm(x, `dec${l}/ln2`), `dec${l}/xq`, false),
        1 / Math.sqrt(a),
      ) as tf.Tensor2D;
      const cross = groupedAttention(
        q,
        this.linear(memory, `dec${l}/xk`, false),
        this.linear(memory, `dec${l}/xv`, false),
        groups,
        'cross',
        La,
        Lc,
        1,
      );
      x = tf.add(x, this.linear(cross.output!, `dec${l}/proj`));
      x = this.mlp(x, l);
    }
    const hidden = this.layerNorm(x, 'dec_ln');
    // The pointer: its own attention from the final state to the encoded context (weights only).
    const q = tf.mul(this.linear(hidden, 'ptr_q', false), 1 / Math.sqrt(a)) as tf.Tensor2D;
    const bias = this.continuationBias(hidden, groups, La);
    const pointer = groupedAttention(
      q,
      this.linear(memory, 'ptr_k', false),
      null,
      groups,
      'cross',
      La,
      Lc,
      1,
      bias,
    ).weights;
    return { hidden, pointer, groups, flags: tf.tensor2d(flags, [B * La, 2]) };
  }

  /** Each group's pointer bias from copy continuation, s₁(h)·one + s₂(h)·two: [g·La, g·Lc]. */
  private continuationBias(
    hidden: tf.Tensor2D,
    groups: readonly AttentionGroup[],
    La: number,
  ): (group: number) => tf.Tensor2D {
    const strengths = this.linear(hidden, 'ptr_cont'); // [B·La, 2]
    return (i) => {
      const g = groups[i];
      const n = g.rows * La;
      const rows = tf.slice(strengths, [g.first * La, 0], [n, 2]);
      const [one, two] = [g.one, g.two].map((m) => tf.tensor2d(m, [n, m.length / n]));
      return tf.add(
        tf.mul(tf.slice(rows, [0, 0], [n, 1]), one),
        tf.mul(tf.slice(rows, [0, 1], [n, 1]), two),
      ) as tf.Tensor2D;
    };
  }

  /** The gate's logits, plus its weights on whether a continuation exists (`flags` [N, 2]). */
  private gateLogits(hidden: tf.Tensor2D, flags: tf.Tensor2D): tf.Tensor2D {
    return tf.add(this.linear(hidden, 'gate'), matMulFast(flags, this.v('gate_cont_w')));
  }

  /** Space and case logits from the hidden state and the form of what the pointer looks at ([N, 5]: space one-hot, case one-hot). */
  private formHeads(hidden: tf.Tensor2D, pointedForm: tf.Tensor2D): { space: tf.Tensor2D; letterCase: tf.Tensor2D } {
    const n = hidden.shape[0];
    return {
      space: tf.add(
        this.linear(hidden, 'space'),
        matMulFast(tf.slice(pointedForm, [0, 0], [n, 2]), this.v('space_ptr_w')),
      ),
      letterCase: tf.add(
        this.linear(hidden, 'case'),
        matMulFast(tf.slice(pointedForm, [0, 2], [n, 3]), this.v('case_ptr_w')),
      ),
    };
  }

  /** Each group's pointer weights times its context tokens' form → [B·La, 5]. */
  private pointedFormTrain(batch: TrainBatch, pointer: tf.Tensor2D[], groups: AttentionGroup[]): tf.Tensor2D {
    const Lc = batch.contextLength;
    return tf.concat(
      pointer.map((w, g) => {
        const group = groups[g];
        const form = new Float32Array(group.rows * Lc * 5);
        for (let r = 0; r < group.rows; r++) {
          for (let j = 0; j < Lc; j++) {
            const i = (group.first + r) * Lc + j;
            if (!batch.contextMask[i]) continue;
            form[(r * Lc + j) * 5 + batch.context.spaces[i]] = 1;
            form[(r * Lc + j) * 5 + 2 + batch.context.cases[i]] = 1;
          }
        }
        return matMulFast(w, tf.tensor2d(form, [group.rows * Lc, 5]));
      }),
      0,
    ) as tf.Tensor2D;
  }

  /**
   * The heads at every answer position of a teacher-forced batch (no cache): p_gen [B·La, V],
   * pointer [B·La, Lc], gate [B·La]. What decoding with the KV cache must reproduce.
   */
  teacherForced(batch: TrainBatch): { vocab: tf.Tensor2D; pointer: tf.Tensor2D; gate: tf.Tensor1D } {
    return tf.tidy(() => {
      const { rows: B, contextLength: Lc, answerLength: La } = batch;
      const { hidden, pointer, groups, flags } = this.forwardTrain(batch);
      const own = groups.flatMap((g, i) =>
        Array.from({ length: g.rows }, (_, r) => tf.slice(pointer[i], [r * La, r * Lc], [La, Lc])),
      );
      return {
        vocab: tf.softmax(this.linear(hidden, 'vocab')) as tf.Tensor2D,
        pointer: tf.concat(own, 0) as tf.Tensor2D,
        gate: tf.reshape(tf.sigmoid(this.gateLogits(hidden, flags)), [B * La]) as tf.Tensor1D,
      };
    });
  }

  /**
   * The weighted mean losses of a batch. `normalizer` (default: the batch's total target weight)
   * divides the weighted sums: a shard of a batch passes the whole batch's, so shards' losses add up.
   */
  loss(batch: TrainBatch, normalizer?: number): LossParts {
    const { hidden: decoded, pointer, groups, flags } = this.forwardTrain(batch);
    // Pointer mass on the target: each group's weights against its block of copy matches.
    const pCopyAll = tf.concat(
      pointer.map((w, g) => tf.sum(tf.mul(w, tf.tensor2d(groups[g].copyMatch, w.shape)), 1)),
      0,
    ); // [B·La]
    // The heads run only where a target exists (answers are padded to the longest).
    const real = realPositions(batch.targetMask);
    const realIndex = tf.tensor1d(real, 'int32');
    const hidden = gatherRows(decoded, realIndex); // [N, d]
    const targets = Int32Array.from(real, (i) => batch.targetIds[i]);
    const [vocabW, vocabB] = [this.v('vocab_w') as tf.Tensor2D, this.v('vocab_b') as tf.Tensor1D];
    const pGen = targetProbability(hidden, vocabW, vocabB, targets); // [N]
    const pCopy = gatherRows(pCopyAll, realIndex);
    const form = this.formHeads(hidden, gatherRows(this.pointedFormTrain(batch, pointer, groups), realIndex));
    const gate = tf.reshape(tf.sigmoid(this.gateLogits(hidden, gatherRows(flags, realIndex))), [real.length]);
    const pToken = tf.add(tf.mul(gate, pGen), tf.mul(tf.sub(1, gate), pCopy));
    const tokenNll = tf.neg(tf.log(tf.add(pToken, 1e-9)));
    const formNll = tf.add(
      crossEntropy(
        form.space,
        Int32Array.from(real, (i) => batch.targetSpaces[i]),
        2,
      ),
      crossEntropy(
        form.letterCase,
        Int32Array.from(real, (i) => batch.targetCases[i]),
        3,
      ),
    );
    const weights = Float32Array.from(real, (i) => batch.targetMask[i]);
    const total =
      normalizer ??
      Math.max(
        1e-9,
        weights.reduce((s, w) => s + w, 0),
      );
    const weight = tf.tensor1d(weights);
    const mean = (t: tf.Tensor) => tf.div(tf.sum(tf.mul(t, weight)), total) as tf.Scalar;
    return {
      total: mean(tf.add(tokenNll, formNll)),
      token: mean(tokenNll),
      copyShare: mean(tf.div(tf.mul(tf.sub(1, gate), pCopy), tf.add(pToken, 1e-9))),
    };
  }

  // ---- weights ---------------------------------------------------------------------------------

  async getWeights(): Promise<NamedWeight[]> {
    const out: NamedWeight[] = [];
    for (const [name, shape] of this.shapes())
      out.push({ name, shape, data: Float32Array.from(await this.v(name).data()) });
    return out;
  }

  setWeights(weights: readonly NamedWeight[]): void {
    for (const { name, shape, data } of checkedWeights(this.config, weights))
      tf.tidy(() => this.v(name).assign(tf.tensor(data, shape)));
    this.weightsChanged();
  }

  dispose(): void {
    for (const v of this.variables.values()) v.dispose();
    this.variables.clear();
    this.tables = null;
  }
}
/** Indices where the mask is set. */
function realPositions(mask: Float32Array): Int32Array {
  const out: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) out.push(i);
  return Int32Array.from(out);
}

function crossEntropy(logits: tf.Tensor2D, labels: Int32Array, classes: number): tf.Tensor1D {
  return tf.neg(
    tf.sum(tf.mul(tf.logSoftmax(logits), tf.oneHot(tf.tensor1d(labels, 'int32'), classes)), 1),
  ) as tf.Tensor1D;
}

// ---- attention of groups of rows, and copy continuation ------------------------------------------
// Attention for groups of rows as plain 2-D matmuls, the network's fast path on tfjs-wasm (a batched
// matmul runs a naive kernel there), and copy continuation's index of where a copy goes on. Training's
// grouping is here; decoding's (DecodeGroup) is in decode-cache.ts.

/** A masked-out attention logit. */
export const NEG = -1e9;

/** Only text tokens continue a copy (the format's structure tokens and padding do not). */
const isTextToken = (id: number) => id >= SPECIAL_TOKENS.length;

/**
 * Where a copy would go on in one context (copy continuation): after a fed token w, every
 * position j whose predecessor ctx[j − 1] is w (`one`), and of those the ones whose ctx[j − 2]
 * is the token fed before w as well (`two`).
 */
export class Successors {
  private readonly after = new Map<number, number[]>();

  constructor(
    private readonly ids: ArrayLike<number>,
    private readonly length: number,
  ) {
    for (let j = 1; j < length; j++) {
      const w = ids[j - 1];
      if (!isTextToken(w)) continue;
      const list = this.after.get(w);
      if (list) list.push(j);
      else this.after.set(w, [j]);
    }
  }

  of(prev: number, last: number): { one: readonly number[]; two: number[] } {
    const one = isTextToken(last) ? (this.after.get(last) ?? []) : [];
    const two = isTextToken(prev) ? one.filter((j) => j >= 2 && this.ids[j - 2] === prev) : [];
    return { one, two };
  }
}

/**
 * Training-time attention for groups of rows as plain 2-D matmuls (wasm's fast path): a group's
 * queries [g·T, ·] meet all its keys [g·S, ·], and a block-diagonal mask keeps each row to its
 * own keys (and, for self-attention, to earlier positions). g times the multiply-adds of a
 * batched matmul, at about fifteen times the speed.
 */
export interface AttentionGroup {
  first: number;
  rows: number;
  selfMask: Float32Array;
  crossMask: Float32Array;
  /** Row r, answer position t, context position j at [(r·La + t)·(g·Lc) + r·Lc + j]. */
  copyMatch: Float32Array;
  /** Copy continuation: where a copy goes on after the last fed token (one) and the last two (two), laid out as copyMatch. */
  one: Float32Array;
  two: Float32Array;
}

/**
 * Rows per group. One: a group of g rows multiplies g² blocks of which g are wanted, and a 2-D
 * matmul of one row's size still runs at full speed. The rows are split apart in one op (its
 * gradient is one concat; a slice's pads to the whole tensor), so the extra ops cost less than
 * the blocks they save (~0.35 s of a 1.5 s training batch of the shipped shop data).
 */
const GROUP_ROWS = 1;

/**
 * The batch's attention groups, with each group's copy-continuation positions and, per decoder
 * position, whether any exists ([B·La, 2] flags).
 */
export function attentionGroups(batch: TrainBatch): { groups: AttentionGroup[]; flags: Float32Array } {
  const { rows: B, contextLength: Lc, answerLength: La } = batch;
  const groups: AttentionGroup[] = [];
  const flags = new Float32Array(B * La * 2);
  for (let first = 0; first < B; first += GROUP_ROWS) {
    const g = Math.min(GROUP_ROWS, B - first);
    const selfMask = new Float32Array(g * La * g * La).fill(NEG);
    const crossMask = new Float32Array(g * La * g * Lc).fill(NEG);
    const copyMatch = new Float32Array(g * La * g * Lc);
    const [one, two] = [new Float32Array(g * La * g * Lc), new Float32Array(g * La * g * Lc)];
    for (let r = 0; r < g; r++) {
      const row = first + r;
      let contextLength = 0;
      while (contextLength < Lc && batch.contextMask[row * Lc + contextLength]) contextLength++;
      const successors = new Successors(batch.context.ids.subarray(row * Lc, row * Lc + contextLength), contextLength);
      for (let t = 0; t < La; t++) {
        const q = r * La + t;
        for (let s = 0; s <= t; s++) selfMask[q * g * La + r * La + s] = 0;
        crossMask.fill(0, q * g * Lc + r * Lc, q * g * Lc + r * Lc + contextLength);
        copyMatch.set(batch.copyMatch.subarray((row * La + t) * Lc, (row * La + t + 1) * Lc), q * g * Lc + r * Lc);
        if (!batch.targetMask[row * La + t]) continue;
        // The tokens fed at t and before: what the decoder has just written.
        const next = successors.of(t > 0 ? batch.decoder.ids[row * La + t - 1] : 0, batch.decoder.ids[row * La + t]);
        for (const j of next.one) one[q * g * Lc + r * Lc + j] = 1;
        for (const j of next.two) two[q * g * Lc + r * Lc + j] = 1;
        flags[(row * La + t) * 2] = next.one.length ? 1 : 0;
        flags[(row * La + t) * 2 + 1] = next.two.length ? 1 : 0;
      }
    }
    groups.push({ first, rows: g, selfMask, crossMask, copyMatch, one, two });
  }
  return { groups, flags };
}

/** Attention of q [B·T, h·dh] on k, v [B·S, h·dh] group by group → output [B·T, h·dh] (none without v) and each group's weights (head 0). */
export function groupedAttention(
  q: tf.Tensor2D,
  k: tf.Tensor2D,
  v: tf.Tensor2D | null,
  groups: readonly AttentionGroup[],
  kind: 'self' | 'cross',
  T: number,
  S: number,
  heads: number,
  bias?: (group: number) => tf.Tensor2D,
): { output: tf.Tensor2D | null; weights: tf.Tensor2D[] } {
  const width = q.shape[1];
  const dh = width / heads;
  // Each group's rows in one op: its gradient is one concat (a slice's pads to the whole tensor). One
  // group is the whole tensor: a one-part split's gradient reaches tfjs's concat with no tensor (a
  // batch of one pair failed with "Pass at least one tensor to concat").
  const split = (x: tf.Tensor2D, n: number) =>
    groups.length === 1
      ? [x]
      : (tf.split(
          x,
          groups.map((g) => g.rows * n),
          0,
        ) as tf.Tensor2D[]);
  const [qs, ks, vs] = [split(q, T), split(k, S), v ? split(v, S) : null];
  const outputs: tf.Tensor2D[] = [],
    weights: tf.Tensor2D[] = [];
  groups.forEach((group, index) => {
    const [qg, kg, vg] = [qs[index], ks[index], vs?.[index]];
    const maskValues = tf.tensor2d(kind === 'self' ? group.selfMask : group.crossMask, [
      group.rows * T,
      group.rows * S,
    ]);
    const mask = bias ? tf.add(maskValues, bias(index)) : maskValues;
    const perHead: tf.Tensor2D[] = [];
    for (let h = 0; h < heads; h++) {
      const cols = (x: tf.Tensor2D) => (heads === 1 ? x : (tf.slice(x, [0, h * dh], [-1, dh]) as tf.Tensor2D));
      const w = tf.softmax(tf.add(matMulFast(cols(qg), tf.transpose(cols(kg))), mask)) as tf.Tensor2D; // [g·T, g·S]
      if (h === 0) weights.push(w);
      if (vg) perHead.push(matMulFast(w, cols(vg)));
    }
    if (vg) outputs.push(heads === 1 ? perHead[0] : (tf.concat(perHead, 1) as tf.Tensor2D));
  });
  return { output: v ? (tf.concat(outputs, 0) as tf.Tensor2D) : null, weights };
}
