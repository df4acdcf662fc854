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
 *   copy continuation (NetworkConfig.continuation): the pointer's logits gain s₁(h)·[ctx_{j−1} = y_{t−1}]
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
 * cross-attention runs per group of rows (DecodeGroup) where other rows' weights are exactly 0.
 * So batched decoding gives exactly the unbatched result. wasm: matmul gradients use explicit transposes,
 * embeddings go through `gatherRows` (toolchain.md §2).
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../../rng';
import { gatherRows, matMulFast } from '../../policy/backend';
import { SPECIAL_TOKENS } from './tokenizer';

export interface NetworkConfig {
  vocabSize: number;
  dModel: number;
  /** Encoder conv blocks and their kernel width (odd). */
  encoderBlocks: number;
  kernel: number;
  decoderLayers: number;
  /** Self-attention heads of the decoder, and their total width (q, k and v each). */
  heads: number;
  selfDim: number;
  /** Width of the cross-attention (and the pointer) query, key and value. */
  attentionDim: number;
  /** MLP width as a multiple of dModel. */
  ffMult: number;
  maxContext: number;
  maxAnswer: number;
  segments: number;
  /** Copy continuation (see the file comment); absent in models trained before it. */
  continuation?: boolean;
}

const NEG = -1e9;
type CustomGradFn = Parameters<typeof tf.customGrad>[0];

/** a [n, m, k] @ b [n, k, p] → [n, m, p]; explicit transposes in the gradient. */
const bmm = tf.customGrad(((a: tf.Tensor3D, b: tf.Tensor3D, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor3D, saved: tf.Tensor[]) => {
      const [as, bs] = saved as [tf.Tensor3D, tf.Tensor3D];
      return [tf.matMul(dy, tf.transpose(bs, [0, 2, 1])), tf.matMul(tf.transpose(as, [0, 2, 1]), dy)];
    },
  };
}) as unknown as CustomGradFn) as unknown as (a: tf.Tensor, b: tf.Tensor) => tf.Tensor3D;

/** log Σ exp over each row, [N, V] → [N]; its gradient is the softmax (tf's own goes through a slow Equal on wasm). */
const logSumExpRows = tf.customGrad(((x: tf.Tensor2D, save: tf.GradSaveFunc) => {
  const value = tf.logSumExp(x, 1);
  save([x]);
  return { value, gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.mul(tf.expandDims(dy, 1), tf.softmax(saved[0])) };
}) as unknown as CustomGradFn) as unknown as (x: tf.Tensor2D) => tf.Tensor1D;

const transposeLast = (x: tf.Tensor): tf.Tensor3D => tf.transpose(x, [0, 2, 1]) as tf.Tensor3D;
const gelu = (x: tf.Tensor): tf.Tensor => tf.mul(x, tf.sigmoid(tf.mul(x, 1.702)));

/** Tokens of B rows, flattened row-major; positions are each token's index in its part. */
export interface TokenRows {
  ids: Int32Array;
  spaces: Int32Array;
  cases: Int32Array;
  positions: Int32Array;
  /** Encoder only. */
  segments?: Int32Array;
}

/** A training batch (batch.ts): contexts [B, Lc] and decoder inputs/targets [B, La], right-padded. */
export interface TrainBatch {
  rows: number;
  contextLength: number;
  answerLength: number;
  context: TokenRows & { segments: Int32Array };
  /** 1 for real context tokens, [B·Lc]. */
  contextMask: Float32Array;
  decoder: TokenRows;
  /** Loss weight where a target exists (0: none), [B·La]. */
  targetMask: Float32Array;
  targetIds: Int32Array;
  targetSpaces: Int32Array;
  targetCases: Int32Array;
  /** 1 where context token j equals the target of answer position t, [B, La, Lc]. */
  copyMatch: Float32Array;
}

export interface LossParts { total: tf.Scalar; token: tf.Scalar; copyShare: tf.Scalar }

/** What decoding keeps per layer, and for the pointer. */
export interface DecodeCache {
  rows: number;
  contextLength: number;
  /** Each row's real context tokens. */
  contextLengths: Int32Array;
  /** Per layer: cross keys and values of every row [B·Lc, a]; self keys/values [B·h, t, dh]. */
  crossKeys: tf.Tensor2D[];
  crossValues: tf.Tensor2D[];
  selfKeys: (tf.Tensor3D | null)[];
  selfValues: (tf.Tensor3D | null)[];
  /** Pointer keys [B·Lc, a], and each context token's form in JS [B·Lc·5] (space one-hot, case one-hot). */
  pointerKeys: tf.Tensor2D;
  contextForm: Float32Array;
  /** The keys and values again, laid out per group of rows for 2-D matmuls (see DecodeGroup), and each row's one-hot in its group [B, DECODE_GROUP]. */
  groups: DecodeGroup[];
  selector: tf.Tensor2D | null;
  /** Answer tokens fed so far. */
  fed: number;
  /** Copy continuation: each row's successor index, and the last two tokens it was fed. */
  successors?: Successors[];
  lastFed?: Int32Array;
  prevFed?: Int32Array;
}

/**
 * DECODE_GROUP rows whose attention runs as 2-D matmuls, as in training: the group's queries meet
 * all its rows' keys [a, g·width], g times the multiply-adds of a batched matmul, which wasm runs
 * with a naive kernel (≈ 1.6× faster at g = 4, measured). Each row must see only its own real
 * context: the keys carry DECODE_GROUP extra rows holding each row's mask (0 on its own real
 * positions, −1e9 elsewhere), and every query carries a one-hot of its row in the group, so the
 * matmul adds the mask itself (one op fewer per group than adding it after). Other rows' weights
 * are exactly 0, so a row's sums are the same whatever shares its group (or how wide the group is),
 * and batched decoding still equals unbatched.
 */
interface DecodeGroup {
  first: number;
  rows: number;
  /** The group's longest context: keys and values are this wide per row. */
  width: number;
  /** Per layer: cross keys transposed with the mask rows [a + DECODE_GROUP, g·width] and values [g·width, a]; the pointer's keys the same way. */
  keysT: tf.Tensor2D[];
  values: tf.Tensor2D[];
  pointerKeysT: tf.Tensor2D;
}

const DECODE_GROUP = 4;
/** Contexts the encoder takes at once when decoding starts. */
const PREFILL_ROWS = 16;

/** Only text tokens continue a copy (the format's structure tokens and padding do not). */
const isTextToken = (id: number) => id >= SPECIAL_TOKENS.length;

