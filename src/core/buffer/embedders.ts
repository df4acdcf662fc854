/**
 * Embedders: φ(s, a) for the replay buffer's retrieval (paper §3, "Top_k cos(φ(s_t, a_t),
 * φ(s_i, a_i))"; the paper leaves φ open — "an arbitrary semantic encoder").
 *
 * - `HashedNgramEmbedder` (default, id 'hashed-ngram-256'): signed feature hashing of word
 *   uni/bigrams and character trigrams, per field. No model, deterministic on every JS engine,
 *   40–55k embeddings/s in Node (src/bench/buffer-retrieval.ts) — cheap enough to embed every dreamed
 *   transition as it happens.
 * - `LlmEmbedder`: an adapter over WebLLM's `engine.embeddings.create` (OpenAI embeddings shape).
 *   Recommended model: `snowflake-arctic-embed-s-q0f32-MLC-b4` (384 dims, 238.7 MB VRAM,
 *   512-token context; the `-m-` build gives 768 dims for 539.4 MB). No weights can be
 *   downloaded in this workplace, so its tests run against a fake engine.
 *
 * Every vector is L2-normalised, so cosine similarity is a plain dot product (retrieval.ts).
 * Vectors of different embedders never mix: a buffer transition records its embedder's `id`.
 */
import { hashString } from '../rng';
import { DreamGymError } from '../errors';

export interface Embedder {
  /** Identifies the vector space (model and settings); stored next to every embedding. */
  readonly id: string;
  /** Vector length (an LlmEmbedder without `dims` reports 0 until its first answer). */
  readonly dims: number;
  /** One L2-normalised vector per text, in order. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Raised for a misconfigured embedder or a malformed engine answer; the message names the fix. */
export class EmbedderError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'embedder-invalid',
      fix: "Correct the embedder's setting the message names, or use the default hashed embedder.",
    });
    this.name = 'EmbedderError';
  }
}

// =============================================================================================
// The text of a transition
// =============================================================================================

/** Field markers of `transitionText`; `HashedNgramEmbedder` reads them back to weight fields. */
export const FIELD_MARKERS = {
  instruction: 'Instruction: ',
  observation: 'Observation: ',
  action: 'Action: ',
} as const;

export interface TransitionTextOptions {
  /** Characters kept from the start of the observation (default 512). */
  observationHead?: number;
  /** Characters kept from the end of the observation (default 256). */
  observationTail?: number;
  /** Characters kept of the instruction (default 300) and of the action (default 200). */
  maxInstruction?: number;
  maxAction?: number;
}

const ELISION = ' … ';

/**
 * The text embedded for a transition: what the experience model retrieves by, φ(s, a), with s
 * = (instruction, observation). One line per field, whitespace collapsed:
 *
 *     Instruction: i need a blue cotton shirt …
 *     Observation: Back to Search [SEP] Page 1 (Total results: 50) [SEP] … [SEP] Buy Now
 *     Action: click[b0xyz98765]
 *
 * The observation is bounded to its first 512 and last 256 characters (with ' … ' between):
 * snowflake-arctic-embed reads at most 512 tokens (WebLLM rejects longer inputs) and hashing
 * costs time linear in the text. The head says which page this is (page type, query, the top
 * results or the item's title and options); the tail holds the page's last items and its
 * buttons ('Buy Now', household receptacles); the middle of a long results page is more
 * results of the same kind. WebShop repeats the instruction at the top of every page
 * ('Instruction: [SEP] …'); that copy is removed, since the instruction is its own field.
 * Typical pages (median 489 characters in the seed data, max ~1.6k) fit nearly whole.
 */
