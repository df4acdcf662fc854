/**
 * Batched greedy decoding with a KV cache, under the answer grammar of format.ts: the decoder
 * fixes the structure (field order, reward ∈ {0, 1}, booleans, where a list may end), the model
 * writes the contents. So every answer parses; what the model says can still be inconsistent,
 * and the experience model checks that afterwards.
 *
 * Each step: the heads' output is read back once for the whole batch; per row, the next token
 * is the grammar's forced token, or the best of (a) the best vocabulary word g·p_gen(w) + copy
 * mass and (b) every context token the pointer can copy, each under the row's allowed set.
 * A tie is won by the lower id, so a row's answer depends on nothing but its own context.
 */
import * as tf from '@tensorflow/tfjs';
import type { FormatOptions, Sequence } from './format';
import type { Tokenizer, Tokens, SpecialToken } from './tokenizer';
import { hashString, Rng } from '../../rng';
import { DecodeCache, type StepOutput } from './decode-cache';
import type { ExperienceNetwork } from './network';

export interface DecodeLimits {
  /** Tokens of the written state at most. */
  stateTokens: number;
  /** Admissible actions at most, tokens per action, and tokens of the whole list. */
  maxAdmissible: number;
  actionTokens: number;
  admissibleTokens: number;
}

/** The decoder's limits of a model trained with format options `f`. */
export function decodeLimits(f: FormatOptions): DecodeLimits {
  return {
    stateTokens: f.answerStateTokens,
    maxAdmissible: f.maxAdmissible,
    actionTokens: f.admissibleActionTokens,
    admissibleTokens: f.answerAdmissibleTokens,
  };
}

/**
 * What is decoded: a next step's answer, or a first state (no verdicts). 'next-ending' and
 * 'next-running' are a next step whose ending a goal verdict head has already decided: the grammar
 * writes that terminated token, and the generator writes the state that follows from it.
 */
export type AnswerKind = 'next' | 'next-ending' | 'next-running' | 'initial';

/** What the grammar allows at a position. */
export enum Allowed {
  YesNo,
  Reward,
  Text,
  TextOrEos,
  TextOrAdm,
  TextOrSepOrEos,
}
const MASK_KINDS = 6;

type Phase = 'valid' | 'terminated' | 'reward' | 'obsMarker' | 'obs' | 'adm' | 'eos' | 'done';

/** One row's place in the grammar. */
export class RowGrammar {
  phase: Phase;
  terminated = false;
  stateTokens = 0;
  items = 0;
  itemTokens = 0;
  listTokens = 0;

  constructor(
    private readonly kind: AnswerKind,
    private readonly limits: DecodeLimits,
    private readonly t: Tokenizer,
  ) {
    this.phase = kind === 'initial' ? 'obsMarker' : 'valid';
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  /**
   * A forced token, or the allowed set to choose from. `unchangedChoice`: the state's first token,
   * where `<eos>` says the step left the state as it was.
   */
  next(): { forced: number } | { allowed: Allowed; unchangedChoice?: boolean } {
    const s = (name: SpecialToken) => ({ forced: this.t.special(name) });
    switch (this.phase) {
      case 'valid':
        return { allowed: Allowed.YesNo };
      case 'terminated':
        if (this.kind === 'next-ending') return s('<yes>');
        return this.kind === 'next-running' ? s('<no>') : { allowed: Allowed.YesNo };
      case 'reward':
        return this.terminated ? { allowed: Allowed.Reward } : s('<r0>');
      case 'obsMarker':
        return s('<obs>');
      case 'eos':
        return s('<eos>');
      case 'obs':
        if (this.stateTokens === 0)
          return this.mayStayUnchanged()
            ? { allowed: Allowed.TextOrEos, unchangedChoice: true }
            : { allowed: Allowed.Text };
        if (this.stateTokens >= this.limits.stateTokens) return s(this.terminated ? '<eos>' : '<adm>');
        return { allowed: this.terminated ? Allowed.TextOrEos : Allowed.TextOrAdm };
      case 'adm': {
        const budgetLeft = this.limits.admissibleTokens - this.listTokens; // the closing <eos> included
        if (this.itemTokens === 0) return budgetLeft <= 1 ? s('<eos>') : { allowed: Allowed.Text };
        const lastItem = this.items + 1 >= this.limits.maxAdmissible;
        if (budgetLeft <= 1 || this.itemTokens >= this.limits.actionTokens)
          return s(lastItem || budgetLeft <= 2 ? '<eos>' : '<sep>');
        return { allowed: lastItem ? Allowed.TextOrEos : Allowed.TextOrSepOrEos };
      }
      case 'done':
        return s('<pad>');
    }
  }

  /** An empty state (`<obs> <eos>`): a running step that left the state as it was. */
  private mayStayUnchanged(): boolean {
    return this.kind !== 'initial' && !this.terminated;
  }

  /** Moves on after `id` was written. */
  accept(id: number): void {
    const is = (name: SpecialToken) => id === this.t.special(name);
    switch (this.phase) {
      case 'valid':
        this.phase = is('<yes>') ? 'terminated' : 'eos';
        break;
      case 'terminated':
        this.terminated = is('<yes>');
        this.phase = 'reward';
        break;
      case 'reward':
        this.phase = 'obsMarker';
        break;
      case 'obsMarker':
        this.phase = 'obs';
        break;
      case 'obs':
        if (is('<eos>')) this.phase = 'done';
        else if (is('<adm>')) this.phase = 'adm';
        else this.stateTokens++;
        break;
      case 'adm':
        this.listTokens++;
        if (is('<eos>')) this.phase = 'done';
        else if (is('<sep>')) {
          this.items++;
          this.itemTokens = 0;
        } else this.itemTokens++;
        break;
      case 'eos':
        this.phase = 'done';
        break;
      case 'done':
        break;
    }
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