/**
 * Where a copy would go on in one context (copy continuation): after a fed token w, every
 * position j whose predecessor ctx[j − 1] is w (`one`), and of those the ones whose ctx[j − 2]
 * is the token fed before w as well (`two`).
 */
export class Successors {
  private readonly after = new Map<number, number[]>();

  constructor(private readonly ids: ArrayLike<number>, private readonly length: number) {
    for (let j = 1; j < length; j++) {
      const w = ids[j - 1];
      if (!isTextToken(w)) continue;
      const list = this.after.get(w);
      if (list) list.push(j); else this.after.set(w, [j]);
    }
  }

  of(prev: number, last: number): { one: readonly number[]; two: number[] } {
    const one = isTextToken(last) ? this.after.get(last) ?? [] : [];
    const two = isTextToken(prev) ? one.filter((j) => j >= 2 && this.ids[j - 2] === prev) : [];
    return { one, two };
  }
}

/** The heads' output for the next token of every row, read back. */
export interface StepOutput {
  /** p_gen after the row's allowed-set mask, [B, V], and each row's most likely word (the first of ties). */
  vocab: Float32Array;
  bestWord: Int32Array;
  /** Pointer weights over the context, [B, Lc]. */
  pointer: Float32Array;
  gate: Float32Array;
  space: Int32Array;
  letterCase: Int32Array;
}

export interface NamedWeight { name: string; shape: number[]; data: Float32Array }

let instances = 0;

