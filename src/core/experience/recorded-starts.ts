/**
 * Dreams start from real initial states (the paper): for an imported domain, a demonstrated task
 * starts from the first observation its recorded episode shows, and only a task without one (an
 * extra description) has the model write it. `DomainExperienceModel` wraps any experience model so.
 */
import type { Observation, Task, Trajectory } from '../types';
import type { DreamContext, DreamCorrection, ExperienceModel, Prediction } from './types';

/** Recorded episodes of a domain: its training and held-out episodes. */
export interface RecordedEpisodes {
  train: readonly Trajectory[];
  heldOut: readonly Trajectory[];
}

/** Recorded first states of the domain's demonstrated tasks (first episode per task, admissible listed). */
export function recordedStarts(domain: RecordedEpisodes): Map<string, { text: string; admissible: string[] }> {
  const starts = new Map<string, { text: string; admissible: string[] }>();
  for (const t of [...domain.train, ...domain.heldOut]) {
    const first = t.steps[0];
    if (!first || first.admissible.length === 0 || starts.has(t.task.id)) continue;
    starts.set(t.task.id, { text: first.observation, admissible: first.admissible.slice() });
  }
  return starts;
}

/**
 * An experience model for an imported domain: demonstrated tasks start from their recorded first
 * observation; everything else is the inner model's.
 */
export class DomainExperienceModel implements ExperienceModel {
  private readonly starts: Map<string, { text: string; admissible: string[] }>;

  constructor(
    readonly inner: ExperienceModel,
    domain: RecordedEpisodes,
  ) {
    this.starts = recordedStarts(domain);
  }

  get label(): string {
    return this.inner.label;
  }

  async initial(task: Task, signal?: AbortSignal): Promise<Observation> {
    const start = this.starts.get(task.id);
    if (start) return { text: start.text, admissible: start.admissible.slice(), task };
    return this.inner.initial(task, signal);
  }

  next(ctx: DreamContext): Promise<Prediction> {
    return this.inner.next(ctx);
  }

  get preferredBatch(): number | undefined {
    return this.inner.preferredBatch;
  }

  get retrievalK(): number | undefined {
    return this.inner.retrievalK;
  }

  /** The inner model's correction, where it has one. */
  get correct(): ((correction: DreamCorrection) => Promise<void>) | undefined {
    const inner = this.inner;
    return inner.correct && ((correction) => inner.correct!(correction));
  }

  dispose(): void {
    this.inner.dispose?.();
  }
}
