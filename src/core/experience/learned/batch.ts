/** What the learned network reads: rows of tokens, and a training batch (fit.ts makeBatch builds it). */

/** Tokens of B rows, flattened row-major; positions are each token's index in its part. */
export interface TokenRows {
  ids: Int32Array;
  spaces: Int32Array;
  cases: Int32Array;
  positions: Int32Array;
  /** Encoder only. */
  segments?: Int32Array;
}

/** Context rows: every token has its segment. */
export type ContextRows = TokenRows & { segments: Int32Array };

/** A training batch: contexts [B, Lc] and decoder inputs/targets [B, La], right-padded. */
export interface TrainBatch {
  rows: number;
  contextLength: number;
  answerLength: number;
  context: ContextRows;
  /** 1 for real context tokens, [B·Lc]. */
  contextMask: Float32Array;
  decoder: TokenRows;
  /** Loss weight where a target exists (0: none), [B·La]. */
  targetMask: Float32Array;
  targetIds: Int32Array;
  targetSpaces: Int32Array;
  targetCases: Int32Array;
  /** 1 where context token j equals the target of answer position t, [B, La, Lc]. */
  copyMatch: Float32Array;
}
