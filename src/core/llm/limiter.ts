/**
 * How many calls an engine serves at once (docs/architecture.md §3.6, Concurrency). A rollout step asks for
 * every running episode's next state together; an OpenAI-compatible server (vLLM, llama-server
 * with parallel slots, Ollama with OLLAMA_NUM_PARALLEL) batches concurrent requests, so it runs many
 * times faster with several in flight — up to `llmConcurrency` (OpenAiChatModel's `concurrency`),
 * the rest wait in a queue, first come first served. WebLLM and wllama queue their own calls one at
 * a time (webllm.ts, wllama.ts): their engines must never see two at once.
 *
 * The limit never changes an answer: each call is sent exactly as it was asked, and callers apply
 * the results in their own order (rollout.ts), so a seed gives the same run at any limit.
 */

/** A first-come-first-served semaphore: at most `limit` tasks run at once. */
export class ConcurrencyLimiter {
  readonly limit: number;
  #running = 0;
  #waiting: (() => void)[] = [];
  /** The most tasks that ever ran at once (for tests and benchmarks). */
  peak = 0;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`A concurrency limit must be an integer ≥ 1, got ${limit}.`);
    this.limit = limit;
  }

  get running(): number {
    return this.#running;
  }
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Runs `task` once a slot is free. A signal that fires while the task still waits drops it from
   * the queue (rejecting with `aborted()`); once started, the task itself decides about the signal.
   */
  async run<T>(
    task: () => Promise<T>,
    signal?: AbortSignal,
    aborted: () => Error = () => new Error('aborted'),
  ): Promise<T> {
    if (signal?.aborted) throw aborted();
    // A freed slot is handed straight to the first waiter (never counted free in between), so a
    // call arriving meanwhile cannot take it too.
    if (this.#running >= this.limit) await this.#wait(signal, aborted);
    else this.#running++;
    this.peak = Math.max(this.peak, this.#running);
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }

  #wait(signal: AbortSignal | undefined, aborted: () => Error): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const at = this.#waiting.indexOf(go);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(aborted());
      };
      this.#waiting.push(go);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
