/**
 * Decoding: the answer, one token at a time, under the answer grammar of format.ts. The grammar
 * fixes the structure (field order, reward ∈ {0, 1}, booleans, where a list may end), the model
 * writes the contents. So every answer parses; what the model says can still be inconsistent,
 * and the experience model checks that afterwards.
 *
 *   Decoder        picks the engine that runs the network a token at a time; both give the same answers
 *   choice         per row, the next token is the grammar's forced token, or the best of (a) the best
 *                  vocabulary word g·p_gen(w) + copy mass and (b) every context token the pointer can
 *                  copy, each under the row's allowed set (chooseToken; sampleToken at a temperature).
 *                  A tie is won by the lower id, so a row's answer depends on nothing but its own context.
 *   decodeBatch    the tfjs reference: static batches over the network's KV cache (decode-cache.ts)
 *   decodeFused    the default: the fused network on a WebAssembly kernel (fused-network.ts), with
 *                  continuous batching
 *
 * The engines compute the sums of network.ts in another float order; tests hold them to the same answers.
 */
import * as tf from '@tensorflow/tfjs';
import { Allowed, MASK_KINDS, RowGrammar, type AnswerKind, type DecodeLimits, type Sequence } from './format';
import type { Tokenizer, Tokens, SpecialToken } from './tokenizer';
import { hashString, Rng } from '../../rng';
import { DecodeCache, type StepOutput } from './decode-cache';
import { FusedNetwork, type HeadRequest, type RowHeads } from './fused-network';
import type { ExperienceNetwork } from './network';

/**
 * The learned model's decoder, one of two engines over the same network:
 *   'fused'  the default: fused-network.ts on the WebAssembly kernel, with continuous batching (decodeFused)
 *   'tfjs'   the reference: the tfjs network with its KV cache (decode-cache.ts), static batches (decodeBatch)
 * Both run the same grammar and choice; they differ only in float order, and tests hold them to the
 * same answers. A model's weights are frozen once it decodes (it is made from its files), so the
 * fused copy is made once.
 */
export type DecoderKind = 'fused' | 'tfjs';
export const DECODER_KINDS: readonly DecoderKind[] = ['fused', 'tfjs'];

export class Decoder {
  private readonly masks: ReturnType<typeof buildMasks>;
  private fused: FusedNetwork | null = null;

  constructor(
    readonly net: ExperienceNetwork,
    readonly tokenizer: Tokenizer,
    readonly limits: DecodeLimits,
    readonly kind: DecoderKind = 'fused',
    /** Rows the fused decoder keeps in flight at once (its memory is sized for them). */
    readonly capacity = 64,
  ) {
    this.masks = buildMasks(tokenizer);
  }

  async decode(
    contexts: readonly Sequence[],
    prompts: readonly Tokens[],
    kinds: readonly AnswerKind[],
    sampling?: Sampling,
  ): Promise<Decoded[]> {
    if (this.kind === 'tfjs')
      return decodeBatch(this.net, this.tokenizer, this.masks, contexts, prompts, kinds, this.limits, sampling);
    this.fused ??= FusedNetwork.fromNetwork(this.net, this.capacity);
    const { tokenizer, masks, limits } = this;
    return decodeFused(this.fused, tokenizer, masks.allowedIds, contexts, prompts, kinds, limits, sampling);
  }

  /** Floating-point operations the fused decoder ran so far (0 with tfjs). */
  get flops(): number {
    return this.fused?.flops ?? 0;
  }

  dispose(): void {
    this.masks.table.dispose();
    this.fused = null;
  }
}

