/**
 * The learned network's weights: its size (NetworkConfig) and the ranges a model file's may take, every
 * weight's name and shape in checkpoint order, and the check a checkpoint passes before the network takes its weights.
 * Also the rows of tokens the network reads, and the whole-number field checks of a model file's settings.
 */

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
  /** Rows of the segment table (format.ts SEGMENT_COUNT). */
  segments: number;
}

/** What each network field of a model file may be (wide enough for any laptop-sized model, no wider). */
const NETWORK_RANGES: Readonly<Record<keyof NetworkConfig, WholeRange>> = {
  vocabSize: { min: 1, max: 1_000_000 },
  dModel: { min: 1, max: 4096 },
  encoderBlocks: { min: 1, max: 64 },
  kernel: { min: 1, max: 63, odd: true },
  decoderLayers: { min: 1, max: 64 },
  heads: { min: 1, max: 64 },
  selfDim: { min: 1, max: 4096 },
  attentionDim: { min: 1, max: 4096 },
  ffMult: { min: 1, max: 16 },
  maxContext: { min: 1, max: 65_536 },
  maxAnswer: { min: 1, max: 65_536 },
  segments: { min: 1, max: 64 },
};

/** Why `network` (a model file's `network`) is not a network this code can build, or null. */
export function networkConfigProblem(network: unknown): string | null {
  const problem = wholeFieldsProblem(network, 'network', NETWORK_RANGES);
  if (problem) return problem;
  const { heads, selfDim } = network as NetworkConfig;
  // Self-attention splits its width evenly across the heads (network.ts, fused-network.ts).
  if (selfDim % heads !== 0) return `network.heads (${heads}) does not divide network.selfDim (${selfDim})`;
  return null;
}

export interface NamedWeight {
  name: string;
  shape: number[];
  data: Float32Array;
}

/** Every weight's name and shape, in checkpoint order. */
export function weightShapes(config: NetworkConfig): [string, number[]][] {
  const {
    vocabSize: V,
    dModel: d,
    encoderBlocks,
    kernel,
    decoderLayers,
    ffMult,
    maxContext,
    maxAnswer,
    segments,
    attentionDim: a,
    selfDim: s,
  } = config;
  const f = d * ffMult;
  const out: [string, number[]][] = [
    ['tok', [V, d]],
    ['space', [2, d]],
    ['case', [3, d]],
    ['seg', [segments, d]],
    ['enc_pos', [maxContext, d]],
    ['dec_pos', [maxAnswer, d]],
  ];
  for (let i = 0; i < encoderBlocks; i++) {
    const p = `enc${i}`;
    out.push(
      [`${p}/ln1_g`, [d]],
      [`${p}/ln1_b`, [d]],
      [`${p}/conv_w`, [kernel * d, d]],
      [`${p}/conv_b`, [d]],
      [`${p}/proj_w`, [d, d]],
      [`${p}/proj_b`, [d]],
      [`${p}/ln2_g`, [d]],
      [`${p}/ln2_b`, [d]],
      [`${p}/w1_w`, [d, f]],
      [`${p}/w1_b`, [f]],
      [`${p}/w2_w`, [f, d]],
      [`${p}/w2_b`, [d]],
    );
  }
  out.push(['enc_ln_g', [d]], ['enc_ln_b', [d]]);
  for (let l = 0; l < decoderLayers; l++) {
    const p = `dec${l}`;
    out.push(
      [`${p}/ln1_g`, [d]],
      [`${p}/ln1_b`, [d]],
      [`${p}/qkv_w`, [d, 3 * s]],
      [`${p}/qkv_b`, [3 * s]],
      [`${p}/out_w`, [s, d]],
      [`${p}/out_b`, [d]],
      [`${p}/ln2_g`, [d]],
      [`${p}/ln2_b`, [d]],
      [`${p}/xq_w`, [d, a]],
      [`${p}/xk_w`, [d, a]],
      [`${p}/xv_w`, [d, a]],
      [`${p}/proj_w`, [a, d]],
      [`${p}/proj_b`, [d]],
      [`${p}/ln3_g`, [d]],
      [`${p}/ln3_b`, [d]],
      [`${p}/w1_w`, [d, f]],
      [`${p}/w1_b`, [f]],
      [`${p}/w2_w`, [f, d]],
      [`${p}/w2_b`, [d]],
    );
  }
  out.push(
    ['dec_ln_g', [d]],
    ['dec_ln_b', [d]],
    ['vocab_w', [d, V]],
    ['vocab_b', [V]],
    ['space_w', [d, 2]],
    ['space_b', [2]],
    ['case_w', [d, 3]],
    ['case_b', [3]],
    ['gate_w', [d, 1]],
    ['gate_b', [1]],
    ['ptr_q_w', [d, a]],
    ['ptr_k_w', [d, a]],
    ['space_ptr_w', [2, 2]],
    ['case_ptr_w', [3, 3]],
  );
  out.push(['ptr_cont_w', [d, 2]], ['ptr_cont_b', [2]], ['gate_cont_w', [2, 1]]);
  return out;
}

