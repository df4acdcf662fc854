/**
 * What the learned experience model reads and writes, as token sequences. One module for
 * training pairs and for dreaming, so the two can never drift apart.
 *
 * Context (only what the paper's M_exp sees: task, history, state, action, retrieved examples):
 *
 *   <bos> <task> instruction
 *   <ex> state <exa> action <exn> next [<end> <r0|r1>]        × k retrieved transitions (the best one longer)
 *   <hist> action <sep> action …                               last H accepted actions
 *   <state> abstract state [<adm> a <sep> b …]                 admissible shown where the card says so
 *   <act> action <ans>
 *
 * Answer (its grammar, RowGrammar below, fixes this structure; the model writes the contents):
 *
 *   <yes|no>                                   valid: the action works here (<no>: then <eos>)
 *   <yes|no> <r0|r1>                           terminated, reward (reward 1 only when terminated)
 *   <obs> next abstract state
 *   [<adm> a <sep> b …]                        admissible actions of a running episode
 *   <eos>
 *
 * A running step that leaves the state as it was (the same abstract state and admissible list:
 * picking an option on a page, a third of the shipped shop data's steps) is answered `<obs> <eos>`,
 * an empty state, read back as the current one: a small model copies a 150-token page unreliably,
 * and one token is ≈ 100 fewer to decode.
 *
 * Segments: each context token carries its part (task, example, history, state, action, answer),
 * and a state token where the action's argument is written (the product a click names, the option
 * it picks) carries the action-mark segment instead: what comes next is mostly about that place.
 *
 * Fresh ids: an answer's ids that the context does not show are written as placeholders
 * (tokenizer.ts) and read back as new ids of the training data's shape (FormatOptions.freshIds).
 *
 * A first state (a task with no real start page): context `<bos> <task> instruction
 * [<ex> first state …] <init> <ans>`, answer `<obs> state <adm> actions <eos>`.
 *
 * The decoder also reads a short prompt before the answer, `<act> action <pad>…` (or `<init>
 * <pad>…`), always PROMPT_TOKENS long: the action is what the answer depends on most, and a
 * fixed length keeps every row of a batch aligned.
 *
 * States are the domain card's abstract states (domain-card.ts); admissible lists leave out the
 * card's global actions and page buttons. When every listed action is `verb[arg]` with one
 * verb, the list is written `verb[ <sep> arg <sep> arg …` to save tokens.
 */
import type { Step, Task, Transition } from '../../types';
import { abstractAdmissible, abstractObservation, collapse, type DomainCard } from '../domain-card';
import { hashString, Rng } from '../../rng';
import { isIdLike, splitPieces, type FreshIdScope, type Tokenizer, type Tokens, type SpecialToken } from './tokenizer';

/** Segment of each context token (an embedding the model adds); one row each in the network's table. */
export const SEGMENTS = { task: 0, example: 1, history: 2, state: 3, action: 4, answer: 5, actionMark: 6 } as const;
export const SEGMENT_COUNT = 7;

export interface FormatOptions {
  /** Retrieved examples shown (0 = the no-retrieval ablation). */
  k: number;
  /** Past accepted actions shown (0 = the no-history ablation). */
  historyLength: number;
  instructionTokens: number;
  stateTokens: number;
  actionTokens: number;
  exampleStateTokens: number;
  exampleNextTokens: number;
  /** The best-matching example's next state is shown longer: often the page to copy. */
  firstExampleNextTokens: number;
  /** Admissible actions shown or written at most, tokens per action, and tokens of a whole list. */
  maxAdmissible: number;
  admissibleActionTokens: number;
  admissibleListTokens: number;
  /** Tokens of a whole context at most (examples are dropped, last first, to fit). */
  contextTokens: number;
  /** Tokens of a written next state, and of its admissible list, at most. */
  answerStateTokens: number;
  answerAdmissibleTokens: number;
  /** The shape of new ids (null: the training data has no ids, so every answer's words are plain). */
  freshIds: FreshIdShape | null;
}

/** How many placeholders there are, and what a new id looks like (from the training data: a prefix, a length). */
export interface FreshIdShape {
  count: number;
  /** Shared by every id-like piece of the training texts (lower case). */
  prefix: string;
  /** Their most common length. */
  length: number;
}

