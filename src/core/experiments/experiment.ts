/**
 * The paper's result tables in miniature (DreamGym, arXiv 2511.03773), run end to end on our envs.
 * This file is the front door: a request names the parts (Table 1, Table 2, the ε grid, transfer),
 * planExperiment turns them into one list of jobs, and runExperiment runs them here. Each part's
 * plan has its own file:
 *
 * - table1.ts: the random, expert and SFT policies and real / dream / S2R training with GRPO and PPO;
 * - table2.ts: full DreamGym (dream GRPO) against its ablations (the paper's, or the pessimism rows);
 * - grid.ts: the transfer-bound grid (the paper's Lemma 1): dream GRPO over the noisy oracle's (ε_R, ε_P);
 * - transfer.ts: cross-domain transfer (the paper's Fig. 3): dreamed in one env, evaluated in the other's.
 *
 * Beside them: types.ts (requests, results, jobs), setup.ts (presets, a row's config, the split),
 * jobs.ts (the baseline, SFT and training jobs and their keys) and runner.ts (the datasets and the
 * loop that runs jobs).
 *
 * Pure core (no node:fs, no clock of its own): the edge hands in the shipped offline datasets, a
 * clock and a progress callback; the CLI renders the results as markdown (src/cli/experiments/report.ts).
 * Every training row gets its own Trainer (evalInterval 0, the preset's finalEvalEpisodes held-out
 * tasks) and, for dream/s2r, a fresh in-memory replay buffer seeded from the env's dataset; every
 * trainer is disposed. Rows that dream over the noisy oracle are labelled `oracle (ε_R=…, ε_P=…)`
 * everywhere, so they are never mistaken for a learned model. The held-out tasks are the dev split
 * unless the request asks for `split: 'test'` (a reported table): then each run, once trained, is
 * evaluated on the test tasks (train/evaluate.ts, docs/architecture.md §7.1).
 */
import { planGrid } from './grid';
import { Context, runOne } from './runner';
import { planTable1 } from './table1';
import { planTable2 } from './table2';
import { planTransfer } from './transfer';
import {
  ExperimentError,
  type ExperimentDeps,
  type ExperimentPlan,
  type ExperimentRequest,
  type ExperimentResult,
  type JobOutcome,
  type Plan,
} from './types';

export * from './types';
export { evaluateBaseline } from './jobs';
export { presetForEnv, QUICK_OVERRIDES, splitOf } from './setup';
export { runTable1, TABLE1_ROWS } from './table1';
export { PESSIMISM_ROWS, runTable2, TABLE2_ROWS } from './table2';
export { GRID_EPSILONS, runGrid } from './grid';
export { runTransfer } from './transfer';

/**
 * Plans the requested parts. Every job is deterministic given the request (its seeds fix the
 * policy, the tasks, the sampling and the oracle's errors), so the same request planned in
 * another process runs the same job to the same outcome — which is what lets the CLI spread the
 * jobs over worker processes.
 */
export function planExperiment(request: ExperimentRequest, deps: ExperimentDeps = {}): ExperimentPlan {
  const ctx = new Context(deps);
  const parts: { key: keyof ExperimentResult; plan: Plan<unknown> }[] = [];
  if (request.table === 1) parts.push({ key: 'table', plan: planTable1(ctx, request) as Plan<unknown> });
  else if (request.table === 2) parts.push({ key: 'table', plan: planTable2(ctx, request) as Plan<unknown> });
  else if (request.table !== undefined)
    throw new ExperimentError(`table must be 1 or 2; got ${String(request.table)}.`);
  if (request.grid) parts.push({ key: 'grid', plan: planGrid(ctx, request) as Plan<unknown> });
  if (request.transfer) parts.push({ key: 'transfer', plan: planTransfer(ctx, request) as Plan<unknown> });
  if (parts.length === 0)
    throw new ExperimentError('Nothing to run: ask for a table (1 or 2), the grid, or the transfer study.');
  const jobs = parts.flatMap((p) => p.plan.jobs);
  return {
    jobs: jobs.map((j, index) => ({ index, label: j.label, key: j.key, cost: j.cost, llm: j.llm })),
    runJob: (index) => {
      if (!(index >= 0 && index < jobs.length))
        throw new ExperimentError(`No job ${index}; the plan has ${jobs.length}.`);
      return runOne(ctx, jobs[index], index, jobs.length);
    },
    assemble(outcomes) {
      if (outcomes.length !== jobs.length)
        throw new ExperimentError(`Expected ${jobs.length} job outcomes, got ${outcomes.length}.`);
      const result: ExperimentResult = {};
      let at = 0;
      for (const { key, plan } of parts) {
        (result as Record<string, unknown>)[key] = plan.assemble(outcomes.slice(at, at + plan.jobs.length));
        at += plan.jobs.length;
      }
      return result;
    },
  };
}

/** The requested parts, every job in this process, one after another. */
export async function runExperiment(request: ExperimentRequest, deps: ExperimentDeps = {}): Promise<ExperimentResult> {
  const plan = planExperiment(request, deps);
  const outcomes: JobOutcome[] = [];
  for (const job of plan.jobs) outcomes.push(await plan.runJob(job.index));
  return plan.assemble(outcomes);
}
