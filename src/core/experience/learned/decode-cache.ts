/**
 * Decoding with the learned network (network.ts), one token of every row at a time: the KV
 * cache, and the layout that keeps decoding on wasm's fast path.
 *
 *   prefill    the encoder runs once over every context; each layer's cross keys and values and
 *              the pointer's keys are kept
 *   step       T new tokens per row (the prompt, then one): self-attention on the cached keys and
 *              values, cross-attention per DecodeGroup, the heads; the pointer's continuation,
 *              softmax and the space and case heads run in JS on the read-back values
 *   compact    finished rows leave the cache, so later steps cost less
 *
 * Every sum is the one training computes (teacherForced), so decoding with the cache predicts what
 * the full recomputation predicts, and a row's answer never depends on the rows beside it.
 */
import * as tf from '@tensorflow/tfjs';
import { NEG, Successors, type ContextRows, type ExperienceNetwork, type TokenRows } from './network';

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
  /** Per layer: cross keys transposed with the mask rows [a + DECODE_GROUP, g·width]; values [g·width, a]. */
  keysT: tf.Tensor2D[];
  values: tf.Tensor2D[];
  /** The pointer's keys, laid out as keysT. */
  pointerKeysT: tf.Tensor2D;
}

const DECODE_GROUP = 4;
/** Contexts the encoder takes at once when decoding starts. */
const PREFILL_ROWS = 16;

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

/** Token ids, spaces and cases of the T new tokens of every row, row-major. */
export interface FedTokens {
  ids: Int32Array;
  spaces: Int32Array;
  cases: Int32Array;
}

/** What decoding keeps per layer, and for the pointer, for B rows of one batch. */
export class DecodeCache {
  /** Per layer: self keys and values of the tokens fed so far, [B·h, t, dh]. */
  private selfKeys: (tf.Tensor3D | null)[];
  private selfValues: (tf.Tensor3D | null)[];
  /** The keys and values laid out per group of rows (DecodeGroup). */
  private groups: DecodeGroup[] = [];
  /** Each row's one-hot in its group, [B, DECODE_GROUP]. */
  private selector: tf.Tensor2D;
  /** Answer tokens fed so far. */
  private fed = 0;
  /** Copy continuation: the last two tokens each row was fed. */
  private lastFed: Int32Array;
  private prevFed: Int32Array;

  private constructor(
    private readonly net: ExperienceNetwork,
    public rows: number,
    readonly contextLength: number,
    /** Each row's real context tokens. */
    private contextLengths: Int32Array,
    /** Per layer: cross keys and values of every row [B·Lc, a]; and the pointer's keys. */
    private crossKeys: tf.Tensor2D[],
    private crossValues: tf.Tensor2D[],
    private pointerKeys: tf.Tensor2D,
    /** Each context token's form [B·Lc·5] (space one-hot, case one-hot). */
    private contextForm: Float32Array,
    /** Copy continuation: each row's successor index. */
    private successors: Successors[],
  ) {
    this.selfKeys = crossKeys.map(() => null);
    this.selfValues = crossKeys.map(() => null);
    this.selector = groupSelector(rows, 1);
    this.lastFed = new Int32Array(rows);
    this.prevFed = new Int32Array(rows);
    this.groups = this.layOutGroups();
  }

  /**
   * Encodes B right-padded contexts and keeps each layer's cross keys and values. The encoder runs
   * PREFILL_ROWS rows at a time, each chunk padded only to its own longest context (rows sorted by
   * length waste little); a row's encoding never depends on its padding, so the result is the same.
   */
  static prefill(
    net: ExperienceNetwork,
    context: ContextRows,
    rows: number,
    length: number,
    contextLengths: Int32Array,
  ): DecodeCache {
    const chunks: tf.Tensor2D[][] = [];
    for (let first = 0; first < rows; first += PREFILL_ROWS) {
      const n = Math.min(PREFILL_ROWS, rows - first);
      const width = Math.max(1, ...contextLengths.subarray(first, first + n));
      chunks.push(
        tf.tidy(() =>
          encodeChunk(
            net,
            chunkRows(context, first, n, length, width),
            contextLengths.subarray(first, first + n),
            length,
            width,
          ),
        ),
      );
    }
    const joined = chunks[0].map((_, i) =>
      chunks.length === 1
        ? chunks[0][i]
        : (tf.concat(
            chunks.map((c) => c[i]),
            0,
          ) as tf.Tensor2D),
    );
    if (chunks.length > 1) tf.dispose(chunks.flat());
    const crossKeys = joined.filter((_, i) => i < joined.length - 1 && i % 2 === 0);
    const crossValues = joined.filter((_, i) => i < joined.length - 1 && i % 2 === 1);
    const form = new Float32Array(rows * length * 5);
    contextLengths.forEach((n, b) => {
      for (let j = 0; j < n; j++) {
        const i = b * length + j;
        form[i * 5 + context.spaces[i]] = 1;
        form[i * 5 + 2 + context.cases[i]] = 1;
      }
    });
    const successors = Array.from(
      { length: rows },
      (_, b) => new Successors(context.ids.subarray(b * length, b * length + contextLengths[b]), contextLengths[b]),
    );
    return new DecodeCache(
      net,
      rows,
      length,
      Int32Array.from(contextLengths),
      crossKeys,
      crossValues,
      joined[joined.length - 1],
      form,
      successors,
    );
  }