export const DEFAULT_FORMAT_OPTIONS: Readonly<FormatOptions> = Object.freeze({
  k: 4,
  historyLength: 4,
  instructionTokens: 48,
  stateTokens: 176,
  actionTokens: 16,
  exampleStateTokens: 10,
  exampleNextTokens: 24,
  firstExampleNextTokens: 120,
  maxAdmissible: 24,
  admissibleActionTokens: 16,
  admissibleListTokens: 120,
  contextTokens: 760,
  answerStateTokens: 200,
  answerAdmissibleTokens: 160,
  freshIds: null,
});

/** Answer tokens the decoder may feed at most: the prompt, the structure marks (8), the state and the list. */
export function answerTokensAtMost(o: FormatOptions): number {
  return PROMPT_TOKENS + 8 + o.answerStateTokens + o.answerAdmissibleTokens; // as decode.ts sizes a batch
}

/** A token sequence with the segment of each token. */
export interface Sequence extends Tokens {
  segments: number[];
  /** Which sample of this transition a sampling decoder draws (absent or 0: the first; DreamContext.draw). */
  draw?: number;
  /** A context's id-like words, lower case (with FormatOptions.freshIds: its answer may use them as they are). */
  knownIds?: string[];
}

/** Length of the decoder's prompt (`<act>` and the action's first tokens, padded). */
export const PROMPT_TOKENS = 12;

/** The decoder's prompt: `<act> action <pad>…`, or `<init> <pad>…` for a first state. */
export function encodePrompt(tokenizer: Tokenizer, action: string | null): Tokens {
  const out: Tokens = { ids: [tokenizer.special(action === null ? '<init>' : '<act>')], spaces: [0], cases: [0] };
  if (action !== null) tokenizer.encodeInto(collapse(action), out, PROMPT_TOKENS - 1);
  while (out.ids.length < PROMPT_TOKENS) {
    out.ids.push(tokenizer.special('<pad>'));
    out.spaces.push(0);
    out.cases.push(0);
  }
  return out;
}

/** What one dreamed step's answer says (states abstract, admissible without globals/buttons). */
export interface Answer {
  valid: boolean;
  terminated: boolean;
  reward: 0 | 1;
  observation: string;
  admissible: string[];
  /** The step left the state as it was (written as an empty state). */
  unchanged?: boolean;
}

class Builder {
  readonly seq: Sequence = { ids: [], spaces: [], cases: [], segments: [] };
  segment: number = SEGMENTS.task;
  /**
   * `seen`: a context's id-like words written whole are collected here; `fresh`: where an
   * answer's unseen ids go. Both only with FormatOptions.freshIds (no cost on the hot path without).
   */
  constructor(
    readonly tokenizer: Tokenizer,
    private readonly ids: { seen?: Set<string>; fresh?: FreshIdScope } = {},
  ) {}

  mark(token: SpecialToken, segment = this.segment): this {
    this.segment = segment;
    this.seq.ids.push(this.tokenizer.special(token));
    this.seq.spaces.push(0);
    this.seq.cases.push(0);
    this.seq.segments.push(segment);
    return this;
  }

  text(text: string, maxTokens: number): this {
    const before = this.seq.ids.length;
    this.tokenizer.encodeInto(collapse(text), this.seq, maxTokens, this.ids);
    for (let i = before; i < this.seq.ids.length; i++) this.seq.segments.push(this.segment);
    return this;
  }

  /**
   * An admissible list (already abstract), at most `listTokens` tokens of whole actions: the
   * shared `verb[` is written once when there is one.
   */
  actions(actions: readonly string[], o: FormatOptions, listTokens: number): this {
    const list = actions.slice(0, o.maxAdmissible);
    const verb = commonBracketVerb(list);
    const start = this.seq.ids.length;
    const fits = (a: string) =>
      this.tokenizer.encode(a, o.admissibleActionTokens).ids.length + 1 + this.seq.ids.length - start <= listTokens;
    if (verb) {
      this.text(`${verb}[`, 4);
      for (const a of list) {
        const arg = a.slice(verb.length + 1, -1);
        if (!fits(arg)) break;
        this.mark('<sep>').text(arg, o.admissibleActionTokens);
      }
      return this;
    }
    for (let i = 0; i < list.length; i++) {
      if (!fits(list[i])) break;
      if (i > 0) this.mark('<sep>');
      this.text(list[i], o.admissibleActionTokens);
    }
    return this;
  }
}