/** The additive vocabulary masks of the allowed sets, [MASK_KINDS, V] (0 allowed, −1e9 not). */
export function buildMasks(tokenizer: Tokenizer): { table: tf.Tensor2D; allowedIds: readonly Uint8Array[] } {
  const V = tokenizer.size;
  const id = (name: SpecialToken) => tokenizer.special(name);
  const sets: ((i: number) => boolean)[] = [];
  const text = (i: number) => !tokenizer.isSpecial(i);
  sets[Allowed.YesNo] = (i) => i === id('<yes>') || i === id('<no>');
  sets[Allowed.Reward] = (i) => i === id('<r0>') || i === id('<r1>');
  sets[Allowed.Text] = text;
  sets[Allowed.TextOrEos] = (i) => text(i) || i === id('<eos>');
  sets[Allowed.TextOrAdm] = (i) => text(i) || i === id('<adm>');
  sets[Allowed.TextOrSepOrEos] = (i) => text(i) || i === id('<sep>') || i === id('<eos>');
  const values = new Float32Array(MASK_KINDS * V);
  for (let k = 0; k < MASK_KINDS; k++) for (let i = 0; i < V; i++) values[k * V + i] = sets[k](i) ? 0 : -1e9;
  const allowedIds = sets.map((f) => Uint8Array.from({ length: V }, (_, i) => (f(i) ? 1 : 0)));
  return { table: tf.tensor2d(values, [MASK_KINDS, V]), allowedIds };
}

/** No 6-gram of text repeats within an answer (greedy decoding of a small model loops otherwise; shorter n-grams do repeat in real pages, prices like "$ 25 ." among them). */
const NO_REPEAT = 6;

/** Tokens that would repeat a 6-gram already written: those that followed the last five before. */
export function bannedByRepeat(answer: readonly number[], isText: (id: number) => boolean): Set<number> {
  const banned = new Set<number>();
  const n = answer.length;
  if (n < NO_REPEAT - 1) return banned;
  const tail = answer.slice(n - (NO_REPEAT - 1));
  if (!tail.every(isText)) return banned;
  for (let i = 0; i + NO_REPEAT - 1 < n; i++) {
    let same = true;
    for (let k = 0; k < NO_REPEAT - 1 && same; k++) same = answer[i + k] === tail[k];
    if (same) banned.add(answer[i + NO_REPEAT - 1]);
  }
  return banned;
}

/**
 * A row's scratch for one choice: the pointer's mass on each allowed, unbanned context token
 * (dense over the vocabulary, summed in context order) and the ids it touched. Dense arrays
 * reused across rows and steps: this runs for every row at every step, so no Map per call.
 */
class CopyMass {
  mass = new Float64Array(0);
  touched: number[] = [];
  private seen = new Uint8Array(0);

  fill(
    out: StepOutput,
    row: number,
    Lc: number,
    context: Sequence,
    contextLength: number,
    allowedIds: Uint8Array,
    banned: ReadonlySet<number>,
  ): this {
    const V = allowedIds.length;
    if (this.mass.length !== V) {
      this.mass = new Float64Array(V);
      this.seen = new Uint8Array(V);
    }
    for (const id of this.touched) {
      this.mass[id] = 0;
      this.seen[id] = 0;
    }
    this.touched.length = 0;
    const offset = row * Lc;
    for (let j = 0; j < contextLength; j++) {
      const id = context.ids[j];
      if (allowedIds[id] !== 1 || (banned.size && banned.has(id))) continue;
      if (!this.seen[id]) {
        this.seen[id] = 1;
        this.touched.push(id);
      }
      this.mass[id] += out.pointer[offset + j];
    }
    return this;
  }
}
const copyScratch = new CopyMass();
let weightScratch = new Float64Array(0);

/**
 * Greedy choice for one row: the best of the best allowed word p_gen picks (its vocabulary mask
 * already zeroes what the grammar forbids) and every allowed context token, each scored
 * g·p_gen(w) + (1 − g)·(pointer mass on w). A tie is won by the lower id; nothing that would
 * repeat a 6-gram of the answer is chosen.
 */
