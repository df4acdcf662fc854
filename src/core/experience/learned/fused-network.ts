/**
 * The learned network's inference path without tfjs: the same sums as network.ts, written as a
 * few passes over the weights in one WebAssembly memory (kernels/matmul.ts). tfjs dispatches
 * about 300 small kernels for one decoder step; here a step is one matmul per linear layer for all
 * rows, two per row for each cross-attention, and plain JS for the elementwise rest.
 *
 *   encode(slot, context)   the encoder over one context (its real tokens only, zeros beyond, as the
 *                           masked training batch sees them): each decoder layer's cross keys
 *                           (transposed) and values, and the pointer's keys, kept in the slot
 *   step(rows)              one fed token per row: embeddings, the decoder layers (self-attention on
 *                           the slot's own cache), and the heads where a row asks for them
 *
 * A slot is one row's room in memory: its caches, sized for the network's longest context and
 * answer. Each row's sums run in a fixed order whatever rows run beside it (the kernel keeps every
 * output in its own lane), so an answer never depends on the batch: continuous batching, any batch
 * size and any number of threads give the same dream. Against tfjs the sums differ only in float
 * order (tests compare them within a tolerance, and the decoded answers).
 */
import { KernelArena, pad8 } from './kernels/matmul';
import { checkedWeights, type NamedWeight, type NetworkConfig } from './weights';
import type { Sequence } from './format';
import { Successors, type ExperienceNetwork } from './network';

/** What a row asks of the heads after its token: nothing (the next token is forced), or the distributions. */
export interface HeadRequest {
  /** Words the grammar allows next (1 = allowed), or null: no heads (forced next token). */
  allowed: Uint8Array | null;
  /** Only these words are allowed (a verdict): their logits alone are computed. */
  few?: readonly number[];
}

/** One row's heads, in the slot's own arrays (valid until its next step). */
export interface RowHeads {
  /** p_gen over the vocabulary, zero where not allowed; the best allowed word (the first of ties). */
  vocab: Float32Array;
  bestWord: number;
  /** Pointer weights over the row's context (its real length). */
  pointer: Float32Array;
  gate: number;
  space: number;
  letterCase: number;
}

interface Slot {
  contextLength: number;
  /** Answer tokens fed so far. */
  fed: number;
  lastFed: number;
  prevFed: number;
  successors: Successors;
  /** Per layer: cross keys transposed [a, maxContext8] and values [maxContext, a8]; pointer keys as the keys. */
  keysT: number[];
  values: number[];
  pointerKeysT: number;
  /** Per layer: self keys and values [maxAnswer, s8]. */
  selfKeys: number[];
  selfValues: number[];
  /** Each context token's form (space one-hot, case one-hot), [maxContext, 5]. */
  form: Float32Array;
  /** p_gen's room when only a few words are allowed (all words: a view of the arena's scratch). */
  ownVocab: Float32Array;
  heads: RowHeads;
}

/** A linear layer in the arena: weights [in, pad8(out)], bias (0: none). */
interface Linear {
  w: number;
  b: number;
  inputs: number;
  outputs: number;
}

export class FusedNetwork {
  private readonly arena: KernelArena;
  private readonly js = new Map<string, Float32Array>();
  private readonly linears = new Map<string, Linear>();
  private readonly slots: Slot[] = [];
  /** Scratch: rows × widths for the step, and the encoder's per-token buffers. */
  private readonly scratch: Record<string, number> = {};
  private readonly maxContext8: number;
  private readonly maxAnswer8: number;
  /** Floats per row of the scores scratch: the longest context or answer. */
  private readonly scoresWidth: number;
  private jsFlops = 0;
  private readonly masks = new Map<Uint8Array, number>();

