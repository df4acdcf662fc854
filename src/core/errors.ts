/**
 * The root of the project's errors. Every error the code raises on purpose carries, beside its message, a stable
 * machine-readable `code` (kebab-case: a page or a script branches on it, never on the wording) and a `fix`: one
 * sentence saying what the user does about it. The message stays whole for people, and often ends with the same
 * fix; `fix` is that part on its own, for a page's hint or a report's column.
 */
export interface ErrorFacts {
  /** Stable and kebab-case, e.g. 'config-invalid'; the same for every error of one cause. */
  code: string;
  /** What to do about it, one sentence. */
  fix: string;
  cause?: unknown;
}

export class DreamGymError extends Error {
  readonly code: string;
  readonly fix: string;

  constructor(message: string, facts: ErrorFacts) {
    super(message, facts.cause === undefined ? undefined : { cause: facts.cause });
    this.name = 'DreamGymError';
    this.code = facts.code;
    this.fix = facts.fix;
  }
}