/** The verb when every action is `verb[arg]` with the same verb (`pick[a]`, `pick[b]`, …). */
export function commonBracketVerb(actions: readonly string[]): string | null {
  if (actions.length === 0) return null;
  const verb = /^(\w+)\[.*\]$/.exec(actions[0])?.[1];
  if (!verb) return null;
  return actions.every((a) => a.startsWith(`${verb}[`) && a.endsWith(']')) ? verb : null;
}

export interface ContextInput {
  task: Pick<Task, 'instruction'>;
  history: readonly Step[];
  state: { text: string; admissible: readonly string[] };
  action: string;
  retrieved: readonly Pick<Transition, 'observation' | 'action' | 'nextObservation' | 'terminated' | 'reward'>[];
}

/** The context of one dreamed step, at most `o.contextTokens` long (the last examples give way). */
export function encodeContext(tokenizer: Tokenizer, card: DomainCard, input: ContextInput, o: FormatOptions): Sequence {
  for (let k = Math.min(o.k, input.retrieved.length); ; k--) {
    const built = buildContext(tokenizer, card, input, { ...o, k });
    if (built.seq.ids.length > o.contextTokens && k > 0) continue;
    const seq = built.seen ? { ...built.seq, knownIds: [...built.seen] } : built.seq;
    return markAction(seq, argumentIds(tokenizer, input.action, o.actionTokens));
  }
}

/**
 * The action marks: every run of state tokens equal to the action's argument, token for token
 * (an id spelled letter by letter is found whole, not by its letters), moves to the action-mark
 * segment. The convolutional encoder carries the mark to its neighbours.
 */
export function markAction(seq: Sequence, argument: readonly number[]): Sequence {
  if (argument.length === 0) return seq;
  const segments = seq.segments.slice();
  const n = argument.length;
  for (let i = 0; i + n <= seq.ids.length; i++) {
    let same = true;
    for (let k = 0; k < n && same; k++) same = seq.segments[i + k] === SEGMENTS.state && seq.ids[i + k] === argument[k];
    if (same) for (let k = 0; k < n; k++) segments[i + k] = SEGMENTS.actionMark;
  }
  return { ...seq, segments };
}

/** The words of an action's argument (`pick[8oz]` → 8oz; an action with no brackets is all argument). */
function argumentIds(tokenizer: Tokenizer, action: string, limit: number): number[] {
  const out: Tokens = { ids: [], spaces: [], cases: [] };
  tokenizer.encodeInto(collapse(/^\w+\[(.*)\]$/.exec(action)?.[1] ?? action), out, limit);
  return out.ids.filter((id) => !tokenizer.isSpecial(id));
}

/** The actions of the last `historyLength` valid steps, as a context shows them. */
export function shownHistory(history: readonly Pick<Step, 'action' | 'valid'>[], historyLength: number): string[] {
  return shownSteps(history, historyLength).map((s) => s.action);
}

/** The last `historyLength` valid steps themselves (with the pages they were taken on). */
export function shownSteps<S extends Pick<Step, 'action' | 'valid'>>(
  history: readonly S[],
  historyLength: number,
): S[] {
  return historyLength > 0 ? history.filter((s) => s.valid).slice(-historyLength) : [];
}

/** Words of a state's own choices not in `taken`, less the words of the ones taken (the verdict head's open choices). */
export function openChoiceWords<W>(
  card: DomainCard,
  admissible: readonly string[],
  taken: ReadonlySet<string>,
  wordsOf: (action: string) => W[],
): Set<W> {
  // The card's globals and page buttons (moving, going back) are on every page: no choice.
  const choices = abstractAdmissible(card, admissible);
  const chosen = new Set(choices.filter((a) => taken.has(a)).flatMap(wordsOf));
  return new Set(
    choices
      .filter((a) => !taken.has(a))
      .flatMap(wordsOf)
      .filter((w) => !chosen.has(w)),
  );
}