  /**
   * Feeds T tokens per row (answer positions `fed` … `fed + T − 1`; T > 1 for the prompt) and
   * returns the heads' output for the token after the last one, with `vocabMask` [B, V] (0
   * allowed, −1e9 not) added to the word logits.
   */
  async step(tokens: FedTokens, vocabMask: tf.Tensor2D): Promise<StepOutput> {
    const B = this.rows;
    const T = tokens.ids.length / B;
    const positions = Int32Array.from({ length: B * T }, (_, i) => this.fed + (i % T));
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++) {
        this.prevFed[b] = this.lastFed[b];
        this.lastFed[b] = tokens.ids[b * T + t];
      }
    const outputs = tf.tidy(() =>
      this.decoderLayers(embedInJs(this.net, { ...tokens, positions }, 'dec_pos'), T, vocabMask),
    );
    this.fed += T;
    const [vocab, bestWord, gateOut, hidden, pointers] = (await Promise.all(outputs.map((t) => t.data()))) as [
      Float32Array,
      Int32Array,
      Float32Array,
      Float32Array,
      Float32Array,
    ];
    tf.dispose(outputs);
    const { pointer, gate } = this.continueCopy(this.ownBlocks(pointers), gateOut, hidden);
    return { vocab, bestWord, pointer, gate, ...this.formHeadsJs(hidden, pointer) };
  }

  /** The decoder on the new tokens x [B·T, d] → vocab, best word, gate logit, hidden and the pointer's logits. */
  private decoderLayers(x: tf.Tensor2D, T: number, vocabMask: tf.Tensor2D): tf.Tensor[] {
    const { net, rows: B } = this;
    // New tokens see every cached one and the new ones up to themselves.
    const causal =
      T > 1
        ? tf.concat([tf.zeros([T, this.fed]), tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([T, T]), -1, 0)), NEG)], 1)
        : null;
    for (let l = 0; l < net.config.decoderLayers; l++) {
      const [q, k, v] = net.selfHeads(x, l, B, T); // [B·h, T, dh]
      const keys = this.selfKeys[l] ? (tf.concat([this.selfKeys[l]!, k], 1) as tf.Tensor3D) : k;
      const values = this.selfValues[l] ? (tf.concat([this.selfValues[l]!, v], 1) as tf.Tensor3D) : v;
      const scores = tf.matMul(q, tf.transpose(keys, [0, 2, 1]));
      const attention = tf.softmax(causal ? tf.add(scores, causal) : scores);
      x = tf.add(x, net.linear(net.mergeHeads(tf.matMul(attention, values) as tf.Tensor3D, B, T), `dec${l}/out`));
      x = this.groupedCrossAttend(x, l, T);
      x = net.mlp(x, l);
      this.selfKeys[l]?.dispose();
      this.selfValues[l]?.dispose();
      this.selfKeys[l] = tf.keep(keys);
      this.selfValues[l] = tf.keep(values);
    }
    const last =
      T > 1 ? (tf.reshape(tf.slice(tf.reshape(x, [B, T, -1]), [0, T - 1, 0], [B, 1, -1]), [B, -1]) as tf.Tensor2D) : x;
    const hidden = net.layerNorm(last, 'dec_ln');
    const q = tf.concat(
      [tf.mul(net.linear(hidden, 'ptr_q', false), 1 / Math.sqrt(net.config.attentionDim)), this.selector],
      1,
    ) as tf.Tensor2D;
    // The pointer's and the gate's logits come back; copy continuation, softmax and sigmoid run in JS (continueCopy).
    const pointerGroups = tf
      .split(
        q,
        this.groups.map((g) => g.rows),
        0,
      )
      .map((qg, i) => tf.matMul(qg, this.groups[i].pointerKeysT)); // [g, g·width]
    // One read-back for all groups' pointers (each a few small reads otherwise).
    const pointers = tf.concat(pointerGroups.map((w) => tf.reshape(w, [-1])));
    const vocab = tf.softmax(tf.add(net.linear(hidden, 'vocab'), vocabMask));
    const gate = net.linear(hidden, 'gate');
    return [vocab, tf.argMax(vocab, 1), tf.reshape(gate, [B]), hidden, pointers];
  }

  /** Cross-attention of the T new tokens of every row [B·T, d] on its own context, group by group (DecodeGroup). */
  private groupedCrossAttend(x: tf.Tensor2D, layer: number, T: number): tf.Tensor2D {
    const net = this.net;
    const a = net.config.attentionDim;
    const selector = T === 1 ? this.selector : groupSelector(this.rows, T);
    const query = net.linear(net.layerNorm(x, `dec${layer}/ln2`), `dec${layer}/xq`, false);
    const q = tf.concat([tf.mul(query, 1 / Math.sqrt(a)), selector], 1) as tf.Tensor2D;
    const reads = tf
      .split(
        q,
        this.groups.map((g) => g.rows * T),
        0,
      )
      .map((qg, i) => tf.matMul(tf.softmax(tf.matMul(qg, this.groups[i].keysT[layer])), this.groups[i].values[layer]));
    return tf.add(x, net.linear(tf.concat(reads, 0) as tf.Tensor2D, `dec${layer}/proj`));
  }

  /**
   * Copy continuation at a decoding step, in JS: each row's pointer logits plus s₁(h)·one +
   * s₂(h)·two, softmaxed over its own real context, and the gate's logit plus its continuation
   * weights — the same sums as training's continuationBias and gateLogits.
   */
  private continueCopy(
    logits: Float32Array,
    gateLogits: Float32Array,
    hidden: Float32Array,
  ): { pointer: Float32Array; gate: Float32Array } {
    const d = this.net.config.dModel,
      B = this.rows,
      Lc = this.contextLength;
    const w = this.net.weightsInJs();
    const [Wc, bc, gc] = [w.get('ptr_cont_w')!, w.get('ptr_cont_b')!, w.get('gate_cont_w')!];
    const pointer = new Float32Array(B * Lc),
      gate = new Float32Array(B);
    const row = new Float64Array(Lc);
    for (let b = 0; b < B; b++) {
      let s1 = bc[0],
        s2 = bc[1];
      for (let k = 0; k < d; k++) {
        s1 += hidden[b * d + k] * Wc[k * 2];
        s2 += hidden[b * d + k] * Wc[k * 2 + 1];
      }
      const { one, two } = this.successors[b].of(this.prevFed[b], this.lastFed[b]);
      const n = this.contextLengths[b],
        o = b * Lc;
      for (let j = 0; j < n; j++) row[j] = logits[o + j];
      for (const j of one) row[j] += s1;
      for (const j of two) row[j] += s2;
      let max = -Infinity,
        sum = 0;
      for (let j = 0; j < n; j++) max = Math.max(max, row[j]);
      for (let j = 0; j < n; j++) {
        row[j] = Math.exp(row[j] - max);
        sum += row[j];
      }
      for (let j = 0; j < n; j++) pointer[o + j] = row[j] / sum;
      const z = gateLogits[b] + (one.length ? gc[0] : 0) + (two.length ? gc[1] : 0);
      gate[b] = 1 / (1 + Math.exp(-z));
    }
    return { pointer, gate };
  }

  /**
   * The space and case heads in JS (a few hundred multiply-adds a row: cheaper than the kernels
   * they would take): the same sums as the network's formHeads, from the read-back hidden state and pointer.
   */
  private formHeadsJs(hidden: Float32Array, pointer: Float32Array): { space: Int32Array; letterCase: Int32Array } {
    const d = this.net.config.dModel,
      B = this.rows,
      Lc = this.contextLength;
    const w = this.net.weightsInJs();
    const space = new Int32Array(B),
      letterCase = new Int32Array(B);
    const pointed = new Float32Array(5);
    for (let b = 0; b < B; b++) {
      pointed.fill(0);
      for (let j = 0; j < Lc; j++) {
        const a = pointer[b * Lc + j];
        if (a === 0) continue;
        const f = (b * Lc + j) * 5;
        for (let k = 0; k < 5; k++) pointed[k] += a * this.contextForm[f + k];
      }
      const head = (name: 'space' | 'case', classes: number, from: number) => {
        const W = w.get(`${name}_w`)!,
          bias = w.get(`${name}_b`)!,
          U = w.get(`${name}_ptr_w`)!;
        let best = 0,
          bestLogit = -Infinity;
        for (let c = 0; c < classes; c++) {
          let logit = bias[c];
          for (let k = 0; k < d; k++) logit += hidden[b * d + k] * W[k * classes + c];
          for (let k = 0; k < classes; k++) logit += pointed[from + k] * U[k * classes + c];
          if (logit > bestLogit) {
            bestLogit = logit;
            best = c;
          }
        }
        return best;
      };
      space[b] = head('space', 2, 0);
      letterCase[b] = head('case', 3, 2);
    }
    return { space, letterCase };
  }

  /**
   * Keeps only the rows `keep` (finished rows leave the batch, so later steps cost less). The
   * kept rows' values are copied unchanged, so their answers stay the same.
   */
  async compact(keep: readonly number[]): Promise<void> {
    const B = this.rows;
    const pick = async <T extends tf.Tensor2D | tf.Tensor3D>(t: T): Promise<T> => {
      const data = (await t.data()) as Float32Array;
      const stride = data.length / B; // values per batch row (Lc·a, or h·t·dh for self-attention)
      const out = new Float32Array(keep.length * stride);
      keep.forEach((b, i) => out.set(data.subarray(b * stride, (b + 1) * stride), i * stride));
      const shape = t.shape.slice() as T['shape'];
      shape[0] = (t.shape[0] / B) * keep.length;
      t.dispose();
      return tf.tensor(out, shape) as T;
    };
    for (let l = 0; l < this.net.config.decoderLayers; l++) {
      this.crossKeys[l] = await pick(this.crossKeys[l]);
      this.crossValues[l] = await pick(this.crossValues[l]);
      if (this.selfKeys[l]) this.selfKeys[l] = await pick(this.selfKeys[l]!);
      if (this.selfValues[l]) this.selfValues[l] = await pick(this.selfValues[l]!);
    }
    this.pointerKeys = await pick(this.pointerKeys);
    const formStride = this.contextLength * 5;
    const form = new Float32Array(keep.length * formStride);
    keep.forEach((b, i) => form.set(this.contextForm.subarray(b * formStride, (b + 1) * formStride), i * formStride));
    this.contextForm = form;
    this.contextLengths = Int32Array.from(keep, (b) => this.contextLengths[b]);
    this.successors = keep.map((b) => this.successors[b]);
    this.lastFed = Int32Array.from(keep, (b) => this.lastFed[b]);
    this.prevFed = Int32Array.from(keep, (b) => this.prevFed[b]);
    this.rows = keep.length;
    disposeGroups(this.groups);
    this.selector.dispose();
    this.groups = this.layOutGroups();
    this.selector = groupSelector(this.rows, 1);
  }

  dispose(): void {
    tf.dispose([...this.crossKeys, ...this.crossValues, this.pointerKeys]);
    for (const t of [...this.selfKeys, ...this.selfValues]) t?.dispose();
    disposeGroups(this.groups);
    this.selector.dispose();
  }

  /**
   * The rows in groups of DECODE_GROUP, with their keys, values and masks laid out for 2-D
   * matmuls, each group only as wide as its own longest context (the rest of a row is masked, so
   * its weights there are exactly 0 either way).
   */
  private layOutGroups(): DecodeGroup[] {
    const { rows: B, contextLength: Lc } = this;
    const groups: DecodeGroup[] = [];
    for (let first = 0; first < B; first += DECODE_GROUP) {
      const g = Math.min(DECODE_GROUP, B - first);
      const width = Math.max(1, ...this.contextLengths.subarray(first, first + g));
      // Mask row r: 0 on row r's own real positions, −1e9 elsewhere (rows past g meet no query).
      const mask = new Float32Array(DECODE_GROUP * g * width);
      for (let r = 0; r < g; r++) {
        mask.fill(NEG, r * g * width, (r + 1) * g * width);
        mask.fill(0, r * g * width + r * width, r * g * width + r * width + this.contextLengths[first + r]);
      }
      const rowsOf = (t: tf.Tensor2D) => {
        const a = t.shape[1];
        return tf.reshape(tf.slice(tf.reshape(t, [B, Lc, a]), [first, 0, 0], [g, width, a]), [
          g * width,
          a,
        ]) as tf.Tensor2D;
      };
      groups.push(
        tf.tidy(() => {
          const maskRows = tf.tensor2d(mask, [DECODE_GROUP, g * width]);
          const withMask = (t: tf.Tensor2D) =>
            tf.keep(tf.concat([tf.transpose(rowsOf(t)), maskRows], 0) as tf.Tensor2D);
          return {
            first,
            rows: g,
            width,
            keysT: this.crossKeys.map(withMask),
            values: this.crossValues.map((v) => tf.keep(rowsOf(v))),
            pointerKeysT: withMask(this.pointerKeys),
          };
        }),
      );
    }
    return groups;
  }

  /** The pointer of every row over its own context [B·Lc], from the groups' weights ([g, g·width] each, one after another). */
  private ownBlocks(groupWeights: Float32Array): Float32Array {
    const Lc = this.contextLength;
    const out = new Float32Array(this.rows * Lc);
    let offset = 0;
    for (const { rows: g, width, first } of this.groups) {
      for (let r = 0; r < g; r++) {
        const from = offset + r * g * width + r * width;
        out.set(groupWeights.subarray(from, from + width), (first + r) * Lc);
      }
      offset += g * g * width;
    }
    return out;
  }
}

