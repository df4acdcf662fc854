/**
 * Whether a domain's trained experience model can be trusted, in words (the standards: a
 * degenerate dream is never reported as a success). An imported domain has no real env to check
 * the agent in, so a dream that ends every episode at once, or judges endings unlike the held-out
 * records, would otherwise be reported as a trained agent with dream success 1 (issue 29: 28
 * episodes gave `final_dream_success: 1` with `mean_length: 1` and terminated accuracy 0.156).
 *
 * The checks, each a `DomainProblem` with what is wrong, the figure and the fix:
 *   - the training dream's history, by the one dream-health check (train/dream-health.ts): every
 *     episode ended at its first step: failed; every episode ran to the step limit, or no success
 *     in the first iterations: a warning (a short run or a hard domain may start so);
 *   - the held-out dream: at least `FIRST_STEP_FAILURE_SHARE` (half) of its episodes ended at their
 *     first step while fewer than half the demonstrated episodes are that short: failed;
 *   - a learned model's verdict head at chance (`verdictProblem`): failed;
 *   - the audit: terminated accuracy below `MIN_TERMINATED_ACCURACY`: failed; none measurable
 *     (every held-out episode lacks an outcome): a warning;
 *   - action agreement not clearly above chance (less than `AGREEMENT_Z` standard errors of a
 *     uniform pick above it): a warning — the policy does not act like the demonstrations;
 *   - the held-out dream judged no task a success, or its episodes ran near the step limit: a warning that nothing
 *     in the run shows the agent finishes a task (issue 45: 40 episodes gave 0 % real success reported as ok);
 *   - where a real env was played (`--real-env`): real success under half the dream's: a warning
 *     that the dream does not transfer.
 * `status` is 'failed' when any check failed; warnings say what the figures cannot claim.
 */
import { dreamWarnings } from '../train/dream-health';
import type { IterationRecord } from '../train/loop';
import type { Trajectory } from '../types';
import type { DomainEvaluation } from './evaluate';

/** Audited terminated accuracy below this fails the model: its episodes do not end where the data's do. */
export const MIN_TERMINATED_ACCURACY = 0.9;
/**
 * Held-out dreamed episodes ending at their first step, from this share on, fail the model: a dream
 * that mostly ends at once teaches nothing of the task (issue 45: 75 % of such ends, mean length
 * 1.25 against about 5 demonstrated, was once reported ok at a bar of 90 %).
 */
export const FIRST_STEP_FAILURE_SHARE = 0.5;
/** The first-step check applies only while fewer than this share of demonstrated episodes last one step. */
const ONE_STEP_DEMONSTRATED_SHARE = 0.5;

export interface DomainHealthProblem {
  kind:
    | 'first-step'
    | 'step-limit'
    | 'no-success'
    | 'no-real-success'
    | 'terminated-accuracy'
    | 'unaudited-endings'
    | 'near-chance-agreement'
    | 'no-transfer'
    | 'verdict-at-chance'
    | 'ensemble-disagreement';
  severity: 'failed' | 'warning';
  message: string;
}

export interface DomainHealth {
  status: 'ok' | 'failed';
  problems: DomainHealthProblem[];
}

const FIX =
  'Fix: train the experience model on more episodes, with failed endings as well as successes ' +
  '(dreamgym expmodel train --domain NAME), check its pairs and validation loss, then audit it again.';

function percent(x: number): string {
  return `${Math.round(100 * x)}%`;
}

function historyProblems(history: readonly IterationRecord[]): DomainHealthProblem[] {
  return dreamWarnings(history).map((w) => ({
    kind: w.kind,
    severity: w.kind === 'first-step' ? 'failed' : 'warning',
    message: w.kind === 'first-step' ? `${w.message} ${FIX}` : w.message,
  }));
}

function firstStepProblem(evaluation: DomainEvaluation, demonstrated: readonly Trajectory[]): DomainHealthProblem[] {
  const share = evaluation.dream.first_step_share;
  if (share === null || share < FIRST_STEP_FAILURE_SHARE || demonstrated.length === 0) return [];
  const oneStep = demonstrated.filter((t) => t.steps.length <= 1).length / demonstrated.length;
  if (oneStep >= ONE_STEP_DEMONSTRATED_SHARE) return [];
  return [
    {
      kind: 'first-step',
      severity: 'failed',
      message:
        `${percent(share)} of the ${evaluation.dream.episodes} held-out dreamed episodes ended at their first step ` +
        `(under ${percent(FIRST_STEP_FAILURE_SHARE)} allowed), while ${percent(1 - oneStep)} of the demonstrated ` +
        `episodes last longer: the model ends episodes at once, so its dream success says nothing. ${FIX}`,
    },
  ];
}