  constructor(
    readonly config: NetworkConfig,
    weights: readonly NamedWeight[],
    /** Rows decoded at once at most. */
    readonly capacity: number,
  ) {
    const { dModel: d, selfDim: s, attentionDim: a, maxContext, maxAnswer, decoderLayers, vocabSize: V } = config;
    const f = d * config.ffMult;
    this.maxContext8 = pad8(maxContext);
    this.maxAnswer8 = pad8(maxAnswer);
    this.scoresWidth = Math.max(this.maxContext8, this.maxAnswer8);
    const checked = checkedWeights(config, weights);
    const weightFloats = checked.reduce((n, w) => n + (w.shape.length === 2 ? w.shape[0] * pad8(w.shape[1]) : 0), 0);
    const slotFloats =
      decoderLayers * (a * this.maxContext8 + maxContext * pad8(a) + 2 * pad8(maxAnswer) * pad8(s)) +
      a * this.maxContext8;
    const rowWidths = pad8(d) * 4 + pad8(3 * s) + pad8(f) + pad8(V) + 4 * pad8(a) + pad8(maxAnswer);
    const encoderFloats = (maxContext + 8) * (pad8(d) * 3 + pad8(f) + pad8(a));
    const total = weightFloats + 4096 + 8 * pad8(V) + capacity * (slotFloats + rowWidths + 64) + encoderFloats;
    this.arena = new KernelArena(total);
    for (const w of checked) this.js.set(w.name, w.data);
    for (const w of checked)
      if (w.name.endsWith('_w') && w.shape.length === 2) this.addLinear(w.name.slice(0, -2), w.shape);
    const rows = capacity,
      arena = this.arena;
    for (const [name, width] of [
      ['x', pad8(d)],
      ['normed', pad8(d)],
      ['tmp', pad8(d)],
      ['qkv', pad8(3 * s)],
      ['attended', pad8(Math.max(s, a))],
      ['query', pad8(a)],
      ['hidden', pad8(f)],
      ['vocab', pad8(V)],
      ['scores', this.scoresWidth],
    ] as const)
      this.scratch[name] = arena.alloc(rows * width);
    const ctx = maxContext + 8;
    for (const [name, width] of [
      ['e', pad8(d)],
      ['padded', d], // rows of d floats back to back: a convolution window is k·d contiguous floats
      ['conv', pad8(d)],
      ['ff', pad8(f)],
      ['proj', pad8(a)],
    ] as const)
      this.scratch[`enc_${name}`] = arena.alloc(ctx * width);
    for (let i = 0; i < capacity; i++) this.slots.push(this.newSlot());
  }

  /** The fused copy of a tfjs network's current weights. */
  static fromNetwork(net: ExperienceNetwork, capacity: number): FusedNetwork {
    const weights = net.shapes().map(([name, shape]) => ({
      name,
      shape,
      data: net.variables.get(name)!.dataSync() as Float32Array,
    }));
    return new FusedNetwork(net.config, weights, capacity);
  }

  private addLinear(name: string, shape: number[]): void {
    const [inputs, outputs] = shape;
    const w = this.arena.matrix(this.js.get(`${name}_w`)!, inputs, outputs);
    const bias = this.js.get(`${name}_b`);
    let b = 0;
    if (bias && bias.length === outputs) {
      b = this.arena.alloc(pad8(outputs));
      this.arena.f32.set(bias, b);
    }
    this.linears.set(name, { w, b, inputs, outputs });
  }

  private newSlot(): Slot {
    const { decoderLayers, attentionDim: a, selfDim: s, maxContext, maxAnswer, vocabSize } = this.config;
    const layers = Array.from({ length: decoderLayers });
    return {
      contextLength: 0,
      fed: 0,
      lastFed: 0,
      prevFed: 0,
      successors: new Successors([], 0),
      keysT: layers.map(() => this.arena.alloc(a * this.maxContext8)),
      values: layers.map(() => this.arena.alloc(maxContext * pad8(a))),
      pointerKeysT: this.arena.alloc(a * this.maxContext8),
      selfKeys: layers.map(() => this.arena.alloc(s * this.maxAnswer8)),
      selfValues: layers.map(() => this.arena.alloc(maxAnswer * pad8(s))),
      form: new Float32Array(maxContext * 5),
      ownVocab: new Float32Array(vocabSize),
      heads: {
        vocab: new Float32Array(0),
        bestWord: 0,
        pointer: new Float32Array(maxContext),
        gate: 0,
        space: 0,
        letterCase: 0,
      },
    };
  }