export class ExperienceNetwork {
  readonly variables = new Map<string, tf.Variable>();
  private readonly uid = instances++;
  /** Embedding tables copied to JS for decoding (weights are frozen then). */
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
      net.variables.set(name, tf.variable(tf.tensor(values, shape), true, `learned${net.uid}/${name}`));
    }
    return net;
  }

  /** A network with the given weights (a checkpoint); every weight must be there with its shape. */
  static fromWeights(config: NetworkConfig, weights: readonly NamedWeight[]): ExperienceNetwork {
    const net = new ExperienceNetwork(config);
    const byName = new Map(weights.map((w) => [w.name, w]));
    const known = new Set(net.shapes().map(([name]) => name));
    const extra = weights.find((w) => !known.has(w.name));
    if (extra) throw new Error(`The model file has a weight '${extra.name}' this network does not have: it was made for another network.`);
    for (const [name, shape] of net.shapes()) {
      const w = byName.get(name);
      if (!w) throw new Error(`The model file has no weight '${name}': it was made for another network.`);
      const size = shape.reduce((a, b) => a * b, 1);
      if (w.data.length !== size) throw new Error(`Weight '${name}' has ${w.data.length} values in the model file; this network needs [${shape}] (${size}).`);
      net.variables.set(name, tf.variable(tf.tensor(w.data, shape), true, `learned${net.uid}/${name}`));
    }
    return net;
  }

  /** Every weight's name and shape, in checkpoint order. */
  shapes(): [string, number[]][] {
    const { vocabSize: V, dModel: d, encoderBlocks, kernel, decoderLayers, ffMult, maxContext, maxAnswer, segments, attentionDim: a, selfDim: s } = this.config;
    const f = d * ffMult;
    const out: [string, number[]][] = [['tok', [V, d]], ['space', [2, d]], ['case', [3, d]], ['seg', [segments, d]], ['enc_pos', [maxContext, d]], ['dec_pos', [maxAnswer, d]]];
    for (let i = 0; i < encoderBlocks; i++) {
      const p = `enc${i}`;
      out.push([`${p}/ln1_g`, [d]], [`${p}/ln1_b`, [d]], [`${p}/conv_w`, [kernel * d, d]], [`${p}/conv_b`, [d]], [`${p}/proj_w`, [d, d]], [`${p}/proj_b`, [d]],
        [`${p}/ln2_g`, [d]], [`${p}/ln2_b`, [d]], [`${p}/w1_w`, [d, f]], [`${p}/w1_b`, [f]], [`${p}/w2_w`, [f, d]], [`${p}/w2_b`, [d]]);
    }
    out.push(['enc_ln_g', [d]], ['enc_ln_b', [d]]);
    for (let l = 0; l < decoderLayers; l++) {
      const p = `dec${l}`;
      out.push([`${p}/ln1_g`, [d]], [`${p}/ln1_b`, [d]], [`${p}/qkv_w`, [d, 3 * s]], [`${p}/qkv_b`, [3 * s]], [`${p}/out_w`, [s, d]], [`${p}/out_b`, [d]],
        [`${p}/ln2_g`, [d]], [`${p}/ln2_b`, [d]], [`${p}/xq_w`, [d, a]], [`${p}/xk_w`, [d, a]], [`${p}/xv_w`, [d, a]], [`${p}/proj_w`, [a, d]], [`${p}/proj_b`, [d]],
        [`${p}/ln3_g`, [d]], [`${p}/ln3_b`, [d]], [`${p}/w1_w`, [d, f]], [`${p}/w1_b`, [f]], [`${p}/w2_w`, [f, d]], [`${p}/w2_b`, [d]]);
    }
    out.push(['dec_ln_g', [d]], ['dec_ln_b', [d]], ['vocab_w', [d, V]], ['vocab_b', [V]], ['space_w', [d, 2]], ['space_b', [2]],
      ['case_w', [d, 3]], ['case_b', [3]], ['gate_w', [d, 1]], ['gate_b', [1]], ['ptr_q_w', [d, a]], ['ptr_k_w', [d, a]], ['space_ptr_w', [2, 2]], ['case_ptr_w', [3, 3]]);
    if (this.config.continuation) out.push(['ptr_cont_w', [d, 2]], ['ptr_cont_b', [2]], ['gate_cont_w', [2, 1]]);
    return out;
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

  trainableVariables(): tf.Variable[] { return [...this.variables.values()]; }

  // ---- blocks ----------------------------------------------------------------------------------

  private linear(x: tf.Tensor2D, name: string, bias = true): tf.Tensor2D {
    const y = matMulFast(x, this.v(`${name}_w`));
    return bias ? tf.add(y, this.v(`${name}_b`)) : y;
  }

  private layerNorm(x: tf.Tensor2D, name: string): tf.Tensor2D {
    const mean = tf.mean(x, 1, true);
    const centred = tf.sub(x, mean);
    const variance = tf.mean(tf.square(centred), 1, true);
    return tf.add(tf.mul(tf.mul(centred, tf.rsqrt(tf.add(variance, 1e-5))), this.v(`${name}_g`)), this.v(`${name}_b`));
  }

  private embedInGraph(rows: TokenRows, positionTable: string): tf.Tensor2D {
    const lookup = (table: string, ids: Int32Array) => gatherRows(this.v(table) as tf.Tensor2D, tf.tensor1d(ids, 'int32'));
    const parts = [lookup('tok', rows.ids), lookup('space', rows.spaces), lookup('case', rows.cases), lookup(positionTable, rows.positions)];
    if (rows.segments) parts.push(lookup('seg', rows.segments));
    return tf.addN(parts) as tf.Tensor2D;
  }

  /** The same sum computed in JS from copies of the tables (decoding: fewer ops, same values up to float order). */
  private embedInJs(rows: TokenRows, positionTable: string): tf.Tensor2D {
    const d = this.config.dModel;
    const tables = this.tables ??= this.readTables();
    const n = rows.ids.length;
    const out = new Float32Array(n * d);
    const sources: [Float32Array, Int32Array][] = [[tables.get('tok')!, rows.ids], [tables.get('space')!, rows.spaces],
      [tables.get('case')!, rows.cases], [tables.get(positionTable)!, rows.positions]];
    if (rows.segments) sources.push([tables.get('seg')!, rows.segments]);
    for (let i = 0; i < n; i++) {
      const o = i * d;
      for (const [table, ids] of sources) {
        const t = ids[i] * d;
        for (let k = 0; k < d; k++) out[o + k] += table[t + k];
      }
    }
    return tf.tensor2d(out, [n, d]);
  }

  /** JS copies of the weights decoding reads outside tfjs (embeddings, the space and case heads). */
  private readTables(): Map<string, Float32Array> {
    const names = ['tok', 'space', 'case', 'seg', 'enc_pos', 'dec_pos', 'space_w', 'space_b', 'space_ptr_w', 'case_w', 'case_b', 'case_ptr_w',
      ...(this.config.continuation ? ['ptr_cont_w', 'ptr_cont_b', 'gate_cont_w'] : [])];
    return new Map(names.map((n) => [n, this.v(n).dataSync() as Float32Array]));
  }

  /** Forgets the JS copies of the embeddings (after training changed them). */
  weightsChanged(): void { this.tables = null; }

  /** Context [B·Lc, d] → encoded memory [B·Lc, d], padded positions zero. */
  private encode(x: tf.Tensor2D, mask: tf.Tensor2D, rows: number, length: number): tf.Tensor2D {
    const { kernel, dModel: d } = this.config;
    const half = (kernel - 1) / 2;
    let e = tf.mul(x, mask) as tf.Tensor2D;
    for (let i = 0; i < this.config.encoderBlocks; i++) {
      const p = `enc${i}`;
      // conv_k as shifted copies side by side and one matmul [B·Lc, k·d] @ [k·d, d]
      const normed = tf.reshape(tf.mul(this.layerNorm(e, `${p}/ln1`), mask), [rows, length, d]);
      const padded = tf.pad(normed, [[0, 0], [half, half], [0, 0]]);
      const shifted = Array.from({ length: kernel }, (_, s) => tf.slice(padded, [0, s, 0], [rows, length, d]));
      const windows = tf.reshape(tf.concat(shifted, 2), [rows * length, kernel * d]) as tf.Tensor2D;
      const conv = gelu(this.linear(windows, `${p}/conv`)) as tf.Tensor2D;
      e = tf.mul(tf.add(e, this.linear(conv, `${p}/proj`)), mask) as tf.Tensor2D;
      const hidden = gelu(this.linear(this.layerNorm(e, `${p}/ln2`), `${p}/w1`)) as tf.Tensor2D;
      e = tf.mul(tf.add(e, this.linear(hidden, `${p}/w2`)), mask) as tf.Tensor2D;
    }
    return tf.mul(this.layerNorm(e, 'enc_ln'), mask) as tf.Tensor2D;
  }

  private mlp(x: tf.Tensor2D, layer: number): tf.Tensor2D {
    const hidden = gelu(this.linear(this.layerNorm(x, `dec${layer}/ln3`), `dec${layer}/w1`)) as tf.Tensor2D;
    return tf.add(x, this.linear(hidden, `dec${layer}/w2`));
  }

  /** [B·T, d] → q, k, v as [B·h, T, dh] with h·dh = selfDim (q pre-scaled). */
  private selfHeads(x: tf.Tensor2D, layer: number, rows: number, length: number): tf.Tensor3D[] {
    const { selfDim: d, heads: h } = this.config;
    const dh = d / h;
    const qkv = this.linear(this.layerNorm(x, `dec${layer}/ln1`), `dec${layer}/qkv`);
    return [0, 1, 2].map((i) => {
      let part: tf.Tensor = tf.slice(qkv, [0, i * d], [rows * length, d]);
      if (i === 0) part = tf.mul(part, 1 / Math.sqrt(dh));
      return length === 1 ? tf.reshape(part, [rows * h, 1, dh]) as tf.Tensor3D
        : tf.reshape(tf.transpose(tf.reshape(part, [rows, length, h, dh]), [0, 2, 1, 3]), [rows * h, length, dh]) as tf.Tensor3D;
    });
  }

  private mergeHeads(x: tf.Tensor3D, rows: number, length: number): tf.Tensor2D {
    const { selfDim: d, heads: h } = this.config;
    if (length === 1) return tf.reshape(x, [rows, d]);
    return tf.reshape(tf.transpose(tf.reshape(x, [rows, h, length, d / h]), [0, 2, 1, 3]), [rows * length, d]);
  }

  // ---- training --------------------------------------------------------------------------------

  /** Mean negative log-likelihood per answer token: the id through the pointer mixture, plus space and case. */
  /** The teacher-forced decoder: final hidden states [B·La, d] and the last layer's cross-attention per group. */
  private forwardTrain(batch: TrainBatch): { hidden: tf.Tensor2D; pointer: tf.Tensor2D[]; groups: AttentionGroup[]; flags: tf.Tensor2D | null } {
    const { rows: B, contextLength: Lc, answerLength: La } = batch;
    const { attentionDim: a, selfDim, heads } = this.config;
    const ctxMask = tf.tensor2d(batch.contextMask, [B * Lc, 1]);
    const memory = this.encode(this.embedInGraph(batch.context, 'enc_pos'), ctxMask, B, Lc);
    const { groups, flags } = attentionGroups(batch, this.config.continuation === true);
    let x = this.embedInGraph(batch.decoder, 'dec_pos');
    for (let l = 0; l < this.config.decoderLayers; l++) {
      const qkv = this.linear(this.layerNorm(x, `dec${l}/ln1`), `dec${l}/qkv`);                // [B·La, 3s]
      const part = (i: number) => tf.slice(qkv, [0, i * selfDim], [B * La, selfDim]) as tf.Tensor2D;
      const self = groupedAttention(tf.mul(part(0), 1 / Math.sqrt(selfDim / heads)) as tf.Tensor2D, part(1), part(2), groups, 'self', La, La, heads);
      x = tf.add(x, this.linear(self.output!, `dec${l}/out`));
      const q = tf.mul(this.linear(this.layerNorm(x, `dec${l}/ln2`), `dec${l}/xq`, false), 1 / Math.sqrt(a)) as tf.Tensor2D;
      const cross = groupedAttention(q, this.linear(memory, `dec${l}/xk`, false), this.linear(memory, `dec${l}/xv`, false), groups, 'cross', La, Lc, 1);
      x = tf.add(x, this.linear(cross.output!, `dec${l}/proj`));
      x = this.mlp(x, l);
    }
    const hidden = this.layerNorm(x, 'dec_ln');
    // The pointer: its own attention from the final state to the encoded context (weights only).
    const q = tf.mul(this.linear(hidden, 'ptr_q', false), 1 / Math.sqrt(a)) as tf.Tensor2D;
    const bias = flags ? this.continuationBias(hidden, groups, La) : undefined;
    const pointer = groupedAttention(q, this.linear(memory, 'ptr_k', false), null, groups, 'cross', La, Lc, 1, bias).weights;
    return { hidden, pointer, groups, flags: flags ? tf.tensor2d(flags, [B * La, 2]) : null };
  }

  /** Each group's pointer bias from copy continuation, s₁(h)·one + s₂(h)·two: [g·La, g·Lc]. */
  private continuationBias(hidden: tf.Tensor2D, groups: readonly AttentionGroup[], La: number): (group: number) => tf.Tensor2D {
    const strengths = this.linear(hidden, 'ptr_cont');                                         // [B·La, 2]
    return (i) => {
      const g = groups[i];
      const n = g.rows * La;
      const rows = tf.slice(strengths, [g.first * La, 0], [n, 2]);
      const [one, two] = [g.one!, g.two!].map((m) => tf.tensor2d(m, [n, m.length / n]));
      return tf.add(tf.mul(tf.slice(rows, [0, 0], [n, 1]), one), tf.mul(tf.slice(rows, [0, 1], [n, 1]), two)) as tf.Tensor2D;
    };
  }

  /** The gate's logits; with copy continuation, plus its weights on whether a continuation exists (`flags` [N, 2]). */
  private gateLogits(hidden: tf.Tensor2D, flags: tf.Tensor2D | null): tf.Tensor2D {
    const logits = this.linear(hidden, 'gate');
    return flags ? tf.add(logits, matMulFast(flags, this.v('gate_cont_w'))) : logits;
  }

  /** Space and case logits from the hidden state and the form of what the pointer looks at ([N, 5]: space one-hot, case one-hot). */
  private formHeads(hidden: tf.Tensor2D, pointedForm: tf.Tensor2D): { space: tf.Tensor2D; letterCase: tf.Tensor2D } {
    const n = hidden.shape[0];
    return {
      space: tf.add(this.linear(hidden, 'space'), matMulFast(tf.slice(pointedForm, [0, 0], [n, 2]), this.v('space_ptr_w'))),
      letterCase: tf.add(this.linear(hidden, 'case'), matMulFast(tf.slice(pointedForm, [0, 2], [n, 3]), this.v('case_ptr_w'))),
    };
  }

  /** Each group's pointer weights times its context tokens' form → [B·La, 5]. */
  private pointedFormTrain(batch: TrainBatch, pointer: tf.Tensor2D[], groups: AttentionGroup[]): tf.Tensor2D {
    const Lc = batch.contextLength;
    return tf.concat(pointer.map((w, g) => {
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
    }), 0) as tf.Tensor2D;
  }

  /**
   * The heads at every answer position of a teacher-forced batch (no cache): p_gen [B·La, V],
   * pointer [B·La, Lc], gate [B·La]. What decoding with the KV cache must reproduce.
   */
  teacherForced(batch: TrainBatch): { vocab: tf.Tensor2D; pointer: tf.Tensor2D; gate: tf.Tensor1D } {
    return tf.tidy(() => {
      const { rows: B, contextLength: Lc, answerLength: La } = batch;
      const { hidden, pointer, groups, flags } = this.forwardTrain(batch);
      const own = groups.flatMap((g, i) => Array.from({ length: g.rows }, (_, r) => tf.slice(pointer[i], [r * La, r * Lc], [La, Lc])));
      return {
        vocab: tf.softmax(this.linear(hidden, 'vocab')) as tf.Tensor2D,
        pointer: tf.concat(own, 0) as tf.Tensor2D,
        gate: tf.reshape(tf.sigmoid(this.gateLogits(hidden, flags)), [B * La]) as tf.Tensor1D,
      };
    });
  }

  loss(batch: TrainBatch): LossParts {
    const { hidden: decoded, pointer, groups, flags } = this.forwardTrain(batch);
    // Pointer mass on the target: each group's weights against its block of copy matches.
    const pCopyAll = tf.concat(pointer.map((w, g) => tf.sum(tf.mul(w, tf.tensor2d(groups[g].copyMatch, w.shape)), 1)), 0); // [B·La]
    // The heads run only where a target exists (answers are padded to the longest).
    const real = realPositions(batch.targetMask);
    const realIndex = tf.tensor1d(real, 'int32');
    const hidden = gatherRows(decoded, realIndex);                                                // [N, d]
    const targets = Int32Array.from(real, (i) => batch.targetIds[i]);
    const logits = this.linear(hidden, 'vocab');                                                 // [N, V]
    const targetLogit = tf.add(tf.sum(tf.mul(hidden, gatherRows(this.vocabColumns(), tf.tensor1d(targets, 'int32'))), 1),
      gatherRows(this.v('vocab_b'), tf.tensor1d(targets, 'int32')));
    const pGen = tf.exp(tf.sub(targetLogit, logSumExpRows(logits)));
    const pCopy = gatherRows(pCopyAll, realIndex);
    const form = this.formHeads(hidden, gatherRows(this.pointedFormTrain(batch, pointer, groups), realIndex));
    const gate = tf.reshape(tf.sigmoid(this.gateLogits(hidden, flags ? gatherRows(flags, realIndex) : null)), [real.length]);
    const pToken = tf.add(tf.mul(gate, pGen), tf.mul(tf.sub(1, gate), pCopy));
    const tokenNll = tf.neg(tf.log(tf.add(pToken, 1e-9)));
    const formNll = tf.add(
      crossEntropy(form.space, Int32Array.from(real, (i) => batch.targetSpaces[i]), 2),
      crossEntropy(form.letterCase, Int32Array.from(real, (i) => batch.targetCases[i]), 3));
    const weights = Float32Array.from(real, (i) => batch.targetMask[i]);
    const total = Math.max(1e-9, weights.reduce((s, w) => s + w, 0));
    const weight = tf.tensor1d(weights);
    const mean = (t: tf.Tensor) => tf.div(tf.sum(tf.mul(t, weight)), total) as tf.Scalar;
    return {
      total: mean(tf.add(tokenNll, formNll)), token: mean(tokenNll),
      copyShare: mean(tf.div(tf.mul(tf.sub(1, gate), pCopy), tf.add(pToken, 1e-9))),
    };
  }

  /** The output layer's columns as rows [V, d] (for the target logits; transposed explicitly for wasm). */
  private vocabColumns(): tf.Tensor2D {
    return tf.transpose(this.v('vocab_w')) as tf.Tensor2D;
  }

  // ---- decoding --------------------------------------------------------------------------------

  /**
   * Encodes B right-padded contexts and keeps each layer's cross keys and values. The encoder runs
   * PREFILL_ROWS rows at a time, each chunk padded only to its own longest context (rows sorted by
   * length waste little); a row's encoding never depends on its padding, so the result is the same.
   */
  prefill(context: TokenRows & { segments: Int32Array }, rows: number, length: number, contextLengths: Int32Array): DecodeCache {
    const a = this.config.attentionDim;
    const chunks: tf.Tensor2D[][] = [];
    for (let first = 0; first < rows; first += PREFILL_ROWS) {
      const n = Math.min(PREFILL_ROWS, rows - first);
      const width = Math.max(1, ...contextLengths.subarray(first, first + n));
      chunks.push(tf.tidy(() => {
        const part = chunkRows(context, first, n, length, width);
        const maskValues = new Float32Array(n * width);
        for (let r = 0; r < n; r++) maskValues.fill(1, r * width, r * width + contextLengths[first + r]);
        const memory = this.encode(this.embedInJs(part, 'enc_pos'), tf.tensor2d(maskValues, [n * width, 1]), n, width);
        // Back to the batch's width: padded positions hold zeros, as a full-width encoding gives them.
        const widen = (t: tf.Tensor2D) => tf.reshape(tf.pad(tf.reshape(t, [n, width, a]), [[0, 0], [0, length - width], [0, 0]]), [n * length, a]) as tf.Tensor2D;
        const out: tf.Tensor2D[] = [];
        for (let l = 0; l < this.config.decoderLayers; l++) out.push(widen(this.linear(memory, `dec${l}/xk`, false)), widen(this.linear(memory, `dec${l}/xv`, false)));
        out.push(widen(this.linear(memory, 'ptr_k', false)));
        return out;
      }));
    }
    const joined = chunks[0].map((_, i) => (chunks.length === 1 ? chunks[0][i] : tf.concat(chunks.map((c) => c[i]), 0) as tf.Tensor2D));
    if (chunks.length > 1) tf.dispose(chunks.flat());
    const crossKeys = joined.filter((_, i) => i < joined.length - 1 && i % 2 === 0);
    const crossValues = joined.filter((_, i) => i < joined.length - 1 && i % 2 === 1);
    const pointerKeys = joined[joined.length - 1];
    const form = new Float32Array(rows * length * 5);
    contextLengths.forEach((n, b) => {
      for (let j = 0; j < n; j++) {
        const i = b * length + j;
        form[i * 5 + context.spaces[i]] = 1;
        form[i * 5 + 2 + context.cases[i]] = 1;
      }
    });
    const cache: DecodeCache = { rows, contextLength: length, contextLengths: Int32Array.from(contextLengths), crossKeys, crossValues,
      selfKeys: crossKeys.map(() => null), selfValues: crossKeys.map(() => null), pointerKeys, contextForm: form, groups: [], selector: groupSelector(rows, 1), fed: 0 };
    if (this.config.continuation) {
      cache.successors = Array.from({ length: rows }, (_, b) => new Successors(context.ids.subarray(b * length, b * length + contextLengths[b]), contextLengths[b]));
      cache.lastFed = new Int32Array(rows);
      cache.prevFed = new Int32Array(rows);
    }
    cache.groups = decodeGroups(cache);
    return cache;
  }

  /**
   * Feeds T tokens per row (answer positions `cache.fed` … `cache.fed + T − 1`; T > 1 for the
   * prompt) and returns the heads' output for the token after the last one, with `vocabMask`
   * [B, V] (0 allowed, −1e9 not) added to the word logits.
   */
  async step(cache: DecodeCache, tokens: { ids: Int32Array; spaces: Int32Array; cases: Int32Array }, vocabMask: tf.Tensor2D): Promise<StepOutput> {
    const B = cache.rows;
    const T = tokens.ids.length / B;
    const positions = Int32Array.from({ length: B * T }, (_, i) => cache.fed + (i % T));
    const continuation = cache.successors !== undefined;
    if (continuation) {
      for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) { cache.prevFed![b] = cache.lastFed![b]; cache.lastFed![b] = tokens.ids[b * T + t]; }
    }
    const outputs = tf.tidy(() => {
      let x = this.embedInJs({ ...tokens, positions }, 'dec_pos');                           // [B·T, d]
      // New tokens see every cached one and the new ones up to themselves.
      const causal = T > 1 ? tf.concat([tf.zeros([T, cache.fed]), tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([T, T]), -1, 0)), NEG)], 1) : null;
      for (let l = 0; l < this.config.decoderLayers; l++) {
        const [q, k, v] = this.selfHeads(x, l, B, T);                                         // [B·h, T, dh]
        const keys = cache.selfKeys[l] ? tf.concat([cache.selfKeys[l]!, k], 1) as tf.Tensor3D : k;
        const values = cache.selfValues[l] ? tf.concat([cache.selfValues[l]!, v], 1) as tf.Tensor3D : v;
        const scores = bmm(q, transposeLast(keys));
        const attention = tf.softmax(causal ? tf.add(scores, causal) : scores);
        x = tf.add(x, this.linear(this.mergeHeads(bmm(attention, values), B, T), `dec${l}/out`));
        x = this.groupedCrossAttend(x, l, cache, T);
        x = this.mlp(x, l);
        cache.selfKeys[l]?.dispose();
        cache.selfValues[l]?.dispose();
        cache.selfKeys[l] = tf.keep(keys);
        cache.selfValues[l] = tf.keep(values);
      }
      const last = T > 1 ? tf.reshape(tf.slice(tf.reshape(x, [B, T, -1]), [0, T - 1, 0], [B, 1, -1]), [B, -1]) as tf.Tensor2D : x;
      const hidden = this.layerNorm(last, 'dec_ln');
      const q = tf.concat([tf.mul(this.linear(hidden, 'ptr_q', false), 1 / Math.sqrt(this.config.attentionDim)), cache.selector!], 1) as tf.Tensor2D;
      // With copy continuation the pointer's and the gate's logits come back, and their softmax and sigmoid run in JS (continueCopy).
      const pointerGroups = tf.split(q, cache.groups.map((g) => g.rows), 0).map((qg, i) => {
        const logits = tf.matMul(qg, cache.groups[i].pointerKeysT);                             // [g, g·width]
        return continuation ? logits : tf.softmax(logits);
      });
      // One read-back for all groups' pointers (each a few small reads otherwise).
      const pointers = tf.concat(pointerGroups.map((w) => tf.reshape(w, [-1])));
      const vocab = tf.softmax(tf.add(this.linear(hidden, 'vocab'), vocabMask));
      const gate = this.linear(hidden, 'gate');
      return [vocab, tf.argMax(vocab, 1), tf.reshape(continuation ? gate : tf.sigmoid(gate), [B]), hidden, pointers];
    });
    cache.fed += T;
    const [vocab, bestWord, gateOut, hidden, pointers] = await Promise.all(outputs.map((t) => t.data())) as [Float32Array, Int32Array, Float32Array, Float32Array, Float32Array];
    tf.dispose(outputs);
    const { pointer, gate } = continuation ? this.continueCopy(cache, ownBlocks(cache, pointers), gateOut, hidden) : { pointer: ownBlocks(cache, pointers), gate: gateOut };
    return { vocab, bestWord, pointer, gate, ...this.formHeadsJs(hidden, pointer, cache) };
  }

  /**
   * Copy continuation at a decoding step, in JS: each row's pointer logits plus s₁(h)·one +
   * s₂(h)·two, softmaxed over its own real context, and the gate's logit plus its continuation
   * weights — the same sums as training's continuationBias and gateLogits.
   */
  private continueCopy(cache: DecodeCache, logits: Float32Array, gateLogits: Float32Array, hidden: Float32Array): { pointer: Float32Array; gate: Float32Array } {
    const d = this.config.dModel, B = cache.rows, Lc = cache.contextLength;
    const w = this.tables ??= this.readTables();
    const [Wc, bc, gc] = [w.get('ptr_cont_w')!, w.get('ptr_cont_b')!, w.get('gate_cont_w')!];
    const pointer = new Float32Array(B * Lc), gate = new Float32Array(B);
    const row = new Float64Array(Lc);
    for (let b = 0; b < B; b++) {
      let s1 = bc[0], s2 = bc[1];
      for (let k = 0; k < d; k++) { s1 += hidden[b * d + k] * Wc[k * 2]; s2 += hidden[b * d + k] * Wc[k * 2 + 1]; }
      const { one, two } = cache.successors![b].of(cache.prevFed![b], cache.lastFed![b]);
      const n = cache.contextLengths[b], o = b * Lc;
      for (let j = 0; j < n; j++) row[j] = logits[o + j];
      for (const j of one) row[j] += s1;
      for (const j of two) row[j] += s2;
      let max = -Infinity, sum = 0;
      for (let j = 0; j < n; j++) max = Math.max(max, row[j]);
      for (let j = 0; j < n; j++) { row[j] = Math.exp(row[j] - max); sum += row[j]; }
      for (let j = 0; j < n; j++) pointer[o + j] = row[j] / sum;
      const z = gateLogits[b] + (one.length ? gc[0] : 0) + (two.length ? gc[1] : 0);
      gate[b] = 1 / (1 + Math.exp(-z));
    }
    return { pointer, gate };
  }

  /** Cross-attention of the T new tokens of every row [B·T, d] on its own context, group by group (DecodeGroup). */
  private groupedCrossAttend(x: tf.Tensor2D, layer: number, cache: DecodeCache, T: number): tf.Tensor2D {
    const a = this.config.attentionDim;
    const selector = T === 1 ? cache.selector! : groupSelector(cache.rows, T);
    const q = tf.concat([tf.mul(this.linear(this.layerNorm(x, `dec${layer}/ln2`), `dec${layer}/xq`, false), 1 / Math.sqrt(a)), selector], 1) as tf.Tensor2D;
    const reads = tf.split(q, cache.groups.map((g) => g.rows * T), 0).map((qg, i) =>
      tf.matMul(tf.softmax(tf.matMul(qg, cache.groups[i].keysT[layer])), cache.groups[i].values[layer]));
    return tf.add(x, this.linear(tf.concat(reads, 0) as tf.Tensor2D, `dec${layer}/proj`));
  }

  /**
   * The space and case heads in JS (a few hundred multiply-adds a row: cheaper than the kernels
   * they would take): the same sums as `formHeads`, from the read-back hidden state and pointer.
   */
  private formHeadsJs(hidden: Float32Array, pointer: Float32Array, cache: DecodeCache): { space: Int32Array; letterCase: Int32Array } {
    const d = this.config.dModel, B = cache.rows, Lc = cache.contextLength;
    const w = this.tables ??= this.readTables();
    const space = new Int32Array(B), letterCase = new Int32Array(B);
    const pointed = new Float32Array(5);
    for (let b = 0; b < B; b++) {
      pointed.fill(0);
      for (let j = 0; j < Lc; j++) {
        const a = pointer[b * Lc + j];
        if (a === 0) continue;
        const f = (b * Lc + j) * 5;
        for (let k = 0; k < 5; k++) pointed[k] += a * cache.contextForm[f + k];
      }
      const head = (name: 'space' | 'case', classes: number, from: number) => {
        const W = w.get(`${name}_w`)!, bias = w.get(`${name}_b`)!, U = w.get(`${name}_ptr_w`)!;
        let best = 0, bestLogit = -Infinity;
        for (let c = 0; c < classes; c++) {
          let logit = bias[c];
          for (let k = 0; k < d; k++) logit += hidden[b * d + k] * W[k * classes + c];
          for (let k = 0; k < classes; k++) logit += pointed[from + k] * U[k * classes + c];
          if (logit > bestLogit) { bestLogit = logit; best = c; }
        }
        return best;
      };
      space[b] = head('space', 2, 0);
      letterCase[b] = head('case', 3, 2);
    }
    return { space, letterCase };
  }

  /**
   * Keeps only the rows `keep` of a cache (finished rows leave the batch, so later steps cost
   * less). The kept rows' values are copied unchanged, so their answers stay the same.
   */
  async compactCache(cache: DecodeCache, keep: readonly number[]): Promise<void> {
    const B = cache.rows;
    const pick = async <T extends tf.Tensor2D | tf.Tensor3D>(t: T): Promise<T> => {
      const data = await t.data() as Float32Array;
      const stride = data.length / B;                         // values per batch row (Lc·a, or h·t·dh for self-attention)
      const out = new Float32Array(keep.length * stride);
      keep.forEach((b, i) => out.set(data.subarray(b * stride, (b + 1) * stride), i * stride));
      const shape = t.shape.slice() as T['shape'];
      shape[0] = (t.shape[0] / B) * keep.length;
      t.dispose();
      return tf.tensor(out, shape) as T;
    };
    for (let l = 0; l < this.config.decoderLayers; l++) {
      cache.crossKeys[l] = await pick(cache.crossKeys[l]);
      cache.crossValues[l] = await pick(cache.crossValues[l]);
      if (cache.selfKeys[l]) cache.selfKeys[l] = await pick(cache.selfKeys[l]!);
      if (cache.selfValues[l]) cache.selfValues[l] = await pick(cache.selfValues[l]!);
    }
    cache.pointerKeys = await pick(cache.pointerKeys);
    const formStride = cache.contextLength * 5;
    const form = new Float32Array(keep.length * formStride);
    keep.forEach((b, i) => form.set(cache.contextForm.subarray(b * formStride, (b + 1) * formStride), i * formStride));
    cache.contextForm = form;
    cache.contextLengths = Int32Array.from(keep, (b) => cache.contextLengths[b]);
    if (cache.successors) {
      cache.successors = keep.map((b) => cache.successors![b]);
      cache.lastFed = Int32Array.from(keep, (b) => cache.lastFed![b]);
      cache.prevFed = Int32Array.from(keep, (b) => cache.prevFed![b]);
    }
    cache.rows = keep.length;
    disposeGroups(cache.groups);
    cache.selector?.dispose();
    cache.groups = decodeGroups(cache);
    cache.selector = groupSelector(cache.rows, 1);
  }

  disposeCache(cache: DecodeCache): void {
    tf.dispose([...cache.crossKeys, ...cache.crossValues, cache.pointerKeys]);
    for (const t of [...cache.selfKeys, ...cache.selfValues]) t?.dispose();
    disposeGroups(cache.groups);
    cache.selector?.dispose();
  }

  // ---- weights ---------------------------------------------------------------------------------

  async getWeights(): Promise<NamedWeight[]> {
    const out: NamedWeight[] = [];
    for (const [name, shape] of this.shapes()) out.push({ name, shape, data: Float32Array.from(await this.v(name).data()) });
    return out;
  }

  setWeights(weights: readonly NamedWeight[]): void {
    const byName = new Map(weights.map((w) => [w.name, w]));
    for (const [name, shape] of this.shapes()) {
      const w = byName.get(name);
      if (!w || w.data.length !== shape.reduce((a, b) => a * b, 1)) throw new Error(`Weight '${name}' is missing or has the wrong size for this network.`);
      tf.tidy(() => this.v(name).assign(tf.tensor(w.data, shape)));
    }
    this.weightsChanged();
  }

  dispose(): void {
    for (const v of this.variables.values()) v.dispose();
    this.variables.clear();
    this.tables = null;
  }
}

