/**
 * The learned experience model's tokenizer: words learned from the domain's own text, with a
 * character fallback so any id, name or number can still be read and written.
 *
 * A token is three things: a piece id, whether a space comes before it, and its letter case.
 * Keeping space and case out of the id matters for copying: `K7TQX2M4PA` on a listing page and
 * `k7tqx2m4pa` inside `pick[k7tqx2m4pa]` are the same piece, so the model's pointer can copy
 * it from one to the other, and `Sofa`/`sofa` share what the model learns about them.
 *
 *   text       "Row 1 (Rows in all: 50) | K7TQX2M4PA | Linen Sofa"
 *   pieces      row ▁1 ▁( rows ▁in ▁all : ▁50 ) ▁| ▁k7tqx2m4pa ▁| ▁linen ▁sofa   (▁ = space before)
 *   case        Cap, -, -, Cap, lower… , UPPER for the id, Cap for Linen and Sofa
 *
 * Pieces: a letter followed by letters, digits or apostrophes; a run of up to four digits
 * (longer runs are split in threes); any other single character. A piece missing from the
 * vocabulary is spelled with character tokens (the first one carries the piece's space; each
 * carries its own case). Pieces whose case is neither lower, Capitalised nor UPPER (`iPhone`)
 * keep their exact form as a vocabulary entry when frequent, else are spelled. Printable ASCII
 * always has a character id; another character never seen in training reads back as '?'.
 *
 * Fresh ids (a tokenizer learned with `freshIds`): an id-like piece of an answer (letters and
 * digits, a letter first, six or more, a digit among them) that the context does not show is
 * written as one placeholder, `<id1>` … `<idN>` in order of first use, so the same id
 * gets the same placeholder on a page and in its admissible list. No context can predict an id
 * nobody has seen (a listing page's items are mostly new: 1,390 of the shipped shop data's
 * 2,320 item ids occur on one page only); as a word or spelled, such an id is noise to learn and to write.
 * The reader gives each placeholder a new id (FreshIdShape).
 */

export const SPECIAL_TOKENS = [
  '<pad>',
  '<unk>',
  '<bos>',
  '<eos>',
  // context segments
  '<task>',
  '<ex>',
  '<exa>',
  '<exn>',
  '<end>',
  '<hist>',
  '<state>',
  '<act>',
  '<init>',
  '<ans>',
  // answer structure
  '<obs>',
  '<adm>',
  '<sep>',
  '<yes>',
  '<no>',
  '<r0>',
  '<r1>',
] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

/** Letter case of a token: as written in the vocabulary, Capitalised, or UPPER. */
export const CASE_LOWER = 0,
  CASE_CAPITAL = 1,
  CASE_UPPER = 2;
export type LetterCase = 0 | 1 | 2;

/** A tokenized text: parallel arrays of piece ids, space-before flags and letter cases. */
export interface Tokens {
  ids: number[];
  spaces: number[];
  cases: number[];
}

export interface TokenizerJSON {
  format: 'dreamgym-tokenizer/1';
  /** Every piece, id order; specials first. */
  pieces: string[];
}

export interface LearnOptions {
  /** A piece must occur this often to get its own id (default 2). */
  minCount?: number;
  /** Most ids in all, specials and characters included (default 6000). */
  maxVocab?: number;
  /** Placeholders for ids the context does not show (see the file comment); default none. */
  freshIds?: number;
}

/** Where an answer's unseen ids go: the context's own ids, and the placeholders given so far. */
export interface FreshIdScope {
  /** Id-like words the context shows, lower case. */
  known: ReadonlySet<string>;
  /** Each unseen id (lower case) → its placeholder index. */
  assigned: Map<string, number>;
}

/** Letters and digits, a letter first, six or more, at least one digit: a product id, not a word. */
export function isIdLike(piece: string): boolean {
  return /^[A-Za-z][A-Za-z0-9]{5,}$/.test(piece) && /\d/.test(piece);
}

const PIECE = /(\s*)([A-Za-z][A-Za-z0-9']*|\d+|[^\sA-Za-z\d])/gy;
/** Characters that always have an id, so any printable ASCII text can be spelled (lower case: case is its own field). */
const BASE_CHARS = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))
  .filter((c) => c !== ' ' && c === c.toLowerCase())
  .join('');