  /** Floating-point operations so far: the kernel's, plus self-attention's in JS. */
  get flops(): number {
    return this.arena.flops + this.jsFlops;
  }

  // ---- building blocks on the arena ---------------------------------------------------------------

  /** out[m, ·] = x[m, ·] · W (+ b) for the named linear layer. */
  private linear(name: string, x: number, ldx: number, out: number, ldo: number, m: number): void {
    const l = this.linears.get(name);
    if (!l) throw new Error(`FusedNetwork: no linear layer '${name}'`);
    this.arena.matmul(x, ldx, l.w, pad8(l.outputs), l.b, out, ldo, m, l.inputs, pad8(l.outputs));
  }

  /** LayerNorm of m rows of d values (stride ld) into out, as network.ts computes it. */
  private layerNorm(x: number, ld: number, out: number, ldo: number, m: number, name: string): void {
    const f = this.arena.f32,
      d = this.config.dModel;
    const g = this.js.get(`${name}_g`)!,
      b = this.js.get(`${name}_b`)!;
    for (let i = 0; i < m; i++) {
      const xi = x + i * ld,
        oi = out + i * ldo;
      let mean = 0;
      for (let k = 0; k < d; k++) mean += f[xi + k];
      mean /= d;
      let variance = 0;
      for (let k = 0; k < d; k++) variance += (f[xi + k] - mean) ** 2;
      const scale = 1 / Math.sqrt(variance / d + 1e-5);
      for (let k = 0; k < d; k++) f[oi + k] = (f[xi + k] - mean) * scale * g[k] + b[k];
    }
  }

  /** x += y over m rows of `width` values. */
  private addInto(x: number, ldx: number, y: number, ldy: number, m: number, width: number): void {
    const f = this.arena.f32;
    for (let i = 0; i < m; i++) for (let k = 0; k < width; k++) f[x + i * ldx + k] += f[y + i * ldy + k];
  }

  /** gelu over m rows of ld floats (padding columns hold 0, and gelu(0) = 0). */
  private geluRows(x: number, ld: number, m: number): void {
    this.arena.gelu(x, m * ld);
  }

  /** The embedding sum of one token into row `out`. */
  private embed(
    out: number,
    id: number,
    space: number,
    letterCase: number,
    position: number,
    table: string,
    segment: number,
  ): void {
    const f = this.arena.f32,
      d = this.config.dModel;
    const tok = this.js.get('tok')!,
      spaces = this.js.get('space')!,
      cases = this.js.get('case')!,
      positions = this.js.get(table)!;
    // Plain indexed loops (no iterator over the tables: 7 % of a decoder's time), summed in the same order.
    const t = id * d,
      s = space * d,
      c = letterCase * d,
      p = position * d;
    if (segment < 0) {
      for (let k = 0; k < d; k++) f[out + k] = 0 + tok[t + k] + spaces[s + k] + cases[c + k] + positions[p + k];
      return;
    }
    const segments = this.js.get('seg')!,
      g = segment * d;
    for (let k = 0; k < d; k++)
      f[out + k] = 0 + tok[t + k] + spaces[s + k] + cases[c + k] + positions[p + k] + segments[g + k];
  }

  // ---- the encoder ---------------------------------------------------------------------------------

