/**
 * TheFuzz's `fuzz.token_set_ratio` (thefuzz ≥ 0.20, i.e. rapidfuzz underneath), written in-house.
 * WebShop's reward matches attributes and options with it (`score > 85`), so we reproduce its
 * exact integer output: full_process (ASCII only, non-alphanumerics → space, lower-case, trim),
 * token sets, 100 when one set contains the other, otherwise the best Indel ratio among
 * "intersection", "intersection + diff₁" and "intersection + diff₂", rounded like Python's round().
 */

/** Characters 128–255 dropped (thefuzz's `ascii_only`), then rapidfuzz's `default_process`. */
export function fullProcess(text: string, forceAscii = true): string {
  const ascii = forceAscii ? text.replace(/[\u0080-\u00ff]/g, '') : text;
  return ascii
    .replace(/[^\p{L}\p{N}]/gu, ' ')
    .toLowerCase()
    .trim();
}

/** Indel distance (insertions + deletions only) = |a| + |b| − 2·LCS(a, b). */
export function indelDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  // LCS by the classic O(|a|·|b|) dynamic programme over one row; strings here are short.
  const row = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = 0; // row[j-1] of the previous i
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = ca === b.charCodeAt(j - 1) ? diagonal + 1 : Math.max(above, row[j - 1]);
      diagonal = above;
    }
  }
  return a.length + b.length - 2 * row[b.length];
}

/** rapidfuzz's `norm_distance`: a similarity in [0, 100] from a distance and the summed length. */
function normDistance(distance: number, lengthSum: number): number {
  return lengthSum === 0 ? 100 : 100 * (1 - distance / lengthSum);
}

/** Python 3's round(): to the nearest integer, ties to even. */
export function pythonRound(x: number): number {
  const floor = Math.floor(x);
  const fraction = x - floor;
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** rapidfuzz.fuzz.token_set_ratio on already processed strings (a float in [0, 100]). */
export function tokenSetRatioRaw(s1: string, s2: string): number {
  if (!s1 || !s2) return 0;
  const tokensA = new Set(s1.split(/\s+/).filter(Boolean));
  const tokensB = new Set(s2.split(/\s+/).filter(Boolean));
  if (tokensA.size === 0 || tokensB.size === 0) return 0;
  const intersection: string[] = [];
  const diffAB: string[] = [];
  const diffBA: string[] = [];
  for (const t of tokensA) (tokensB.has(t) ? intersection : diffAB).push(t);
  for (const t of tokensB) if (!tokensA.has(t)) diffBA.push(t);
  // One sentence is part of the other one.
  if (intersection.length > 0 && (diffAB.length === 0 || diffBA.length === 0)) return 100;

  const abJoined = diffAB.sort(compareCodeUnits).join(' ');
  const baJoined = diffBA.sort(compareCodeUnits).join(' ');
  const sectLen = intersection.reduce((n, t) => n + t.length, 0) + Math.max(0, intersection.length - 1);
  const hasSect = sectLen > 0 ? 1 : 0;
  const sectAbLen = sectLen + hasSect + abJoined.length;
  const sectBaLen = sectLen + hasSect + baJoined.length;

  const result = normDistance(indelDistance(abJoined, baJoined), sectAbLen + sectBaLen);
  if (!sectLen) return result;
  // sect vs sect+diff differ only by the appended diff, so their distance is its length (+ space).
  const sectAbRatio = normDistance(hasSect + abJoined.length, sectLen + sectAbLen);
  const sectBaRatio = normDistance(hasSect + baJoined.length, sectLen + sectBaLen);
  return Math.max(result, sectAbRatio, sectBaRatio);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface TokenSetOptions {
  /** Run thefuzz's full_process on both strings first (default true, as in WebShop). */
  fullProcess?: boolean;
  /** Drop characters 128–255 before processing (thefuzz default true). */
  forceAscii?: boolean;
}

// The reward compares phrases from a small vocabulary over and over: memoise the default call.
const memo = new Map<string, number>();

/** thefuzz.fuzz.token_set_ratio: an integer in [0, 100]. */
export function tokenSetRatio(s1: string, s2: string, options: TokenSetOptions = {}): number {
  const full = options.fullProcess ?? true;
  const forceAscii = options.forceAscii ?? true;
  const key = full && forceAscii ? `${s1}\u0000${s2}` : null;
  if (key !== null) {
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
  }
  const a = full ? fullProcess(s1, forceAscii) : s1;
  const b = full ? fullProcess(s2, forceAscii) : s2;
  const score = pythonRound(tokenSetRatioRaw(a, b));
  if (key !== null) {
    if (memo.size >= 100_000) memo.clear();
    memo.set(key, score);
  }
  return score;
}

/** thefuzz.fuzz.ratio (no processing): normalised Indel similarity, rounded. */
export function ratio(s1: string, s2: string): number {
  if (!s1 && !s2) return 100;
  return pythonRound(normDistance(indelDistance(s1, s2), s1.length + s2.length));
}
