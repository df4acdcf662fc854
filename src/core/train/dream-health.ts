/**
 * What a dream run's iterations say about its experience model, in words (the standards: a
 * degenerate dream is never reported as a success). Read from the metric history alone, so the
 * CLI, the Train page and the start-here cards say the same thing:
 *
 *   no success     the dream judged (next to) no episode a success in its first iterations —
 *                  the agent gets (next to) no reward signal to learn from
 *   no real success  the agent solved no held-out real task in any evaluation of its dream so
 *                  far — what the dream teaches has not transferred
 *   step limit     every dreamed episode ran to the step limit — the model never ends one
 *   first step     every dreamed episode ended at its first step — the model ends them at once
 */
import type { IterationRecord } from './loop';

export interface DreamWarning {
  kind: 'no-success' | 'no-real-success' | 'step-limit' | 'first-step';
  message: string;
}

/** Dream iterations with no success before "no success" is said (one or two can be bad luck). */
export const QUIET_DREAM_ITERATIONS = 5;
/** A dream-judged success rate at or below this is "next to no success" (2 of 100 episodes). */
export const NEAR_ZERO_DREAM_SUCCESS = 0.02;
/** Held-out evaluations of a dream, all at 0 %, before "no real success" is said. */
export const QUIET_EVALUATIONS = 2;

const GROUNDING =
  'Likely cause: the experience model is not grounded — an empty or wrong replay buffer (load the ' +
  'shipped datasets on Buffer), a model of another environment, or a model that never learned (try one step on Setup).';

/** The warnings that hold for a run's history so far (dream-phase iterations only; none for real runs). */
export function dreamWarnings(history: readonly IterationRecord[], quiet = QUIET_DREAM_ITERATIONS): DreamWarning[] {
  const dream = history.filter((r) => typeof r.metrics['dream/success_rate'] === 'number');
  if (dream.length === 0) return [];
  const warnings: DreamWarning[] = [];
  const first = dream.slice(0, quiet);
  if (first.length >= quiet && first.every((r) => r.metrics['dream/success_rate'] <= NEAR_ZERO_DREAM_SUCCESS)) {
    const none = first.every((r) => r.metrics['dream/success_rate'] === 0);
    warnings.push({
      kind: 'no-success',
      message: none
        ? `The dream judged no episode a success in its first ${quiet} iterations, so ` +
          `the agent has no reward to learn from. ${GROUNDING}`
        : `The dream judged at most ${NEAR_ZERO_DREAM_SUCCESS * 100}% of episodes a success in each of its first ` +
          `${quiet} iterations, so the agent has next to no reward to learn from. ${GROUNDING}`,
    });
  }
  const noReal = noRealSuccess(dream);
  if (noReal) warnings.push(noReal);
  if (dream.every((r) => r.metrics['dream/truncated_rate'] === 1)) {
    warnings.push({
      kind: 'step-limit',
      message:
        `Every dreamed episode so far ran to the step limit (${dream.length} ` +
        `iteration${dream.length === 1 ? '' : 's'}): the experience model never ends an episode. ${GROUNDING}`,
    });
  }
  if (dream.every((r) => r.metrics['dream/episode_length'] <= 1 && r.metrics['dream/truncated_rate'] !== 1)) {
    warnings.push({
      kind: 'first-step',
      message:
        'Every dreamed episode so far ended at its first step: the experience ' +
        'model ends episodes at once, so the agent learns nothing of the task. Likely cause: a model trained on too little ' +
        'data, or without failed endings to learn a verdict from (audit it: npm run dreamgym -- audit).',
    });
  }
  return warnings;
}

/** Every held-out evaluation of the dream (after iteration 0, the untrained policy's) at 0 %, from the second on. */
function noRealSuccess(dream: readonly IterationRecord[]): DreamWarning | null {
  const evaluated = dream.filter((r) => r.iteration > 0 && typeof r.metrics['eval/success_rate'] === 'number');
  if (evaluated.length < QUIET_EVALUATIONS || evaluated.some((r) => r.metrics['eval/success_rate'] > 0)) return null;
  const last = evaluated[evaluated.length - 1].iteration;
  return {
    kind: 'no-real-success',
    message:
      `The agent solved no held-out real task in ${evaluated.length} evaluations (the last at iteration ${last}): ` +
      'what the dream teaches has not transferred. The dream may grant successes the real environment does not ' +
      '(audit the agent: npm run dreamgym -- audit --agent RUN), or need more iterations.',
  };
}