export function transitionText(
  t: { instruction: string; observation: string; action: string },
  options: TransitionTextOptions = {},
): string {
  const head = options.observationHead ?? 512;
  const tail = options.observationTail ?? 256;
  const instruction = collapse(t.instruction);
  let observation = collapse(t.observation);
  if (instruction.length > 0) {
    // 'WebShop [SEP] Instruction: [SEP] <instruction> [SEP] Search' → 'WebShop [SEP] Search'.
    const at = observation.indexOf(instruction);
    const label = at >= 0 ? observation.slice(0, at).search(/Instruction:\s*(?:\[SEP\]\s*)?$/i) : -1;
    if (label >= 0) {
      observation = (
        observation.slice(0, label) + observation.slice(at + instruction.length).replace(/^\s*\[SEP\]\s*/i, '')
      ).trim();
    }
  }
  if (observation.length > head + tail + ELISION.length) {
    // Cut at spaces (within 24 characters) so no word is split in two.
    let headEnd = observation.lastIndexOf(' ', head);
    if (headEnd < head - 24) headEnd = head;
    let tailStart = observation.indexOf(' ', observation.length - tail);
    if (tailStart < 0 || tailStart > observation.length - tail + 24) tailStart = observation.length - tail;
    observation = observation.slice(0, headEnd).trimEnd() + ELISION + observation.slice(tailStart).trimStart();
  }
  return (
    FIELD_MARKERS.instruction +
    clip(instruction, options.maxInstruction ?? 300) +
    '\n' +
    FIELD_MARKERS.observation +
    observation +
    '\n' +
    FIELD_MARKERS.action +
    clip(collapse(t.action), options.maxAction ?? 200)
  );
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

// =============================================================================================
// HashedNgramEmbedder
// =============================================================================================

export interface HashedNgramOptions {
  /** Vector length; a power of two (default 256). */
  dims: number;
  /**
   * Weight of each field's (separately normalised) sub-vector. Fields hash into the same dims
   * with different seeds (nearly orthogonal), so cos(x, y) ≈ Σ w_f² cos_f / Σ w_f²: with the
   * defaults the page carries ~46% of the similarity, the action ~37%, the instruction ~17%.
   * `text` is any text outside the markers of `transitionText`.
   */
  weights: { instruction: number; observation: number; action: number; text: number };
  /** Weight of one word unigram, word bigram and character trigram before the √ damping. */
  unigram: number;
  bigram: number;
  trigram: number;
  /** Character trigrams (of '#token#') only for tokens at least this long (shorter: unigram suffices). */
  trigramMinLength: number;
}

export const DEFAULT_HASHED_NGRAM_OPTIONS: Readonly<HashedNgramOptions> = Object.freeze({
  dims: 256,
  weights: Object.freeze({ instruction: 0.6, observation: 1.0, action: 0.9, text: 1.0 }),
  unigram: 1.0,
  bigram: 0.5,
  trigram: 0.1,
  trigramMinLength: 4,
});

const FIELD_INSTRUCTION = 0,
  FIELD_OBSERVATION = 1,
  FIELD_ACTION = 2,
  FIELD_TEXT = 3;
const FIELD_PREFIXES = ['i', 'o', 'a', 't'];
const FNV_OFFSET = 0x811c9dc5,
  FNV_PRIME = 0x01000193;
const BOUNDARY = 35; // '#': pads tokens for character trigrams; never a token character
const S = 115,
  E = 101,
  P = 112; // 's', 'e', 'p'

/** murmur3's 32-bit finaliser: every input bit flips about half the output bits. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Token characters (of lower-cased text): a–z, 0–9, and letters beyond ASCII (not punctuation/symbols). */
function isTokenChar(c: number): boolean {
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
  return c >= 0xc0 && c !== 0xd7 && c !== 0xf7 && !(c >= 0x2000 && c <= 0x2bff) && !(c >= 0x3000 && c <= 0x303f);
}

/**
 * The default embedder: lower-cased tokens (words and numbers, '40.00' kept whole), word
 * unigrams and bigrams, and character trigrams of longer tokens (so 'shirt' and 'shirts' stay
 * close), each hashed with the signed hashing trick (one hash picks the dimension, its top bit
 * the sign, so collisions cancel in expectation instead of piling up) into `dims` dimensions.
 * Every field has its own hash seeds and its own sub-vector; each sub-vector is damped by a
 * signed square root (a token repeated n times counts √n, so the 30 '[SEP]'-like repeats of a
 * page do not drown its content), normalised, weighted, summed, and the sum normalised again.
 * WebShop's '[SEP]' separator is not a token: it ends a bigram chain.
 */
export class HashedNgramEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;
  readonly options: Readonly<HashedNgramOptions>;
  private readonly mask: number;
  private readonly fieldWeights: Float64Array;
  private readonly unigramSeed: Uint32Array;
  private readonly bigramSeed: Uint32Array;
  private readonly trigramSeed: Uint32Array;
  /** [field, dim] accumulators, reused by every call (embedding is synchronous inside). */
  private readonly acc: Float64Array;
  private readonly used: Uint8Array;
  private readonly emptyVector: Float32Array;

  constructor(options: Partial<HashedNgramOptions> = {}) {
    const o: HashedNgramOptions = {
      ...DEFAULT_HASHED_NGRAM_OPTIONS,
      ...options,
      weights: { ...DEFAULT_HASHED_NGRAM_OPTIONS.weights, ...options.weights },
    };
    if (!Number.isInteger(o.dims) || o.dims < 8 || o.dims > 65536 || (o.dims & (o.dims - 1)) !== 0) {
      throw new EmbedderError(
        `HashedNgramEmbedder: dims must be a power of two between 8 and 65536, got ${o.dims}; use 256 (the default).`,
      );
    }
    const weights = [o.weights.instruction, o.weights.observation, o.weights.action, o.weights.text];
    if (weights.some((w) => !(w >= 0) || !Number.isFinite(w)) || weights.every((w) => w === 0)) {
      throw new EmbedderError(
        `HashedNgramEmbedder: field weights must be finite, non-negative and not all zero, got ${JSON.stringify(o.weights)}.`,
      );
    }
    this.options = Object.freeze(o);
    this.dims = o.dims;
    this.mask = o.dims - 1;
    const isDefault = JSON.stringify({ ...o, dims: 256 }) === JSON.stringify(DEFAULT_HASHED_NGRAM_OPTIONS);
    // Other settings are another vector space: the id says so (vectors of different ids never mix).
    this.id = isDefault
      ? `hashed-ngram-${o.dims}`
      : `hashed-ngram-${o.dims}-${hashString(JSON.stringify(o)).toString(16).padStart(8, '0')}`;
    this.fieldWeights = Float64Array.from(weights);
    this.unigramSeed = Uint32Array.from(FIELD_PREFIXES, (p) => hashString(`${p}|`));
    this.bigramSeed = Uint32Array.from(FIELD_PREFIXES, (p) => hashString(`${p}2|`));
    this.trigramSeed = Uint32Array.from(FIELD_PREFIXES, (p) => hashString(`${p}3|`));
    this.acc = new Float64Array(FIELD_PREFIXES.length * o.dims);
    this.used = new Uint8Array(FIELD_PREFIXES.length);
    // Text without a single token (e.g. '') still gets a unit vector: one fixed hashed feature.
    this.emptyVector = new Float32Array(o.dims);
    const h = fmix32(hashString('<empty>'));
    this.emptyVector[h & this.mask] = h & 0x80000000 ? -1 : 1;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    const out: Float32Array[] = new Array(texts.length);
    for (let i = 0; i < texts.length; i++) out[i] = this.embedOne(texts[i]);
    return out;
  }

  /** Synchronous embedding of one text (the same vector `embed` returns). */
  embedOne(text: string): Float32Array {
    const dims = this.dims;
    this.acc.fill(0);
    this.used.fill(0);
    let field = FIELD_TEXT;
    let start = 0;
    while (start <= text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      let from = start;
      if (text.startsWith(FIELD_MARKERS.instruction, start)) {
        field = FIELD_INSTRUCTION;
        from += FIELD_MARKERS.instruction.length;
      } else if (text.startsWith(FIELD_MARKERS.observation, start)) {
        field = FIELD_OBSERVATION;
        from += FIELD_MARKERS.observation.length;
      } else if (text.startsWith(FIELD_MARKERS.action, start)) {
        field = FIELD_ACTION;
        from += FIELD_MARKERS.action.length;
      }
      if (end > from) this.hashLine(text.slice(from, end).toLowerCase(), field);
      start = end + 1;
    }

    const out = new Float32Array(dims);
    let total = 0;
    for (let f = 0; f < FIELD_PREFIXES.length; f++) {
      const w = this.fieldWeights[f];
      if (this.used[f] === 0 || w === 0) continue;
      const base = f * dims;
      let norm2 = 0;
      for (let d = 0; d < dims; d++) {
        const x = this.acc[base + d];
        const damped = x >= 0 ? Math.sqrt(x) : -Math.sqrt(-x);
        this.acc[base + d] = damped;
        norm2 += damped * damped;
      }
      if (norm2 === 0) continue; // every feature cancelled out (practically never)
      const scale = w / Math.sqrt(norm2);
      for (let d = 0; d < dims; d++) out[d] += this.acc[base + d] * scale;
      total += 1;
    }
    if (total === 0) return this.emptyVector.slice();
    let norm2 = 0;
    for (let d = 0; d < dims; d++) norm2 += out[d] * out[d];
    if (norm2 === 0) return this.emptyVector.slice();
    const inv = 1 / Math.sqrt(norm2);
    for (let d = 0; d < dims; d++) out[d] *= inv;
    return out;
  }

  /** Streams the features of one lower-cased line into the field's accumulator (no strings built). */
  private hashLine(line: string, field: number): void {
    const acc = this.acc,
      mask = this.mask,
      base = field * this.dims;
    const uniSeed = this.unigramSeed[field],
      biSeed = this.bigramSeed[field],
      triSeed = this.trigramSeed[field];
    const wUni = this.options.unigram,
      wBi = this.options.bigram,
      wTri = this.options.trigram;
    const triMin = this.options.trigramMinLength;
    const n = line.length;
    let prevToken = -1; // hash of the previous token, -1 at a chain start
    let emitted = false;
    let i = 0;
    while (i < n) {
      // --- skip to the next token ------------------------------------------------------------
      let c = line.charCodeAt(i);
      if (c < 48 || !isTokenChar(c)) {
        i++;
        continue;
      }
      const tokenStart = i;
      let h = FNV_OFFSET;
      let len = 0;
      for (; i < n; i++) {
        c = line.charCodeAt(i);
        // '40.00', '6.76': a dot between digits stays inside the token.
        if (
          !(c >= 97 && c <= 122) &&
          !isTokenChar(c) &&
          !(c === 46 && len > 0 && i + 1 < n && isDigit(line.charCodeAt(i - 1)) && isDigit(line.charCodeAt(i + 1)))
        )
          break;
        h = Math.imul(h ^ c, FNV_PRIME);
        len++;
      }
      h >>>= 0;
      if (
        len === 3 &&
        line.charCodeAt(tokenStart) === S &&
        line.charCodeAt(tokenStart + 1) === E &&
        line.charCodeAt(tokenStart + 2) === P
      ) {
        prevToken = -1; // '[SEP]': a separator, not content
        continue;
      }
      emitted = true;
      // --- word unigram ------------------------------------------------------------------------
      let f = fmix32(h ^ uniSeed);
      acc[base + (f & mask)] += f & 0x80000000 ? -wUni : wUni;
      // --- word bigram -------------------------------------------------------------------------
      if (prevToken >= 0) {
        f = fmix32((Math.imul(prevToken, 0x9e3779b1) + h) ^ biSeed);
        acc[base + (f & mask)] += f & 0x80000000 ? -wBi : wBi;
      }
      prevToken = h;
      // --- character trigrams of '#token#' ------------------------------------------------------
      if (wTri !== 0 && len >= triMin) {
        let c1 = BOUNDARY,
          c2 = line.charCodeAt(tokenStart);
        for (let j = tokenStart + 1; j <= tokenStart + len; j++) {
          const c3 = j < tokenStart + len ? line.charCodeAt(j) : BOUNDARY;
          // (c1, c2) packed in 32 bits, scrambled by an odd multiplier (a bijection), then c3.
          f = fmix32(Math.imul(triSeed ^ (c1 | (c2 << 16)), 0x9e3779b1) ^ c3);
          acc[base + (f & mask)] += f & 0x80000000 ? -wTri : wTri;
          c1 = c2;
          c2 = c3;
        }
      }
    }
    if (emitted) this.used[field] = 1;
  }
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

// =============================================================================================
// LlmEmbedder (WebLLM's embeddings API, or anything with the same shape)
// =============================================================================================

/** The slice of WebLLM's `MLCEngineInterface` (and of OpenAI-style clients) this adapter needs. */
export interface EmbeddingEngine {
  embeddings: {
    create(request: { input: string | string[]; model?: string }): Promise<EmbeddingResponse>;
  };
}

export interface EmbeddingResponse {
  data: { embedding: number[]; index: number }[];
  usage?: { prompt_tokens?: number; total_tokens?: number; extra?: { prefill_tokens_per_s?: number } };
}

/** WebLLM's prebuilt embedding model we recommend: 384 dims, 238.7 MB VRAM, compiled batch 4, 512-token context. */
export const RECOMMENDED_EMBEDDING_MODEL = 'snowflake-arctic-embed-s-q0f32-MLC-b4';

/** BERT-style wrapping WebLLM's official embeddings example applies (its tokenizer adds no [CLS]/[SEP]). */
export const arcticInputTemplate = (text: string): string => `[CLS] ${text} [SEP]`;

export interface LlmEmbedderOptions {
  engine: EmbeddingEngine;
  /** Model id as the engine knows it, e.g. RECOMMENDED_EMBEDDING_MODEL (loaded next to the LLM with `reload([llmId, embedId])`). */
  model: string;
  /** Texts per `embeddings.create` call (default 32; WebLLM splits a call into its compiled batch itself). */
  batchSize?: number;
  /** Expected vector length; discovered from the first answer when absent. */
  dims?: number;
  /**
   * Applied to every text before it is sent. Default: `arcticInputTemplate` for
   * snowflake-arctic-embed models (as WebLLM's example does), the text unchanged otherwise.
   * Query and stored transitions go through the same template: retrieval here is symmetric
   * (transition against transition), so arctic's query prefix is not used.
   */
  inputTemplate?: (text: string) => string;
}

/**
 * Embeds through an LLM engine's embeddings API: batches the texts, orders each answer by
 * `index`, checks counts and lengths, and L2-normalises. Id: `llm:<model>`.
 */
export class LlmEmbedder implements Embedder {
  readonly id: string;
  readonly model: string;
  readonly batchSize: number;
  /** Prompt tokens reported by the engine so far, and calls made. */
  readonly usage = { promptTokens: 0, requests: 0 };
  private readonly engine: EmbeddingEngine;
  private readonly template: (text: string) => string;
  private discoveredDims: number;

  constructor(options: LlmEmbedderOptions) {
    if (!options.engine?.embeddings || typeof options.engine.embeddings.create !== 'function') {
      throw new EmbedderError(
        'LlmEmbedder: the engine has no embeddings.create(); pass a WebLLM engine (CreateMLCEngine / CreateWebWorkerMLCEngine) or an object with the same embeddings API.',
      );
    }
    if (typeof options.model !== 'string' || options.model.length === 0) {
      throw new EmbedderError(
        `LlmEmbedder: a model id is required (it names the vector space); e.g. '${RECOMMENDED_EMBEDDING_MODEL}'.`,
      );
    }
    const batchSize = options.batchSize ?? 32;
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new EmbedderError(`LlmEmbedder: batchSize must be a positive integer, got ${batchSize}.`);
    }
    if (options.dims !== undefined && (!Number.isInteger(options.dims) || options.dims < 1)) {
      throw new EmbedderError(
        `LlmEmbedder: dims must be a positive integer, got ${options.dims}; omit it to take the length of the first answer.`,
      );
    }
    this.engine = options.engine;
    this.model = options.model;
    this.id = `llm:${options.model}`;
    this.batchSize = batchSize;
    this.discoveredDims = options.dims ?? 0;
    this.template =
      options.inputTemplate ??
      (options.model.startsWith('snowflake-arctic-embed') ? arcticInputTemplate : (text: string) => text);
  }

  /** Vector length: as given, or as discovered from the first answer (0 before it). */
  get dims(): number {
    return this.discoveredDims;
  }

  /** Embeds one short probe when the length is not yet known; returns it. */
  async discoverDims(signal?: AbortSignal): Promise<number> {
    if (this.discoveredDims === 0) await this.embed(['dimension probe'], signal);
    return this.discoveredDims;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let begin = 0; begin < texts.length; begin += this.batchSize) {
      signal?.throwIfAborted();
      const batch = texts.slice(begin, begin + this.batchSize).map(this.template);
      const answer = await this.engine.embeddings.create({ input: batch, model: this.model });
      signal?.throwIfAborted();
      this.usage.requests++;
      this.usage.promptTokens += answer?.usage?.prompt_tokens ?? 0;
      out.push(...this.checkAnswer(answer, batch.length, begin));
    }
    return out;
  }

  private checkAnswer(answer: EmbeddingResponse | undefined, expected: number, offset: number): Float32Array[] {
    const where = `model '${this.model}', inputs ${offset}–${offset + expected - 1}`;
    if (!answer || !Array.isArray(answer.data) || answer.data.length === 0) {
      throw new EmbedderError(
        `LlmEmbedder: the engine returned no vectors (${where}). Load an embedding model ` +
          `(model_type 1, e.g. engine.reload([llmId, '${RECOMMENDED_EMBEDDING_MODEL}'])) and pass its id as \`model\`.`,
      );
    }
    if (answer.data.length !== expected) {
      throw new EmbedderError(
        `LlmEmbedder: the engine returned ${answer.data.length} vectors for ${expected} inputs (${where}). ` +
          "The engine must answer one vector per input; lower batchSize to the model's batch limit, or check the engine.",
      );
    }
    // Place by index first, then check in index order (so "the first answer" is index 0's).
    const byIndex: (number[] | undefined)[] = new Array(expected);
    for (const item of answer.data) {
      const index = item?.index;
      if (!Number.isInteger(index) || index < 0 || index >= expected || byIndex[index] !== undefined) {
        throw new EmbedderError(
          `LlmEmbedder: answer item with index ${String(index)} is out of range or repeated (${where}); ` +
            `every index 0…${expected - 1} must appear once. Check the engine's embeddings response.`,
        );
      }
      byIndex[index] = item.embedding ?? [];
    }
    const ordered: Float32Array[] = new Array(expected);
    for (let index = 0; index < expected; index++) {
      const values = byIndex[index] as number[];
      if (!Array.isArray(values) || values.length === 0) {
        throw new EmbedderError(
          `LlmEmbedder: answer item ${index} has no embedding array (${where}); use encoding_format 'float' (WebLLM's only format).`,
        );
      }
      if (this.discoveredDims === 0) this.discoveredDims = values.length;
      if (values.length !== this.discoveredDims) {
        throw new EmbedderError(
          `LlmEmbedder: vector ${offset + index} has ${values.length} dims, expected ${this.discoveredDims} (${where}). ` +
            'One embedder is one model: create a separate LlmEmbedder (and index) per model, or fix the `dims` option.',
        );
      }
      const vector = new Float32Array(values.length);
      let norm2 = 0;
      for (let d = 0; d < values.length; d++) {
        const x = values[d];
        if (typeof x !== 'number' || !Number.isFinite(x)) {
          throw new EmbedderError(
            `LlmEmbedder: vector ${offset + index} holds a non-finite value at ${d} (${where}); the model output is broken — reload the model.`,
          );
        }
        norm2 += x * x;
      }
      if (norm2 === 0) {
        throw new EmbedderError(
          `LlmEmbedder: vector ${offset + index} is all zeros (${where}) and cannot be normalised; the model output is broken — reload the model.`,
        );
      }
      const inv = 1 / Math.sqrt(norm2);
      for (let d = 0; d < values.length; d++) vector[d] = values[d] * inv;
      ordered[index] = vector;
    }
    return ordered;
  }
}