export function chooseToken(
  out: StepOutput,
  row: number,
  V: number,
  Lc: number,
  context: Sequence,
  contextLength: number,
  allowedIds: Uint8Array,
  banned: ReadonlySet<number>,
): number {
  const g = out.gate[row];
  const offset = row * V;
  const copy = copyScratch.fill(out, row, Lc, context, contextLength, allowedIds, banned);
  let best = -1;
  for (let w = 0; w < V; w++) {
    const p = out.vocab[offset + w];
    if ((best < 0 || p > out.vocab[offset + best]) && !(banned.size && banned.has(w)) && allowedIds[w] === 1) best = w;
  }
  let bestScore = best < 0 ? -Infinity : g * out.vocab[offset + best] + (1 - g) * copy.mass[best];
  for (const id of copy.touched) {
    const score = g * out.vocab[offset + id] + (1 - g) * copy.mass[id];
    if (score > bestScore || (score === bestScore && id < best)) {
      best = id;
      bestScore = score;
    }
  }
  if (best < 0) best = allowedIds.indexOf(1); // everything banned: the grammar's first word
  return best;
}

/** The generator's largest probability over the words not banned. */
function bestUnbanned(vocab: Float32Array, offset: number, V: number, banned: ReadonlySet<number>): number {
  let best = 0;
  for (let w = 0; w < V; w++) if (vocab[offset + w] > best && !banned.has(w)) best = vocab[offset + w];
  return best;
}

/**
 * Weights under a millionth of a row's largest are never drawn (min-p sampling): on held-out
 * steps of the shipped shop model they hold at most 0.12 % of the mass, and skipping them skips
 * ≈ 3,200 of the ≈ 3,800 powers a draw took (the decoder's costliest JS).
 */
const NEGLIGIBLE_WEIGHT = 1e-6;
let candidateIds = new Int32Array(0);

/**
 * A sampled choice for one row at temperature T: p(w) = g·p_gen(w) + (1 − g)·(pointer mass on w),
 * sharpened to p^(1/T), drawn with the row's own stream (so a row's answer still depends only on
 * its own context and the seed). Words the grammar forbids or a repeat bans are never drawn, nor
 * words whose weight is negligible (under NEGLIGIBLE_WEIGHT of the best: p below p_max · 1e-6^T).
 */
export function sampleToken(
  out: StepOutput,
  row: number,
  V: number,
  Lc: number,
  context: Sequence,
  contextLength: number,
  allowedIds: Uint8Array,
  banned: ReadonlySet<number>,
  temperature: number,
  rng: Rng,
): number {
  const g = out.gate[row];
  const offset = row * V;
  const copy = copyScratch.fill(out, row, Lc, context, contextLength, allowedIds, banned);
  const vocab = out.vocab;
  // The best weight: the generator's best unbanned word (what it does not let through is exactly
  // 0) or a copyable token, whose mass adds to its own word's.
  const bestWord = out.bestWord[row];
  let best = banned.size && banned.has(bestWord) ? bestUnbanned(vocab, offset, V, banned) : vocab[offset + bestWord];
  best *= g;
  for (const id of copy.touched) best = Math.max(best, g * vocab[offset + id] + (1 - g) * copy.mass[id]);
  if (!(best > 0)) return chooseToken(out, row, V, Lc, context, contextLength, allowedIds, banned);
  const floor = best * NEGLIGIBLE_WEIGHT ** temperature;
  const power = 1 / temperature;
  if (weightScratch.length !== V) {
    weightScratch = new Float64Array(V);
    candidateIds = new Int32Array(V);
  }
  const mass = copy.mass;
  let n = 0,
    total = 0;
  for (let w = 0; w < V; w++) {
    const p = g * vocab[offset + w] + (1 - g) * mass[w];
    if (p < floor || allowedIds[w] !== 1 || (banned.size && banned.has(w))) continue;
    const weight = Math.exp(power * Math.log(p)); // p^(1/T), faster than `**` in V8
    candidateIds[n] = w;
    weightScratch[n++] = weight;
    total += weight;
  }
  let u = rng.next() * total;
  for (let i = 0; i < n; i++) {
    u -= weightScratch[i];
    if (u < 0) return candidateIds[i];
  }
  return chooseToken(out, row, V, Lc, context, contextLength, allowedIds, banned);
}