/** One chunk of contexts through the encoder → per layer cross keys and values, then the pointer's keys, at the batch's width. */
function encodeChunk(
  net: ExperienceNetwork,
  part: ContextRows,
  lengths: Int32Array,
  length: number,
  width: number,
): tf.Tensor2D[] {
  const n = lengths.length;
  const a = net.config.attentionDim;
  const maskValues = new Float32Array(n * width);
  for (let r = 0; r < n; r++) maskValues.fill(1, r * width, r * width + lengths[r]);
  const memory = net.encode(embedInJs(net, part, 'enc_pos'), tf.tensor2d(maskValues, [n * width, 1]), n, width);
  // Back to the batch's width: padded positions hold zeros, as a full-width encoding gives them.
  const widen = (t: tf.Tensor2D) =>
    tf.reshape(
      tf.pad(tf.reshape(t, [n, width, a]), [
        [0, 0],
        [0, length - width],
        [0, 0],
      ]),
      [n * length, a],
    ) as tf.Tensor2D;
  const out: tf.Tensor2D[] = [];
  for (let l = 0; l < net.config.decoderLayers; l++)
    out.push(widen(net.linear(memory, `dec${l}/xk`, false)), widen(net.linear(memory, `dec${l}/xv`, false)));
  out.push(widen(net.linear(memory, 'ptr_k', false)));
  return out;
}