/** The weights in checkpoint order, each checked for its name and size; a clear error names the first that is off. */
export function checkedWeights(config: NetworkConfig, weights: readonly NamedWeight[]): NamedWeight[] {
  const shapes = weightShapes(config);
  const byName = new Map(weights.map((w) => [w.name, w]));
  const known = new Set(shapes.map(([name]) => name));
  const extra = weights.find((w) => !known.has(w.name));
  if (extra)
    throw new Error(
      `The model file has a weight '${extra.name}' this network does not have: it was made for another network.`,
    );
  return shapes.map(([name, shape]) => {
    const w = byName.get(name);
    if (!w) throw new Error(`The model file has no weight '${name}': it was made for another network.`);
    const size = shape.reduce((a, b) => a * b, 1);
    if (w.data.length !== size)
      throw new Error(
        `Weight '${name}' has ${w.data.length} values in the model file; this network needs [${shape}] (${size}).`,
      );
    return { name, shape, data: w.data };
  });
}

// ---- what the network reads: rows of tokens, and a training batch (fit.ts makeBatch builds it) ----

/** Tokens of B rows, flattened row-major; positions are each token's index in its part. */
export interface TokenRows {
  ids: Int32Array;
  spaces: Int32Array;
  cases: Int32Array;
  positions: Int32Array;
  /** Encoder only. */
  segments?: Int32Array;
}

/** Context rows: every token has its segment. */
export type ContextRows = TokenRows & { segments: Int32Array };

/** A training batch: contexts [B, Lc] and decoder inputs/targets [B, La], right-padded. */
export interface TrainBatch {
  rows: number;
  contextLength: number;
  answerLength: number;
  context: ContextRows;
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

// ---- checks of a model file's settings objects (network, format options) --------------------------
// Each field a whole number in its allowed range, and no field the reader does not know. A file's numbers
// size the arrays the decoder allocates, so nothing is taken on trust.

/** The range a whole-number field may take (and whether it must be odd: a centred conv kernel). */
export interface WholeRange {
  min: number;
  max: number;
  odd?: boolean;
}

/** The first problem of `value`'s fields, named as `path.field`, or null when every field is in range. */
export function wholeFieldsProblem(
  value: unknown,
  path: string,
  ranges: Readonly<Record<string, WholeRange>>,
  otherFields: readonly string[] = [],
): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${path} is missing`;
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!Object.hasOwn(ranges, key) && !otherFields.includes(key)) return `${path}.${key} is not a field of ${path}`;
  }
  for (const [key, range] of Object.entries(ranges)) {
    const problem = wholeNumberProblem(fields[key], range);
    if (problem) return `${path}.${key} is ${shown(fields[key])}; it must be ${problem}`;
  }
  return null;
}

/** What a number must be, when `value` is not it; null when it is. */
function wholeNumberProblem(value: unknown, range: WholeRange): string | null {
  const ok =
    typeof value === 'number' &&
    Number.isInteger(value) &&
    value >= range.min &&
    value <= range.max &&
    (!range.odd || value % 2 === 1);
  return ok ? null : `${range.odd ? 'an odd' : 'a'} whole number from ${range.min} to ${range.max}`;
}

/** A field's value as the message shows it (short, and 'missing' for none). */
export function shown(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}
