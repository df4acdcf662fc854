/**
 * Page-side client of the teach worker: one promise per request (matched by request id), and a
 * worker that dies (`error` event) turned into a TeachWorkerCrashedError for every open request.
 */
import type { BackendName } from '../../core/policy/backend';
import type { TeachSettings, TeachUpdate } from '../../core/train/teach';
import type { TeachInfo, TeachReply, TeachRequest, TeachSerializedError } from './teach-protocol';

/** An error thrown inside the worker, re-thrown on the page with the worker's name and message. */
export class TeachWorkerError extends Error {
  constructor(error: TeachSerializedError) { super(error.message); this.name = error.name; }
}

export class TeachWorkerCrashedError extends Error {
  constructor(detail: string) {
    super(`The teach worker stopped unexpectedly (${detail}). Press Reset to start a fresh session.`);
    this.name = 'TeachWorkerCrashedError';
  }
}

export interface TeachWorkerLike {
  postMessage(message: unknown): void;
  terminate(): void;
  addEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void): void;
}

export function createTeachWorker(): TeachWorkerLike {
  return new Worker(new URL('../../../workers/teach.worker.ts', import.meta.url), { type: 'module', name: 'dreamgym-teach' });
}

interface Pending { resolve(value: unknown): void; reject(error: Error): void }

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

export class TeachClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead: Error | null = null;

  constructor(private readonly worker: TeachWorkerLike = createTeachWorker()) {
    worker.addEventListener('message', (event) => this.receive((event as MessageEvent<TeachReply>).data));
    worker.addEventListener('error', (event) => {
      event.preventDefault?.();
      this.die(new TeachWorkerCrashedError((event as ErrorEvent).message || 'the worker script failed to load or threw'));
    });
    worker.addEventListener('messageerror', () => this.die(new TeachWorkerCrashedError('a message could not be decoded')));
  }

  get crashed(): boolean { return this.dead !== null; }

  /** A fresh session with these settings (the previous one is disposed). */
  reset(settings: TeachSettings, backend?: BackendName): Promise<TeachInfo> {
    return this.request({ type: 'reset', settings, ...(backend ? { backend } : {}) }) as Promise<TeachInfo>;
  }

  /** One update of the current session, taken apart. */
  step(): Promise<TeachUpdate> { return this.request({ type: 'step' }) as Promise<TeachUpdate>; }

  terminate(): void {
    this.worker.terminate();
    this.die(new TeachWorkerCrashedError('terminated by the page'));
  }

  private request(body: WithoutId<TeachRequest>): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...body, id } as TeachRequest);
    });
  }

  private receive(reply: TeachReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (reply.kind === 'return') pending.resolve(reply.value);
    else pending.reject(new TeachWorkerError(reply.error));
  }

  private die(error: TeachWorkerCrashedError): void {
    if (this.dead) return;
    this.dead = error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}
