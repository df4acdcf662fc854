/**
 * An imported domain as the trainer's task source (src/core/train/task-source.ts): its training
 * tasks and DreamEnvs over its experience model, under the domain's env id and step limit. It has
 * no real env: no real phase, no curriculum, no held-out real evaluation (the domain is evaluated
 * its own way, evaluate.ts).
 */
import type { Env } from '../envs/env';
import type { Rng } from '../rng';
import type { Phase } from '../train/config';
import type { EvalResult } from '../train/evaluate';
import type { TaskSource } from '../train/task-source';
import type { Task } from '../types';
import type { Domain } from './domain';

/**
 * The domain's training tasks (distinct per iteration while there are enough, then repeated; a
 * shuffle by the iteration's task stream) and DreamEnvs made by `makeDreamEnv`.
 */
export class DomainTaskSource implements TaskSource {
  readonly hasRealEnv = false;
  readonly curriculum = null;
  readonly envId: string;

  constructor(
    readonly domain: Domain,
    readonly trainTasks: Task[],
    readonly stepLimit: number,
    private readonly makeDreamEnv: () => Env,
  ) {
    this.envId = domain.envId;
  }

  chooseTasks(_iteration: number, count: number, _phase: Phase, rng: Rng): Task[] {
    const order = rng.shuffle(this.trainTasks);
    return Array.from({ length: count }, (_, i) => order[i % order.length]);
  }

  /** A domain has no pool to fall back on: a failed first state stands as an error. */
  replacement(): Task | null {
    return null;
  }

  makeEnv(phase: Phase): Env {
    if (phase === 'real') {
      throw new Error(`The imported domain '${this.domain.name}' has no real env to play a real phase in.`);
    }
    return this.makeDreamEnv();
  }

  async recordOutcomes(): Promise<void> {
    /* no curriculum */
  }

  evaluate(): Promise<EvalResult> {
    return Promise.reject(
      new Error(
        'Held-out evaluation plays real tasks, and the imported domain ' +
          `'${this.domain.name}' has no real env; evaluate it its own way: DomainTrainer.evaluate() (dream success, ` +
          'action agreement and the audit).',
      ),
    );
  }
}
