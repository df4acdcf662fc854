/**
 * Top-k retrieval over a buffer that arrives in blocks (a folder read as a stream, never loaded
 * whole: `buffer query`), with the hits, scores and order that ReplayBuffer.retrieve gives over the
 * whole buffer. Each block is scored in a RetrievalIndex of its own, so every score is that
 * index's, bit for bit; between blocks only the best k are kept (with `diverse`, the best row of
 * each of k episodes: a row dropped from the k can never come back, as k better episodes stay).
 * Ties go as in the full index, whose rows are in ReplayBuffer.load's order: transitions in
 * insertion order (createdAt, id), those re-embedded (no stored vector of this embedder) after
 * all the others.
 */
import { queryText, type RetrievalQuery, type RetrievedTransition } from './buffer';
import { transitionText, type Embedder } from './embedders';
import { RetrievalIndex, type SearchOptions } from './retrieval';
import { compareInsertion } from './stores/common';
import type { BufferTransition } from './types';

interface Candidate extends RetrievedTransition {
  /** Its vector was made here (it had none of this embedder): it ranks after the stored ones on ties. */
  reembedded: boolean;
}

export class StreamedRetrieval {
  private readonly index: RetrievalIndex;
  private vector: Float32Array | null = null;
  private kept: Candidate[] = [];

  constructor(
    readonly embedder: Embedder,
    readonly query: RetrievalQuery,
    readonly k: number,
    readonly options: SearchOptions = {},
  ) {
    this.index = new RetrievalIndex(embedder.dims, { embedder: embedder.id });
  }

  /** Starts over (a reader that found the folder rewritten under it reads it again). */
  begin(): void {
    this.kept = [];
  }

  /** Scores a block of transitions; each id comes once in a stream. */
  async add(block: readonly BufferTransition[]): Promise<void> {
    this.vector ??= (await this.embedder.embed([queryText(this.query)]))[0];
    const { dims, id } = this.embedder;
    const stored: BufferTransition[] = [];
    const others: BufferTransition[] = [];
    for (const t of block) (t.embedding && t.embedder === id && t.embedding.length === dims ? stored : others).push(t);
    stored.sort(compareInsertion);
    others.sort(compareInsertion);
    const vectors = others.length > 0 ? await this.embedder.embed(others.map((t) => transitionText(t))) : [];
    // Rows in the full index's order; a hit's row says which transition it is.
    const rows = [...stored, ...others];
    this.index.clear();
    this.index.add([...stored, ...others.map((t, i) => ({ ...t, embedding: vectors[i], embedder: id }))]);
    const hits = this.index.search(this.vector, this.k, this.options);
    const found = hits.map((hit) => ({
      transition: rows[hit.row],
      score: hit.score,
      reembedded: hit.row >= stored.length,
    }));
    this.kept = this.best([...this.kept, ...found]);
  }

  /** The best k of `candidates` (one per episode with `diverse`), best first. */
  private best(candidates: Candidate[]): Candidate[] {
    candidates.sort(
      (a, b) =>
        b.score - a.score ||
        Number(a.reembedded) - Number(b.reembedded) ||
        compareInsertion(a.transition, b.transition),
    );
    const episodes = new Set<string>();
    const kept: Candidate[] = [];
    for (const c of candidates) {
      if (kept.length === this.k) break;
      if (this.options.diverse) {
        if (episodes.has(c.transition.episodeId)) continue;
        episodes.add(c.transition.episodeId);
      }
      kept.push(c);
    }
    return kept;
  }

  /** The k most similar transitions seen, best first. */
  results(): RetrievedTransition[] {
    return this.kept.map(({ transition, score }) => ({ transition, score }));
  }
}
