/**
 * How long a training of the learned experience model has left, measured on the training itself
 * (fit.ts feeds it every batch and every epoch's end; plain logic, unit-tested).
 *
 *   speed       tokens / seconds over the batches so far, the first few of the run left out
 *   epoch left  (tokens still to train in this epoch) / speed + this epoch's end
 *   total left  epoch left + (epochs after this one) × (tokens an epoch / speed + an epoch's end)
 *
 * "An epoch's end" is the validation pass, the best weights' copy and the checkpoint, measured
 * once an epoch has ended, and before that the validation tokens at VALIDATION_SPEEDUP × the
 * training speed. Early stopping may end sooner: the total is for the most epochs.
 *
 * Why not seconds per batch (the earlier estimate, which read between 26 min and 1 h 18 min in
 * the page): batches group pairs of similar length, so one holds 17× the tokens of another
 * (the shipped shop data: 660 to 11,200), and a mean over the first batches of a shuffled epoch
 * swings with the few it happened to draw; the first batches of a run also carry tfjs's and
 * wasm's one-off start-up (kernels, memory growth), which a mean over a few batches multiplies
 * by every batch left; and the mean restarted at every epoch and left the validation out.
 */

/** Batches at the start of a run (or a resume) left out of the speed: start-up, not training. */
export const WARMUP_BATCHES = 3;
/** Batches measured before the time left is given (null before). */
export const MIN_MEASURED_BATCHES = 3;
/** A validation token is a forward pass only: about this many times faster than a training token. */
export const VALIDATION_SPEEDUP = 3;

export interface TrainingWork {
  /** Context and answer tokens of one epoch's training pairs. */
  epochTokens: number;
  /** Tokens of the validation pairs (evaluated after every epoch). */
  validationTokens: number;
  batchesPerEpoch: number;
}

export interface TimeLeft {
  /** Seconds to this epoch's end (its validation and checkpoint included). */
  epoch: number;
  /** Seconds to the last epoch's end (at most: early stopping may end sooner). */
  total: number;
}

export class TrainingSpeed {
  private seen = 0;
  private measured = 0;
  private tokens = 0;
  private seconds = 0;
  private epochEnd: number | null = null;
  private readonly warmup: number;

  constructor(readonly work: TrainingWork) {
    // A short epoch (a demo) keeps most of its batches measured.
    this.warmup = Math.min(WARMUP_BATCHES, Math.floor(work.batchesPerEpoch / 4));
  }

  /** One training batch: its tokens and the seconds since the previous batch ended. */
  addBatch(tokens: number, seconds: number): void {
    if (this.seen++ < this.warmup) return;
    this.measured++;
    this.tokens += tokens;
    this.seconds += seconds;
  }

  /** An epoch's end: the seconds from its last batch to the next epoch's start (validation, checkpoint). */
  addEpochEnd(seconds: number): void {
    this.epochEnd = seconds;
  }

  /** Batches the speed is measured over (0 while the run is warming up). */
  get measuredBatches(): number {
    return this.measured;
  }

  /** Training tokens per second, measured; null until MIN_MEASURED_BATCHES batches are. */
  get tokensPerSecond(): number | null {
    if (this.measured < MIN_MEASURED_BATCHES || !(this.seconds > 0)) return null;
    return this.tokens / this.seconds;
  }

  /** The time left, given the tokens still to train in this epoch and the epochs after it; null while unmeasured. */
  timeLeft(tokensLeftInEpoch: number, epochsAfter: number): TimeLeft | null {
    const speed = this.tokensPerSecond;
    if (speed === null) return null;
    const end = this.epochEnd ?? this.work.validationTokens / (speed * VALIDATION_SPEEDUP);
    const epoch = Math.max(0, tokensLeftInEpoch) / speed + end;
    return { epoch, total: epoch + Math.max(0, epochsAfter) * (this.work.epochTokens / speed + end) };
  }
}
