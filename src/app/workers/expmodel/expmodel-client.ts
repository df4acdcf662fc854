/**
 * Page-side client of the Experience model worker (worker-client.ts: ids, progress, errors,
 * crashes). A worker that dies rejects every open request with an ExpModelWorkerCrashedError.
 *
 * Stopping: the worker checks for a stop between batches, but a wasm training step never yields
 * to the worker's event loop, so a `stop` message may only be read at the next epoch's end. When
 * the running request has not ended `STOP_GRACE_MS` after asking, the client terminates the worker
 * (the checkpoint of the last finished epoch is already in IndexedDB) and the running request
 * resolves as stopped; the next request starts a fresh worker.
 */
import type {
  Evaluation,
  ExpModelProgress,
  ExpModelRequest,
  ExpModelStatus,
  KeptModel,
  TrainOutcome,
} from './expmodel-protocol';
import { WorkerClient, WorkerCrashedError, WorkerStoppedError, type WorkerLike } from '../worker-client';
import type { BackendPreference, ExpModelSettings } from '../../state/model/expmodel-settings';

export const STOP_GRACE_MS = 1500;

export class ExpModelWorkerCrashedError extends WorkerCrashedError {
  constructor(detail: string) {
    super('experience model worker', detail, {
      code: 'expmodel-worker-crashed',
      fix: 'Train again: an unfinished training resumes from its last epoch.',
    });
    this.name = 'ExpModelWorkerCrashedError';
  }
}

/** The worker was terminated to stop it (the running request resolves with this). */
export class ExpModelStoppedError extends WorkerStoppedError {
  constructor() {
    super({
      code: 'expmodel-stopped',
      fix: 'Nothing is wrong: the training was stopped on request; train again to resume it.',
    });
    this.name = 'ExpModelStoppedError';
  }
}

export function createExpModelWorker(): WorkerLike {
  return new Worker(new URL('./expmodel.worker.ts', import.meta.url), { type: 'module', name: 'dreamgym-expmodel' });
}

interface Timers {
  set(fn: () => void, ms: number): ReturnType<typeof setTimeout>;
  clear(timer: ReturnType<typeof setTimeout> | undefined): void;
}

/** The requests that run for long (a stop ends them). */
const LONG: readonly ExpModelRequest['type'][] = ['train', 'evaluate'];

export class ExpModelClient extends WorkerClient<ExpModelRequest, ExpModelProgress> {
  constructor(
    worker: WorkerLike = createExpModelWorker(),
    private readonly graceMs = STOP_GRACE_MS,
    // Wrapped: a browser's setTimeout called as a method of another object throws 'Illegal invocation'.
    private readonly timers: Timers = { set: (fn, ms) => setTimeout(fn, ms), clear: (timer) => clearTimeout(timer) },
  ) {
    super(worker, (detail) => new ExpModelWorkerCrashedError(detail));
  }

  train(settings: ExpModelSettings, resume: boolean, onprogress: (p: ExpModelProgress) => void): Promise<TrainOutcome> {
    return this.request({ type: 'train', settings, resume }, onprogress) as Promise<TrainOutcome>;
  }

  /** Stores the best epoch of `name`'s checkpoint as its model (not stoppable: seconds, which a stop would lose). */
  keep(name: string, backend: BackendPreference, onprogress?: (p: ExpModelProgress) => void): Promise<KeptModel> {
    return this.request({ type: 'keep', name, backend }, onprogress) as Promise<KeptModel>;
  }

  evaluate(
    options: { path: string; env: string; audit: number; samples: number; seed: number; backend: BackendPreference },
    onprogress: (p: ExpModelProgress) => void,
  ): Promise<Evaluation> {
    return this.request({ type: 'evaluate', ...options }, onprogress) as Promise<Evaluation>;
  }

  status(): Promise<ExpModelStatus> {
    return this.request({ type: 'status' }) as Promise<ExpModelStatus>;
  }

  /** Stops the running request: politely first, then by terminating the worker (see the file comment). */
  async stop(): Promise<void> {
    if (this.gone || !this.isOpen(LONG)) return;
    const ended = new Promise<void>((resolve) => {
      const check = () => {
        if (!this.isOpen(LONG) || this.gone) resolve();
        else this.timers.set(check, 50);
      };
      check();
    });
    // Not awaited: a busy worker answers only when it next yields (its answer changes nothing here).
    this.request({ type: 'stop' }).catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = this.timers.set(() => resolve('late'), this.graceMs);
    });
    const result = await Promise.race([ended.then(() => 'ended' as const), late]);
    this.timers.clear(timer);
    // The running request resolves as stopped; the client is gone, and the next request makes a fresh worker.
    if (result === 'late') this.terminate('terminated to stop it', new ExpModelStoppedError());
  }
}