/**
 * Whether a step left the state as it was is a verdict like the others: the more likely of
 * `<eos>` (unchanged) and a new state, decided by their whole masses — not by `<eos>` against the
 * best single first word, which loses to a new page's first words only because they are many.
 * A new state's first word is then chosen (or sampled) among text alone.
 */
export function unchangedOrNew(
  plan: ReturnType<RowGrammar['next']>,
  out: StepOutput,
  row: number,
  V: number,
  eos: number,
): { forced: number } | { allowed: Allowed } {
  if (!('allowed' in plan) || !plan.unchangedChoice) return plan;
  const unchanged = out.gate[row] * out.vocab[row * V + eos]; // <eos> is never in a context: no copy mass
  return unchanged >= 0.5 ? { forced: eos } : { allowed: Allowed.Text };
}

/** How a row's next word is picked: greedy, or sampled at a temperature from the row's own stream. */
export interface Sampling {
  temperature: number;
  seed: number;
}

/** A later draw of the same transition samples from a stream of its own (the first keeps the stream it had). */
function drawOf(context: Sequence): string {
  return context.draw ? `|draw ${context.draw}` : '';
}

/** A row's sampling stream: the seed and the row's own context and prompt (never its batch). */
export function rowStream(sampling: Sampling, context: Sequence, prompt: Tokens): Rng {
  return Rng.fromSeed(
    sampling.seed,
    'learned-decode',
    String(hashString(`${context.ids.join(',')}|${context.cases.join('')}|${prompt.ids.join(',')}${drawOf(context)}`)),
  );
}

/**
 * Drops finished rows from the cache once at most half of its rows still decode (never below two
 * rows: a batched matmul of one row takes another kernel). Returns the kept cache rows, or null.
 */
async function compactIfWorth(
  cache: DecodeCache,
  rows: readonly number[],
  grammars: readonly RowGrammar[],
): Promise<number[] | null> {
  const active = rows.map((b, r) => (grammars[b].done ? -1 : r)).filter((r) => r >= 0);
  if (rows.length < 8 || active.length > rows.length / 2) return null;
  const keep = active.length >= 2 ? active : [...active, rows.findIndex((b) => grammars[b].done)].sort((x, y) => x - y);
  await cache.compact(keep);
  return keep;
}

export interface Decoded {
  tokens: Tokens;
  /** Model steps this row took part in (its generated tokens). */
  steps: number;
}

/**
 * Decodes one answer per context, all together. Contexts are right-padded to the longest; every
 * row runs until the grammar ends it (finished rows idle on `<pad>` until the batch is done).
 * A lone context is decoded beside a copy of itself: a batch of one takes another matmul kernel.
 */
export async function decodeBatch(
  net: ExperienceNetwork,
  tokenizer: Tokenizer,
  masks: ReturnType<typeof buildMasks>,
  contexts: readonly Sequence[],
  prompts: readonly Tokens[],
  kinds: readonly AnswerKind[],
  limits: DecodeLimits,
  sampling?: Sampling,
): Promise<Decoded[]> {
  if (contexts.length === 0) return [];
  if (contexts.length === 1)
    return (
      await decodeBatch(
        net,
        tokenizer,
        masks,
        [contexts[0], contexts[0]],
        [prompts[0], prompts[0]],
        [kinds[0], kinds[0]],
        limits,
        sampling,
      )
    ).slice(0, 1);
  // Longest contexts first: neighbours in the batch then have similar lengths, and the encoder's
  // chunks and the attention's groups pad each to their own longest (a row's answer does not
  // depend on its place in the batch).
  const order = contexts.map((_, i) => i).sort((x, y) => contexts[y].ids.length - contexts[x].ids.length || x - y);
  const pick = <T>(items: readonly T[]) => order.map((i) => items[i]);
  const decoded = await decodeInOrder(
    net,
    tokenizer,
    masks,
    pick(contexts),
    pick(prompts),
    pick(kinds),
    limits,
    sampling,
  );
  const out: Decoded[] = new Array(contexts.length);
  order.forEach((i, k) => {
    out[i] = decoded[k];
  });
  return out;
}

