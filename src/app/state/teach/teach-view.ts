/**
 * Plain logic of the Teach page (no Svelte): settings ↔ URL hash query (a link reproduces the
 * session, seed included — TensorFlow Playground style), the step chosen by default, the rows of
 * the before/after probability view, and the sentences that sum an update up.
 */
import {
  DEFAULT_TEACH_SETTINGS,
  TEACH_ALGORITHMS,
  TEACH_LIMITS,
  TEACH_MODES,
  TEACH_PRESETS,
  type TeachAlgorithm,
  type TeachMode,
  type TeachSettings,
} from '../../../core/train/teach-settings';
import type { TeachStep, TeachUpdate } from '../../../core/train/teach';
import { queryInt } from '../shared/query-values';

export const TEACH_ENVS = Object.keys(TEACH_PRESETS);

function probability(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined;
}

/** Settings from `env=…&algo=…&mode=…&seed=…&epsR=…&epsP=…&tasks=…&group=…`; bad or missing values → defaults. */
export function teachSettingsFromQuery(query: string): TeachSettings {
  const q = new URLSearchParams(query);
  const d = DEFAULT_TEACH_SETTINGS;
  const env = q.get('env') ?? '';
  const algo = q.get('algo') ?? '';
  const mode = q.get('mode') ?? '';
  return {
    env: TEACH_ENVS.includes(env) ? env : d.env,
    algo: (TEACH_ALGORITHMS as readonly string[]).includes(algo) ? (algo as TeachAlgorithm) : d.algo,
    mode: (TEACH_MODES as readonly string[]).includes(mode) ? (mode as TeachMode) : d.mode,
    seed: queryInt(q.get('seed'), ...TEACH_LIMITS.seed) ?? d.seed,
    epsR: probability(q.get('epsR')) ?? d.epsR,
    epsP: probability(q.get('epsP')) ?? d.epsP,
    tasks: queryInt(q.get('tasks'), ...TEACH_LIMITS.tasks) ?? d.tasks,
    group: queryInt(q.get('group'), ...TEACH_LIMITS.group) ?? d.group,
  };
}

export function teachSettingsToQuery(s: TeachSettings): string {
  return new URLSearchParams({
    env: s.env,
    algo: s.algo,
    mode: s.mode,
    seed: String(s.seed),
    epsR: String(s.epsR),
    epsP: String(s.epsP),
    tasks: String(s.tasks),
    group: String(s.group),
  }).toString();
}

export function sameSettings(a: TeachSettings, b: TeachSettings): boolean {
  return teachSettingsToQuery(a) === teachSettingsToQuery(b);
}

/** Which step of an update is on show: group, rollout (within the group) and step indices. */
export interface StepRef {
  group: number;
  rollout: number;
  t: number;
}

export function stepAt(update: TeachUpdate, ref: StepRef): TeachStep | null {
  return update.groups[ref.group]?.rollouts[ref.rollout]?.steps[ref.t] ?? null;
}

/** The step whose taken action's probability moved most (ties: the first) — the most telling one to show first. */
export function mostChangedStep(update: TeachUpdate): StepRef | null {
  let best: StepRef | null = null;
  let bestChange = -1;
  update.groups.forEach((g, group) =>
    g.rollouts.forEach((r, rollout) =>
      r.steps.forEach((s, t) => {
        const p = s.probabilities[s.taken];
        const change = Math.abs(p.after - p.before);
        if (change > bestChange) {
          bestChange = change;
          best = { group, rollout, t };
        }
      }),
    ),
  );
  return best;
}

export interface ProbabilityRow {
  action: string;
  taken: boolean;
  before: number;
  after: number;
  /** after − before. */
  change: number;
}

/** The rows of the before/after view of one step (the env's order; the taken action marked). */
export function probabilityRows(step: TeachStep): ProbabilityRow[] {
  return step.probabilities.map((p, j) => ({
    action: p.action,
    taken: j === step.taken,
    before: p.before,
    after: p.after,
    change: p.after - p.before,
  }));
}

/** '+0.71', '−0.50', '0.00' (a real minus sign; zero unsigned). */
export function signed(x: number, digits = 2): string {
  const text = Math.abs(x).toFixed(digits);
  if (Number(text) === 0) return (0).toFixed(digits);
  return `${x > 0 ? '+' : '−'}${text}`;
}

/** 'pos' | 'neg' | 'zero' for colouring an advantage (the sign is also in the text). */
export function signClass(x: number, digits = 2): 'pos' | 'neg' | 'zero' {
  if (Number(Math.abs(x).toFixed(digits)) === 0) return 'zero';
  return x > 0 ? 'pos' : 'neg';
}

export function percent(p: number): string {
  return `${(100 * p).toFixed(1)}%`;
}

/** One or two sentences on what this update did, for the status line and the summary. */
export function updateSummary(u: TeachUpdate): string {
  const rollouts = u.groups.reduce((n, g) => n + g.rollouts.length, 0);
  const successes = u.groups.reduce((n, g) => n + g.rollouts.filter((r) => r.success).length, 0);
  const head =
    `Update ${u.iteration} (${u.algo.toUpperCase()}, ${u.experience}): ${u.groups.length} task${u.groups.length === 1 ? '' : 's'} × ` +
    `${u.groups[0]?.rollouts.length ?? 0} rollouts, ${u.stepCount} steps, ${successes} of ${rollouts} rollouts succeeded.`;
  if (u.stepCount === 0) return `${head} No step could be learned from, so the policy did not change.`;
  if (u.signedSteps === 0) {
    return (
      `${head} Every rollout of each task got the same return, so every advantage is 0: this update has no learning signal ` +
      '(only the small entropy bonus moves π).'
    );
  }
  const aligned =
    `Of the ${u.signedSteps} steps with a non-zero advantage, ${u.alignedSteps} had the taken action's ` +
    'probability move the way its advantage points.';
  return [head, aligned, alignmentWhy(u)].filter(Boolean).join(' ');
}

/**
 * Why the other steps did not move their way (empty when every one did): "before" and "after"
 * span the whole update (every epoch and minibatch), and the weights are shared by all steps.
 */
export function alignmentWhy(u: TeachUpdate): string {
  const others = u.signedSteps - u.alignedSteps;
  if (others <= 0) return '';
  const pulls = [
    "the other steps' gradients (the same state and action can get opposite advantages in two rollouts)",
    "the softmax over the state's actions (raising another action's score lowers this one)",
  ];
  if (u.hyper.entropyCoef > 0) pulls.push('the entropy bonus');
  const ppo =
    u.algo === 'ppo' ? "; PPO also normalises the advantages per minibatch, which can flip a small one's sign" : '';
  return (
    `The other ${others} did not because the update moves weights that all steps share, so each step's ` +
    `probability is also pulled by ${pulls.slice(0, -1).join(', ')} and ${pulls[pulls.length - 1]}, ` +
    `while the clip stops a step's own push once its ratio leaves 1 ± ${u.hyper.clipEpsilon}${ppo}.`
  );
}

/** Sentence about one group's baseline (GRPO's mean and std of the returns). */
export function groupBaseline(meanReturn: number, stdReturn: number): string {
  if (stdReturn === 0)
    return `All returns are ${meanReturn.toFixed(2)}: no rollout did better than another, so GRPO gives every step advantage 0.`;
  return `Mean return ${meanReturn.toFixed(2)}, std ${stdReturn.toFixed(2)}: GRPO's advantage of a rollout is (return − ${meanReturn.toFixed(2)}) / ${stdReturn.toFixed(2)}.`;
}