function auditProblem(evaluation: DomainEvaluation): DomainHealthProblem[] {
  const { terminated_accuracy: accuracy, terminated_known: known, n } = evaluation.audit;
  if (n === 0) return [];
  if (accuracy === null) {
    return [
      {
        kind: 'unaudited-endings',
        severity: 'warning',
        message:
          'The audit could check no episode ending: the held-out episodes record no outcome. Whether the model ends ' +
          'episodes where the application does is unknown. Import with --unrecorded-outcome success if every episode ' +
          'reached its goal, or export a format that records the reward (ETO, ours).',
      },
    ];
  }
  if (accuracy >= MIN_TERMINATED_ACCURACY) return [];
  return [
    {
      kind: 'terminated-accuracy',
      severity: 'failed',
      message:
        `The audit's terminated accuracy is ${accuracy.toFixed(3)} on ${known} held-out transitions (at least ` +
        `${MIN_TERMINATED_ACCURACY} needed): the model ends episodes where the application does not, or runs on ` +
        `where it ends, so the dream rewards the wrong things. ${FIX}`,
    },
  ];
}

/** Standard errors above chance from which action agreement counts as learned (a one-sided test at about 2 %). */
export const AGREEMENT_Z = 2;

function agreementProblem(evaluation: DomainEvaluation): DomainHealthProblem[] {
  const { agreement, chance, usable_steps: n } = evaluation.agreement;
  if (agreement === null || chance === null || n === 0) return [];
  const z = (agreement - chance) / Math.sqrt((chance * (1 - chance)) / n);
  if (z >= AGREEMENT_Z) return [];
  return [
    {
      kind: 'near-chance-agreement',
      severity: 'warning',
      message:
        `Action agreement ${agreement.toFixed(3)} on ${n} held-out steps is not clearly above chance ` +
        `${chance.toFixed(3)} (${z.toFixed(1)} standard errors, ${AGREEMENT_Z} needed): the dream-trained policy ` +
        'does not act like the demonstrations. More episodes, or more iterations, may help.',
    },
  ];
}

/** Held-out dreamed episodes from this share of the step limit on, on average, wander rather than finish. */
export const NEAR_STEP_LIMIT_SHARE = 0.9;

function heldOutDreamProblems(evaluation: DomainEvaluation, stepLimit?: number): DomainHealthProblem[] {
  const { episodes, success_rate: success, mean_length: length } = evaluation.dream;
  if (episodes === 0) return [];
  const problems: DomainHealthProblem[] = [];
  if (success === 0)
    problems.push({
      kind: 'no-success',
      severity: 'warning',
      message:
        `The dream judged none of the ${episodes} held-out tasks a success: nothing in this run shows that the agent ` +
        'finishes a task. Try it in the application (dreamgym act) before relying on it; more episodes, with failed ' +
        'endings as well as successes, give the model a verdict to judge by.',
    });
  if (stepLimit && length !== null && length >= NEAR_STEP_LIMIT_SHARE * stepLimit)
    problems.push({
      kind: 'step-limit',
      severity: 'warning',
      message:
        `The held-out dreamed episodes lasted ${length.toFixed(1)} steps on average, near the step limit of ` +
        `${stepLimit}: the agent wanders in the dream rather than finishing its tasks.`,
    });
  return problems;
}

function transferProblem(evaluation: DomainEvaluation): DomainHealthProblem[] {
  const { real, dream } = evaluation;
  if (!real || dream.success_rate === null || real.success_rate >= dream.success_rate / 2) return [];
  return [
    {
      kind: 'no-transfer',
      severity: 'warning',
      message:
        `The dream judges ${percent(dream.success_rate)} of the held-out tasks a success, the real ${real.env} ` +
        `${percent(real.success_rate)} of ${real.episodes}: the dream does not transfer, so its success is no ` +
        "measure of the agent's.",
    },
  ];
}

/** What a learned model's verdict head was fitted on (its model.json `verdict.fittedOn`). */
export interface VerdictFit {
  successes: number;
  failures: number;
  /** The mean of both classes' accuracies on the fitted steps (0.5: chance). */
  balancedAccuracy: number;
}