/**
 * A cache's rows in groups of DECODE_GROUP, with their keys, values and masks laid out for 2-D
 * matmuls, each group only as wide as its own longest context (the rest of a row is masked, so
 * its weights there are exactly 0 either way).
 */
function decodeGroups(cache: DecodeCache): DecodeGroup[] {
  const { rows: B, contextLength: Lc } = cache;
  const groups: DecodeGroup[] = [];
  for (let first = 0; first < B; first += DECODE_GROUP) {
    const g = Math.min(DECODE_GROUP, B - first);
    const width = Math.max(1, ...cache.contextLengths.subarray(first, first + g));
    // Mask row r: 0 on row r's own real positions, −1e9 elsewhere (rows past g meet no query).
    const mask = new Float32Array(DECODE_GROUP * g * width);
    for (let r = 0; r < g; r++) {
      mask.fill(NEG, r * g * width, (r + 1) * g * width);
      mask.fill(0, r * g * width + r * width, r * g * width + r * width + cache.contextLengths[first + r]);
    }
    const rowsOf = (t: tf.Tensor2D) => {
      const a = t.shape[1];
      return tf.reshape(tf.slice(tf.reshape(t, [B, Lc, a]), [first, 0, 0], [g, width, a]), [g * width, a]) as tf.Tensor2D;
    };
    groups.push(tf.tidy(() => {
      const maskRows = tf.tensor2d(mask, [DECODE_GROUP, g * width]);
      const withMask = (t: tf.Tensor2D) => tf.keep(tf.concat([tf.transpose(rowsOf(t)), maskRows], 0) as tf.Tensor2D);
      return { first, rows: g, width, keysT: cache.crossKeys.map(withMask), values: cache.crossValues.map((v) => tf.keep(rowsOf(v))), pointerKeysT: withMask(cache.pointerKeys) };
    }));
  }
  return groups;
}

