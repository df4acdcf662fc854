/**
 * A failed engine call costs one transition, not the run: after its retries, a transport failure
 * (timeout, refused connection, 5xx) becomes an invalid prediction, recorded with its reason and
 * never learned from. A server that is down, though, would turn a whole run into no-ops, so the
 * callers that ask many predictions (the rollout, the audit, `dream`) count the failures here and
 * stop when
 *
 *   - every prediction of one step failed (a step that asked at least two: a lone last episode
 *     failing once is just one failed call), or
 *   - `maxConsecutive` predictions in a row failed (counted in episode order, never in completion
 *     order, across steps and iterations).
 */
import { DreamGymError } from '../errors';

/** Raised when the engine keeps failing; the message says what to check and which setting tolerates more. */
/** Failed engine calls in a row before a run stops (TrainConfig.llmMaxFailures' default). */
export const DEFAULT_LLM_MAX_FAILURES = 8;

export class EngineFailureError extends DreamGymError {
  constructor(
    readonly failures: number,
    readonly rule: 'step' | 'consecutive',
    readonly lastError: string,
  ) {
    const what =
      rule === 'step'
        ? `every prediction of a dream step failed (${failures} of ${failures})`
        : `${failures} engine calls in a row failed`;
    super(
      `The experience model's engine is not answering: ${what}; the last error: ${lastError} ` +
        'Check that the server is running and not overloaded (its log), then continue from the last checkpoint; ' +
        'a slow server needs a longer llmTimeoutMs or more llmRetries, and llmMaxFailures tolerates more failed calls in a row.',
      {
        code: 'engine-failing',
        fix: 'Check that the server is running and not overloaded, then continue from the last checkpoint (or raise llmTimeoutMs, llmRetries or llmMaxFailures).',
      },
    );
    this.name = 'EngineFailureError';
  }
}

export class EngineFailureGuard {
  private consecutive = 0;

  constructor(readonly maxConsecutive: number = DEFAULT_LLM_MAX_FAILURES) {}

  /** Failed calls in a row so far. */
  get failuresInARow(): number {
    return this.consecutive;
  }

  /**
   * One step's predictions, in episode order: each entry is the engine error of a failed call,
   * or undefined for an answered one. Throws EngineFailureError when a rule says stop.
   */
  recordStep(engineErrors: readonly (string | undefined)[]): void {
    let failed = 0;
    let last = '';
    for (const error of engineErrors) {
      if (error === undefined) {
        this.consecutive = 0;
        continue;
      }
      failed++;
      last = error;
      if (++this.consecutive >= this.maxConsecutive)
        throw new EngineFailureError(this.consecutive, 'consecutive', error);
    }
    if (engineErrors.length >= 2 && failed === engineErrors.length) throw new EngineFailureError(failed, 'step', last);
  }
}
