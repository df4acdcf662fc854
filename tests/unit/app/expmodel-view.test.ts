/**
 * The Experience model page's plain logic: its settings in the URL, the loss chart's series from
 * the worker's events, the progress bar, the audit table and a dreamed-vs-real comparison.
 */
import { describe, expect, it } from 'vitest';
import {
  defaultSettings,
  settingsFromQuery,
  settingsProblems,
  settingsToQuery,
  TINY_SETTINGS,
  trainableEnvs,
} from '../../../src/app/state/model/expmodel-settings';
import {
  addBatch,
  addEpoch,
  auditRows,
  compareSample,
  EMPTY_LOSS,
  epochPoints,
  formatSize,
  lossFromHistory,
  progressLine,
  progressOf,
  roughDuration,
} from '../../../src/app/state/model/expmodel-view';
import type { AuditReport } from '../../../src/core/experience/audit';
import type { DreamSample } from '../../../src/app/workers/expmodel/expmodel-protocol';

const batch = (epoch: number, b: number, batches: number, loss: number) =>
  ({
    kind: 'batch',
    epoch,
    epochs: 2,
    batch: b,
    batches,
    loss,
    tokensPerSecond: 100,
    speedBatches: 3,
    epochTokens: 4000,
    secondsLeft: 10,
    epochSecondsLeft: 4,
  }) as const;
const epoch = (n: number, trainLoss: number, validationLoss: number) => ({
  epoch: n,
  trainLoss,
  validationLoss,
  tokensPerSecond: 100,
  seconds: 1,
});

describe('Experience model settings', () => {
  it('round-trip through the URL; bad values fall back to the defaults; size=tiny is the demo size', () => {
    expect(trainableEnvs()).toEqual(['webshop-lite-v0', 'household-v0', 'webarena-lite-v0']);
    const s = {
      ...defaultSettings('household-v0'),
      name: 'kitchen.v2',
      size: 'small' as const,
      epochs: 3,
      episodes: 60,
      k: 0,
      history: 2,
      backend: 'wasm' as const,
      audit: 40,
      samples: 4,
    };
    expect(settingsFromQuery(settingsToQuery(s))).toEqual(s);
    expect(settingsFromQuery('env=nope&epochs=-1&name=has%20space&backend=webgl&size=huge')).toEqual(
      defaultSettings('webshop-lite-v0'),
    );
    expect(settingsFromQuery('size=tiny')).toEqual({ ...defaultSettings(), ...TINY_SETTINGS });
    expect(settingsFromQuery('size=tiny&epochs=1')).toMatchObject({ size: 'tiny', epochs: 1, episodes: 8 });
  });

  it('name every problem', () => {
    expect(settingsProblems(defaultSettings())).toEqual([]);
    const problems = settingsProblems({ ...defaultSettings(), env: 'x', name: '', epochs: 0, learningRate: 2 });
    expect(problems).toHaveLength(4);
    expect(problems.join(' ')).toMatch(
      /'x' is not one of our environments.*needs a name.*'epochs' must be an integer in 1\.\.200.*'learningRate' must be a number/,
    );
  });
});

