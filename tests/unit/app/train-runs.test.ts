import { describe, expect, it } from 'vitest';
import { getPreset, validateConfig } from '../../../src/core/train/config';
import type { IterationRecord } from '../../../src/core/train/loop';
import {
  paramsFromConfig,
  paramsFromQuery,
  paramsToQuery,
  configFromParams,
} from '../../../src/app/state/train/train-params';
import { iterationProgress, pastRunLabel, pastRuns, reopenedStatus } from '../../../src/app/state/train/train-runs';
import type { RunEntry } from '../../../src/app/storage/run-list';

const config = (over: Record<string, unknown> = {}) =>
  validateConfig({ ...getPreset('webshop-easy'), iterations: 3, ...over } as unknown as Record<string, unknown>);
const entry = (runId: string, createdAt: number, state: RunEntry['state'], over: Partial<RunEntry> = {}): RunEntry => ({
  runId,
  query: '',
  config: config(),
  createdAt,
  state,
  iteration: 3,
  iterations: 3,
  ...over,
});

describe("the Train page's past runs", () => {
  it('lists the runs that are over, newest first (an unfinished one is resumed, not reopened)', () => {
    const runs = [
      entry('a', 1, 'finished'),
      entry('b', 3, 'running'),
      entry('c', 2, 'error'),
      entry('d', 4, 'stopped'),
      entry('e', 5, 'paused'),
    ];
    expect(pastRuns(runs).map((r) => r.runId)).toEqual(['d', 'c', 'a']);
    expect(pastRunLabel(entry('x', 1, 'finished'))).toBe(
      'webshop-easy · real · grpo · seed 1 — finished, iteration 3 of 3 (x)',
    );
    expect(pastRunLabel(entry('y', 1, 'finished', { name: 'Dream (0 real steps)' }))).toMatch(
      /^Dream \(0 real steps\) · webshop-easy — finished/,
    );
    // S2R goes on with real iterations after its dreamed ones: never "iteration 6 of 4".
    expect(iterationProgress(6, 4, 's2r')).toBe('iteration 6: 4 dreamed, then 2 real');
    expect(iterationProgress(3, 4, 's2r')).toBe('iteration 3 of 4');
    expect(iterationProgress(6, 4, 'dream')).toBe('iteration 6 of 4');
  });

  it('reopens a run with the counters of its saved history, and a failed one with its reason', () => {
    const records: IterationRecord[] = [1, 2, 3].map((iteration) => ({
      iteration,
      metrics: { 'budget/real_steps': iteration * 10, 'budget/dream_steps': 0 },
    }));
    const status = reopenedStatus(entry('a', 1, 'finished'), records);
    expect([status.state, status.iteration, status.iterations, status.realSteps, status.dreamSteps]).toEqual([
      'finished',
      3,
      3,
      30,
      0,
    ]);
    expect(status.message).toMatch(/Reopened.*3 iterations/);
    const failed = reopenedStatus(
      entry('b', 1, 'error', { iteration: 0, message: 'No WebLLM model is picked yet.' }),
      [],
    );
    expect([failed.state, failed.iteration]).toEqual(['error', 0]);
    expect(failed.message).toMatch(/It failed: No WebLLM model is picked yet\./);
    // Never shown as still training: its worker is gone.
    expect(reopenedStatus(entry('c', 1, 'running'), records).state).toBe('stopped');
  });

  it("gets the form back from a run's config (a start-here run has no query)", () => {
    const dream = config({
      mode: 'dream',
      llm: 'oracle:0.2,0.3',
      seed: 7,
      tasksPerIteration: 2,
      groupSize: 4,
      evalInterval: 2,
      curriculum: true,
      lambda: 0.5,
    });
    const p = paramsFromConfig(dream);
    expect([
      p.env,
      p.preset,
      p.mode,
      p.seed,
      p.llm,
      p.epsR,
      p.epsP,
      p.tasks,
      p.group,
      p.iterations,
      p.evalEvery,
      p.curriculum,
      p.lambda,
    ]).toEqual(['webshop-lite-v0', 'webshop-easy', 'dream', 7, '', 0.2, 0.3, 2, 4, 3, 2, true, 0.5]);
    // The round trip: the same config again.
    expect(configFromParams(paramsFromQuery(paramsToQuery(p)))).toMatchObject({
      mode: 'dream',
      llm: 'oracle:0.2,0.3',
      seed: 7,
      tasksPerIteration: 2,
      evalInterval: 2,
    });
    expect(paramsFromConfig(config({ mode: 'dream', llm: 'learned:models/webshop-lite-v0' })).llm).toBe(
      'learned:models/webshop-lite-v0',
    );
  });
});

describe('the curriculum default of the Train page', () => {
  it('is on in dream and S2R, off in real, unless the link says; a mode change in the form follows it', async () => {
    const { withMode } = await import('../../../src/app/state/train/train-params');
    expect(paramsFromQuery('preset=webshop-easy&mode=dream').curriculum).toBe(true);
    expect(paramsFromQuery('preset=webshop-easy&mode=s2r').curriculum).toBe(true);
    expect(paramsFromQuery('preset=webshop-easy&mode=real').curriculum).toBe(false);
    expect(paramsFromQuery('preset=webshop-easy&mode=dream&curriculum=0').curriculum).toBe(false);
    const real = paramsFromQuery('preset=webshop-easy&mode=real');
    const dream = withMode(real, 'dream');
    expect([dream.mode, dream.curriculum]).toEqual(['dream', true]);
    expect(withMode({ ...dream, curriculum: false }, 's2r').curriculum).toBe(false); // dream → S2R keeps the user's choice
    expect(withMode(dream, 'real').curriculum).toBe(false);
  });

  it('stays on in dream and S2R when the preset or the environment changes', async () => {
    const { withPreset } = await import('../../../src/app/state/train/train-params');
    expect(withPreset('household-easy', { mode: 'dream' }).curriculum).toBe(true);
    expect(withPreset('webshop-easy', { mode: 's2r', seed: 4 })).toMatchObject({
      curriculum: true,
      seed: 4,
      preset: 'webshop-easy',
    });
    expect(withPreset('webshop-easy', { mode: 'real' }).curriculum).toBe(false);
  });
});