/** Each row's one-hot in its group, T times per row (the T new tokens of a row share its context): [B·T, DECODE_GROUP]. */
function groupSelector(rows: number, T: number): tf.Tensor2D {
  const values = new Float32Array(rows * T * DECODE_GROUP);
  for (let b = 0; b < rows; b++) for (let t = 0; t < T; t++) values[(b * T + t) * DECODE_GROUP + (b % DECODE_GROUP)] = 1;
  return tf.tensor2d(values, [rows * T, DECODE_GROUP]);
}

/** Rows first … first + n − 1 of flattened [B, length] token rows, re-laid at `width` per row. */
function chunkRows(rows: TokenRows & { segments: Int32Array }, first: number, n: number, length: number, width: number): TokenRows & { segments: Int32Array } {
  const take = (from: Int32Array) => {
    const out = new Int32Array(n * width);
    for (let r = 0; r < n; r++) out.set(from.subarray((first + r) * length, (first + r) * length + width), r * width);
    return out;
  };
  return { ids: take(rows.ids), spaces: take(rows.spaces), cases: take(rows.cases), segments: take(rows.segments), positions: take(rows.positions) };
}

function disposeGroups(groups: readonly DecodeGroup[]): void {
  for (const g of groups) tf.dispose([...g.keysT, ...g.values, g.pointerKeysT]);
}

