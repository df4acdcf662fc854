/**
 * The experiment tables (the paper's Tables 1 and 2 in miniature) as smoke runs: every row present, numbers in
 * range, the step accounting of each mode, the oracle labelled as such, the markdown rendered;
 * the inert oracle ablations really are identical; the (ε_R, ε_P) grid and the transfer study run.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { initBackend } from '../../../src/core/tfjs/backend';
import { loadSeedDataset } from '../../../src/core/data/seed-datasets';
import type { LlmSpecText } from '../../../src/core/llm/spec';
import { readPublicFile } from '../../../src/node/edge';
import { renderGrid, renderTable, renderTransfer } from '../../../src/cli/experiments/report';
import {
  GRID_EPSILONS,
  PESSIMISM_ROWS,
  TABLE1_ROWS,
  TABLE2_ROWS,
  planExperiment,
  presetForEnv,
  runExperiment,
  runGrid,
  runTable1,
  runTable2,
  runTransfer,
  evaluateBaseline,
  type ExperimentDeps,
  type GridCell,
  type ExperimentProgress,
  type RowResult,
  type JobOutcome,
} from '../../../src/core/experiments/experiment';
import { gridVerdict } from '../../../src/core/experiments/grid';
import type { TrainConfig } from '../../../src/core/train/config';
import { stat } from '../../../src/core/train/stats';
import { main } from '../../../src/cli/main';

beforeAll(async () => {
  await initBackend('wasm');
});

const TINY: Partial<TrainConfig> = {
  iterations: 2,
  tasksPerIteration: 2,
  groupSize: 4,
  finalEvalEpisodes: 10,
  realStepBudget: 400,
};
const ORACLE = 'oracle:0.1,0.1';

function deps(events: ExperimentProgress[] = []): ExperimentDeps {
  return {
    loadDataset: (env) => loadSeedDataset(env, readPublicFile),
    now: () => performance.now(),
    onProgress: (e) => events.push(e),
  };
}

/** A success rate over `tasks` held-out tasks: a whole number of them, out of `tasks`. */
function expectShareOf(tasks: number, rate: number): void {
  const solved = Math.round(rate * tasks);
  expect(rate * tasks).toBeCloseTo(solved, 9);
  expect(solved).toBeGreaterThanOrEqual(0);
  expect(solved).toBeLessThanOrEqual(tasks);
}

/** A row of one seed: each success is a share of the `tasks` held-out tasks, and one value has no spread. */
function expectOneSeedRow(row: RowResult, tasks: number): void {
  expect(row.seeds).toEqual([1]);
  expect(row.success.values).toHaveLength(1);
  expectShareOf(tasks, row.success.values[0]);
  expect([row.success.mean, row.success.std, row.score.mean]).toEqual([row.success.values[0], 0, row.score.values[0]]);
}

/** A grid cell of success rate `success` (one seed). */
function cell(success: number): GridCell {
  return {
    epsilonReward: 0,
    epsilonTransition: 0,
    label: '',
    success: stat([success]),
    score: stat([success]),
    dreamSteps: stat([0]),
  };
}

