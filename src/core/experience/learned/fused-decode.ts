/**
 * Decoding on the fused network (fused-network.ts) with continuous batching: up to `capacity` rows
 * decode together, and when a row's answer ends the next waiting context takes its slot (encoded
 * then), so a batch never waits for its longest answer. Each row runs the grammar and the choice of
 * decode.ts exactly as the tfjs decoder does, on its own heads; its answer depends only on its own
 * context, prompt and sampling stream — not on the batch, the order, or the capacity.
 */
import type { Sequence } from './format';
import type { Tokenizer, Tokens } from './tokenizer';
import type { FusedNetwork, HeadRequest, RowHeads } from './fused-network';
import type { StepOutput } from './decode-cache';
import type { Rng } from '../../rng';
import {
  Allowed,
  RowGrammar,
  bannedByRepeat,
  chooseToken,
  rowStream,
  sampleToken,
  unchangedOrNew,
  type AnswerKind,
  type DecodeLimits,
  type Decoded,
  type Sampling,
} from './decode';

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

  /** The row's next token, as decode.ts chooses it, written and queued to feed. */
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

/** A row's heads in the layout decode.ts's choice reads (one row). */
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