  /** Encodes `context` into slot `slot` and resets its answer; the row then decodes from there. */
  encode(slot: number, context: Sequence): void {
    const { dModel: d, kernel, encoderBlocks, decoderLayers, attentionDim: a } = this.config;
    const n = context.ids.length;
    if (n > this.config.maxContext)
      throw new Error(`A context of ${n} tokens does not fit the network (${this.config.maxContext}).`);
    const f = this.arena.f32,
      S = this.scratch,
      d8 = pad8(d),
      ff8 = pad8(this.config.ffMult * d);
    const half = (kernel - 1) / 2;
    for (let j = 0; j < n; j++)
      this.embed(
        S.enc_e + j * d8,
        context.ids[j],
        context.spaces[j],
        context.cases[j],
        j,
        'enc_pos',
        context.segments[j],
      );
    for (let i = 0; i < encoderBlocks; i++) {
      const p = `enc${i}`;
      // The convolution's windows: rows of d back to back with `half` zero rows each side, so the window of
      // token j is k·d contiguous floats from row j (what training's shifted copies concatenate).
      const padded = S.enc_padded;
      f.fill(0, padded, padded + half * d);
      f.fill(0, padded + (n + half) * d, padded + (n + 2 * half) * d);
      this.layerNorm(S.enc_e, d8, padded + half * d, d, n, `${p}/ln1`);
      this.linear(`${p}/conv`, padded, d, S.enc_conv, d8, n);
      this.geluRows(S.enc_conv, d8, n);
      this.linear(`${p}/proj`, S.enc_conv, d8, S.enc_ff, d8, n);
      this.addInto(S.enc_e, d8, S.enc_ff, d8, n, d);
      this.layerNorm(S.enc_e, d8, S.enc_conv, d8, n, `${p}/ln2`);
      this.linear(`${p}/w1`, S.enc_conv, d8, S.enc_ff, ff8, n);
      this.geluRows(S.enc_ff, ff8, n);
      this.linear(`${p}/w2`, S.enc_ff, ff8, S.enc_conv, d8, n);
      this.addInto(S.enc_e, d8, S.enc_conv, d8, n, d);
    }
    const memory = S.enc_conv;
    this.layerNorm(S.enc_e, d8, memory, d8, n, 'enc_ln');
    const row = this.slots[slot];
    const a8 = pad8(a);
    for (let l = 0; l < decoderLayers; l++) {
      this.linear(`dec${l}/xk`, memory, d8, S.enc_proj, a8, n);
      this.transposeInto(S.enc_proj, a8, n, row.keysT[l]);
      this.linear(`dec${l}/xv`, memory, d8, row.values[l], a8, n);
    }
    this.linear('ptr_k', memory, d8, S.enc_proj, a8, n);
    this.transposeInto(S.enc_proj, a8, n, row.pointerKeysT);
    row.contextLength = n;
    row.fed = 0;
    row.lastFed = row.prevFed = 0;
    row.successors = new Successors(context.ids, n);
    row.form.fill(0, 0, n * 5);
    for (let j = 0; j < n; j++) {
      row.form[j * 5 + context.spaces[j]] = 1;
      row.form[j * 5 + 2 + context.cases[j]] = 1;
    }
  }

  /** [n, a] (stride ld) → [a, maxContext8], zero past n up to the kernel's block. */
  private transposeInto(from: number, ld: number, n: number, to: number): void {
    const f = this.arena.f32,
      a = this.config.attentionDim,
      L = this.maxContext8;
    for (let c = 0; c < a; c++) {
      const o = to + c * L;
      for (let j = 0; j < n; j++) f[o + j] = f[from + j * ld + c];
      f.fill(0, o + n, o + pad8(n));
    }
  }

  // ---- one decoder step ------------------------------------------------------------------------------

  /**
   * Feeds one token to each of `slots` (ids, spaces, cases row by row) and returns each row's heads
   * where `requests[r].allowed` asks for them (null where the next token is forced).
   */
  step(
    slots: readonly number[],
    ids: ArrayLike<number>,
    spaces: ArrayLike<number>,
    cases: ArrayLike<number>,
    requests: readonly HeadRequest[],
  ): (RowHeads | null)[] {
    const B = slots.length;
    if (B > this.capacity) throw new Error(`FusedNetwork: ${B} rows, room for ${this.capacity}.`);
    const { dModel: d, decoderLayers } = this.config;
    const S = this.scratch,
      d8 = pad8(d);
    for (let r = 0; r < B; r++) {
      const row = this.slots[slots[r]];
      if (row.fed >= this.config.maxAnswer) throw new Error(`An answer longer than ${this.config.maxAnswer} tokens.`);
      this.embed(S.x + r * d8, ids[r], spaces[r], cases[r], row.fed, 'dec_pos', -1);
    }
    for (let l = 0; l < decoderLayers; l++) {
      this.selfAttend(slots, l);
      this.crossAttend(slots, l);
      const ff8 = pad8(this.config.ffMult * d);
      this.layerNorm(S.x, d8, S.normed, d8, B, `dec${l}/ln3`);
      this.linear(`dec${l}/w1`, S.normed, d8, S.hidden, ff8, B);
      this.geluRows(S.hidden, ff8, B);
      this.linear(`dec${l}/w2`, S.hidden, ff8, S.tmp, d8, B);
      this.addInto(S.x, d8, S.tmp, d8, B, d);
    }
    for (let r = 0; r < B; r++) {
      const row = this.slots[slots[r]];
      row.prevFed = row.lastFed;
      row.lastFed = ids[r];
      row.fed++;
    }
    return this.heads(slots, requests);
  }