/** Splits text into (space before, piece) pairs; digit runs longer than 4 go in threes. */
export function splitPieces(text: string): { space: boolean; piece: string }[] {
  const out: { space: boolean; piece: string }[] = [];
  PIECE.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = PIECE.exec(text)) !== null) {
    const space = match[1].length > 0;
    const piece = match[2];
    if (/^\d{5,}$/.test(piece)) {
      for (let i = 0; i < piece.length; i += 3) out.push({ space: space && i === 0, piece: piece.slice(i, i + 3) });
    } else {
      out.push({ space, piece });
    }
  }
  return out;
}

/** The case class of a piece and its lower-cased form; `null` when the case is mixed. */
export function caseOf(piece: string): { lower: string; letterCase: LetterCase } | null {
  const lower = piece.toLowerCase();
  if (piece === lower) return { lower, letterCase: CASE_LOWER };
  const upper = piece.toUpperCase();
  if (piece === upper) {
    // One letter (plus digits) reads as Capitalised; UPPER needs two letters.
    const letters = piece.replace(/[^A-Za-z]/g, '').length;
    return { lower, letterCase: letters >= 2 ? CASE_UPPER : CASE_CAPITAL };
  }
  if (piece[0] === piece[0].toUpperCase() && piece.slice(1) === piece.slice(1).toLowerCase())
    return { lower, letterCase: CASE_CAPITAL };
  return null;
}

function applyCase(piece: string, letterCase: number): string {
  if (letterCase === CASE_UPPER) return piece.toUpperCase();
  if (letterCase === CASE_CAPITAL) {
    const at = piece.search(/[a-z]/i);
    return at < 0 ? piece : piece.slice(0, at) + piece[at].toUpperCase() + piece.slice(at + 1);
  }
  return piece;
}

export class Tokenizer {
  readonly pieces: readonly string[];
  private readonly idOf: Map<string, number>;
  /** Ids of the placeholders `<id1>` … in order (none in a tokenizer learned without them). */
  readonly freshIdTokens: readonly number[];

  constructor(pieces: readonly string[]) {
    SPECIAL_TOKENS.forEach((s, i) => {
      if (pieces[i] !== s)
        throw new Error(
          `Tokenizer: piece ${i} must be the special '${s}', got '${pieces[i]}'; the file is not a DreamGym tokenizer.`,
        );
    });
    this.pieces = pieces.slice();
    this.idOf = new Map(this.pieces.map((p, i) => [p, i]));
    if (this.idOf.size !== this.pieces.length) throw new Error('Tokenizer: duplicate pieces in the vocabulary.');
    const fresh: number[] = [];
    for (let n = 1; this.idOf.has(`<id${n}>`); n++) fresh.push(this.idOf.get(`<id${n}>`)!);
    this.freshIdTokens = fresh;
    this.freshIndexOf = new Map(fresh.map((id, i) => [id, i]));
  }

  private readonly freshIndexOf: ReadonlyMap<number, number>;

  /** The placeholder index of a token id, or −1 for any other token. */
  freshIndex(id: number): number {
    return this.freshIndexOf.get(id) ?? -1;
  }

  /** Learns the vocabulary from texts: specials, every character seen, then the most frequent pieces. */
  static learn(texts: Iterable<string>, options: LearnOptions = {}): Tokenizer {
    const minCount = options.minCount ?? 2;
    const maxVocab = options.maxVocab ?? 6000;
    const counts = new Map<string, number>();
    const chars = new Set<string>(BASE_CHARS);
    for (const text of texts) {
      for (const { piece } of splitPieces(text)) {
        const c = caseOf(piece);
        const key = c ? c.lower : piece;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        for (const ch of piece.toLowerCase()) chars.add(ch);
      }
    }
    const pieces: string[] = [...SPECIAL_TOKENS];
    const taken = new Set<string>(pieces);
    for (const ch of [...chars].sort())
      if (!taken.has(ch)) {
        pieces.push(ch);
        taken.add(ch);
      }
    for (let i = 1; i <= (options.freshIds ?? 0); i++) {
      pieces.push(`<id${i}>`);
      taken.add(`<id${i}>`);
    }
    const frequent = [...counts.entries()]
      .filter(([p, n]) => n >= minCount && !taken.has(p))
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    for (const [piece] of frequent) {
      if (pieces.length >= maxVocab) break;
      pieces.push(piece);
    }
    return new Tokenizer(pieces);
  }

  static fromJSON(json: TokenizerJSON): Tokenizer {
    if (json?.format !== 'dreamgym-tokenizer/1' || !Array.isArray(json.pieces)) {
      throw new Error(`Not a DreamGym tokenizer (format '${String(json?.format)}'); expected 'dreamgym-tokenizer/1'.`);
    }
    return new Tokenizer(json.pieces);
  }

