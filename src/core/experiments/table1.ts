/**
 * Table 1: per env, the random and expert policies, the SFT policy, and real / dream / S2R training
 * with GRPO and PPO, each evaluated on the same held-out real tasks, with the real training steps
 * each row used (dream: 0; S2R: its real phase) and its dreamed steps.
 */
import { llmSpecLabel, parseLlmSpec } from '../llm/spec';
import type { Algorithm, Mode } from '../train/config';
import { DEFAULT_SFT_CONFIG } from '../train/sft';
import { ratioOfMeans } from '../train/stats';
import { baselineJob, sftJob, trainJob } from './jobs';
import { Context, runJobs } from './runner';
import {
  baseConfig,
  checkOptions,
  computeSeconds,
  rowConfig,
  rowFrom,
  seedList,
  setupOf,
  splitNote,
  splitOf,
} from './setup';
import {
  ExperimentError,
  type EnvSetup,
  type EnvTable,
  type ExperimentDeps,
  type ExperimentOptions,
  type Job,
  type JobOutcome,
  type Plan,
  type RowRatio,
  type RowResult,
  type TableResult,
} from './types';

export const TABLE1_ROWS = [
  'random',
  'expert',
  'sft',
  'real-grpo',
  'real-ppo',
  'dream-grpo',
  'dream-ppo',
  'sft-dream-grpo',
  's2r-grpo',
  's2r-ppo',
] as const;

const MODE_NAMES: Record<Mode, string> = {
  real: 'Traditional (real env)',
  dream: 'DreamGym (dream only)',
  s2r: 'DreamGym-S2R (dream, then real)',
};

/** Epochs of the SFT rows' cloning: the tuned default, or 3 in a --quick smoke run. */
function sftEpochs(options: ExperimentOptions): number {
  return options.quick ? 3 : DEFAULT_SFT_CONFIG.epochs;
}

/** The SFT rows: behaviour cloning on the offline expert episodes, alone and as the dream's start. */
const SFT_ROW = {
  id: 'sft',
  label: 'SFT — behaviour cloning of the offline expert episodes (no RL)',
  kind: 'train',
  experience: 'offline expert episodes',
} as const;
const SFT_DREAM_ROW = {
  id: 'sft-dream-grpo',
  label: `GRPO — SFT, then ${MODE_NAMES.dream}`,
  kind: 'train',
  mode: 'dream',
  algo: 'grpo',
} as const;

/** A Table 1 row as planned: which jobs give its outcomes, and whether it reads their dream phase. */
interface PlannedRow {
  id: string;
  label: string;
  kind: RowResult['kind'];
  mode?: Mode;
  algo?: Algorithm;
  experience?: string;
  jobs: number[];
  /** The dream rows read the S2R runs' dream phase (JobOutcome.dreamPhase). */
  phase?: 'dream';
}

/** The rows compared as dream (or S2R) over real, with a ratio and its interval. */
const TABLE1_RATIOS: [string, string][] = [
  ['dream-grpo', 'real-grpo'],
  ['dream-ppo', 'real-ppo'],
  ['sft-dream-grpo', 'real-grpo'],
  ['s2r-grpo', 'real-grpo'],
  ['s2r-ppo', 'real-ppo'],
];

export function planTable1(ctx: Context, options: ExperimentOptions): Plan<TableResult> {
  checkOptions(options);
  const seeds = seedList(options);
  const split = splitOf(options);
  const label = llmSpecLabel(options.llm);
  const jobs: Job[] = [];
  const add = (made: Job[]) => made.map((job) => jobs.push(job) - 1);
  const layout: { setup: EnvSetup; rows: PlannedRow[] }[] = [];
  for (const env of options.envs) {
    const base = baseConfig(env, options);
    const rows: PlannedRow[] = [];
    for (const name of ['random', 'expert'] as const) {
      const label =
        name === 'random'
          ? 'Random policy (uniform over admissible actions)'
          : 'Expert policy (scripted, reads the true state)';
      const made = seeds.map((seed) => baselineJob(ctx, name, base, seed, split));
      rows.push({ id: name, label, kind: 'baseline', jobs: add(made) });
    }
    const sft = seeds.map((seed) => sftJob(ctx, rowConfig(env, options, seed, {}), split, sftEpochs(options)));
    rows.push({ ...SFT_ROW, jobs: add(sft) });
    const s2r: Record<string, number[]> = {};
    for (const mode of ['real', 's2r'] as const) {
      for (const algo of ['grpo', 'ppo'] as const) {
        const made = seeds.map((seed) => {
          const what = `${env} ${mode} ${algo.toUpperCase()}${mode === 'real' ? '' : ` [${label}]`} seed ${seed}`;
          return trainJob(ctx, what, rowConfig(env, options, seed, { mode, algo }), split);
        });
        const indices = add(made);
        if (mode === 's2r') s2r[algo] = indices;
        rows.push({
          id: `${mode}-${algo}`,
          label: `${algo.toUpperCase()} — ${MODE_NAMES[mode]}`,
          kind: 'train',
          mode,
          algo,
          jobs: indices,
        });
      }
    }
    for (const algo of ['grpo', 'ppo'] as const) {
      const rowLabel = `${algo.toUpperCase()} — ${MODE_NAMES.dream}`;
      rows.push({
        id: `dream-${algo}`,
        label: rowLabel,
        kind: 'train',
        mode: 'dream',
        algo,
        jobs: s2r[algo],
        phase: 'dream',
      });
    }
    const sftDream = seeds.map((seed) => {
      const config = rowConfig(env, options, seed, { mode: 'dream', algo: 'grpo' });
      return trainJob(
        ctx,
        `${env} SFT, then dream GRPO [${label}] seed ${seed}`,
        config,
        split,
        [],
        sftEpochs(options),
      );
    });
    rows.push({ ...SFT_DREAM_ROW, jobs: add(sftDream) });
    const order = (r: PlannedRow) => (TABLE1_ROWS as readonly string[]).indexOf(r.id);
    layout.push({ setup: setupOf(base, split), rows: rows.sort((a, b) => order(a) - order(b)) });
  }
  return {
    jobs,
    assemble(outcomes) {
      const envs: EnvTable[] = layout.map(({ setup, rows }) => {
        const results = rows.map((r) => plannedRowResult(r, outcomes, seeds, label));
        return { setup, rows: results, ratios: ratiosOf(results) };
      });
      return {
        table: 1,
        split,
        llm: options.llm,
        experienceModel: label,
        oracle: parseLlmSpec(options.llm).kind === 'oracle',
        seeds,
        quick: !!options.quick,
        envs,
        notes: table1Notes(options),
        computeSeconds: computeSeconds(outcomes),
      };
    },
  };
}