describe('experiment tables', () => {
  it('Table 1 (quick, one env, one seed): every row, step accounting per mode, oracle label, markdown', async () => {
    const events: ExperimentProgress[] = [];
    const result = await runTable1(
      { envs: ['webshop-lite-v0'], llm: ORACLE, seeds: 1, quick: true, overrides: TINY },
      deps(events),
    );
    expect(result.table).toBe(1);
    expect(result.envs).toHaveLength(1);
    const { setup, rows } = result.envs[0];
    expect(setup).toMatchObject({
      env: 'webshop-lite-v0',
      preset: 'webshop-easy',
      heldOutTasks: 10,
      iterations: 2,
      s2rRealBudget: 40,
    });
    expect(rows.map((r) => r.id)).toEqual([...TABLE1_ROWS]);
    const row = (id: string) => rows.find((r) => r.id === id)!;
    for (const r of rows) expectOneSeedRow(r, 10);
    expect(row('expert').success.mean).toBe(1);
    // The random row is the random policy on the same ten dev tasks, seed 1: the same numbers played again.
    const random = await evaluateBaseline('random', 'webshop-lite-v0', setup.difficulty, 10, 1, 'dev');
    expect([row('random').success.values, row('random').score.values]).toEqual([[random.success], [random.score]]);
    expect(row('expert').success.mean).toBeGreaterThanOrEqual(row('random').success.mean);
    for (const algo of ['grpo', 'ppo']) {
      expect(row(`real-${algo}`).realSteps.mean).toBeGreaterThan(0);
      expect(row(`real-${algo}`).realSteps.mean).toBeLessThanOrEqual(400);
      expect(row(`real-${algo}`).dreamSteps.mean).toBe(0);
      expect(row(`dream-${algo}`).realSteps.mean).toBe(0);
      expect(row(`dream-${algo}`).dreamSteps.mean).toBeGreaterThan(0);
      expect(row(`s2r-${algo}`).realSteps.mean).toBe(40); // exactly its real phase, never more
      expect(row(`s2r-${algo}`).dreamSteps.mean).toBeGreaterThan(0);
      expect(row(`dream-${algo}`).experienceModel).toBe('oracle (ε_R=0.1, ε_P=0.1)');
      expect(row(`dream-${algo}`).invalidRate?.mean).toBe(0);
    }
    expect(row('real-grpo').experienceModel).toBeUndefined();
    // SFT: cloned from the offline expert episodes, no env steps; SFT then dream: dream steps only.
    expect(row('sft')).toMatchObject({ experienceModel: 'offline expert episodes' });
    expect([row('sft').realSteps.mean, row('sft').dreamSteps.mean]).toEqual([0, 0]);
    expect(row('sft').success.mean).toBeGreaterThan(row('random').success.mean);
    expect(row('sft-dream-grpo')).toMatchObject({
      mode: 'dream',
      algo: 'grpo',
      experienceModel: 'oracle (ε_R=0.1, ε_P=0.1)',
    });
    expect(row('sft-dream-grpo').realSteps.mean).toBe(0);
    expect(row('sft-dream-grpo').dreamSteps.mean).toBeGreaterThan(0);
    // One start and one done per job (2 baselines + SFT + 5 training runs), numbered within the plan:
    // the dream rows are the S2R runs read at the end of their dream phase.
    expect(events.filter((e) => e.kind === 'done')).toHaveLength(8);
    expect(events.filter((e) => e.kind === 'iteration').length).toBeGreaterThanOrEqual(12);

    const md = renderTable(result, { elapsedSeconds: 12.3, workers: 1 });
    expect(md).toContain('## Table 1');
    expect(md).toContain('oracle (ε_R=0.1, ε_P=0.1)');
    expect(md).toMatch(/control instrument, not a learned model/);
    for (const r of rows) expect(md).toContain(`| ${r.label} |`);
    expect(md.split('\n').filter((l) => /^\| [A-Z]/.test(l) && !l.startsWith('| ---'))).toHaveLength(10);
    // Five ratios of dream (or S2R) over real, each with its interval (one seed: none).
    expect(md.split('\n').filter((l) => / \/ real-(grpo|ppo) \| /.test(l))).toHaveLength(5);
    expect(result.envs[0].ratios?.map((r) => `${r.row}/${r.against}`)).toContain('dream-grpo/real-grpo');
    expect(md).toMatch(/Elapsed: 12 s/);
  }, 180_000);

  it('Table 2 (quick): ablation rows, the oracle-inert ablations are identical (re-run to prove it), no LLM prior is N/A', async () => {
    const result = await runTable2(
      { envs: ['webshop-lite-v0'], llm: ORACLE, seeds: 1, quick: true, overrides: TINY, rerunInertAblations: true },
      deps(),
    );
    const rows = result.envs[0].rows;
    expect(rows.map((r) => r.id)).toEqual([...TABLE2_ROWS]);
    const full = rows.find((r) => r.id === 'full')!;
    const dreamRows = rows.filter((r) => r.kind !== 'not-applicable' && r.id !== 'real-s2r-steps');
    for (const r of dreamRows) {
      expectOneSeedRow(r, 10);
      expect(r.realSteps.mean).toBe(0);
      expect(r.experienceModel).toBe('oracle (ε_R=0.1, ε_P=0.1)');
    }
    // Real GRPO with S2R's real steps only: its budget (a tenth of TINY's 400), no dream.
    const real = rows.find((r) => r.id === 'real-s2r-steps')!;
    expect(real.realSteps.mean).toBe(40);
    expect([real.dreamSteps.mean, real.mode, real.experienceModel]).toEqual([0, 'real', undefined]);
    // Only a learned model has a verdict head.
    expect(rows.find((r) => r.id === 'no-verdict')).toMatchObject({ kind: 'not-applicable' });
    // The full row is an S2R run read at the end of its dream phase; these rows are plain dream runs
    // the oracle cannot tell apart from it, so equal numbers also prove the two are the same run.
    for (const id of ['no-retrieval', 'no-reasoning', 'no-history']) {
      const r = rows.find((x) => x.id === id)!;
      expect(r.sameAs).toBeUndefined(); // really run
      expect(r.success.values).toEqual(full.success.values);
      expect(r.score.values).toEqual(full.score.values);
      expect(r.dreamSteps.values).toEqual(full.dreamSteps.values);
    }
    expect(rows.find((r) => r.id === 'no-curriculum')!.changes).toEqual({ curriculum: false });
    const prior = rows.find((r) => r.id === 'no-llm-prior')!;
    expect(prior.kind).toBe('not-applicable');
    expect(prior.note).toMatch(/not applicable/);
    const md = renderTable(result);
    expect(md).toContain('## Table 2');
    expect(md).toMatch(/ablations change nothing/);
    expect(md).toMatch(/only feed an LLM experience model/);
    expect(md).toMatch(/not applicable without an LLM/);
    expect(md).toMatch(/\| N\/A \|/);

    // Without the re-run they are copied from the full row and say so.
    const copied = await runTable2(
      {
        envs: ['webshop-lite-v0'],
        llm: ORACLE,
        seeds: 1,
        quick: true,
        overrides: { ...TINY, iterations: 1, finalEvalEpisodes: 4 },
      },
      deps(),
    );
    const noHistory = copied.envs[0].rows.find((r) => r.id === 'no-history')!;
    expect(noHistory.sameAs).toBe('full');
    expect(noHistory.note).toMatch(/identical to the full row by construction/);
    expect(renderTable(copied)).toMatch(/not re-run/);
  });

  it('Table 2 with a learned model: the retrained rows dream with their own model, or are N/A without one', () => {
    const learned = 'learned:public/models' as LlmSpecText;
    const k0 = 'learned:runs/models/no-retrieval-trained' as LlmSpecText;
    const h0 = 'learned:runs/models/no-history-trained' as LlmSpecText;
    const request = { envs: ['webshop-lite-v0'], llm: learned, seeds: 2, table: 2 as const };
    const withModels = planExperiment({
      ...request,
      retrainedModels: { 'no-retrieval-trained': k0, 'no-history-trained': h0 },
    });
    const byLlm = (llm: string) => withModels.jobs.filter((j) => j.llm === llm).map((j) => j.label);
    const k0Label = 'learned model at runs/models/no-retrieval-trained';
    expect(byLlm(k0)).toEqual(
      [1, 2].map((s) => `webshop-lite-v0 dream GRPO no-retrieval-trained [${k0Label}] seed ${s}`),
    );
    expect(byLlm(h0)).toHaveLength(2);
    // Real rows read no experience model; the rest dream with the table's.
    expect(withModels.jobs.filter((j) => j.llm === undefined).map((j) => j.label)).toEqual([
      "webshop-lite-v0 real GRPO, S2R's 4000 real steps, seed 1",
      "webshop-lite-v0 real GRPO, S2R's 4000 real steps, seed 2",
    ]);
    // A retrained row's config differs from the dream-time row's only in its model.
    const plain = withModels.jobs.find((j) => j.label.includes('no-retrieval [') && j.label.endsWith('seed 1'))!;
    const retrained = withModels.jobs.find((j) => j.llm === k0)!;
    expect(retrained.key).toBe(plain.key.replace(learned, k0));

    const without = planExperiment(request);
    expect(without.jobs).toHaveLength(withModels.jobs.length - 4);
    const outcome: JobOutcome = { split: 'dev', success: 0.5, score: 0.6, realSteps: 0, dreamSteps: 9, wallSeconds: 1 };
    const result = without.assemble(without.jobs.map(() => ({ ...outcome, dreamPhase: outcome })));
    const row = result.table!.envs[0].rows.find((r) => r.id === 'no-history-trained')!;
    expect(row.kind).toBe('not-applicable');
    expect(row.note).toMatch(/needs a model trained that way .*trains one/);
    const full = planExperiment({ ...request, llm: ORACLE, retrainedModels: { 'no-retrieval-trained': k0 } });
    expect(full.jobs.some((j) => j.llm === k0)).toBe(false); // an LLM engine is not retrained here
  });

  it("Table 2's pessimism rows: each part removed or varied, where the engine has it", () => {
    const learned = 'learned:public/models' as LlmSpecText;
    const request = {
      envs: ['household-v0'],
      llm: learned,
      seeds: 3,
      table: 2 as const,
      ablations: 'pessimism' as const,
    };
    const plan = planExperiment(request);
    const ids = (labels: string[]) => [...new Set(labels.map((l) => / dream GRPO (\S+) \[/.exec(l)?.[1]))];
    expect(ids(plan.jobs.map((j) => j.label))).toEqual([...PESSIMISM_ROWS]);
    expect(plan.jobs).toHaveLength(8 * 3); // no real-steps row, no retrained model
    const outcome: JobOutcome = { split: 'dev', success: 0.5, score: 0.6, realSteps: 0, dreamSteps: 9, wallSeconds: 1 };
    const result = plan.assemble(plan.jobs.map(() => ({ ...outcome, dreamPhase: outcome }))).table!;
    expect(result.ablations).toBe('pessimism');
    const changes = Object.fromEntries(result.envs[0].rows.map((r) => [r.id, r.changes]));
    expect(changes).toMatchObject({
      'no-ensemble': { verdictMembers: 1 },
      'no-halt': { halt: false },
      'halt-success-0.95': { haltSuccessQuantile: 0.95 },
      'no-real-starts': { realStartShare: 0 },
    });
    expect(result.notes.join(' ')).toMatch(/hand-written rules .* measured at their own commit/);
    // The oracle has no ensemble and nothing to halt against: those rows are not applicable, real starts still run.
    const oracle = planExperiment({ ...request, llm: ORACLE, seeds: 1 });
    const byRow = oracle.assemble(oracle.jobs.map(() => ({ ...outcome, dreamPhase: outcome }))).table!.envs[0].rows;
    const kinds = Object.fromEntries(byRow.map((r) => [r.id, r.kind]));
    expect(kinds).toMatchObject({
      'no-ensemble': 'not-applicable',
      'no-halt': 'not-applicable',
      'no-real-starts': 'train',
    });
  });

  it('the (ε_R, ε_P) grid runs with a tiny config and names which error hurts more', async () => {
    const result = await runGrid(
      { envs: ['webshop-lite-v0'], seeds: 1, quick: true, overrides: { ...TINY, iterations: 1, finalEvalEpisodes: 6 } },
      deps(),
    );
    expect(result.epsilons).toEqual([...GRID_EPSILONS]);
    const grid = result.envs[0];
    expect(grid.cells).toHaveLength(3);
    for (const [i, row] of grid.cells.entries()) {
      expect(row).toHaveLength(3);
      for (const [j, cell] of row.entries()) {
        expect(cell).toMatchObject({ epsilonReward: GRID_EPSILONS[i], epsilonTransition: GRID_EPSILONS[j] });
        expect(cell.label).toBe(`oracle (ε_R=${GRID_EPSILONS[i]}, ε_P=${GRID_EPSILONS[j]})`);
        expectShareOf(6, cell.success.mean);
      }
    }
    expect(grid.rewardRowMean).toBeCloseTo(grid.cells[2].reduce((a, c) => a + c.success.mean, 0) / 3, 10);
    expect(grid.transitionColumnMean).toBeCloseTo(grid.cells.reduce((a, r) => a + r[2].success.mean, 0) / 3, 10);
    // The verdict and its tolerance are those of the cells, over 6 held-out tasks a cell.
    expect(gridVerdict(grid.cells, 6)).toMatchObject({ verdict: grid.verdict, tolerance: grid.tolerance });
    const md = renderGrid(result);
    expect(md).toContain('| ε_R \\ ε_P | 0 | 0.1 | 0.3 |');
    expect(md).toContain(`**${grid.verdict}**`);
    expect(md).toMatch(/Lemma 1/);
  });

  it('names the error whose row (ε_R) or column (ε_P) loses more success, beyond two standard errors', () => {
    // 100 evaluations a cell, 300 a row: the tolerance is 2·sqrt((0.2·0.8 + 0.6·0.4) / 300) ≈ 0.0730.
    const rewardHurts = [
      [cell(0.9), cell(0.8), cell(0.8)],
      [cell(0.8), cell(0.7), cell(0.8)],
      [cell(0.2), cell(0.2), cell(0.2)],
    ];
    expect(gridVerdict(rewardHurts, 100)).toEqual({
      rewardRowMean: expect.closeTo(0.2, 10),
      transitionColumnMean: expect.closeTo(0.6, 10),
      rewardOnly: 0.2,
      transitionOnly: 0.8,
      clean: 0.9,
      tolerance: expect.closeTo(0.07303, 5),
      verdict: 'reward error hurts more',
    });
    const transpose = (cells: GridCell[][]) => cells.map((row, i) => row.map((_, j) => cells[j][i]));
    expect(gridVerdict(transpose(rewardHurts), 100)).toMatchObject({
      rewardRowMean: expect.closeTo(0.6, 10),
      transitionColumnMean: expect.closeTo(0.2, 10),
      verdict: 'transition error hurts more',
    });
    // A gap of ≈ 0.033 against a tolerance of ≈ 0.0814 (both means near one half): no clear difference.
    const close = [
      [cell(0.9), cell(0.9), cell(0.5)],
      [cell(0.9), cell(0.9), cell(0.5)],
      [cell(0.45), cell(0.45), cell(0.45)],
    ];
    expect(gridVerdict(close, 100)).toMatchObject({
      rewardRowMean: expect.closeTo(0.45, 10),
      transitionColumnMean: expect.closeTo(0.4833, 4),
      tolerance: expect.closeTo(0.0814, 4),
      verdict: 'no clear difference',
    });
  });

  it('cross-domain transfer: a matrix of train env × eval env, and one plan for several parts', async () => {
    const tiny = { ...TINY, iterations: 1, finalEvalEpisodes: 4 };
    const result = await runTransfer(
      { envs: ['webshop-lite-v0', 'household-v0'], llm: ORACLE, seeds: 1, quick: true, overrides: tiny },
      deps(),
    );
    expect(result.rows.map((r) => r.trainedIn)).toEqual(['webshop-lite-v0', 'household-v0']);
    for (const env of ['webshop-lite-v0', 'household-v0']) {
      for (const r of result.rows) expectShareOf(4, r.success[env].mean);
      // The reference row is the random policy on the same four dev tasks of each env, seed 1.
      const setup = result.targets.find((t) => t.env === env)!;
      const random = await evaluateBaseline('random', env, setup.difficulty, 4, 1, 'dev');
      expect([result.random.success[env].mean, result.random.score[env].mean]).toEqual([random.success, random.score]);
    }
    expect(renderTransfer(result)).toMatch(/near zero/);
    await expect(runTransfer({ envs: ['webshop-lite-v0'], llm: ORACLE, seeds: 1 }, deps())).rejects.toThrow(
      /two environments/,
    );

    const plan = planExperiment({
      envs: ['webshop-lite-v0'],
      llm: ORACLE,
      seeds: 2,
      table: 1,
      grid: true,
      overrides: tiny,
    });
    expect(plan.jobs).toHaveLength(2 * 8 + 2 * 9);
    expect(plan.jobs.every((j) => j.cost > 0)).toBe(true);
    const both = await runExperiment(
      { envs: ['webshop-lite-v0'], llm: 'oracle:0,0', seeds: 1, table: 2, overrides: tiny },
      deps(),
    );
    expect(both.table?.experienceModel).toBe('oracle (ε_R=0, ε_P=0)');
    expect(both.grid).toBeUndefined();
  });

  it('runs the llm-demo presets with size llm-demo (for slow experience models)', async () => {
    const demo = presetForEnv('webshop-lite-v0', 'llm-demo');
    const result = await runExperiment(
      {
        envs: ['webshop-lite-v0'],
        size: 'llm-demo',
        llm: ORACLE,
        seeds: 1,
        table: 1,
        overrides: { iterations: 1, finalEvalEpisodes: 2 },
      },
      deps(),
    );
    const setup = result.table!.envs[0].setup;
    expect([setup.preset, setup.tasksPerIteration, setup.groupSize]).toEqual([
      'webshop-llm-demo',
      demo.tasksPerIteration,
      demo.groupSize,
    ]);
    expect(demo.algo).toBe('ppo');
  }, 240_000);

  it('rejects unknown envs and bad requests', () => {
    expect(presetForEnv('household-v0').preset).toBe('household-easy');
    expect(() => presetForEnv('atari-v5')).toThrow(/No easy preset for environment 'atari-v5'/);
    expect(presetForEnv('webshop-lite-v0', 'llm-demo').preset).toBe('webshop-llm-demo');
    expect(() => planExperiment({ envs: ['webshop-lite-v0'], llm: ORACLE, seeds: 1 })).toThrow(/Nothing to run/);
    expect(() => planExperiment({ envs: ['webshop-lite-v0'], llm: 'gpt' as LlmSpecText, seeds: 1, table: 1 })).toThrow(
      /Unknown engine spec 'gpt'/,
    );
    expect(() => planExperiment({ envs: ['webshop-lite-v0'], llm: ORACLE, seeds: 0, table: 1 })).toThrow(/seeds/);
  });
});

describe('dreamgym experiment (CLI arguments)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('explains missing and bad options without running anything', async () => {
    const err: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => {
      err.push(a.join(' '));
    });
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await main(['experiment'])).toBe(2);
    expect(err.join('\n')).toMatch(/experiment needs --table 1\|2, --grid or --transfer/);
    expect(await main(['experiment', '--table', '3'])).toBe(2);
    expect(err.join('\n')).toMatch(/--table must be one of 1, 2; got '3'/);
    expect(await main(['experiment', '--table', '1', '--envs', 'atari-v5'])).toBe(2);
    expect(err.join('\n')).toMatch(/Unknown environment 'atari-v5' in --envs/);
    expect(await main(['experiment', '--transfer', '--envs', 'webshop-lite-v0'])).toBe(2);
    expect(err.join('\n')).toMatch(/--transfer needs two environments/);
    expect(await main(['experiment', '--table', '1', '--llm', 'oracle:2,0'])).toBe(1);
    expect(err.join('\n')).toMatch(/EPS_R \(reward error ε_R\) must be in 0..1/);
    expect(await main(['experiment', '--table', '1', '--ablations', 'pessimism'])).toBe(2);
    expect(err.join('\n')).toMatch(/--ablations pessimism chooses the rows of Table 2: add --table 2/);
    expect(await main(['experiment', '--table', '2', '--ablations', 'mine'])).toBe(2);
    expect(err.join('\n')).toMatch(/--ablations must be one of paper, pessimism; got 'mine'/);
  });
});