describe('the loss chart', () => {
  it('puts batches between epochs and the epoch figures at whole epochs; a replayed epoch replaces its points', () => {
    let s = EMPTY_LOSS;
    s = addBatch(s, batch(1, 1, 2, 4));
    s = addBatch(s, batch(1, 2, 2, 3.5));
    s = addEpoch(s, epoch(1, 3.6, 3.8));
    s = addBatch(s, batch(2, 1, 2, 3));
    expect(s).toEqual({
      x: [0.5, 1, 1.5],
      running: [4, 3.5, 3],
      train: [null, 3.6, null],
      validation: [null, 3.8, null],
    });
    expect(epochPoints(s)).toBe(1);
    // A resume replays epoch 2 from its start: its old batch goes.
    s = addBatch(s, batch(2, 1, 4, 2.9));
    expect(s.x).toEqual([0.5, 1, 1.25]);
    // An epoch with no batch shown at its end (throttled) gets its own point.
    expect(addEpoch(s, epoch(2, 3, 3.1)).x).toEqual([0.5, 1, 1.25, 2]);
    expect(lossFromHistory([epoch(1, 3, 3.2), epoch(2, 2.5, 2.9)])).toEqual({
      x: [1, 2],
      running: [null, null],
      train: [3, 2.5],
      validation: [3.2, 2.9],
    });
  });

  it('reports progress over all epochs', () => {
    expect(progressOf(batch(2, 1, 4, 3))).toMatchObject({
      fraction: 0.625,
      epoch: 2,
      epochs: 2,
      batch: 1,
      batches: 4,
      secondsLeft: 10,
      epochSecondsLeft: 4,
      speedBatches: 3,
      epochTokens: 4000,
    });
  });

  it('says the time left as measured here, on which backend, and nothing before it is measured', () => {
    const p = {
      ...progressOf(batch(1, 40, 100, 3.21)),
      tokensPerSecond: 2345.6,
      speedBatches: 37,
      epochTokens: 603_191,
      secondsLeft: 1625,
    };
    expect(progressLine(p, 'wasm')).toBe(
      '20% — epoch 1 of 2, batch 40 of 100 — running loss 3.210 — about 27 min ' +
        "left at most (measured here at 2,346 tokens/s over 37 batches, one wasm thread in this page's worker; " +
        '603,191 tokens an epoch; early stopping may end sooner)',
    );
    expect(progressLine(p, 'webgpu')).toMatch(/over 37 batches, WebGPU in this page's worker;/);
    expect(progressLine({ ...p, secondsLeft: null, speedBatches: 0 }, 'wasm')).toBe(
      '20% — epoch 1 of 2, batch 40 of 100 — running loss 3.210 — estimating the time left: measuring this ' +
        "browser's speed first…",
    );
    expect(progressLine({ ...p, fraction: 1 }, 'wasm')).toMatch(/ — done$/);
    // The e2e test's pattern still matches.
    expect(progressLine(p, 'wasm')).toMatch(/epoch \d of 2, batch \d+ of \d+ .* (left at most|estimating)/);
  });

  it('rounds a time left as an estimate deserves', () => {
    expect([
      roughDuration(4.2),
      roughDuration(89),
      roughDuration(91),
      roughDuration(1625),
      roughDuration(4680),
    ]).toEqual(['4 s', '89 s', '2 min', '27 min', '1 h 18 min']);
    expect(roughDuration(0.2)).toBe('1 s');
    expect(roughDuration(Number.NaN)).toBe('');
  });
});

describe('the audit table and dreamed vs real', () => {
  const report = (over: Partial<AuditReport> = {}): AuditReport => ({
    env: 'webshop-lite-v0',
    llm: 'x',
    n: 10,
    valid_agreement: 0.9,
    reward_accuracy: 0.75,
    terminated_accuracy: 0.8,
    admissible_jaccard: 0.5,
    observation_f1: 0.61234,
    invalid_rate: 0.1,
    tokens_per_transition: 412.3,
    ms_per_transition: 3.21,
    ...over,
  });

  it("shows each figure beside the oracle's, with what it measures", () => {
    const rows = auditRows(report(), report({ reward_accuracy: null, observation_f1: 1 }));
    expect(rows.map((r) => r.key)).toEqual([
      'reward_accuracy',
      'terminated_accuracy',
      'admissible_jaccard',
      'observation_f1',
      'valid_agreement',
      'invalid_rate',
      'tokens_per_transition',
      'ms_per_transition',
    ]);
    expect(rows[0]).toMatchObject({ learned: '0.750', oracle: 'no outcome step sampled', better: 'higher' });
    expect(rows.find((r) => r.key === 'observation_f1')).toMatchObject({ learned: '0.612', oracle: '1.000' });
    expect(rows.find((r) => r.key === 'tokens_per_transition')!.learned).toBe('412');
    expect(auditRows(report(), null)[0].oracle).toBe('—');
  });

  it('compares a dreamed transition with the real one: verdicts, the observation diff, the admissible sets', () => {
    const sample: DreamSample = {
      episodeSeed: 1_000_700_000,
      instruction: 'buy a lamp',
      stepIndex: 3,
      state: 's',
      action: 'click[buy now]',
      dreamed: {
        usable: true,
        actionValid: true,
        reward: 1,
        success: true,
        terminated: true,
        observation: 'Thank you for shopping',
        admissible: ['a', 'b'],
      },
      real: {
        valid: true,
        reward: 0.6,
        success: false,
        terminated: true,
        observation: 'Thank you for shopping with us',
        admissible: ['b', 'c'],
      },
    };
    const c = compareSample(sample);
    expect([c.validAgrees, c.rewardAgrees, c.terminatedAgrees]).toEqual([true, false, true]);
    expect(c.observation.same).toBe(false);
    expect(c.observation.right.filter((x) => x.changed).map((x) => x.text.trim())).toEqual(['with us']);
    expect([c.onlyDreamed, c.onlyReal, c.shared]).toEqual([['a'], ['c'], ['b']]);
    // A verdict head's graded reward: its own outcome counts, not reward ≥ 1.
    expect(
      compareSample({ ...sample, dreamed: { ...sample.dreamed, reward: 0.42, success: false } }).rewardAgrees,
    ).toBe(true);
    expect(
      compareSample({
        ...sample,
        real: { ...sample.real, reward: 1, success: true },
        dreamed: { ...sample.dreamed, reward: 0.87, success: true },
      }).rewardAgrees,
    ).toBe(true);
    const unusable = compareSample({ ...sample, dreamed: { ...sample.dreamed, usable: false, terminated: true } });
    expect([unusable.validAgrees, unusable.terminatedAgrees]).toEqual([false, false]);
    expect(formatSize(2_345_678)).toBe('2.3 MB');
    expect(formatSize(850_000)).toBe('850 kB');
  });
});
