/**
 * MOReL's absorbing HALT over any experience model: a dreamed step farther from every real
 * transition of the replay buffer than the calibrated threshold (novelty.ts) ends the episode
 * there, with reward −penalty and no success. The agent cannot farm what the data never showed;
 * the step's own answer is kept for inspection.
 *
 * It wraps the model the way DomainExperienceModel does, so DreamEnv, the trainer and the audit
 * see an ordinary ExperienceModel. Every answered step carries its novelty; a halted one says so.
 */
import type { Observation, Task } from '../types';
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
}

export class HaltingExperienceModel implements ExperienceModel {
  constructor(
    readonly inner: ExperienceModel,
    readonly index: NoveltyIndex,
    readonly options: HaltOptions = {},
  ) {}

  get label(): string {
    const { thresholds, steps, quantile, successQuantile } = this.index.calibration;
    const beyond = `${thresholds.running.toFixed(2)}, successes ${thresholds.success.toFixed(2)}`;
    const calibrated = `q ${quantile}/${successQuantile} of ${steps} real steps`;
    return `${this.inner.label}, halt beyond novelty ${beyond} (${calibrated})`;
  }

  get preferredBatch(): number | undefined {
    return this.inner.preferredBatch;
  }

  get retrievalK(): number | undefined {
    return this.inner.retrievalK;
  }

  initial(task: Task, signal?: AbortSignal): Promise<Observation> {
    return this.inner.initial(task, signal);
  }

  async next(ctx: DreamContext): Promise<Prediction> {
    const prediction = await this.inner.next(ctx);
    if (!prediction.valid || !prediction.actionValid) return prediction;
    const step = noveltyStepOf(ctx, prediction);
    const novelty = this.index.distance(step);
    const threshold = this.index.threshold(step);
    if (novelty <= threshold) return { ...prediction, novelty };
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
        `halt: novelty ${novelty.toFixed(3)} beyond the threshold ${threshold.toFixed(3)} ` +
          `(no real transition is like this step), so the episode ends here with reward ${reward}`,
      ],
    };
  }

  /** Present where the inner model can be corrected: the replays are real data, so the index gets them too. */
  get correct(): ((correction: DreamCorrection) => Promise<void>) | undefined {
    const inner = this.inner;
    if (!inner.correct) return undefined;
    return (correction) => {
      this.index.addEpisodes(correction.episodes.map(recordedNoveltySteps));
      return inner.correct!(correction);
    };
  }

  dispose(): void {
    this.inner.dispose?.();
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
