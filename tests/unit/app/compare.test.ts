import { describe, expect, it } from 'vitest';
import { getPreset, type TrainConfig } from '../../../src/core/train/config';
import type { IterationRecord } from '../../../src/core/train/loop';
import type { RunEntry } from '../../../src/app/storage/run-list';
import {
  alignSeries,
  compareRow,
  csvField,
  describeIterations,
  dreamGymRow,
  filterChoices,
  filterRuns,
  runLabels,
  runsExport,
  smoothable,
  toCsv,
  xValues,
  EXPORT_FORMAT,
} from '../../../src/app/state/compare/compare';
import { smooth } from '../../../src/app/state/shared/smoothing';

const entry = (runId: string, over: Partial<TrainConfig> = {}): RunEntry => ({
  runId,
  query: '',
  config: { ...getPreset('webshop-easy'), ...over },
  createdAt: 1,
  state: 'finished',
  iteration: 3,
  iterations: 3,
});
const rec = (iteration: number, metrics: Record<string, number>): IterationRecord => ({ iteration, metrics });

const historyA = [
  rec(1, { 'charts/success_rate': 0.25, 'budget/real_steps': 40, 'budget/dream_steps': 0 }),
  rec(2, {
    'charts/success_rate': 0.5,
    'budget/real_steps': 80,
    'budget/dream_steps': 0,
    'eval/success_rate': 0.3,
    'eval/score': 0.6,
  }),
  rec(3, { 'charts/success_rate': 0.75, 'budget/real_steps': 120, 'budget/dream_steps': 0 }),
];

describe('the final table', () => {
  it('takes the last iteration, the last evaluation and the step counters', () => {
    expect(compareRow(entry('a', { mode: 'real', algo: 'ppo', seed: 4, iterations: 10 }), historyA)).toEqual({
      runId: 'a',
      name: 'real · ppo · webshop-easy · seed 4',
      tags: [],
      env: 'webshop-lite-v0',
      mode: 'real',
      algo: 'ppo',
      preset: 'webshop-easy',
      seed: 4,
      iterations: 3,
      iterationsPlanned: 10,
      realSteps: 120,
      dreamSteps: 0,
      lastEvalSuccess: 0.3,
      lastEvalScore: 0.6,
      finalTrainSuccess: 0.75,
      finalTrainJudge: 'real',
      state: 'finished',
      failure: null,
    });
  });

  it('says who judged the training success (a dream run: the dream), and why a failed run failed', () => {
    const dream = compareRow(entry('d', { mode: 'dream' }), [
      rec(1, { 'dream/success_rate': 0.9, 'budget/real_steps': 0 }),
    ]);
    expect([dream.finalTrainSuccess, dream.finalTrainJudge]).toEqual([0.9, 'dream']);
    const failed = compareRow({ ...entry('f'), state: 'error', message: 'Could not start: no shipped model' }, []);
    expect(failed.failure).toBe('Could not start: no shipped model');
    expect(compareRow({ ...entry('g'), state: 'error' }, []).failure).toMatch(/no reason/);
  });

  it('says unknown (null) for a run with no history', () => {
    const row = compareRow(entry('b'), []);
    expect([row.iterations, row.realSteps, row.lastEvalSuccess, row.finalTrainSuccess]).toEqual([0, null, null, null]);
  });

  it('counts iterations as the mode has them (an S2R run adds real iterations after its dream ones)', () => {
    expect(describeIterations({ mode: 'real', iterations: 100 }, 40)).toBe('40 of 100');
    expect(describeIterations({ mode: 's2r', iterations: 100 }, 60)).toBe(
      '60 of 100 dream, then real until the budget is spent',
    );
    expect(describeIterations({ mode: 's2r', iterations: 100 }, 114)).toBe('114 (100 dream + 14 real)');
  });
});

