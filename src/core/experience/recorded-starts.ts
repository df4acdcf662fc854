/**
 * Dreams start from real initial states (the paper): for an imported domain, a demonstrated task
 * starts from the first observation its recorded episode shows, and only a task without one (an
 * extra description) has the model write it. `DomainExperienceModel` wraps any experience model so.
 */
import type { Observation, Task, Trajectory } from '../types';
import type { ExperienceModel } from './types';
import { WrappedExperienceModel } from './wrapped-model';

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
export class DomainExperienceModel extends WrappedExperienceModel {
  private readonly starts: Map<string, { text: string; admissible: string[] }>;

  constructor(inner: ExperienceModel, domain: RecordedEpisodes) {
    super(inner);
    this.starts = recordedStarts(domain);
  }

  override async initial(task: Task, signal?: AbortSignal): Promise<Observation> {
    const start = this.starts.get(task.id);
    if (start) return { text: start.text, admissible: start.admissible.slice(), task };
    return this.inner.initial(task, signal);
  }
}
