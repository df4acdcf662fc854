/**
 * What Stop does on the Experience model page, in words (plain logic, unit-tested): whether it
 * asks first, and what it says it keeps and loses. A training keeps every finished epoch's
 * checkpoint in this browser; after a Stop the page stores the best finished epoch as the model
 * (the worker's `keep`), so only the epoch in progress is lost, and before the first epoch ends
 * everything is. Stop asks first when that loss is at least STOP_ASK_SECONDS of training.
 */
import { formatDuration } from '../setup/engine';
import type { TrainProgress } from './expmodel-view';

/** Less unsaved training than this is stopped without asking. */
export const STOP_ASK_SECONDS = 10;

export interface StopSituation {
  /** Model name (`learned:local/<name>`). */
  name: string;
  /** The latest batch progress of the training (null while its data is prepared). */
  progress: TrainProgress | null;
  /** Epochs whose checkpoint is in this browser. */
  checkpointEpochs: number;
  /** The best of those epochs (validation loss); 0 when none. */
  bestEpoch: number;
  /** Seconds of training since the last checkpoint (or the start). */
  unsavedSeconds: number;
}

export interface StopQuestion {
  text: string;
  /** The label of the button that stops. */
  confirm: string;
  /** Nothing at all is kept (no epoch finished). */
  discardsAll: boolean;
}

/**
 * The question Stop asks first, or null when stopping loses less than `minSeconds` of training
 * (or nothing). Once asked (minSeconds 0), it stays up to date: an epoch that ends meanwhile is kept.
 */
export function stopQuestion(s: StopSituation, minSeconds = STOP_ASK_SECONDS): StopQuestion | null {
  const p = s.progress;
  // While the data is prepared nothing has trained yet.
  if (!p || s.unsavedSeconds < minSeconds) return null;
  // No batch of a new epoch yet: an epoch just ended and its checkpoint holds everything.
  const unsaved = p.epoch > s.checkpointEpochs;
  if (!unsaved && (minSeconds > 0 || s.checkpointEpochs === 0)) return null;
  const done = Math.floor((p.batch / p.batches) * 100);
  const spent = formatDuration(s.unsavedSeconds);
  const until = p.epochSecondsLeft !== null ? formatDuration(p.epochSecondsLeft) : null;
  if (s.checkpointEpochs === 0) {
    const first = until ? `, in about ${until}` : '';
    return {
      discardsAll: true,
      confirm: 'Stop and discard',
      text:
        `Stop now and discard ${spent} of training (epoch ${p.epoch} of ${p.epochs}, ${done} % of it done)? ` +
        `Nothing is kept before the first epoch ends${first}.`,
    };
  }
  const kept =
    `The model of epoch ${s.bestEpoch} (the best of the ${s.checkpointEpochs} finished) is kept as ` +
    `learned:local/${s.name}, usable at once, and its checkpoint resumes the training`;
  const ends = until ? `: it ends in about ${until}` : '';
  return {
    discardsAll: false,
    confirm: `Stop and keep epoch ${s.bestEpoch}`,
    text: unsaved
      ? `Stop now? ${kept}; the ${spent} spent on epoch ${p.epoch} (${done} % of it done) are lost${ends}.`
      : `Stop now? ${kept}; nothing is lost.`,
  };
}

/** The status after a stop, before (or without) keeping a model. */
export function stoppedMessage(epochsDone: number): string {
  return epochsDone > 0
    ? `Stopped. The checkpoint after epoch ${epochsDone} stays in this browser: resume it any time, even after a ` +
        'reload.'
    : 'Stopped before the first epoch ended: nothing was kept.';
}

/** The status once a stopped training's best epoch is stored as its model. */
export function keptMessage(k: { path: string; epochsDone: number; epochs: number; bestEpoch: number }): string {
  return (
    `Stopped after epoch ${k.epochsDone} of ${k.epochs}. The model of epoch ${k.bestEpoch} (the best of the ` +
    `${k.epochsDone} finished) is stored as learned:${k.path}, usable now; the checkpoint after epoch ` +
    `${k.epochsDone} stays in this browser: resume it any time, even after a reload.`
  );
}