describe('the DreamGym table', () => {
  const real = [
    rec(1, { 'budget/real_steps': 50, 'eval/success_rate': 0.2 }),
    rec(2, { 'budget/real_steps': 100 }),
    rec(3, { 'budget/real_steps': 150, 'eval/success_rate': 0.6 }),
    rec(4, { 'budget/real_steps': 200, 'eval/success_rate': 0.5 }),
  ];
  const dream = [
    rec(1, { 'budget/real_steps': 0, 'budget/dream_steps': 60, 'eval/success_rate': 0.4 }),
    rec(2, { 'budget/real_steps': 0, 'budget/dream_steps': 120, 'eval/success_rate': 0.7 }),
  ];

  it('gives the final held-out success, the real steps spent, and the real steps spent when the target was first reached', () => {
    expect(dreamGymRow(entry('r'), real, 0.5)).toMatchObject({
      heldOutSuccess: 0.5,
      heldOutIteration: 4,
      realSteps: 200,
      realStepsToTarget: 150,
      failure: null,
    });
    expect(dreamGymRow(entry('r'), real, 0.9).realStepsToTarget).toBeNull();
    expect(dreamGymRow(entry('d', { mode: 'dream' }), dream, 0.5)).toMatchObject({
      heldOutSuccess: 0.7,
      realSteps: 0,
      dreamSteps: 120,
      realStepsToTarget: 0,
    });
    expect(dreamGymRow({ ...entry('f'), state: 'error', message: 'boom' }, [], 0.5)).toMatchObject({
      heldOutSuccess: null,
      realSteps: 0,
      failure: 'boom',
    });
  });

  it('draws curves against real steps: a run that spent none is flat at its latest value, an S2R dream phase sits at 0', () => {
    expect(xValues(real, 'real_steps')).toEqual([50, 100, 150, 200]);
    expect(
      xValues(
        [rec(1, { 'perf/iteration_seconds': 1.25 }), rec(2, {}), rec(3, { 'perf/iteration_seconds': 2 })],
        'wall_time',
      ),
    ).toEqual([1.3, 1.3, 3.3]);
    const s2r = [
      rec(1, { 'budget/real_steps': 0, 'eval/success_rate': 0.3 }),
      rec(2, { 'budget/real_steps': 0, 'eval/success_rate': 0.4 }),
      rec(3, { 'budget/real_steps': 80, 'eval/success_rate': 0.55 }),
    ];
    const aligned = alignSeries([real, dream, s2r], 'eval/success_rate', 0.9, 'real_steps');
    expect(aligned.x).toEqual([0, 50, 150, 200, 80].sort((a, b) => a - b));
    expect(aligned.flat).toEqual([false, true, false]);
    expect(aligned.flatAt).toEqual([null, 0, null]);
    expect(aligned.values[1]).toEqual([0.7, 0.7, 0.7, 0.7, 0.7]);
    // A run with one point that spent real steps (a single final eval) is a point, not a line across the axis.
    const once = alignSeries(
      [real, [rec(3, { 'budget/real_steps': 120, 'eval/success_rate': 0.5 })]],
      'eval/success_rate',
      0,
      'real_steps',
    );
    expect([once.flat, once.flatAt]).toEqual([
      [false, false],
      [null, null],
    ]);
    expect(once.raw[1].filter((v) => v !== null)).toEqual([0.5]);
    expect(aligned.values[2]).toEqual([0.4, null, 0.55, null, null]);
    // Held-out evaluation is sparse: never smoothed, whatever the slider says.
    expect(smoothable('eval/success_rate')).toBe(false);
    expect(aligned.values[0]).toEqual(aligned.raw[0]);
  });
});

describe('filters', () => {
  it('lists runs by environment, mode and tag', () => {
    const runs = [
      entry('a'),
      { ...entry('b', { mode: 'dream', env: 'household-v0' }), tags: ['start-here'] },
      entry('c', { mode: 'dream' }),
    ];
    expect(filterRuns(runs, { env: '', mode: 'dream', tag: '' }).map((r) => r.runId)).toEqual(['b', 'c']);
    expect(filterRuns(runs, { env: 'household-v0', mode: '', tag: '' }).map((r) => r.runId)).toEqual(['b']);
    expect(filterRuns(runs, { env: '', mode: '', tag: 'start-here' }).map((r) => r.runId)).toEqual(['b']);
    expect(filterChoices(runs)).toEqual({
      envs: ['household-v0', 'webshop-lite-v0'],
      modes: ['dream', 'real'],
      tags: ['start-here'],
    });
  });
});

