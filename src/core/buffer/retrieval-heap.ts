/**
 * The best k rows a retrieval search has seen (retrieval.ts): a bounded min-heap on (score, −row),
 * so slot 0 holds the worst kept row (the lowest score, the latest row on ties). With `diverse`,
 * it keeps one row per episode (the better one), tracking each episode's slot.
 */
export class TopKHeap {
  /** Scores and rows of the kept rows, `size` of them, in heap order. */
  score = new Float64Array(0);
  row = new Int32Array(0);
  size = 0;
  private k = 0;
  private diverse = false;
  private episodeCodes: Int32Array = new Int32Array(0);
  /** Heap slot of each episode code during a diverse search (−1 = not in the heap). */
  private episodeSlot = new Int32Array(0);

  /**
   * Empties the heap for a search of the best `k` (scratch grown on demand); `episodeCodes` is the
   * episode code of each row, `episodes` how many codes there are.
   */
  begin(k: number, diverse: boolean, episodeCodes: Int32Array, episodes: number): void {
    if (this.score.length < k) {
      this.score = new Float64Array(k);
      this.row = new Int32Array(k);
    }
    if (diverse && this.episodeSlot.length < episodes)
      this.episodeSlot = new Int32Array(Math.max(episodes, 2 * this.episodeSlot.length)).fill(-1);
    this.k = k;
    this.diverse = diverse;
    this.episodeCodes = episodeCodes;
    this.size = 0;
  }

  /** Every slot is −1 between searches; call this after each search, also one that threw. */
  end(): void {
    // Clearing all k (not just `size`, which an exception would leave short) also covers stale entries, harmlessly.
    if (this.diverse) for (let i = 0; i < this.k; i++) this.episodeSlot[this.episodeCodes[this.row[i]]] = -1;
  }

  get full(): boolean {
    return this.size === this.k;
  }

  /**
   * Whether a row scoring `score` may enter. Rows arrive in order, so a candidate equal to the
   * heap's worst is later, hence worse.
   */
  admits(score: number): boolean {
    return this.size < this.k || score > this.score[0];
  }

  /**
   * Puts a row that beats the heap's worst (or fills a free slot) into the heap; with `diverse`,
   * one row per episode (the better one).
   */
  offer(row: number, score: number): void {
    const heapScore = this.score,
      heapRow = this.row;
    if (this.diverse) {
      const episodeCodes = this.episodeCodes,
        episodeSlot = this.episodeSlot;
      const slot = episodeSlot[episodeCodes[row]];
      if (slot >= 0) {
        // Same episode already kept: keep the better of the two rows.
        if (score > heapScore[slot]) {
          heapScore[slot] = score;
          heapRow[slot] = row;
          this.siftDown(slot);
        }
        return;
      }
      if (this.size === this.k) episodeSlot[episodeCodes[heapRow[0]]] = -1; // the worst leaves
    }
    if (this.size < this.k) {
      const slot = this.size++;
      heapScore[slot] = score;
      heapRow[slot] = row;
      if (this.diverse) this.episodeSlot[this.episodeCodes[row]] = slot;
      this.siftUp(slot);
      return;
    }
    heapScore[0] = score;
    heapRow[0] = row;
    if (this.diverse) this.episodeSlot[this.episodeCodes[row]] = 0;
    this.siftDown(0);
  }

  private worse(a: number, b: number): boolean {
    const sa = this.score[a],
      sb = this.score[b];
    return sa < sb || (sa === sb && this.row[a] > this.row[b]);
  }

  private swap(a: number, b: number): void {
    const s = this.score[a];
    this.score[a] = this.score[b];
    this.score[b] = s;
    const r = this.row[a];
    this.row[a] = this.row[b];
    this.row[b] = r;
    if (this.diverse) {
      this.episodeSlot[this.episodeCodes[this.row[a]]] = a;
      this.episodeSlot[this.episodeCodes[this.row[b]]] = b;
    }
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) return;
      const right = left + 1;
      const child = right < this.size && this.worse(right, left) ? right : left;
      if (!this.worse(child, i)) return;
      this.swap(i, child);
      i = child;
    }
  }
}