function plannedRowResult(r: PlannedRow, outcomes: JobOutcome[], seeds: number[], model: string): RowResult {
  const picked = r.jobs.map((i) => {
    const outcome = r.phase === 'dream' ? outcomes[i].dreamPhase : outcomes[i];
    if (!outcome) throw new ExperimentError(`Job ${i} of row ${r.id} has no ${r.phase ?? ''} outcome.`);
    return outcome;
  });
  const base = {
    id: r.id,
    label: r.label,
    kind: r.kind,
    ...(r.mode ? { mode: r.mode, algo: r.algo } : {}),
    ...(r.mode && r.mode !== 'real' ? { experienceModel: model } : {}),
    ...(r.experience ? { experienceModel: r.experience } : {}),
    ...(r.phase ? { note: 'the S2R runs of the same seeds, evaluated at the end of their dream phase' } : {}),
  };
  return rowFrom(base, picked, seeds);
}

/** Dream (and S2R) over real: the ratio of mean held-out success with its 95 % interval. */
function ratiosOf(rows: RowResult[]): RowRatio[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return TABLE1_RATIOS.flatMap(([row, against]) => {
    const a = byId.get(row);
    const b = byId.get(against);
    return a && b ? [{ row, against, ...ratioOfMeans(a.success.values, b.success.values) }] : [];
  });
}

function table1Notes(options: ExperimentOptions): string[] {
  const oracle = parseLlmSpec(options.llm).kind === 'oracle';
  return [
    'Held-out success and score: greedy policy on the same held-out real tasks (never trained on) for every row; ' +
      'random and expert play those same tasks.',
    splitNote(options),
    'Real train steps: real-environment steps used for training (evaluation not counted). Dream rows use 0; S2R rows count only their real phase (s2rRealFraction × the real-mode budget). Dream steps: transitions produced by the experience model.',
    'Real rows train without the curriculum (the fixed task pool); dream and S2R rows with it, as the CLI does by default.',
    'The dream rows are the S2R runs of the same seeds, evaluated when their dream phase ends: S2R dreams ' +
      'exactly as a dream run of the same config and seed does (same streams), so one run gives both rows.',
    'Spread: mean ± sample std (n − 1) over seeds, a 95 % Student-t interval of the mean (cut to 0–100 %), ' +
      'and each seed’s value. Ratios: mean over mean, with a 95 % interval by the delta method (rows taken ' +
      'as independent, t with the smaller n − 1 degrees of freedom).',
    'SFT: the same policy trained by maximum likelihood on the offline dataset’s expert episodes ' +
      `(behaviour cloning, ${sftEpochs(options)} epochs; no RL, no environment steps). SFT, then dream: ` +
      'the dream GRPO row started from that policy instead of the untrained one (the paper’s agents start from ' +
      'an instruct model).',
    ...(oracle
      ? [
          `The experience model of the dream and S2R rows is the noisy oracle, ${llmSpecLabel(options.llm)}: the real environment with dialled reward and transition errors. It is a control instrument, not a learned model, so these rows measure how training copes with a known model error, not how good an LLM experience model is.`,
        ]
      : []),
    ...(options.quick ? ['QUICK run (--quick): few iterations and held-out tasks; a smoke test, not a result.'] : []),
  ];
}

export async function runTable1(options: ExperimentOptions, deps: ExperimentDeps = {}): Promise<TableResult> {
  const ctx = new Context(deps);
  const plan = planTable1(ctx, options);
  return plan.assemble(await runJobs(ctx, plan.jobs));
}