/** The pointer of every row over its own context [B·Lc], from the groups' weights ([g, g·width] each, one after another). */
function ownBlocks(cache: DecodeCache, groupWeights: Float32Array): Float32Array {
  const Lc = cache.contextLength;
  const out = new Float32Array(cache.rows * Lc);
  let offset = 0;
  for (const { rows: g, width, first } of cache.groups) {
    for (let r = 0; r < g; r++) {
      const from = offset + r * g * width + r * width;
      out.set(groupWeights.subarray(from, from + width), (first + r) * Lc);
    }
    offset += g * g * width;
  }
  return out;
}

/**
 * Training-time attention for groups of rows as plain 2-D matmuls (wasm's fast path): a group's
 * queries [g·T, ·] meet all its keys [g·S, ·], and a block-diagonal mask keeps each row to its
 * own keys (and, for self-attention, to earlier positions). g times the multiply-adds of a
 * batched matmul, at about fifteen times the speed.
 */
interface AttentionGroup {
  first: number;
  rows: number;
  selfMask: Float32Array;
  crossMask: Float32Array;
  /** Row r, answer position t, context position j at [(r·La + t)·(g·Lc) + r·Lc + j]. */
  copyMatch: Float32Array;
  /** Copy continuation: where a copy goes on after the last fed token (one) and the last two (two), laid out as copyMatch. */
  one?: Float32Array;
  two?: Float32Array;
}

