/**
 * The Train page's live progress inside an iteration, as the fields it shows (plain logic,
 * unit-tested in Node): dream steps done of planned, usable and unusable answers, tokens/s and
 * transitions/s over the last minute, the cache hit rate, and the time left for the iteration and
 * the run. The figures come from the trainer worker's ProgressMeter (core/train/progress.ts).
 */
import { formatDuration, type LiveProgress } from '../../../core/train/progress';

export interface LiveFields {
  /** 'Iteration 3 of 12 — dreaming' */
  heading: string;
  steps: string;
  answers: string;
  tokensPerSecond: string;
  transitionsPerSecond: string;
  cacheHitRate: string;
  iterationLeft: string;
  runLeft: string;
  /** 'over the last 60 s' */
  window: string;
}

function rate(x: number): string {
  return x >= 100
    ? Math.round(x).toLocaleString('en-US')
    : x >= 10
      ? x.toFixed(0)
      : x >= 1
        ? x.toFixed(1)
        : x.toFixed(2);
}

const STAGES: Record<LiveProgress['stage'], string> = {
  rollout: 'rolling out',
  update: 'updating the policy',
  evaluation: 'evaluating on held-out real tasks',
};

export function liveFields(p: LiveProgress): LiveFields {
  const c = p.current;
  const what = p.phase === 'dream' ? 'dreaming' : 'in the real environment';
  return {
    heading: `Iteration ${p.iteration} of ${p.iterations} — ${p.stage === 'rollout' ? what : STAGES[p.stage]}`,
    steps:
      p.done === p.planned
        ? `${p.done.toLocaleString('en-US')} of ${p.planned.toLocaleString('en-US')}`
        : `${p.done.toLocaleString('en-US')} of ≤ ${p.planned.toLocaleString('en-US')}`,
    answers:
      p.phase === 'dream'
        ? `${(c.predictions - c.invalid).toLocaleString('en-US')} valid / ${c.invalid.toLocaleString('en-US')} invalid`
        : '—',
    tokensPerSecond: p.phase === 'dream' ? rate(p.tokensPerSecond) : '—',
    transitionsPerSecond: rate(p.transitionsPerSecond),
    cacheHitRate: p.cacheHitRate === null ? '—' : `${Math.round(p.cacheHitRate * 100)}%`,
    iterationLeft: p.iterationSecondsLeft === null ? 'measuring…' : `≈ ${formatDuration(p.iterationSecondsLeft)}`,
    runLeft: p.runSecondsLeft === null ? 'measuring…' : `≈ ${formatDuration(p.runSecondsLeft)}`,
    window: `over the last ${Math.round(p.windowSeconds)} s`,
  };
}
