/**
 * What every worker's protocol shares (docs/architecture.md §9.2): the replies a request gets, by its id —
 * `progress` (any number), then one `return` or `throw` — and an error as it crosses the message boundary.
 * Each worker's own protocol (<name>/<name>-protocol.ts) adds its requests and its progress.
 */
import { DreamGymError } from '../../core/errors';

/**
 * An error as a worker sends it: structured clone keeps no Error class, so the name, the message and, for a
 * DreamGymError, its `code` and `fix` travel as fields (the page rebuilds a WorkerError from them).
 */
export interface SerializedWorkerError {
  name: string;
  message: string;
  code?: string;
  fix?: string;
}

/** What a worker answers a request with (its id): progress (any number), then one return or throw. */
export type WorkerReply<Progress = never> =
  | { id: number; kind: 'return'; value: unknown }
  | { id: number; kind: 'throw'; error: SerializedWorkerError }
  | { id: number; kind: 'progress'; progress: Progress };

/** An error thrown inside a worker, as the page will get it. */
export function serializeWorkerError(error: unknown): SerializedWorkerError {
  if (error instanceof DreamGymError) {
    return { name: error.name, message: error.message, code: error.code, fix: error.fix };
  }
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}