/** The network's embedding sum computed in JS from copies of the tables (fewer ops, same values up to float order). */
function embedInJs(net: ExperienceNetwork, rows: TokenRows, positionTable: string): tf.Tensor2D {
  const d = net.config.dModel;
  const tables = net.weightsInJs();
  const n = rows.ids.length;
  const out = new Float32Array(n * d);
  const sources: [Float32Array, Int32Array][] = [
    [tables.get('tok')!, rows.ids],
    [tables.get('space')!, rows.spaces],
    [tables.get('case')!, rows.cases],
    [tables.get(positionTable)!, rows.positions],
  ];
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

/** Each row's one-hot in its group, T times per row (the T new tokens of a row share its context): [B·T, DECODE_GROUP]. */
function groupSelector(rows: number, T: number): tf.Tensor2D {
  const values = new Float32Array(rows * T * DECODE_GROUP);
  for (let b = 0; b < rows; b++)
    for (let t = 0; t < T; t++) values[(b * T + t) * DECODE_GROUP + (b % DECODE_GROUP)] = 1;
  return tf.tensor2d(values, [rows * T, DECODE_GROUP]);
}

/** Rows first … first + n − 1 of flattened [B, length] token rows, re-laid at `width` per row. */
function chunkRows(rows: ContextRows, first: number, n: number, length: number, width: number): ContextRows {
  const take = (from: Int32Array) => {
    const out = new Int32Array(n * width);
    for (let r = 0; r < n; r++) out.set(from.subarray((first + r) * length, (first + r) * length + width), r * width);
    return out;
  };
  return {
    ids: take(rows.ids),
    spaces: take(rows.spaces),
    cases: take(rows.cases),
    segments: take(rows.segments),
    positions: take(rows.positions),
  };
}

function disposeGroups(groups: readonly DecodeGroup[]): void {
  for (const g of groups) tf.dispose([...g.keysT, ...g.values, g.pointerKeysT]);
}