  /** Causal self-attention of every row's new token on its own cache (which the token joins). */
  private selfAttend(slots: readonly number[], layer: number): void {
    const { selfDim: s, heads: h, dModel: d } = this.config;
    const B = slots.length,
      S = this.scratch,
      f = this.arena.f32;
    const d8 = pad8(d),
      qkv8 = pad8(3 * s),
      s8 = pad8(s),
      dh = s / h;
    this.layerNorm(S.x, d8, S.normed, d8, B, `dec${layer}/ln1`);
    this.linear(`dec${layer}/qkv`, S.normed, d8, S.qkv, qkv8, B);
    const A = this.maxAnswer8,
      scale = 1 / Math.sqrt(dh);
    for (let r = 0; r < B; r++) {
      const row = this.slots[slots[r]];
      const q = S.qkv + r * qkv8,
        t = row.fed;
      const keysT = row.selfKeys[layer],
        values = row.selfValues[layer];
      for (let c = 0; c < s; c++) f[keysT + c * A + t] = f[q + s + c];
      f.set(f.subarray(q + 2 * s, q + 3 * s), values + t * s8);
      for (let c = 0; c < s; c++) f[q + c] *= scale;
      this.jsFlops += 4 * (t + 1) * s;
      for (let head = 0; head < h; head++)
        this.selfHead(q, keysT, values, S.attended + r * s8, S.scores + r * this.scoresWidth, head * dh, dh, t + 1);
    }
    this.linear(`dec${layer}/out`, S.attended, s8, S.tmp, d8, B);
    this.addInto(S.x, d8, S.tmp, d8, B, d);
  }

  /** One head (columns o … o + dh) of a row's self-attention over its first n tokens, into out. */
  private selfHead(
    q: number,
    keysT: number,
    values: number,
    out: number,
    scores: number,
    o: number,
    dh: number,
    n: number,
  ): void {
    const f = this.arena.f32,
      A = this.maxAnswer8,
      s8 = pad8(this.config.selfDim);
    if (dh % 8 === 0) {
      // The kernel: scores = q · Kᵀ (keys are stored transposed), then weights · V.
      this.arena.matmul(q + o, dh, keysT + o * A, A, 0, scores, A, 1, dh, pad8(n));
      this.arena.softmax(scores, n);
      this.arena.matmul(scores, A, values + o, s8, 0, out + o, s8, 1, n, dh);
      return;
    }
    for (let u = 0; u < n; u++) {
      let dot = 0;
      for (let k = 0; k < dh; k++) dot += f[q + o + k] * f[keysT + (o + k) * A + u];
      f[scores + u] = dot;
    }
    this.arena.softmax(scores, n);
    for (let k = 0; k < dh; k++) {
      let acc = 0;
      for (let u = 0; u < n; u++) acc += f[scores + u] * f[values + u * s8 + o + k];
      f[out + o + k] = acc;
    }
  }

