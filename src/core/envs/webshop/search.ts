/**
 * In-memory BM25 standing in for WebShop's pyserini/Lucene index (docs/architecture.md §3.3):
 * Lucene's English analysis (lower-case, split on non-alphanumerics, possessive "'s" dropped,
 * English stop words, Porter stem), BM25 with k1 = 0.9, b = 0.4 and Lucene's idf, top 50,
 * ties broken by ASIN. Per-episode overlay products are scored with the base index's
 * statistics (N, df, avgdl), so adding distractors never changes how base products score.
 */
import { stem } from '../../text';

export const BM25_K1 = 0.9;
export const BM25_B = 0.4;
/** WebShop's SEARCH_RETURN_N. */
export const SEARCH_RETURN_N = 50;

/** Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET. */
export const STOPWORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

/** Text → index terms (the same analysis for documents and queries). */
export function analyze(text: string): string[] {
  const out: string[] = [];
  const lowered = text.toLowerCase().replace(/['’]s\b/g, '');
  for (const token of lowered.split(/[^\p{L}\p{N}]+/u)) {
    if (token.length === 0 || STOPWORDS.has(token)) continue;
    out.push(stem(token));
  }
  return out;
}

/** A document outside the index (an overlay product), analysed once. */
export interface ExternalDoc {
  asin: string;
  termFrequencies: Map<string, number>;
  length: number;
}

export function prepareExternalDoc(asin: string, text: string): ExternalDoc {
  const terms = analyze(text);
  const termFrequencies = new Map<string, number>();
  for (const t of terms) termFrequencies.set(t, (termFrequencies.get(t) ?? 0) + 1);
  return { asin, termFrequencies, length: terms.length };
}

export interface ScoredDoc {
  asin: string;
  score: number;
}

function byScoreThenAsin(a: ScoredDoc, b: ScoredDoc): number {
  if (a.score !== b.score) return b.score - a.score;
  return a.asin < b.asin ? -1 : a.asin > b.asin ? 1 : 0;
}

interface QueryTerm {
  term: string;
  /** Times the term occurs in the query (Lucene scores each clause). */
  count: number;
  idf: number;
  id: number; // -1 when the base index lacks the term
}

export class Bm25Index {
  readonly size: number;
  readonly averageLength: number;
  private readonly asins: string[];
  private readonly termIds = new Map<string, number>();
  private readonly postingsDocs: Int32Array[] = [];
  private readonly postingsTfs: Int32Array[] = [];
  private readonly lengthNorm: Float64Array; // k1 · (1 − b + b · dl / avgdl) per doc
  private readonly scratch: Float64Array;
  private readonly cache = new Map<string, ScoredDoc[]>();

  constructor(docs: readonly { asin: string; text: string }[]) {
    this.size = docs.length;
    this.asins = docs.map((d) => d.asin);
    const lengths = new Float64Array(docs.length);
    const docsByTerm: number[][] = [];
    const tfsByTerm: number[][] = [];
    docs.forEach((doc, i) => {
      const terms = analyze(doc.text);
      lengths[i] = terms.length;
      const counts = new Map<string, number>();
      for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [t, tf] of counts) {
        let id = this.termIds.get(t);
        if (id === undefined) {
          id = docsByTerm.length;
          this.termIds.set(t, id);
          docsByTerm.push([]);
          tfsByTerm.push([]);
        }
        docsByTerm[id].push(i);
        tfsByTerm[id].push(tf);
      }
    });
    for (let id = 0; id < docsByTerm.length; id++) {
      this.postingsDocs.push(Int32Array.from(docsByTerm[id]));
      this.postingsTfs.push(Int32Array.from(tfsByTerm[id]));
    }
    let total = 0;
    for (const l of lengths) total += l;
    this.averageLength = docs.length ? total / docs.length : 1;
    this.lengthNorm = new Float64Array(docs.length);
    for (let i = 0; i < docs.length; i++) {
      this.lengthNorm[i] = BM25_K1 * (1 - BM25_B + (BM25_B * lengths[i]) / this.averageLength);
    }
    this.scratch = new Float64Array(docs.length);
  }

  /** Lucene's BM25 idf: ln(1 + (N − df + 0.5) / (df + 0.5)). */
  idf(documentFrequency: number): number {
    return Math.log(1 + (this.size - documentFrequency + 0.5) / (documentFrequency + 0.5));
  }

  private queryTerms(query: string): QueryTerm[] {
    const counts = new Map<string, number>();
    for (const t of analyze(query)) counts.set(t, (counts.get(t) ?? 0) + 1);
    const out: QueryTerm[] = [];
    for (const [term, count] of counts) {
      const id = this.termIds.get(term) ?? -1;
      const df = id >= 0 ? this.postingsDocs[id].length : 0;
      out.push({ term, count, idf: this.idf(df), id });
    }
    return out;
  }

  /** Top `limit` base documents for the query (cached; the result must not be mutated). */
  searchBase(query: string, limit = SEARCH_RETURN_N): readonly ScoredDoc[] {
    const key = `${limit}\u0000${query}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const terms = this.queryTerms(query);
    const touched: number[] = [];
    const scores = this.scratch;
    for (const qt of terms) {
      if (qt.id < 0) continue;
      const docs = this.postingsDocs[qt.id];
      const tfs = this.postingsTfs[qt.id];
      const weight = qt.idf * qt.count;
      for (let k = 0; k < docs.length; k++) {
        const d = docs[k];
        const tf = tfs[k];
        if (scores[d] === 0) touched.push(d);
        scores[d] += (weight * tf) / (tf + this.lengthNorm[d]);
      }
    }
    // Only documents scoring at least the limit-th best score can make the cut (a native
    // numeric sort finds it); ties at the threshold are all kept, then ordered by ASIN.
    let kept = touched;
    if (touched.length > limit) {
      const values = new Float64Array(touched.length);
      for (let i = 0; i < touched.length; i++) values[i] = scores[touched[i]];
      values.sort();
      const threshold = values[touched.length - limit];
      kept = touched.filter((d) => scores[d] >= threshold);
    }
    const all: ScoredDoc[] = kept.map((d) => ({ asin: this.asins[d], score: scores[d] }));
    for (const d of touched) scores[d] = 0;
    all.sort(byScoreThenAsin);
    const top = all.slice(0, limit);
    if (this.cache.size >= 4096) this.cache.clear();
    this.cache.set(key, top);
    return top;
  }

  /** BM25 score of an external document with this index's statistics. */
  scoreExternal(query: string, doc: ExternalDoc): number {
    return this.scoreExternalTerms(this.queryTerms(query), doc);
  }

  private scoreExternalTerms(terms: readonly QueryTerm[], doc: ExternalDoc): number {
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * doc.length) / this.averageLength);
    let score = 0;
    for (const qt of terms) {
      const tf = doc.termFrequencies.get(qt.term);
      if (tf) score += (qt.idf * qt.count * tf) / (tf + norm);
    }
    return score;
  }

  /** Top `limit` ASINs over the base documents plus the overlay documents. */
  search(query: string, overlay: readonly ExternalDoc[] = [], limit = SEARCH_RETURN_N): string[] {
    const base = this.searchBase(query, limit);
    if (overlay.length === 0) return base.map((d) => d.asin);
    const terms = this.queryTerms(query);
    const merged: ScoredDoc[] = base.slice();
    for (const doc of overlay) {
      const score = this.scoreExternalTerms(terms, doc);
      if (score > 0) merged.push({ asin: doc.asin, score });
    }
    merged.sort(byScoreThenAsin);
    return merged.slice(0, limit).map((d) => d.asin);
  }
}