  toJSON(): TokenizerJSON {
    return { format: 'dreamgym-tokenizer/1', pieces: this.pieces.slice() };
  }

  get size(): number {
    return this.pieces.length;
  }

  /** The id of a special token. */
  special(token: SpecialToken): number {
    return this.idOf.get(token)!;
  }

  /** Whether an id is a special (structure) token rather than text. */
  isSpecial(id: number): boolean {
    return id < SPECIAL_TOKENS.length;
  }

  /**
   * Appends the tokens of `text` (at most `maxTokens` of them) to `out`. With `seen`, the
   * id-like pieces written whole are added to it (lower case); with `fresh`, such a piece
   * the scope's context does not show is written as its placeholder while placeholders last.
   */
  encodeInto(
    text: string,
    out: Tokens,
    maxTokens = Infinity,
    ids: { seen?: Set<string>; fresh?: FreshIdScope } = {},
  ): void {
    const start = out.ids.length;
    const push = (id: number, space: boolean, letterCase: number): boolean => {
      if (out.ids.length - start >= maxTokens) return false;
      out.ids.push(id);
      out.spaces.push(space ? 1 : 0);
      out.cases.push(letterCase);
      return true;
    };
    for (const { space, piece } of splitPieces(text)) {
      const c = caseOf(piece);
      const idLike = isIdLike(piece);
      const placeholder = ids.fresh && idLike ? this.placeholderOf(piece.toLowerCase(), ids.fresh) : undefined;
      if (placeholder !== undefined) {
        if (!push(placeholder, space, c ? c.letterCase : CASE_LOWER)) return;
        continue;
      }
      const id = this.idOf.get(c ? c.lower : piece);
      if (id !== undefined && !this.isSpecial(id)) {
        if (!push(id, space, c ? c.letterCase : CASE_LOWER)) return;
        if (ids.seen && idLike) ids.seen.add(piece.toLowerCase());
        continue;
      }
      // Spelled: each character its own token, the first one carrying the space.
      let first = true;
      for (const ch of piece) {
        const lower = ch.toLowerCase();
        const charId = this.idOf.get(lower);
        const letterCase = ch !== lower ? CASE_CAPITAL : CASE_LOWER;
        if (
          !push(
            charId !== undefined && !this.isSpecial(charId) ? charId : this.special('<unk>'),
            space && first,
            letterCase,
          )
        )
          return;
        first = false;
      }
      if (ids.seen && idLike) ids.seen.add(piece.toLowerCase());
    }
  }

  /** The placeholder token of an unseen id, given in order of first use; none once they run out. */
  private placeholderOf(lower: string, scope: FreshIdScope): number | undefined {
    if (scope.known.has(lower)) return undefined;
    let index = scope.assigned.get(lower);
    if (index === undefined) {
      if (scope.assigned.size >= this.freshIdTokens.length) return undefined;
      index = scope.assigned.size;
      scope.assigned.set(lower, index);
    }
    return this.freshIdTokens[index];
  }

  encode(text: string, maxTokens = Infinity): Tokens {
    const out: Tokens = { ids: [], spaces: [], cases: [] };
    this.encodeInto(text, out, maxTokens);
    return out;
  }

  /** Text with the structure tokens shown (`<yes> <no> <r0> <obs> Page 1 …`), for inspecting a raw answer. */
  decodeWithMarkers(tokens: Tokens): string {
    const parts: string[] = [];
    let start = 0;
    for (let i = 0; i <= tokens.ids.length; i++) {
      if (i < tokens.ids.length && !this.isSpecial(tokens.ids[i])) continue;
      if (i > start) parts.push(this.decode(tokens, start, i));
      if (i < tokens.ids.length) parts.push(this.pieces[tokens.ids[i]]);
      start = i + 1;
    }
    return parts.join(' ');
  }

  /** Text of tokens (specials are skipped; `<unk>` reads '?'; placeholder i reads `freshNames[i]` when given). */
  decode(tokens: Tokens, from = 0, to = tokens.ids.length, freshNames?: readonly string[]): string {
    let text = '';
    for (let i = from; i < to; i++) {
      const id = tokens.ids[i];
      if (id === this.special('<unk>')) {
        text += tokens.spaces[i] ? ' ?' : '?';
        continue;
      }
      if (this.isSpecial(id)) continue;
      const fresh = freshNames ? this.freshIndex(id) : -1;
      const piece = applyCase(fresh >= 0 && freshNames![fresh] ? freshNames![fresh] : this.pieces[id], tokens.cases[i]);
      text += (tokens.spaces[i] && text.length > 0 ? ' ' : '') + piece;
    }
    return text;
  }
}
