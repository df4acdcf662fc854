/**
 * Page-side client of the Experience model worker: one promise per request (matched by request
 * id), progress replies routed to the request that asked, and a worker that dies (`error` event)
 * turned into an ExpModelWorkerCrashedError for every open request.
 *
 * Stopping: the worker checks for a stop between batches, but a wasm training step never yields
 * to the worker's event loop, so a `stop` message may only be read at the next epoch's end. When
 * the running request has not ended `STOP_GRACE_MS` after asking, the client terminates the worker
 * (the checkpoint of the last finished epoch is already in IndexedDB) and the running request
 * resolves as stopped; the next request starts a fresh worker.
 */
import type {
  Evaluation, ExpModelProgress, ExpModelReply, ExpModelRequest, ExpModelSerializedError, ExpModelStatus, KeptModel,
  TrainOutcome,
} from './expmodel-protocol';
import type { BackendPreference, ExpModelSettings } from '../state/expmodel-settings';

export const STOP_GRACE_MS = 1500;

/** An error thrown inside the worker, re-thrown on the page with the worker's name and message. */
export class ExpModelWorkerError extends Error {
  constructor(error: ExpModelSerializedError) { super(error.message); this.name = error.name; }
}

export class ExpModelWorkerCrashedError extends Error {
  constructor(detail: string) {
    super(`The experience model worker stopped unexpectedly (${detail}). Train again: an unfinished training resumes from its last epoch.`);
    this.name = 'ExpModelWorkerCrashedError';
  }
}

/** The worker was terminated to stop it (the running request resolves with this). */
export class ExpModelStoppedError extends Error {
  constructor() { super('Stopped.'); this.name = 'ExpModelStoppedError'; }
}

export interface ExpModelWorkerLike {
  postMessage(message: unknown): void;
  terminate(): void;
  addEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void): void;
}

export function createExpModelWorker(): ExpModelWorkerLike {
  return new Worker(new URL('../../../workers/expmodel.worker.ts', import.meta.url), { type: 'module', name: 'dreamgym-expmodel' });
}

interface Timers { set(fn: () => void, ms: number): ReturnType<typeof setTimeout>; clear(timer: ReturnType<typeof setTimeout> | undefined): void }

interface Pending { resolve(value: unknown): void; reject(error: Error): void; onprogress?: (p: ExpModelProgress) => void; long: boolean }

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

export class ExpModelClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead: Error | null = null;

  constructor(private readonly worker: ExpModelWorkerLike = createExpModelWorker(), private readonly graceMs = STOP_GRACE_MS,
    // Wrapped: a browser's setTimeout called as a method of another object throws 'Illegal invocation'.
    private readonly timers: Timers = { set: (fn, ms) => setTimeout(fn, ms), clear: (timer) => clearTimeout(timer) }) {
    worker.addEventListener('message', (event) => this.receive((event as MessageEvent<ExpModelReply>).data));
    worker.addEventListener('error', (event) => {
      event.preventDefault?.();
      this.die(new ExpModelWorkerCrashedError((event as ErrorEvent).message || 'the worker script failed to load or threw'));
    });
    worker.addEventListener('messageerror', () => this.die(new ExpModelWorkerCrashedError('a message could not be decoded')));
  }

  /** True once the worker is gone (crashed or terminated): make a new client. */
  get gone(): boolean { return this.dead !== null; }

  train(settings: ExpModelSettings, resume: boolean, onprogress: (p: ExpModelProgress) => void): Promise<TrainOutcome> {
    return this.request({ type: 'train', settings, resume }, onprogress) as Promise<TrainOutcome>;
  }

  /** Stores the best epoch of `name`'s checkpoint as its model (not stoppable: seconds, which a stop would lose). */
  keep(name: string, backend: BackendPreference, onprogress?: (p: ExpModelProgress) => void): Promise<KeptModel> {
    return this.request({ type: 'keep', name, backend }, onprogress) as Promise<KeptModel>;
  }

  evaluate(options: { path: string; env: string; audit: number; samples: number; seed: number; backend: BackendPreference },
    onprogress: (p: ExpModelProgress) => void): Promise<Evaluation> {
    return this.request({ type: 'evaluate', ...options }, onprogress) as Promise<Evaluation>;
  }

  status(): Promise<ExpModelStatus> { return this.request({ type: 'status' }) as Promise<ExpModelStatus>; }

  /** Stops the running request: politely first, then by terminating the worker (see the file comment). */
  async stop(): Promise<void> {
    if (this.dead) return;
    const running = [...this.pending.values()].some((p) => p.long);
    if (!running) return;
    const ended = new Promise<void>((resolve) => {
      const check = () => { if (![...this.pending.values()].some((p) => p.long) || this.dead) resolve(); else this.timers.set(check, 50); };
      check();
    });
    // Not awaited: a busy worker answers only when it next yields (its answer changes nothing here).
    this.request({ type: 'stop' }).catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => { timer = this.timers.set(() => resolve('late'), this.graceMs); });
    const result = await Promise.race([ended.then(() => 'ended' as const), late]);
    this.timers.clear(timer);
    if (result === 'late') {
      this.worker.terminate();
      this.die(new ExpModelStoppedError(), true);
    }
  }

  terminate(): void {
    this.worker.terminate();
    this.die(new ExpModelWorkerCrashedError('terminated by the page'));
  }

  private request(body: WithoutId<ExpModelRequest>, onprogress?: (p: ExpModelProgress) => void): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onprogress, long: body.type === 'train' || body.type === 'evaluate' });
      this.worker.postMessage({ ...body, id } as ExpModelRequest);
    });
  }

  private receive(reply: ExpModelReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    if (reply.kind === 'progress') { pending.onprogress?.(reply.progress); return; }
    this.pending.delete(reply.id);
    if (reply.kind === 'return') pending.resolve(reply.value);
    else pending.reject(new ExpModelWorkerError(reply.error));
  }

  private die(error: Error, stopped = false): void {
    if (this.dead) return;
    this.dead = stopped ? new ExpModelWorkerCrashedError('terminated to stop it') : error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}
