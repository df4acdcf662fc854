/**
 * MOReL's absorbing HALT over any experience model: a dreamed step farther from every real
 * transition of the replay buffer than the calibrated threshold (novelty.ts) ends the episode
 * there, with reward −penalty and no success. The agent cannot farm what the data never showed;
 * the step's own answer is kept for inspection.
 *
 * It wraps the model the way DomainExperienceModel does, so DreamEnv, the trainer and the audit
 * see an ordinary ExperienceModel. Every answered step carries its novelty; a halted one says so.
 */
import { WrappedExperienceModel } from './wrapped-model';
import { NoveltyIndex, recordedNoveltySteps, type NoveltyStep } from './novelty';
import {
  predictedOutcome,
  type DreamContext,
  type DreamCorrection,
  type ExperienceModel,
  type Prediction,
} from './types';

export interface HaltOptions {
  /** The halt's reward is −penalty (default 0). */
  penalty?: number;
  /**
   * A dreamed state offers only actions whose pattern a real state offered (NoveltyIndex.offerable):
   * the agent is never offered a step the data cannot back, such as taking a thing the state does
   * not show (default true). Where none is left, the state itself is unlike any real one: a halt.
   */
  offers?: boolean;
  /**
   * Where a running step's sample is beyond the threshold, ask the model for up to this many other
   * draws of the same step (DreamContext.draw) before halting (default 0). A sampling generator
   * errs on some draws; a step the data backs still has real-like ones.
   */
  redraws?: number;
}

export class HaltingExperienceModel extends WrappedExperienceModel {
  constructor(
    inner: ExperienceModel,
    readonly index: NoveltyIndex,
    readonly options: HaltOptions = {},
  ) {
    super(inner);
  }

  override get label(): string {
    const { thresholds, steps, quantile, successQuantile } = this.index.calibration;
    const beyond = `${thresholds.running.toFixed(2)}, successes ${thresholds.success.toFixed(2)}`;
    const calibrated = `q ${quantile}/${successQuantile} of ${steps} real steps`;
    return `${this.inner.label}, halt beyond novelty ${beyond} (${calibrated})`;
  }

  override async next(ctx: DreamContext): Promise<Prediction> {
    let prediction = await this.inner.next(ctx);
    let judged = this.judge(ctx, prediction);
    // A running sample unlike the data may be the generator's bad draw, not the step's: draw again.
    const usage = { ...prediction.usage };
    let draw = 0;
    while ('halt' in judged && !prediction.terminated && draw < (this.options.redraws ?? 0)) {
      draw++;
      prediction = await this.inner.next({ ...ctx, draw });
      for (const k of ['promptTokens', 'completionTokens', 'ms'] as const) usage[k] += prediction.usage[k];
      judged = this.judge(ctx, prediction);
    }
    const result = 'halt' in judged ? this.halt(prediction, judged.novelty, judged.threshold, judged.halt) : judged.ok;
    if (draw === 0) return result;
    return {
      ...result,
      usage,
      redraws: draw,
      notes: [...result.notes, `redrawn ${draw} time(s): the first draws were unlike the data`],
    };
  }

  /** The prediction as the halt lets it stand (offers filtered), or why it halts. */
  private judge(
    ctx: DreamContext,
    prediction: Prediction,
  ): { ok: Prediction } | { halt: string | undefined; novelty: number; threshold: number } {
    if (!prediction.valid || !prediction.actionValid) return { ok: prediction };
    const step = noveltyStepOf(ctx, prediction);
    const novelty = this.index.distance(step);
    const threshold = this.index.threshold(step);
    if (novelty > threshold) return { halt: undefined, novelty, threshold };
    if (prediction.terminated || this.options.offers === false) return { ok: { ...prediction, novelty } };
    const context = { instruction: step.instruction, earlier: [...step.earlier, step.action], state: step.next };
    const admissible = this.index.offerable(context, prediction.next.admissible);
    if (admissible.length === 0 && prediction.next.admissible.length > 0)
      return { halt: 'the dreamed state offers no action any real state offered', novelty, threshold };
    const dropped = prediction.next.admissible.length - admissible.length;
    if (dropped === 0) return { ok: { ...prediction, novelty } };
    const note = `offers: ${dropped} dreamed action(s) no real state offered were left out`;
    return {
      ok: { ...prediction, novelty, next: { ...prediction.next, admissible }, notes: [...prediction.notes, note] },
    };
  }

  private halt(prediction: Prediction, novelty: number, threshold: number, why?: string): Prediction {
    const penalty = this.options.penalty ?? 0;
    const reward = penalty ? -penalty : 0; // never -0 in a note or a metric
    return {
      ...prediction,
      novelty,
      halted: true,
      next: { ...prediction.next, admissible: [] },
      reward,
      success: false,
      score: 0,
      terminated: true,
      notes: [
        ...prediction.notes,
        (why ? `halt: ${why} ` : `halt: novelty ${novelty.toFixed(3)} beyond the threshold ${threshold.toFixed(3)} `) +
          `(no real transition is like this step), so the episode ends here with reward ${reward}`,
      ],
    };
  }

  /** Present where the inner model can be corrected: the replays are real data, so the index gets them too. */
  override get correct(): ((correction: DreamCorrection) => Promise<void>) | undefined {
    const inner = this.inner;
    if (!inner.correct) return undefined;
    return (correction) => {
      this.index.addEpisodes(correction.episodes.map(recordedNoveltySteps));
      return inner.correct!(correction);
    };
  }
}

/** What novelty reads of a dreamed step: its context and the model's answer. */
export function noveltyStepOf(ctx: DreamContext, prediction: Prediction): NoveltyStep {
  return {
    instruction: ctx.task.instruction,
    earlier: ctx.history.filter((s) => s.valid).map((s) => s.action),
    state: ctx.state.text,
    action: ctx.action,
    next: prediction.next.text,
    terminated: prediction.terminated,
    success: prediction.terminated && predictedOutcome(prediction) === 1,
  };
}
