/**
 * The page side of every worker's request/reply protocol (worker-protocol.ts): one promise per request,
 * matched by request id; progress replies routed to the request that asked; an error thrown in the worker
 * re-thrown here with its name, and its code and fix when it has them; and a worker that dies (`error`,
 * `messageerror`, or terminated by the page) rejecting every open request with the client's own
 * crash error. After that the client is dead: the page makes a new one (a restart).
 */
import { DreamGymError } from '../../core/errors';
import type { SerializedWorkerError, WorkerReply } from './worker-protocol';

export type { SerializedWorkerError, WorkerReply } from './worker-protocol';

/** A Worker, or a test's in-process stand-in. */
export interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): void;
  addEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void): void;
}

/**
 * An error thrown inside the worker, re-thrown on the page with the worker's name and message, and the
 * thrower's `code` and `fix` (a DreamGymError's), so the page can branch on the code and show the fix.
 */
export class WorkerError extends DreamGymError {
  constructor(error: SerializedWorkerError) {
    super(error.message, {
      code: error.code ?? 'worker-error',
      fix: error.fix ?? "Do what the worker's message says: it is the worker's own error, passed on.",
    });
    this.name = error.name;
  }
}

/**
 * A worker died (it threw outside a request, failed to load, or was terminated): every open request of its
 * client gets one. Each client's own subclass names the worker and what to do; the message ends with the fix.
 */
export class WorkerCrashedError extends DreamGymError {
  constructor(worker: string, detail: string, facts: { code: string; fix: string }) {
    super(`The ${worker} stopped unexpectedly (${detail}). ${facts.fix}`, facts);
    this.name = 'WorkerCrashedError';
  }
}

/** The page terminated a worker to stop its work: the running request rejects with the client's subclass. */
export class WorkerStoppedError extends DreamGymError {
  constructor(facts: { code: string; fix: string }) {
    super('Stopped.', facts);
    this.name = 'WorkerStoppedError';
  }
}

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

interface Pending<Progress> {
  type: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  onprogress?: (progress: Progress) => void;
}

export class WorkerClient<Request extends { id: number; type: string }, Progress = never> {
  private nextId = 1;
  private readonly pending = new Map<number, Pending<Progress>>();
  private dead: Error | null = null;
  /** Called once when the worker dies by itself (not when the page terminates it). */
  oncrash: ((error: Error) => void) | null = null;

  /** `crashed` makes the error every open request gets when the worker dies (`detail`: what happened). */
  constructor(
    private readonly worker: WorkerLike,
    private readonly crashed: (detail: string) => Error,
  ) {
    worker.addEventListener('message', (event) => this.receive((event as MessageEvent<WorkerReply<Progress>>).data));
    worker.addEventListener('error', (event) => {
      event.preventDefault?.();
      this.die(crashed((event as ErrorEvent).message || 'the worker script failed to load or threw'));
    });
    worker.addEventListener('messageerror', () => this.die(crashed('a message could not be decoded')));
  }

  /** True once the worker is gone (crashed or terminated): make a new client. */
  get gone(): boolean {
    return this.dead !== null;
  }

  /** Sends a request; resolves with the worker's return value, rejects with its error or the crash. */
  request(body: WithoutId<Request>, onprogress?: (progress: Progress) => void): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { type: body.type, resolve, reject, onprogress });
      this.worker.postMessage({ ...body, id });
    });
  }

  /** Whether a request of one of these types is still open. */
  isOpen(types: readonly string[]): boolean {
    return [...this.pending.values()].some((p) => types.includes(p.type));
  }

  /**
   * Ends the worker, `why` in the crash error later requests get; open requests get `openError`
   * (by default that crash error too). oncrash is not called: the page asked for it.
   */
  terminate(why = 'terminated by the page', openError?: Error): void {
    this.worker.terminate();
    this.die(this.crashed(why), false, openError);
  }

  private receive(reply: WorkerReply<Progress>): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    if (reply.kind === 'progress') {
      pending.onprogress?.(reply.progress);
      return;
    }
    this.pending.delete(reply.id);
    if (reply.kind === 'return') pending.resolve(reply.value);
    else pending.reject(new WorkerError(reply.error));
  }

  private die(error: Error, notify = true, openError = error): void {
    if (this.dead) return;
    this.dead = error;
    for (const p of this.pending.values()) p.reject(openError);
    this.pending.clear();
    if (notify) this.oncrash?.(error);
  }
}
