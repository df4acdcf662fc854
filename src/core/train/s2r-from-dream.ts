/**
 * S2R from a finished dream run. S2R's dream phase is a dream run of the same config: the same
 * seed, so the same streams, rollouts and updates. An S2R run may therefore start from the dream
 * run's final checkpoint instead of dreaming again (the page's Start here: one dream for two
 * cards), and its real phase is then the fresh S2R run's, metric for metric
 * (tests/unit/train/s2r-from-dream.test.ts).
 */
import type { ExperienceModel } from '../experience/types';
import { withDefaults, type TrainConfig } from './config';
import { CheckpointMismatchError, type TrainerState } from './loop';

/** Settings a dream run never reads: they may differ between the dream and the S2R run that continues it. */
const S2R_ONLY: readonly string[] = ['mode', 'realStepBudget', 's2rRealFraction', 's2rCorrectRounds'];

const plain = (config: TrainConfig) => withDefaults(config) as unknown as Record<string, unknown>;

/** The settings (other than S2R_ONLY) in which two configs differ. */
function differences(a: TrainConfig, b: TrainConfig): string[] {
  const [x, y] = [plain(a), plain(b)];
  return [...new Set([...Object.keys(x), ...Object.keys(y)])].filter(
    (key) => !S2R_ONLY.includes(key) && JSON.stringify(x[key]) !== JSON.stringify(y[key]),
  );
}

/**
 * The finished dream's state as S2R's state at the end of its dream phase (restore it with
 * Trainer.restore). Refused, naming why, when the dream is not S2R's dream phase: another config,
 * an unfinished dream, or an S2R run that corrects its dream (s2rCorrectFraction > 0) and so
 * dreams differently.
 */
export function s2rStateFromDream(dream: TrainerState, s2r: TrainConfig): TrainerState {
  const refuse = (why: string) =>
    new CheckpointMismatchError(`S2R cannot continue from this dream checkpoint: ${why}. Run the S2R run in full.`);
  if (s2r.mode !== 's2r') throw refuse(`the run to continue is mode '${s2r.mode}', not 's2r'`);
  if (dream.config.mode !== 'dream') throw refuse(`the checkpoint is of a '${dream.config.mode}' run, not a dream`);
  if (s2r.s2rCorrectFraction > 0)
    throw refuse(`s2rCorrectFraction ${s2r.s2rCorrectFraction} corrects the dream inside S2R's dream phase`);
  const differ = differences(dream.config, s2r);
  if (differ.length > 0) throw refuse(`the configs differ in ${differ.join(', ')}`);
  if (dream.iteration !== s2r.iterations)
    throw refuse(`the dream saved iteration ${dream.iteration} of ${s2r.iterations}, not its last`);
  return { ...dream, config: s2r };
}

/**
 * Whether an S2R run at `iteration` leaves its engine nothing to do: its dream phase is over, and
 * the engine writes no curriculum variations and is no prior. Such a run needs no engine loaded.
 */
export function engineIdle(config: TrainConfig, iteration: number): boolean {
  return (
    config.mode === 's2r' &&
    iteration >= config.iterations &&
    !config.llmPrior &&
    config.curriculumVariations === 'procedural'
  );
}

const neverAsked = () => Promise.reject(new Error('The dream phase is over: this S2R run has no experience model.'));

/** The experience model of an S2R run past its dream phase: never asked, so none is loaded for the real phase. */
export const NO_DREAM_LEFT: ExperienceModel = {
  label: 'none (the dream phase is over)',
  initial: neverAsked,
  next: neverAsked,
};
