/**
 * The start-here page's verdict: one sentence, from the measured numbers of the three runs, on
 * what they show — as plain when the dream loses as when it wins (plain logic, unit-tested).
 * DreamGym's claim, in this page's terms: with 0 real steps the dream reaches at least 80 % of
 * real RL's held-out success, and S2R reaches real RL's with a fraction of its real steps.
 */

export interface VerdictRun {
  /** Final held-out success in the real env (0..1); null when the run has none yet. */
  heldOut: number | null;
  realSteps: number;
  /** A run that failed says why instead. */
  failure?: string | null;
}

export interface VerdictInput {
  real: VerdictRun;
  dream: VerdictRun;
  s2r: VerdictRun;
  /** The untrained policy's held-out success (iteration 0); null when it was not measured. */
  untrained: number | null;
  /** Held-out tasks of each final evaluation (its sampling noise is said); absent: not said. */
  episodes?: number;
  /** The seed of the three runs. */
  seed?: number;
  /** The page's link to another seed, S standing for it (default '#/start?seed=S'). */
  seedLink?: string;
}

/** The share of DreamGym's claim the dream must reach (the paper's dream-to-real ratio, rounded down). */
export const DREAM_TARGET_RATIO = 0.8;

const pct = (v: number) => `${Math.round(v * 100)}%`;
const steps = (n: number) => n.toLocaleString('en-US');

/** The verdict sentence, or null while a run has no final result. */
export function startHereVerdict(v: VerdictInput): string | null {
  const failed = (['real', 'dream', 's2r'] as const).filter((k) => v[k].failure);
  if (failed.length > 0)
    return `No verdict: the ${failed.join(' and ')} run${failed.length > 1 ? 's' : ''} failed (see the card).`;
  const { real, dream, s2r } = v;
  if (real.heldOut === null || dream.heldOut === null || s2r.heldOut === null) return null;
  const sentences = [dreamSentence(real, dream, v.untrained), s2rSentence(real, s2r)];
  if (v.episodes) sentences.push(oneSeedSentence(v, v.episodes));
  return sentences.join(' ');
}

/**
 * What one seed can show: the 95 % interval of a success rate measured on `episodes` tasks (normal approximation, at
 * the noisiest of the three rates), and how to see the spread over seeds.
 */
function oneSeedSentence(v: VerdictInput, episodes: number): string {
  const rates = [v.real.heldOut!, v.dream.heldOut!, v.s2r.heldOut!];
  const worst = Math.max(...rates.map((p) => p * (1 - p)), 0.01);
  const halfWidth = Math.round(196 * Math.sqrt(worst / episodes));
  const others = [1, 2, 3].filter((s) => s !== (v.seed ?? 1));
  return (
    `One seed on ${episodes} held-out tasks: each rate is within about ±${halfWidth} points (95 %), so a smaller gap ` +
    `is not shown by this run; run seeds ${others.join(' and ')} (${v.seedLink ?? '#/start?seed=S'}) to see the spread.`
  );
}

function dreamSentence(real: VerdictRun, dream: VerdictRun, untrained: number | null): string {
  const r = real.heldOut!,
    d = dream.heldOut!;
  const base = `With 0 real steps the dream reached ${pct(d)} held-out success`;
  const against = `real RL's ${pct(r)} (after ${steps(real.realSteps)} real steps)`;
  const start = untrained === null ? '' : `, from the untrained policy's ${pct(untrained)}`;
  if (untrained !== null && d <= untrained) {
    return `${base}${start}: the dream taught the agent nothing that holds in the real environment, against ${against}.`;
  }
  if (r === 0) return `${base}${start}; real RL reached 0% (after ${steps(real.realSteps)} real steps).`;
  const ratio = d / r;
  const judged =
    ratio >= 1
      ? 'as good as real RL or better'
      : ratio >= DREAM_TARGET_RATIO
        ? `within DreamGym's mark of ${pct(DREAM_TARGET_RATIO)} of real`
        : `short of DreamGym's mark of ${pct(DREAM_TARGET_RATIO)} of real: the dream lost here`;
  return `${base}${start}, ${pct(ratio)} of ${against} — ${judged}.`;
}

function s2rSentence(real: VerdictRun, s2r: VerdictRun): string {
  const share = real.realSteps > 0 ? `, ${pct(s2r.realSteps / real.realSteps)} of the baseline's` : '';
  const head = `S2R reached ${pct(s2r.heldOut!)} with ${steps(s2r.realSteps)} real steps${share}`;
  const diff = Math.round(s2r.heldOut! * 100) - Math.round(real.heldOut! * 100);
  const points = (n: number) => `${n} point${n === 1 ? '' : 's'}`;
  if (diff === 0) return `${head}: as good as real RL.`;
  return `${head}: ${diff > 0 ? `${points(diff)} above` : `${points(-diff)} below`} real RL.`;
}
