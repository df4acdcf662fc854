import { describe, expect, it } from 'vitest';
import { getPreset, type TrainConfig } from '../../../src/core/train/config';
import type { IterationRecord } from '../../../src/core/train/loop';
import type { RunEntry } from '../../../src/app/workers/run-list';
import { alignSeries, compareRow, csvField, runLabels, runsExport, toCsv, EXPORT_FORMAT } from '../../../src/app/state/compare';
import { smooth } from '../../../src/app/state/smoothing';

const entry = (runId: string, over: Partial<TrainConfig> = {}): RunEntry => ({
  runId, query: '', config: { ...getPreset('webshop-easy'), ...over }, createdAt: 1, state: 'finished', iteration: 3, iterations: 3,
});
const rec = (iteration: number, metrics: Record<string, number>): IterationRecord => ({ iteration, metrics });

const historyA = [
  rec(1, { 'charts/success_rate': 0.25, 'budget/real_steps': 40, 'budget/dream_steps': 0 }),
  rec(2, { 'charts/success_rate': 0.5, 'budget/real_steps': 80, 'budget/dream_steps': 0, 'eval/success_rate': 0.3, 'eval/score': 0.6 }),
  rec(3, { 'charts/success_rate': 0.75, 'budget/real_steps': 120, 'budget/dream_steps': 0 }),
];

describe('the final table', () => {
  it('takes the last iteration, the last evaluation and the step counters', () => {
    expect(compareRow(entry('a', { mode: 'real', algo: 'ppo', seed: 4, iterations: 10 }), historyA)).toEqual({
      runId: 'a', mode: 'real', algo: 'ppo', preset: 'webshop-easy', seed: 4, iterations: 3, iterationsPlanned: 10,
      realSteps: 120, dreamSteps: 0, lastEvalSuccess: 0.3, lastEvalScore: 0.6, finalTrainSuccess: 0.75, state: 'finished',
    });
  });

  it('says unknown (null) for a run with no history', () => {
    const row = compareRow(entry('b'), []);
    expect([row.iterations, row.realSteps, row.lastEvalSuccess, row.finalTrainSuccess]).toEqual([0, null, null, null]);
  });
});

describe('series alignment', () => {
  it('puts runs on the union of their iterations, null where a run has no point', () => {
    const b = [rec(2, { 'charts/success_rate': 1 }), rec(4, { 'charts/success_rate': 0 })];
    expect(alignSeries([historyA, b], 'charts/success_rate')).toEqual({
      iterations: [1, 2, 3, 4], values: [[0.25, 0.5, 0.75, null], [null, 1, null, 0]],
    });
    // Eval points only where evaluated.
    expect(alignSeries([historyA, b], 'eval/success_rate')).toEqual({ iterations: [2], values: [[0.3], [null]] });
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
    expect(lines[0]).toBe('run_id,mode,algo,preset,seed,iterations,iterations_planned,real_steps,dream_steps,last_eval_success,last_eval_score,final_train_success,state');
    expect(lines[1]).toBe('a,real,grpo,webshop-easy,1,3,100,120,0,0.3,0.6,0.75,finished');
    expect(lines[2]).toBe('b,real,grpo,webshop-easy,1,0,100,,,,,,finished');
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
    expect(runLabels([entry('x-1', { seed: 1 }), entry('x-2', { seed: 2 })])).toEqual(['real · grpo · webshop-easy · seed 1', 'real · grpo · webshop-easy · seed 2']);
    expect(runLabels([entry('r-aaa'), entry('r-bbb')])).toEqual(['real · grpo · webshop-easy · seed 1 (aaa)', 'real · grpo · webshop-easy · seed 1 (bbb)']);
  });
});