async function decodeInOrder(
  net: ExperienceNetwork,
  tokenizer: Tokenizer,
  masks: ReturnType<typeof buildMasks>,
  contexts: readonly Sequence[],
  prompts: readonly Tokens[],
  kinds: readonly AnswerKind[],
  limits: DecodeLimits,
  sampling?: Sampling,
): Promise<Decoded[]> {
  const B = contexts.length;
  const V = tokenizer.size;
  const lengths = Int32Array.from(contexts, (c) => c.ids.length);
  const Lc = Math.max(...lengths);
  const maxAnswer = prompts[0].ids.length + 8 + limits.stateTokens + limits.admissibleTokens;
  if (Lc > net.config.maxContext || maxAnswer > net.config.maxAnswer) {
    throw new Error(
      `A context of ${Lc} tokens (the network takes ${net.config.maxContext}) or an answer of up to ${maxAnswer} tokens ` +
        `(it writes ${net.config.maxAnswer}) does not fit the network; lower the format's token budgets.`,
    );
  }
  const flat = (pick: (c: Sequence) => number[]) => {
    const out = new Int32Array(B * Lc);
    contexts.forEach((c, b) => out.set(pick(c), b * Lc));
    return out;
  };
  const positions = new Int32Array(B * Lc);
  for (let b = 0; b < B; b++) for (let j = 0; j < Lc; j++) positions[b * Lc + j] = j;
  const cache = DecodeCache.prefill(
    net,
    {
      ids: flat((c) => c.ids),
      spaces: flat((c) => c.spaces),
      cases: flat((c) => c.cases),
      segments: flat((c) => c.segments),
      positions,
    },
    B,
    Lc,
    lengths,
  );
  const grammars = kinds.map((k) => new RowGrammar(k, limits, tokenizer));
  const answers: Tokens[] = contexts.map(() => ({ ids: [], spaces: [], cases: [] }));
  // First the prompt and `<ans>` of every row at once; then one token a step.
  let fed = {
    ids: new Int32Array(prompts.flatMap((p) => [...p.ids, tokenizer.special('<ans>')])),
    spaces: new Int32Array(prompts.flatMap((p) => [...p.spaces, 0])),
    cases: new Int32Array(prompts.flatMap((p) => [...p.cases, 0])),
  };
  if (fed.ids.length % B !== 0 || prompts.some((p) => p.ids.length !== prompts[0].ids.length))
    throw new Error('decodeBatch: every prompt must have the same length.');
  const isText = (id: number) => !tokenizer.isSpecial(id);
  const streams =
    sampling && sampling.temperature > 0 ? contexts.map((c, b) => rowStream(sampling, c, prompts[b])) : null;
  // rows[r]: which context cache row r decodes (finished rows leave the batch as it shrinks).
  let rows = contexts.map((_, b) => b);
  try {
    while (!grammars.every((g) => g.done)) {
      const keep = await compactIfWorth(cache, rows, grammars);
      if (keep) {
        rows = keep.map((r) => rows[r]);
        fed = {
          ids: Int32Array.from(keep, (r) => fed.ids[r]),
          spaces: Int32Array.from(keep, (r) => fed.spaces[r]),
          cases: Int32Array.from(keep, (r) => fed.cases[r]),
        };
      }
      const plan = rows.map((b) => grammars[b].next());
      const maskKinds = Int32Array.from(plan, (p) => ('allowed' in p ? p.allowed : Allowed.Text));
      // One-hot × table picks each row's mask (a tiny matmul; wasm's gather is slow).
      const maskRows = tf.tidy(() =>
        tf.matMul(tf.oneHot(tf.tensor1d(maskKinds, 'int32'), MASK_KINDS), masks.table),
      ) as tf.Tensor2D;
      const out = await cache.step(fed, maskRows);
      maskRows.dispose();
      fed = {
        ids: new Int32Array(rows.length),
        spaces: new Int32Array(rows.length),
        cases: new Int32Array(rows.length),
      };
      rows.forEach((b, r) => {
        const p = unchangedOrNew(plan[r], out, r, V, tokenizer.special('<eos>'));
        const banned = 'forced' in p ? null : bannedByRepeat(answers[b].ids, isText);
        // Verdicts (valid, terminated, reward) are always the most likely; the contents may be sampled.
        const id =
          'forced' in p
            ? p.forced
            : streams && p.allowed !== Allowed.YesNo && p.allowed !== Allowed.Reward
              ? sampleToken(
                  out,
                  r,
                  V,
                  Lc,
                  contexts[b],
                  lengths[b],
                  masks.allowedIds[p.allowed],
                  banned!,
                  sampling!.temperature,
                  streams[b],
                )
              : chooseToken(out, r, V, Lc, contexts[b], lengths[b], masks.allowedIds[p.allowed], banned!);
        const text = isText(id);
        fed.ids[r] = id;
        fed.spaces[r] = text ? out.space[r] : 0;
        fed.cases[r] = text ? out.letterCase[r] : 0;
        if (!grammars[b].done) {
          answers[b].ids.push(id);
          answers[b].spaces.push(fed.spaces[r]);
          answers[b].cases.push(fed.cases[r]);
          grammars[b].accept(id);
        }
      });
    }
  } finally {
    cache.dispose();
  }
  return answers.map((tokens) => ({ tokens, steps: tokens.ids.length }));
}

