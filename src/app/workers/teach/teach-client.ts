/**
 * Page-side client of the teach worker (worker-client.ts: ids, errors, crashes). A worker that
 * dies rejects every open request with a TeachWorkerCrashedError.
 */
import type { BackendName } from '../../../core/tfjs/backend';
import type { TeachSettings, TeachUpdate } from '../../../core/train/teach';
import type { TeachInfo, TeachRequest } from './teach-protocol';
import { WorkerClient, WorkerCrashedError, type WorkerLike } from '../worker-client';

export class TeachWorkerCrashedError extends WorkerCrashedError {
  constructor(detail: string) {
    super('teach worker', detail, { code: 'teach-worker-crashed', fix: 'Press Reset to start a fresh session.' });
    this.name = 'TeachWorkerCrashedError';
  }
}

export function createTeachWorker(): WorkerLike {
  return new Worker(new URL('./teach.worker.ts', import.meta.url), { type: 'module', name: 'dreamgym-teach' });
}

export class TeachClient extends WorkerClient<TeachRequest> {
  constructor(worker: WorkerLike = createTeachWorker()) {
    super(worker, (detail) => new TeachWorkerCrashedError(detail));
  }

  /** A fresh session with these settings (the previous one is disposed). */
  reset(settings: TeachSettings, backend?: BackendName): Promise<TeachInfo> {
    return this.request({ type: 'reset', settings, ...(backend ? { backend } : {}) }) as Promise<TeachInfo>;
  }

  /** One update of the current session, taken apart. */
  step(): Promise<TeachUpdate> {
    return this.request({ type: 'step' }) as Promise<TeachUpdate>;
  }
}