/** Standard errors above chance (0.5) from which a verdict head's balanced accuracy counts as learned. */
export const VERDICT_Z = 2;

/**
 * A verdict head at chance fails the model: its rewards are coin flips, so the dream rewards
 * nothing the task asks (issue 45: a head at 0.48 was used anyway). The bar is `VERDICT_Z`
 * standard errors of a chance head's balanced accuracy, 0.5·√(¼/successes + ¼/failures), above
 * 0.5: few failed endings make a wide bar, as they should.
 */
export function verdictProblem(fit: VerdictFit | null | undefined): DomainHealthProblem[] {
  if (!fit || fit.successes === 0 || fit.failures === 0) return [];
  const se = 0.5 * Math.sqrt(0.25 / fit.successes + 0.25 / fit.failures);
  const bar = 0.5 + VERDICT_Z * se;
  if (fit.balancedAccuracy >= bar) return [];
  return [
    {
      kind: 'verdict-at-chance',
      severity: 'failed',
      message:
        `The verdict head's balanced accuracy is ${fit.balancedAccuracy.toFixed(3)} ` +
        `on the ${fit.successes} successful ` +
        `and ${fit.failures} failed endings it was fitted on (at least ${bar.toFixed(3)} needed, chance 0.5): it ` +
        `judges endings at chance, so the dream's rewards are coin flips. ${FIX}`,
    },
  ];
}

/**
 * The verdict ensemble's mean disagreement (members' max − min p at a judged step), from which a
 * dream iteration is unhealthy: the members disagree by more than half the probability range on
 * whether the episode succeeded, so its reward says little.
 */
export const MAX_DREAM_DISAGREEMENT = 0.5;
/** Dream iterations looked at to say the dream turned unhealthy (one alone can be bad luck). */
export const UNHEALTHY_WINDOW = 2;

/**
 * Why the dream should stop now, read from its latest iterations alone (no real evaluation: the
 * user has none): every episode of the last `UNHEALTHY_WINDOW` iterations ended at its first step
 * or ran to the step limit (train/dream-health.ts), or the verdict ensemble disagreed by more than
 * `MAX_DREAM_DISAGREEMENT` in each of them. Null while it is healthy.
 */
export function dreamStopReason(history: readonly IterationRecord[]): DomainHealthProblem | null {
  const recent = history.slice(-UNHEALTHY_WINDOW);
  if (recent.length < UNHEALTHY_WINDOW) return null;
  const warning = dreamWarnings(recent, Infinity).find((w) => w.kind === 'first-step' || w.kind === 'step-limit');
  if (warning) return { kind: warning.kind, severity: 'failed', message: warning.message };
  const disagreements = recent.map((r) => r.metrics['dream/disagreement']);
  if (disagreements.every((d) => typeof d === 'number' && d > MAX_DREAM_DISAGREEMENT)) {
    return {
      kind: 'ensemble-disagreement',
      severity: 'failed',
      message:
        `The verdict ensemble's members disagreed by ${disagreements.map((d) => d.toFixed(2)).join(', ')} on ` +
        `average in the last ${UNHEALTHY_WINDOW} iterations (at most ${MAX_DREAM_DISAGREEMENT} allowed): the dream's ` +
        'rewards are no longer judged alike by its members, so the agent would learn from noise.',
    };
  }
  return null;
}

/**
 * The verdict on a domain run: its iterations' metrics, its evaluation, the demonstrated episodes,
 * the learned model's verdict head (where it has one) and the run's step limit (where known).
 */
export function domainHealth(
  history: readonly IterationRecord[],
  evaluation: DomainEvaluation,
  demonstrated: readonly Trajectory[],
  verdict?: VerdictFit | null,
  stepLimit?: number,
): DomainHealth {
  const problems = [
    ...verdictProblem(verdict),
    ...historyProblems(history),
    ...firstStepProblem(evaluation, demonstrated).filter((p) => !history.length || !hasKind(history, p)),
    ...auditProblem(evaluation),
    ...agreementProblem(evaluation),
    ...heldOutDreamProblems(evaluation, stepLimit).filter((p) => !history.length || !hasKind(history, p)),
    ...transferProblem(evaluation),
  ];
  return { status: problems.some((p) => p.severity === 'failed') ? 'failed' : 'ok', problems };
}

/** The history already says the same thing (one message per kind). */
function hasKind(history: readonly IterationRecord[], problem: DomainHealthProblem): boolean {
  return dreamWarnings(history).some((w) => w.kind === problem.kind);
}