function buildContext(
  tokenizer: Tokenizer,
  card: DomainCard,
  input: ContextInput,
  o: FormatOptions,
): { seq: Sequence; seen?: Set<string> } {
  const seen = o.freshIds ? new Set<string>() : undefined;
  const b = new Builder(tokenizer, seen ? { seen } : {});
  b.mark('<bos>', SEGMENTS.task).mark('<task>').text(input.task.instruction, o.instructionTokens);
  input.retrieved.slice(0, o.k).forEach((t, i) => {
    b.mark('<ex>', SEGMENTS.example)
      .text(abstractObservation(card, t.observation), o.exampleStateTokens)
      .mark('<exa>')
      .text(t.action, o.actionTokens)
      .mark('<exn>')
      .text(abstractObservation(card, t.nextObservation), i === 0 ? o.firstExampleNextTokens : o.exampleNextTokens);
    if (t.terminated) b.mark('<end>').mark(t.reward >= 1 ? '<r1>' : '<r0>');
  });
  // History: the last H accepted steps (no-ops change nothing).
  const past = o.historyLength > 0 ? input.history.filter((s) => s.valid).slice(-o.historyLength) : [];
  if (past.length) {
    b.mark('<hist>', SEGMENTS.history);
    past.forEach((s, i) => {
      if (i > 0) b.mark('<sep>');
      b.text(s.action, o.actionTokens);
    });
  }
  b.mark('<state>', SEGMENTS.state).text(abstractObservation(card, input.state.text), o.stateTokens);
  if (card.showAdmissible && !card.inferredAdmissible)
    b.mark('<adm>').actions(abstractAdmissible(card, input.state.admissible), o, o.admissibleListTokens);
  b.mark('<act>', SEGMENTS.action).text(input.action, o.actionTokens);
  b.mark('<ans>', SEGMENTS.answer);
  return seen ? { seq: b.seq, seen } : { seq: b.seq };
}

/** The context of a first state: the task, and first states of other tasks as examples. */
export function encodeInitialContext(
  tokenizer: Tokenizer,
  card: DomainCard,
  task: Pick<Task, 'instruction'>,
  examples: readonly { observation: string }[],
  o: FormatOptions,
): Sequence {
  const seen = o.freshIds ? new Set<string>() : undefined;
  const b = new Builder(tokenizer, seen ? { seen } : {});
  b.mark('<bos>', SEGMENTS.task).mark('<task>').text(task.instruction, o.instructionTokens);
  for (const e of examples.slice(0, o.k))
    b.mark('<ex>', SEGMENTS.example).text(abstractObservation(card, e.observation), o.exampleNextTokens);
  b.mark('<init>', SEGMENTS.action).mark('<ans>', SEGMENTS.answer);
  return seen ? { ...b.seq, knownIds: [...seen] } : b.seq;
}

/** Where an answer's unseen ids go, given its context (none without FormatOptions.freshIds). */
function freshScope(o: FormatOptions, context: Pick<Sequence, 'knownIds'> | undefined): { fresh?: FreshIdScope } {
  return o.freshIds ? { fresh: { known: new Set(context?.knownIds ?? []), assigned: new Map() } } : {};
}

// ---- the answer's grammar: what the decoder may write next ------------------------------------------

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
/** How many allowed sets there are (decode.ts builds one vocabulary mask each). */
export const MASK_KINDS = 6;

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

// ---- the answer's tokens, and reading them back -------------------------------------------------------

/** The answer tokens of a step (training targets); `context` is the step's encoded context. */
export function encodeAnswer(
  tokenizer: Tokenizer,
  answer: Answer,
  o: FormatOptions,
  context?: Pick<Sequence, 'knownIds'>,
): Sequence {
  const b = new Builder(tokenizer, freshScope(o, context));
  b.segment = SEGMENTS.answer;
  b.mark(answer.valid ? '<yes>' : '<no>');
  if (answer.valid) {
    b.mark(answer.terminated ? '<yes>' : '<no>').mark(answer.reward === 1 ? '<r1>' : '<r0>');
    b.mark('<obs>');
    if (answer.unchanged && !answer.terminated) return b.mark('<eos>').seq;
    b.text(answer.observation, o.answerStateTokens);
    if (!answer.terminated && answer.admissible.length)
      b.mark('<adm>').actions(answer.admissible, o, o.answerAdmissibleTokens);
  }
  b.mark('<eos>');
  return b.seq;
}

/** The answer tokens of a first state. */
export function encodeInitialAnswer(
  tokenizer: Tokenizer,
  state: { observation: string; admissible: readonly string[] },
  o: FormatOptions,
  context?: Pick<Sequence, 'knownIds'>,
): Sequence {
  const b = new Builder(tokenizer, freshScope(o, context));
  b.segment = SEGMENTS.answer;
  b.mark('<obs>').text(state.observation, o.answerStateTokens);
  if (state.admissible.length)
    b.mark('<adm>').actions(state.admissible, { ...o, maxAdmissible: o.maxAdmissible * 4 }, o.answerAdmissibleTokens);
  b.mark('<eos>');
  return b.seq;
}