const GROUP_ROWS = 4;

/**
 * The batch's attention groups; with copy continuation also each group's continuation positions
 * and, per decoder position, whether any exists ([B·La, 2] flags).
 */
function attentionGroups(batch: TrainBatch, continuation: boolean): { groups: AttentionGroup[]; flags: Float32Array | null } {
  const { rows: B, contextLength: Lc, answerLength: La } = batch;
  const groups: AttentionGroup[] = [];
  const flags = continuation ? new Float32Array(B * La * 2) : null;
  for (let first = 0; first < B; first += GROUP_ROWS) {
    const g = Math.min(GROUP_ROWS, B - first);
    const selfMask = new Float32Array(g * La * g * La).fill(NEG);
    const crossMask = new Float32Array(g * La * g * Lc).fill(NEG);
    const copyMatch = new Float32Array(g * La * g * Lc);
    const [one, two] = continuation ? [new Float32Array(g * La * g * Lc), new Float32Array(g * La * g * Lc)] : [];
    for (let r = 0; r < g; r++) {
      const row = first + r;
      let contextLength = 0;
      while (contextLength < Lc && batch.contextMask[row * Lc + contextLength]) contextLength++;
      const successors = continuation ? new Successors(batch.context.ids.subarray(row * Lc, row * Lc + contextLength), contextLength) : null;
      for (let t = 0; t < La; t++) {
        const q = r * La + t;
        for (let s = 0; s <= t; s++) selfMask[q * g * La + r * La + s] = 0;
        crossMask.fill(0, q * g * Lc + r * Lc, q * g * Lc + r * Lc + contextLength);
        copyMatch.set(batch.copyMatch.subarray((row * La + t) * Lc, (row * La + t + 1) * Lc), q * g * Lc + r * Lc);
        if (!successors || !batch.targetMask[row * La + t]) continue;
        // The tokens fed at t and before: what the decoder has just written.
        const next = successors.of(t > 0 ? batch.decoder.ids[row * La + t - 1] : 0, batch.decoder.ids[row * La + t]);
        for (const j of next.one) one![q * g * Lc + r * Lc + j] = 1;
        for (const j of next.two) two![q * g * Lc + r * Lc + j] = 1;
        flags![(row * La + t) * 2] = next.one.length ? 1 : 0;
        flags![(row * La + t) * 2 + 1] = next.two.length ? 1 : 0;
      }
    }
    groups.push({ first, rows: g, selfMask, crossMask, copyMatch, ...(one ? { one, two } : {}) });
  }
  return { groups, flags };
}