// ---- decodeFused: the default engine ---------------------------------------------------------------
//
// Decoding on the fused network (fused-network.ts) with continuous batching: up to `capacity` rows
// decode together, and when a row's answer ends the next waiting context takes its slot (encoded
// then), so a batch never waits for its longest answer. Each row runs the grammar and the choice of
// this file exactly as the tfjs decoder does, on its own heads; its answer depends only on its own
// context, prompt and sampling stream — not on the batch, the order, or the capacity.

/** One row in flight: its request, its place in the grammar, what it wrote, and what it feeds next. */
interface Flight {
  index: number;
  slot: number;
  grammar: RowGrammar;
  answer: Tokens;
  /** Tokens still to feed (the prompt and `<ans>` first, then each chosen token). */
  feed: { id: number; space: number; letterCase: number }[];
  stream: Rng | null;
  plan: ReturnType<RowGrammar['next']> | null;
}

export async function decodeFused(
  net: FusedNetwork,
  tokenizer: Tokenizer,
  allowedIds: readonly Uint8Array[],
  contexts: readonly Sequence[],
  prompts: readonly Tokens[],
  kinds: readonly AnswerKind[],
  limits: DecodeLimits,
  sampling?: Sampling,
): Promise<Decoded[]> {
  const answers: Decoded[] = new Array(contexts.length);
  const free = Array.from({ length: net.capacity }, (_, i) => net.capacity - 1 - i);
  const flights: Flight[] = [];
  const yesNo = [tokenizer.special('<yes>'), tokenizer.special('<no>')].sort((x, y) => x - y);
  const reward = [tokenizer.special('<r0>'), tokenizer.special('<r1>')].sort((x, y) => x - y);
  const isText = (id: number) => !tokenizer.isSpecial(id);
  let next = 0;
  while (next < contexts.length || flights.length > 0) {
    // Continuous batching: every free slot takes the next waiting context.
    while (free.length > 0 && next < contexts.length) flights.push(board(next++, free.pop()!));
    const requests = flights.map((f) => request(f));
    const heads = net.step(
      flights.map((f) => f.slot),
      flights.map((f) => f.feed[0].id),
      flights.map((f) => f.feed[0].space),
      flights.map((f) => f.feed[0].letterCase),
      requests,
    );
    flights.forEach((f, r) => {
      f.feed.shift();
      if (f.feed.length === 0) choose(f, heads[r]);
    });
    for (let r = flights.length - 1; r >= 0; r--) {
      const f = flights[r];
      if (!f.grammar.done) continue;
      answers[f.index] = { tokens: f.answer, steps: f.answer.ids.length };
      free.push(f.slot);
      flights.splice(r, 1);
    }
  }
  return answers;

  function board(index: number, slot: number): Flight {
    net.encode(slot, contexts[index]);
    const prompt = prompts[index];
    const feed = prompt.ids.map((id, t) => ({ id, space: prompt.spaces[t], letterCase: prompt.cases[t] }));
    feed.push({ id: tokenizer.special('<ans>'), space: 0, letterCase: 0 });
    const stream = sampling && sampling.temperature > 0 ? rowStream(sampling, contexts[index], prompts[index]) : null;
    return {
      index,
      slot,
      grammar: new RowGrammar(kinds[index], limits, tokenizer),
      answer: { ids: [], spaces: [], cases: [] },
      feed,
      stream,
      plan: null,
    };
  }

  /** What the row's step must compute: nothing before its last prompt token or a forced token. */
  function request(f: Flight): HeadRequest {
    f.plan = null;
    if (f.feed.length > 1) return { allowed: null };
    const plan = f.grammar.next();
    f.plan = plan;
    if ('forced' in plan) return { allowed: null };
    const few = plan.allowed === Allowed.YesNo ? yesNo : plan.allowed === Allowed.Reward ? reward : undefined;
    return { allowed: allowedIds[plan.allowed], few };
  }

  /** The row's next token, as chooseToken or sampleToken chooses it, written and queued to feed. */
  function choose(f: Flight, heads: RowHeads | null): void {
    const plan = f.plan!;
    let id: number;
    let space = 0,
      letterCase = 0;
    if ('forced' in plan) id = plan.forced;
    else {
      const out = rowOutput(heads!);
      const V = tokenizer.size;
      const p = unchangedOrNew(plan, out, 0, V, tokenizer.special('<eos>'));
      const context = contexts[f.index];
      const n = context.ids.length;
      if ('forced' in p) id = p.forced;
      else {
        const banned = bannedByRepeat(f.answer.ids, isText);
        const verdict = p.allowed === Allowed.YesNo || p.allowed === Allowed.Reward;
        id =
          f.stream && !verdict
            ? sampleToken(out, 0, V, n, context, n, allowedIds[p.allowed], banned, sampling!.temperature, f.stream)
            : chooseToken(out, 0, V, n, context, n, allowedIds[p.allowed], banned);
      }
      if (isText(id)) {
        space = heads!.space;
        letterCase = heads!.letterCase;
      }
    }
    f.answer.ids.push(id);
    f.answer.spaces.push(space);
    f.answer.cases.push(letterCase);
    f.grammar.accept(id);
    if (!f.grammar.done) f.feed.push({ id, space, letterCase });
  }
}

/** A row's heads in the layout the choice reads (one row). */
function rowOutput(heads: RowHeads): StepOutput {
  return {
    vocab: heads.vocab,
    bestWord: Int32Array.of(heads.bestWord),
    pointer: heads.pointer,
    gate: Float32Array.of(heads.gate),
    space: Int32Array.of(heads.space),
    letterCase: Int32Array.of(heads.letterCase),
  };
}
