/**
 * Page-side client of the trainer worker: one promise per request (matched by request id),
 * progress replies routed to the request that asked, and a worker that dies (`error` event)
 * turned into a TrainerWorkerCrashedError for every open request plus an `oncrash` callback —
 * the page then offers a restart from the last checkpoint with a fresh client.
 */
import type { IterationRecord } from '../../core/train/loop';
import type { TryStepResult } from '../../core/experience/try-step';
import type { SerializedError, TrainerProgress, TrainerReply, TrainerRequest, TrainerStatus } from './protocol';

/** An error thrown inside the worker, re-thrown on the page with the worker's name and message. */
export class TrainerWorkerError extends Error {
  constructor(error: SerializedError) { super(error.message); this.name = error.name; }
}

export class TrainerWorkerCrashedError extends Error {
  constructor(detail: string) {
    super(`The trainer worker stopped unexpectedly (${detail}). Restart it: the run continues from its last checkpoint.`);
    this.name = 'TrainerWorkerCrashedError';
  }
}

interface Pending { resolve(value: unknown): void; reject(error: Error): void; onprogress?: (p: TrainerProgress) => void }

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

export interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): void;
  addEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void): void;
}

export function createTrainerWorker(): WorkerLike {
  return new Worker(new URL('../../../workers/trainer.worker.ts', import.meta.url), { type: 'module', name: 'dreamgym-trainer' });
}

export class TrainerClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead: Error | null = null;
  oncrash: ((error: TrainerWorkerCrashedError) => void) | null = null;

  constructor(private readonly worker: WorkerLike = createTrainerWorker()) {
    worker.addEventListener('message', (event) => this.receive((event as MessageEvent<TrainerReply>).data));
    worker.addEventListener('error', (event) => {
      event.preventDefault?.();
      const e = event as ErrorEvent;
      this.die(new TrainerWorkerCrashedError(e.message || 'the worker script failed to load or threw'));
    });
    worker.addEventListener('messageerror', () => this.die(new TrainerWorkerCrashedError('a message could not be decoded')));
  }

  get crashed(): boolean { return this.dead !== null; }

  /**
   * Starts (or resumes) a run. Resolves with the final status when the run finishes or is
   * stopped; `onprogress` sees every status change and metric batch meanwhile.
   */
  start(options: Omit<Extract<TrainerRequest, { type: 'start' }>, 'id' | 'type'>, onprogress: (p: TrainerProgress) => void): Promise<TrainerStatus> {
    return this.request({ type: 'start', ...options }, onprogress) as Promise<TrainerStatus>;
  }

  pause(): Promise<TrainerStatus> { return this.request({ type: 'pause' }) as Promise<TrainerStatus>; }
  resume(): Promise<TrainerStatus> { return this.request({ type: 'resume' }) as Promise<TrainerStatus>; }
  step(): Promise<IterationRecord> { return this.request({ type: 'step' }) as Promise<IterationRecord>; }
  stop(): Promise<TrainerStatus> { return this.request({ type: 'stop' }) as Promise<TrainerStatus>; }
  status(): Promise<TrainerStatus> { return this.request({ type: 'status' }) as Promise<TrainerStatus>; }
  /** Setup's "Try one step" (see the protocol): one transition predicted by the config's engine beside the real env's. */
  tryStep(options: Omit<Extract<TrainerRequest, { type: 'tryStep' }>, 'id' | 'type'>): Promise<TryStepResult> {
    return this.request({ type: 'tryStep', ...options }) as Promise<TryStepResult>;
  }
  /** Test/debug only: makes the worker throw an uncaught error. */
  crash(): Promise<TrainerStatus> { return this.request({ type: 'crash' }) as Promise<TrainerStatus>; }

  terminate(): void {
    this.worker.terminate();
    this.die(new TrainerWorkerCrashedError('terminated by the page'), false);
  }

  private request(body: WithoutId<TrainerRequest>, onprogress?: (p: TrainerProgress) => void): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onprogress });
      this.worker.postMessage({ ...body, id } as TrainerRequest);
    });
  }

  private receive(reply: TrainerReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    if (reply.kind === 'progress') { pending.onprogress?.(reply.progress); return; }
    this.pending.delete(reply.id);
    if (reply.kind === 'return') pending.resolve(reply.value);
    else pending.reject(new TrainerWorkerError(reply.error));
  }

  private die(error: TrainerWorkerCrashedError, notify = true): void {
    if (this.dead) return;
    this.dead = error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
    if (notify) this.oncrash?.(error);
  }
}