  /** Cross-attention of every row on its own encoded context (one head of width a). */
  private crossAttend(slots: readonly number[], layer: number): void {
    const { attentionDim: a, dModel: d } = this.config;
    const B = slots.length,
      S = this.scratch,
      f = this.arena.f32;
    const d8 = pad8(d),
      a8 = pad8(a),
      L = this.maxContext8;
    this.layerNorm(S.x, d8, S.normed, d8, B, `dec${layer}/ln2`);
    this.linear(`dec${layer}/xq`, S.normed, d8, S.query, a8, B);
    const scale = 1 / Math.sqrt(a);
    for (let r = 0; r < B; r++) {
      const row = this.slots[slots[r]];
      const n = row.contextLength,
        q = S.query + r * a8,
        scores = S.scores + r * this.scoresWidth;
      for (let k = 0; k < a; k++) f[q + k] *= scale;
      this.arena.matmul(q, a8, row.keysT[layer], L, 0, scores, this.scoresWidth, 1, a, pad8(n));
      this.arena.softmax(scores, n);
      this.arena.matmul(scores, this.scoresWidth, row.values[layer], a8, 0, S.attended + r * a8, a8, 1, n, a8);
    }
    this.linear(`dec${layer}/proj`, S.attended, a8, S.tmp, d8, B);
    this.addInto(S.x, d8, S.tmp, d8, B, d);
  }

  // ---- the heads -----------------------------------------------------------------------------------

  private heads(slots: readonly number[], requests: readonly HeadRequest[]): (RowHeads | null)[] {
    const { dModel: d, attentionDim: a, vocabSize: V } = this.config;
    const S = this.scratch,
      f = this.arena.f32,
      d8 = pad8(d),
      a8 = pad8(a),
      V8 = pad8(V),
      L = this.maxContext8;
    const asked = slots.map((_, r) => r).filter((r) => requests[r].allowed);
    if (asked.length === 0) return slots.map(() => null);
    // The asking rows' final states, packed: hidden row i belongs to row asked[i].
    for (let i = 0; i < asked.length; i++) f.copyWithin(S.tmp + i * d8, S.x + asked[i] * d8, S.x + asked[i] * d8 + d);
    this.layerNorm(S.tmp, d8, S.normed, d8, asked.length, 'dec_ln');
    // The vocabulary projection only for the rows that choose among all words (packed: fullIndex).
    const fullIndex = new Map<number, number>();
    asked.forEach((r, i) => {
      if (requests[r].few) return;
      const at = S.tmp + fullIndex.size * d8;
      fullIndex.set(r, fullIndex.size);
      f.copyWithin(at, S.normed + i * d8, S.normed + i * d8 + d);
    });
    this.linear('vocab', S.tmp, d8, S.vocab, V8, fullIndex.size);
    this.linear('ptr_q', S.normed, d8, S.query, a8, asked.length);
    const out: (RowHeads | null)[] = slots.map(() => null);
    asked.forEach((r, i) => {
      const row = this.slots[slots[r]];
      const hidden = f.subarray(S.normed + i * d8, S.normed + i * d8 + d);
      const heads = row.heads;
      const k = fullIndex.get(r);
      if (k === undefined) this.fewWords(hidden, requests[r].few!, row.ownVocab, heads);
      else this.allWords(S.vocab + k * V8, requests[r].allowed!, heads);
      const q = S.query + i * a8;
      for (let c = 0; c < a; c++) f[q + c] /= Math.sqrt(a);
      this.arena.matmul(
        q,
        a8,
        row.pointerKeysT,
        L,
        0,
        S.scores + r * this.scoresWidth,
        this.scoresWidth,
        1,
        a,
        pad8(row.contextLength),
      );
      this.pointerAndGate(row, hidden, S.scores + r * this.scoresWidth);
      this.formHeads(row, hidden);
      out[r] = heads;
    });
    return out;
  }

  /**
   * p_gen over the allowed words from the full logits at `at`, in place (heads.vocab is a view of it,
   * valid until the next step); the others 0; the best allowed word (the first of ties).
   */
  private allWords(at: number, allowed: Uint8Array, heads: RowHeads): void {
    const f = this.arena.f32,
      V = this.config.vocabSize;
    let max = -Infinity,
      best = 0;
    for (let w = 0; w < V; w++)
      if (allowed[w] === 1 && f[at + w] > max) {
        max = f[at + w];
        best = w;
      }
    const inverse = 1 / this.arena.expShift(at, this.maskOf(allowed), pad8(V), max, at);
    this.arena.scale(at, pad8(V), inverse, at);
    heads.vocab = f.subarray(at, at + V);
    heads.bestWord = best;
  }

