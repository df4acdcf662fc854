/**
 * What Stop says on the Experience model page: it asks first when it would lose at least
 * STOP_ASK_SECONDS of training, saying how much, and what it keeps (the best finished epoch).
 */
import { describe, expect, it } from 'vitest';
import {
  keptMessage,
  STOP_ASK_SECONDS,
  stopQuestion,
  stoppedMessage,
  type StopSituation,
} from '../../../src/app/state/model/expmodel-stop';
import type { TrainProgress } from '../../../src/app/state/model/expmodel-view';

const progress = (epoch: number, batch: number, over: Partial<TrainProgress> = {}): TrainProgress => ({
  fraction: (epoch - 1 + batch / 100) / 10,
  epoch,
  epochs: 10,
  batch,
  batches: 100,
  secondsLeft: 1800,
  epochSecondsLeft: 190,
  tokensPerSecond: 3000,
  speedBatches: 30,
  epochTokens: 600_000,
  loss: 3.2,
  ...over,
});
const situation = (over: Partial<StopSituation>): StopSituation => ({
  name: 'mine',
  progress: progress(1, 40),
  checkpointEpochs: 0,
  bestEpoch: 0,
  unsavedSeconds: 125,
  ...over,
});

describe('Stop asks first when it would lose training', () => {
  it('before the first epoch ends: discard how much, of which epoch, and when the first checkpoint comes', () => {
    const q = stopQuestion(situation({}))!;
    expect(q).toEqual({
      discardsAll: true,
      confirm: 'Stop and discard',
      text:
        'Stop now and discard 2 min 05 s of training (epoch 1 of 10, 40 % of it done)? Nothing is kept before ' +
        'the first epoch ends, in about 3 min 10 s.',
    });
    const unmeasured = situation({ progress: progress(1, 40, { epochSecondsLeft: null }) });
    expect(stopQuestion(unmeasured)!.text).toMatch(/epoch ends\.$/);
  });

  it('after an epoch: keeps the best one as the model, and loses the epoch in progress', () => {
    const later = situation({ progress: progress(4, 45), checkpointEpochs: 3, bestEpoch: 2, unsavedSeconds: 70 });
    const q = stopQuestion(later)!;
    expect(q.discardsAll).toBe(false);
    expect(q.confirm).toBe('Stop and keep epoch 2');
    expect(q.text).toBe(
      'Stop now? The model of epoch 2 (the best of the 3 finished) is kept as learned:local/mine, ' +
        'usable at once, and its checkpoint resumes the training; the 1 min 10 s spent on epoch 4 (45 % of it done) ' +
        'are lost: it ends in about 3 min 10 s.',
    );
  });

  it('does not ask when little or nothing would be lost, nor while the data is prepared', () => {
    expect(stopQuestion(situation({ unsavedSeconds: STOP_ASK_SECONDS - 1 }))).toBeNull();
    expect(stopQuestion(situation({ progress: null }))).toBeNull();
    // An epoch just ended: no batch of the next one yet.
    const ended = situation({ progress: progress(3, 100), checkpointEpochs: 3, bestEpoch: 3, unsavedSeconds: 30 });
    expect(stopQuestion(ended)).toBeNull();
  });

  it('once asked, stays up to date: an epoch that ends meanwhile is kept and nothing is lost', () => {
    const ended = situation({ progress: progress(1, 100), checkpointEpochs: 1, bestEpoch: 1, unsavedSeconds: 0 });
    const q = stopQuestion(ended, 0)!;
    expect(q.confirm).toBe('Stop and keep epoch 1');
    expect(q.text).toMatch(/the best of the 1 finished.*; nothing is lost\.$/);
    expect(stopQuestion(situation({ unsavedSeconds: 2 }), 0)!.discardsAll).toBe(true);
  });

  it('says what a stop kept', () => {
    expect(stoppedMessage(0)).toBe('Stopped before the first epoch ended: nothing was kept.');
    expect(stoppedMessage(2)).toMatch(/checkpoint after epoch 2 stays in this browser/);
    expect(keptMessage({ path: 'local/mine', epochsDone: 3, epochs: 10, bestEpoch: 2 })).toBe(
      'Stopped after epoch 3 ' +
        'of 10. The model of epoch 2 (the best of the 3 finished) is stored as learned:local/mine, usable now; the ' +
        'checkpoint after epoch 3 stays in this browser: resume it any time, even after a reload.',
    );
  });
});