/** Splits the tokens between `from` and `to` at `<sep>` and reads the admissible list back. */
function decodeActions(
  tokenizer: Tokenizer,
  t: Tokens,
  from: number,
  to: number,
  freshNames?: readonly string[],
): string[] {
  const sep = tokenizer.special('<sep>');
  const items: string[] = [];
  let start = from;
  for (let i = from; i <= to; i++) {
    if (i === to || t.ids[i] === sep) {
      items.push(collapse(tokenizer.decode(t, start, i, freshNames)));
      start = i + 1;
    }
  }
  const verb = items.length > 1 && /^\w+\[$/.test(items[0]) ? items[0].slice(0, -1) : null;
  const actions = verb ? items.slice(1).map((a) => `${verb}[${a}]`) : items;
  return actions.filter((a) => a.length > 0);
}

/** Reads a decoded answer back (the decoder's grammar guarantees the structure); placeholder i reads `freshNames[i]`. */
export function decodeAnswer(tokenizer: Tokenizer, t: Tokens, freshNames?: readonly string[]): Answer {
  const id = (s: SpecialToken) => tokenizer.special(s);
  const valid = t.ids[0] === id('<yes>');
  if (!valid) return { valid: false, terminated: false, reward: 0, observation: '', admissible: [] };
  const terminated = t.ids[1] === id('<yes>');
  const reward = t.ids[2] === id('<r1>') ? 1 : 0;
  const { observation, admissible } = decodeState(tokenizer, t, 3, freshNames);
  // An empty state of a running step: the state as it was.
  const unchanged = !terminated && observation === '' && admissible.length === 0;
  return { valid, terminated, reward, observation, admissible, ...(unchanged ? { unchanged } : {}) };
}

/** `<obs> state [<adm> actions] <eos>` from position `at` (a first state starts there at 0). */
export function decodeState(
  tokenizer: Tokenizer,
  t: Tokens,
  at = 0,
  freshNames?: readonly string[],
): { observation: string; admissible: string[] } {
  const end = indexOrEnd(t.ids, tokenizer.special('<eos>'), at);
  const adm = indexOrEnd(t.ids, tokenizer.special('<adm>'), at, end);
  const obsStart = t.ids[at] === tokenizer.special('<obs>') ? at + 1 : at;
  return {
    observation: collapse(tokenizer.decode(t, obsStart, adm, freshNames)),
    admissible: adm < end ? decodeActions(tokenizer, t, adm + 1, end, freshNames) : [],
  };
}

const ID_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * New ids for an answer's placeholders: the shape's prefix, then letters and digits drawn from a
 * generator seeded by the context alone (the same step dreams the same ids, in any batch), none
 * equal to an id the context shows.
 */
export function freshNames(shape: FreshIdShape, context: Pick<Sequence, 'ids' | 'knownIds'>): string[] {
  const rng = Rng.fromSeed(hashString(context.ids.join(',')), 'fresh ids');
  const taken = new Set(context.knownIds ?? []);
  const names: string[] = [];
  while (names.length < shape.count) {
    let name = shape.prefix;
    while (name.length < Math.max(shape.length, shape.prefix.length + 4))
      name += ID_CHARS[rng.int(0, ID_CHARS.length - 1)];
    // An id must stay id-like (a digit in it) and new.
    if (!/\d/.test(name) || !/^[a-z]/.test(name) || taken.has(name)) continue;
    taken.add(name);
    names.push(name);
  }
  return names;
}

/** The shape of the id-like pieces of some texts (FreshIdShape); `null` when they have none. */
export function freshIdShape(texts: Iterable<string>, count: number): FreshIdShape | null {
  let prefix: string | null = null;
  const lengths = new Map<number, number>();
  for (const text of texts) {
    for (const { piece } of splitPieces(collapse(text))) {
      if (!isIdLike(piece)) continue;
      const lower = piece.toLowerCase();
      prefix = prefix === null ? lower : commonPrefix(prefix, lower);
      lengths.set(lower.length, (lengths.get(lower.length) ?? 0) + 1);
    }
  }
  if (prefix === null) return null;
  const length = [...lengths].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
  // Only a letter-first prefix keeps every new id id-like.
  return { count, prefix: /^[a-z]/.test(prefix) ? prefix : '', length };
}

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return a.slice(0, i);
}

function indexOrEnd(ids: readonly number[], id: number, from: number, end = ids.length): number {
  for (let i = from; i < end; i++) if (ids[i] === id) return i;
  return end;
}