  /** An allowed set as a float mask in the arena (1 allowed, 0 not, 0 past the vocabulary), made once per set. */
  private maskOf(allowed: Uint8Array): number {
    let at = this.masks.get(allowed);
    if (at === undefined) {
      at = this.arena.alloc(pad8(allowed.length));
      for (let w = 0; w < allowed.length; w++) this.arena.f32[at + w] = allowed[w];
      this.masks.set(allowed, at);
    }
    return at;
  }

  /** p_gen when only a few words are allowed (a verdict): just their logits. */
  private fewWords(hidden: Float32Array, words: readonly number[], vocab: Float32Array, heads: RowHeads): void {
    const W = this.js.get('vocab_w')!,
      b = this.js.get('vocab_b')!,
      V = this.config.vocabSize;
    vocab.fill(0);
    const logits = words.map((w) => {
      let z = b[w];
      for (let k = 0; k < hidden.length; k++) z += hidden[k] * W[k * V + w];
      return z;
    });
    const max = Math.max(...logits);
    const exps = logits.map((z) => Math.exp(z - max));
    const sum = exps.reduce((x, y) => x + y, 0);
    words.forEach((w, i) => (vocab[w] = exps[i] / sum));
    heads.vocab = vocab;
    heads.bestWord = words.reduce((best, w) =>
      vocab[w] > vocab[best] || (vocab[w] === vocab[best] && w < best) ? w : best,
    );
  }

  /** Copy continuation on the pointer's logits (at `at`), its softmax over the row's context, and the gate. */
  private pointerAndGate(row: Slot, hidden: Float32Array, at: number): void {
    const f = this.arena.f32;
    const d = this.config.dModel;
    const Wc = this.js.get('ptr_cont_w')!,
      bc = this.js.get('ptr_cont_b')!,
      gc = this.js.get('gate_cont_w')!;
    const Wg = this.js.get('gate_w')!,
      bg = this.js.get('gate_b')!;
    let s1 = bc[0],
      s2 = bc[1],
      z = bg[0];
    for (let k = 0; k < d; k++) {
      s1 += hidden[k] * Wc[k * 2];
      s2 += hidden[k] * Wc[k * 2 + 1];
      z += hidden[k] * Wg[k];
    }
    const { one, two } = row.successors.of(row.prevFed, row.lastFed);
    for (const j of one) f[at + j] += s1;
    for (const j of two) f[at + j] += s2;
    const n = row.contextLength;
    this.arena.softmax(at, n);
    row.heads.pointer.set(f.subarray(at, at + n));
    z += (one.length ? gc[0] : 0) + (two.length ? gc[1] : 0);
    row.heads.gate = 1 / (1 + Math.exp(-z));
  }

  /** The space and case heads: the hidden state plus the form of what the pointer looks at. */
  private formHeads(row: Slot, hidden: Float32Array): void {
    const d = this.config.dModel,
      pointed = new Float64Array(5);
    for (let j = 0; j < row.contextLength; j++) {
      const w = row.heads.pointer[j];
      if (w !== 0) for (let k = 0; k < 5; k++) pointed[k] += w * row.form[j * 5 + k];
    }
    const head = (name: 'space' | 'case', classes: number, from: number) => {
      const W = this.js.get(`${name}_w`)!,
        bias = this.js.get(`${name}_b`)!,
        U = this.js.get(`${name}_ptr_w`)!;
      let best = 0,
        bestLogit = -Infinity;
      for (let c = 0; c < classes; c++) {
        let logit = bias[c];
        for (let k = 0; k < d; k++) logit += hidden[k] * W[k * classes + c];
        for (let k = 0; k < classes; k++) logit += pointed[from + k] * U[k * classes + c];
        if (logit > bestLogit) {
          bestLogit = logit;
          best = c;
        }
      }
      return best;
    };
    row.heads.space = head('space', 2, 0);
    row.heads.letterCase = head('case', 3, 2);
  }
}