/** Attention of q [B·T, h·dh] on k, v [B·S, h·dh] group by group → output [B·T, h·dh] (none without v) and each group's weights (head 0). */
function groupedAttention(q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D | null, groups: readonly AttentionGroup[], kind: 'self' | 'cross',
  T: number, S: number, heads: number, bias?: (group: number) => tf.Tensor2D): { output: tf.Tensor2D | null; weights: tf.Tensor2D[] } {
  const width = q.shape[1];
  const dh = width / heads;
  const outputs: tf.Tensor2D[] = [], weights: tf.Tensor2D[] = [];
  groups.forEach((group, index) => {
    const rows = (x: tf.Tensor2D, n: number) => tf.slice(x, [group.first * n, 0], [group.rows * n, width]) as tf.Tensor2D;
    const [qg, kg] = [rows(q, T), rows(k, S)];
    const vg = v ? rows(v, S) : null;
    const maskValues = tf.tensor2d(kind === 'self' ? group.selfMask : group.crossMask, [group.rows * T, group.rows * S]);
    const mask = bias ? tf.add(maskValues, bias(index)) : maskValues;
    const perHead: tf.Tensor2D[] = [];
    for (let h = 0; h < heads; h++) {
      const cols = (x: tf.Tensor2D) => (heads === 1 ? x : tf.slice(x, [0, h * dh], [-1, dh]) as tf.Tensor2D);
      const w = tf.softmax(tf.add(matMulFast(cols(qg), tf.transpose(cols(kg))), mask)) as tf.Tensor2D;   // [g·T, g·S]
      if (h === 0) weights.push(w);
      if (vg) perHead.push(matMulFast(w, cols(vg)));
    }
    if (vg) outputs.push(heads === 1 ? perHead[0] : tf.concat(perHead, 1) as tf.Tensor2D);
  });
  return { output: v ? tf.concat(outputs, 0) as tf.Tensor2D : null, weights };
}

/** Indices where the mask is set. */
function realPositions(mask: Float32Array): Int32Array {
  const out: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) out.push(i);
  return Int32Array.from(out);
}

function crossEntropy(logits: tf.Tensor2D, labels: Int32Array, classes: number): tf.Tensor1D {
  return tf.neg(tf.sum(tf.mul(tf.logSoftmax(logits), tf.oneHot(tf.tensor1d(labels, 'int32'), classes)), 1)) as tf.Tensor1D;
}
