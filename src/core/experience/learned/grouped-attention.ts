/**
 * Attention for groups of rows as plain 2-D matmuls, the learned network's fast path on
 * tfjs-wasm (a batched matmul runs a naive kernel there), and copy continuation's index of where
 * a copy goes on. Training's grouping is here; decoding's (DecodeGroup) is in decode-cache.ts.
 */
import * as tf from '@tensorflow/tfjs';
import { matMulFast } from '../../tfjs/backend';
import type { TrainBatch } from './batch';
import { SPECIAL_TOKENS } from './tokenizer';

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
