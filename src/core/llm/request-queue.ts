/**
 * Plumbing of the engines that answer one request at a time, WebLLM and wllama (docs/architecture.md §3.6,
 * Concurrency): their first-come queue, and waits that an AbortSignal cuts short. An OpenAI-compatible server
 * takes several requests at once instead (limiter.ts).
 */

/** Mirrors `promise`, or rejects with onAbort()'s error as soon as the signal aborts (the promise runs on). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, onAbort: () => Error): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) {
      reject(onAbort());
      return;
    }
    const listener = () => reject(onAbort());
    signal.addEventListener('abort', listener, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', listener);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', listener);
        reject(error);
      },
    );
  });
}

/**
 * Requests that reach an engine one at a time, first come first served. A request aborted while it waits
 * rejects at once, but the one behind it still waits for every request ahead: the engine never sees two.
 */
export class RequestQueue {
  #tail: Promise<void> = Promise.resolve();

  /** Settles once every request queued so far is done. */
  get drained(): Promise<void> {
    return this.#tail;
  }

  /**
   * Runs `work` once the requests ahead are done; a signal that aborts meanwhile rejects with
   * `abortedWhileWaiting()`. The next request starts when `work` has settled and so has every promise it
   * handed to `busyUntil` (an engine still finishing a generation whose caller has already had its abort).
   */
  async run<T>(
    work: (busyUntil: (engineBusy: Promise<unknown>) => void) => Promise<T>,
    signal: AbortSignal | undefined,
    abortedWhileWaiting: () => Error,
  ): Promise<T> {
    const ahead = this.#tail;
    let release!: () => void;
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#tail = ahead.then(() => done);
    let engineFree: Promise<unknown> = Promise.resolve();
    try {
      await abortable(ahead, signal, abortedWhileWaiting);
      return await work((engineBusy) => {
        engineFree = engineBusy.catch(() => {
          /* its caller reports it */
        });
      });
    } finally {
      void engineFree.then(release);
    }
  }
}
