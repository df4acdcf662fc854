/**
 * Page-side client of the trainer worker (worker-client.ts: ids, progress, errors, crashes). A
 * worker that dies rejects every open request with a TrainerWorkerCrashedError and calls
 * `oncrash`: the page then offers a restart from the last checkpoint with a fresh client.
 */
import type { IterationRecord } from '../../../core/train/loop';
import type { TryStepResult } from '../../../core/experience/try-step';
import type { TrainerProgress, TrainerRequest, TrainerStatus } from './trainer-protocol';
import { WorkerClient, WorkerCrashedError, type WorkerLike } from '../worker-client';

export class TrainerWorkerCrashedError extends WorkerCrashedError {
  constructor(detail: string) {
    super('trainer worker', detail, {
      code: 'trainer-worker-crashed',
      fix: 'Restart the worker: the run continues from its last checkpoint.',
    });
    this.name = 'TrainerWorkerCrashedError';
  }
}

export function createTrainerWorker(): WorkerLike {
  return new Worker(new URL('./trainer.worker.ts', import.meta.url), { type: 'module', name: 'dreamgym-trainer' });
}

type Options<T extends TrainerRequest['type']> = Omit<Extract<TrainerRequest, { type: T }>, 'id' | 'type'>;

export class TrainerClient extends WorkerClient<TrainerRequest, TrainerProgress> {
  constructor(worker: WorkerLike = createTrainerWorker()) {
    super(worker, (detail) => new TrainerWorkerCrashedError(detail));
  }

  /**
   * Starts (or resumes) a run. Resolves with the final status when the run finishes or is
   * stopped; `onprogress` sees every status change and metric batch meanwhile.
   */
  start(options: Options<'start'>, onprogress: (p: TrainerProgress) => void): Promise<TrainerStatus> {
    return this.request({ type: 'start', ...options }, onprogress) as Promise<TrainerStatus>;
  }

  pause(): Promise<TrainerStatus> {
    return this.request({ type: 'pause' }) as Promise<TrainerStatus>;
  }
  resume(): Promise<TrainerStatus> {
    return this.request({ type: 'resume' }) as Promise<TrainerStatus>;
  }
  step(): Promise<IterationRecord> {
    return this.request({ type: 'step' }) as Promise<IterationRecord>;
  }
  stop(): Promise<TrainerStatus> {
    return this.request({ type: 'stop' }) as Promise<TrainerStatus>;
  }
  status(): Promise<TrainerStatus> {
    return this.request({ type: 'status' }) as Promise<TrainerStatus>;
  }
  /** Setup's "Try one step" (see the protocol): one transition predicted by the config's engine beside the real env's. */
  tryStep(options: Options<'tryStep'>): Promise<TryStepResult> {
    return this.request({ type: 'tryStep', ...options }) as Promise<TryStepResult>;
  }
  /** Test/debug only: makes the worker throw an uncaught error. */
  crash(): Promise<TrainerStatus> {
    return this.request({ type: 'crash' }) as Promise<TrainerStatus>;
  }
}