describe('series alignment', () => {
  it('puts runs on the union of their iterations, null where a run has no point', () => {
    const b = [rec(2, { 'charts/success_rate': 1 }), rec(4, { 'charts/success_rate': 0 })];
    expect(alignSeries([historyA, b], 'charts/success_rate')).toEqual({
      x: [1, 2, 3, 4],
      values: [
        [0.25, 0.5, 0.75, null],
        [null, 1, null, 0],
      ],
      raw: [
        [0.25, 0.5, 0.75, null],
        [null, 1, null, 0],
      ],
      flat: [false, false],
      flatAt: [null, null],
    });
    // Eval points only where evaluated.
    expect(alignSeries([historyA, b], 'eval/success_rate')).toMatchObject({ x: [2], values: [[0.3], [null]] });
  });

  it('smooths each run over its own points (gaps of the other runs do not reset it)', () => {
    const b = [rec(2, { 'charts/success_rate': 1 }), rec(4, { 'charts/success_rate': 0 })];
    const aligned = alignSeries([historyA, b], 'charts/success_rate', 0.6);
    expect(aligned.values[0].slice(0, 3)).toEqual(smooth([0.25, 0.5, 0.75], 0.6));
    expect([aligned.values[1][1], aligned.values[1][3]]).toEqual(smooth([1, 0], 0.6));
  });
});

describe('exports', () => {
  it('writes a CSV with a header and one line per run; unknown values are empty', () => {
    const csv = toCsv([compareRow(entry('a'), historyA), compareRow(entry('b'), [])]);
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'run_id,name,env,mode,algo,preset,seed,iterations,iterations_planned,real_steps,dream_steps,last_eval_success,last_eval_score,final_train_success,final_train_judged_by,state,failure',
    );
    expect(lines[1]).toBe(
      'a,real · grpo · webshop-easy · seed 1,webshop-lite-v0,real,grpo,webshop-easy,1,3,100,120,0,0.3,0.6,0.75,real,finished,',
    );
    expect(lines[2]).toBe(
      'b,real · grpo · webshop-easy · seed 1,webshop-lite-v0,real,grpo,webshop-easy,1,0,100,,,,,,,finished,',
    );
  });

  it('quotes fields with commas, quotes or line breaks, and defuses spreadsheet formulas', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvField(-0.5)).toBe('-0.5');
    expect(csvField(null)).toBe('');
  });

  it('exports the chosen runs with config and history as JSON', () => {
    const out = runsExport([{ entry: entry('a', { seed: 2 }), history: historyA }], new Date('2026-01-02T03:04:05Z'));
    expect(out.format).toBe(EXPORT_FORMAT);
    expect(out.exportedAt).toBe('2026-01-02T03:04:05.000Z');
    expect(out.runs).toHaveLength(1);
    expect(out.runs[0].config.seed).toBe(2);
    expect(out.runs[0].history).toEqual(historyA);
    expect(JSON.parse(JSON.stringify(out))).toEqual(out);
  });

  it('labels runs readably and tells apart two that would read the same', () => {
    expect(runLabels([entry('x-1', { seed: 1 }), entry('x-2', { seed: 2 })])).toEqual([
      'real · grpo · webshop-easy · seed 1',
      'real · grpo · webshop-easy · seed 2',
    ]);
    expect(runLabels([entry('r-aaa'), entry('r-bbb')])).toEqual([
      'real · grpo · webshop-easy · seed 1 (aaa)',
      'real · grpo · webshop-easy · seed 1 (bbb)',
    ]);
    expect(runLabels([{ ...entry('n'), name: 'Dream (0 real steps)' }])).toEqual(['Dream (0 real steps)']);
  });
});
