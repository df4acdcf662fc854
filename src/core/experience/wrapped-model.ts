/**
 * An experience model around another: everything is the inner model's until a subclass changes it.
 * The dream's layers (a domain's recorded starts, the halt, real starts) each change one thing and
 * pass the rest through, the correction hook (S2R that corrects the dream) included.
 */
import type { Observation, Task } from '../types';
import type { DreamContext, DreamCorrection, ExperienceModel, Prediction, RealStartSource } from './types';

export class WrappedExperienceModel implements ExperienceModel {
  constructor(readonly inner: ExperienceModel) {}

  get label(): string {
    return this.inner.label;
  }

  get preferredBatch(): number | undefined {
    return this.inner.preferredBatch;
  }

  get retrievalK(): number | undefined {
    return this.inner.retrievalK;
  }

  get realStarts(): RealStartSource | undefined {
    return this.inner.realStarts;
  }

  initial(task: Task, signal?: AbortSignal): Promise<Observation> {
    return this.inner.initial(task, signal);
  }

  next(ctx: DreamContext): Promise<Prediction> {
    return this.inner.next(ctx);
  }

  /** Present where the inner model can be corrected. */
  get correct(): ((correction: DreamCorrection) => Promise<void>) | undefined {
    const inner = this.inner;
    return inner.correct && ((correction) => inner.correct!(correction));
  }

  dispose(): void {
    this.inner.dispose?.();
  }
}
