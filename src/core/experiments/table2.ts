/**
 * Table 2: full DreamGym (dream GRPO) against its ablations. Two row sets: 'paper' (the dream's
 * context, the curriculum, the verdict head, the LLM prior, and real GRPO on S2R's real steps) and
 * 'pessimism' (the verdict ensemble, the halt and real starts, each removed or at two other values).
 */
import { llmSpecLabel, parseLlmSpec } from '../llm/spec';
import type { TrainConfig } from '../train/config';
import { stat } from '../train/stats';
import { trainJob } from './jobs';
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
import type {
  EnvSetup,
  EnvTable,
  ExperimentDeps,
  ExperimentOptions,
  Job,
  JobOutcome,
  Plan,
  RetrainedRow,
  RowResult,
  TableResult,
} from './types';

export const TABLE2_ROWS = [
  'full',
  'no-verdict',
  'no-retrieval',
  'no-retrieval-trained',
  'no-reasoning',
  'no-history',
  'no-history-trained',
  'no-curriculum',
  'no-llm-prior',
  'real-s2r-steps',
] as const;

/** Table 2 with `ablations: 'pessimism'`: what keeps the dream honest, each part removed or at two other values. */
export const PESSIMISM_ROWS = [
  'full',
  'no-ensemble',
  'ensemble-3',
  'ensemble-8',
  'no-halt',
  'halt-success-0.8',
  'halt-success-0.95',
  'no-real-starts',
] as const;

type EngineKind = ReturnType<typeof parseLlmSpec>['kind'];

/** Where a retrained row's model comes from, for its not-applicable note. */
const RETRAINED_HOW = "the CLI's experiment --table 2 --llm learned:DIR trains one into OUT/models/<row>";

const NOT_TRAINED_HERE = {
  kinds: ['oracle', 'openai', 'webllm', 'wllama'] as EngineKind[],
  why: 'an LLM experience model is not trained here, so the row above (its prompt without the part) is the whole ablation',
};

/**
 * The ablations of the dream GRPO row: the config fields each one changes; `llmOnly`: the noisy
 * oracle ignores them (its rows repeat the full row unless re-run); `notFor`: engines without the
 * part at all (the row is not applicable there).
 */
interface Ablation {
  id: (typeof TABLE2_ROWS)[number] | (typeof PESSIMISM_ROWS)[number];
  label: string;
  changes: Partial<TrainConfig>;
  llmOnly: boolean;
  notFor?: { kinds: EngineKind[]; why: string };
  /** Dreams with the model of `retrainedModels[id]`, trained without the part. */
  retrained?: RetrainedRow;
}

const ABLATIONS: Ablation[] = [
  {
    id: 'full',
    label: 'DreamGym (full): dream GRPO, curriculum, retrieval, reasoning, history',
    changes: {},
    llmOnly: false,
  },
  {
    id: 'no-verdict',
    label: "w/o verdict head (the generator's own reward and ending)",
    changes: { verdictHead: false },
    llmOnly: false,
    notFor: {
      kinds: ['oracle', 'openai', 'webllm', 'wllama'],
      why: 'only a learned experience model has a verdict head',
    },
  },
  { id: 'no-retrieval', label: 'w/o experience replay (retrieval)', changes: { retrievalK: 0 }, llmOnly: true },
  {
    id: 'no-retrieval-trained',
    label: 'w/o experience replay, trained and dreamed with k = 0',
    changes: { retrievalK: 0 },
    llmOnly: true,
    notFor: NOT_TRAINED_HERE,
    retrained: 'no-retrieval-trained',
  },
  {
    id: 'no-reasoning',
    label: 'w/o experience reasoning',
    changes: { reasoning: false },
    llmOnly: true,
    notFor: { kinds: ['learned'], why: 'the learned experience model writes no reasoning step' },
  },
  { id: 'no-history', label: 'w/o history', changes: { historyLength: 0 }, llmOnly: true },
  {
    id: 'no-history-trained',
    label: 'w/o history, trained and dreamed with H = 0',
    changes: { historyLength: 0 },
    llmOnly: true,
    notFor: NOT_TRAINED_HERE,
    retrained: 'no-history-trained',
  },
  { id: 'no-curriculum', label: 'w/o task generation (curriculum)', changes: { curriculum: false }, llmOnly: false },
];

const ONLY_LEARNED = {
  kinds: ['oracle', 'openai', 'webllm', 'wllama'] as EngineKind[],
  why: 'only a learned experience model has a verdict ensemble',
};
const NOT_ORACLE = { kinds: ['oracle'] as EngineKind[], why: 'the noisy oracle is the real env: nothing halts it' };

/** The pessimism rows (config.ts defaults: 5 members, the halt at success quantile 0.9, half the tasks from real states). */
const PESSIMISM_ABLATIONS: Ablation[] = [
  { id: 'full', label: 'DreamGym (full): ensemble of 5, halt, real starts', changes: {}, llmOnly: false },
  {
    id: 'no-ensemble',
    label: 'w/o verdict ensemble (1 member)',
    changes: { verdictMembers: 1 },
    llmOnly: false,
    notFor: ONLY_LEARNED,
  },
  {
    id: 'ensemble-3',
    label: 'verdict ensemble of 3',
    changes: { verdictMembers: 3 },
    llmOnly: false,
    notFor: ONLY_LEARNED,
  },
  {
    id: 'ensemble-8',
    label: 'verdict ensemble of 8',
    changes: { verdictMembers: 8 },
    llmOnly: false,
    notFor: ONLY_LEARNED,
  },
  {
    id: 'no-halt',
    label: 'w/o halt (nor its offers filter)',
    changes: { halt: false },
    llmOnly: false,
    notFor: NOT_ORACLE,
  },
  {
    id: 'halt-success-0.8',
    label: 'halt, success quantile 0.8',
    changes: { haltSuccessQuantile: 0.8 },
    llmOnly: false,
    notFor: NOT_ORACLE,
  },
  {
    id: 'halt-success-0.95',
    label: 'halt, success quantile 0.95',
    changes: { haltSuccessQuantile: 0.95 },
    llmOnly: false,
    notFor: NOT_ORACLE,
  },
  {
    id: 'no-real-starts',
    label: 'w/o real starts (every task from its first state)',
    changes: { realStartShare: 0 },
    llmOnly: false,
  },
];

/** A Table 2 row as planned: run (its jobs), repeating the full row (inert), or not applicable. */
type PlannedAblation =
  | {
      id: string;
      label: string;
      changes: Partial<TrainConfig>;
      how: 'run';
      jobs: number[];
      phase?: 'dream';
      /** The experience model it dreams with, when not the table's. */
      model?: string;
    }
  | { id: string; label: string; changes: Partial<TrainConfig>; how: 'inert' }
  | { id: string; label: string; changes: Partial<TrainConfig>; how: 'n/a'; why: string };

export function planTable2(ctx: Context, options: ExperimentOptions): Plan<TableResult> {
  checkOptions(options);
  const seeds = seedList(options);
  const split = splitOf(options);
  const label = llmSpecLabel(options.llm);
  const engine = parseLlmSpec(options.llm).kind;
  const jobs: Job[] = [];
  const add = (made: Job[]) => made.map((job) => jobs.push(job) - 1);
  const layout: { setup: EnvSetup; rows: PlannedAblation[] }[] = [];
  for (const env of options.envs) {
    const rows: PlannedAblation[] = [];
    const pessimism = options.ablations === 'pessimism';
    for (const { id, label: rowLabel, changes, llmOnly, notFor, retrained } of pessimism
      ? PESSIMISM_ABLATIONS
      : ABLATIONS) {
      const row = { id, label: rowLabel, changes };
      const llm = retrained ? options.retrainedModels?.[retrained] : options.llm;
      if (notFor?.kinds.includes(engine)) rows.push({ ...row, how: 'n/a', why: notFor.why });
      else if (!llm) rows.push({ ...row, how: 'n/a', why: `it needs a model trained that way (${RETRAINED_HOW})` });
      else if (engine === 'oracle' && llmOnly && !options.rerunInertAblations) rows.push({ ...row, how: 'inert' });
      else {
        // The full row is Table 1's S2R run read at the end of its dream phase: one run serves both tables.
        const mode = id === 'full' ? 's2r' : 'dream';
        const made = seeds.map((seed) => {
          const config = rowConfig(env, options, seed, { mode, algo: 'grpo', curriculum: true, ...changes, llm });
          return trainJob(ctx, `${env} dream GRPO ${id} [${llmSpecLabel(llm)}] seed ${seed}`, config, split);
        });
        const own = retrained ? { model: llmSpecLabel(llm) } : {};
        rows.push({
          ...row,
          how: 'run',
          jobs: add(made),
          ...(id === 'full' ? { phase: 'dream' as const } : {}),
          ...own,
        });
      }
    }
    const base = baseConfig(env, options);
    if (!pessimism) rows.push(llmPriorRow(engine), realS2rStepsRow(ctx, env, options, base, add));
    layout.push({ setup: setupOf(base, split), rows });
  }
  return {
    jobs,
    assemble(outcomes) {
      const envs: EnvTable[] = layout.map(({ setup, rows }) => ({
        setup,
        rows: assembleAblations(rows, outcomes, seeds, label),
      }));
      return {
        table: 2,
        ablations: options.ablations ?? 'paper',
        split,
        llm: options.llm,
        experienceModel: label,
        oracle: engine === 'oracle',
        seeds,
        quick: !!options.quick,
        envs,
        notes: table2Notes(options, engine),
        computeSeconds: computeSeconds(outcomes),
      };
    },
  };
}

/** Real GRPO given only the real steps S2R's real phase gets: what those steps buy alone. */
function realS2rStepsRow(
  ctx: Context,
  env: string,
  options: ExperimentOptions,
  base: TrainConfig,
  add: (made: Job[]) => number[],
): PlannedAblation {
  const realBudget = Math.round(base.s2rRealFraction * base.realStepBudget);
  const changes: Partial<TrainConfig> = { mode: 'real', realStepBudget: realBudget };
  const real = seedList(options).map((seed) =>
    trainJob(
      ctx,
      `${env} real GRPO, S2R's ${realBudget} real steps, seed ${seed}`,
      rowConfig(env, options, seed, { algo: 'grpo', ...changes }),
      splitOf(options),
    ),
  );
  return {
    id: 'real-s2r-steps',
    label: "Real GRPO with S2R's real steps only (no dream)",
    changes,
    how: 'run',
    jobs: add(real),
  };
}

function llmPriorRow(engine: EngineKind): PlannedAblation {
  return {
    id: 'no-llm-prior',
    label: 'w/o LLM action prior',
    changes: { llmPrior: false },
    how: 'n/a',
    why:
      engine === 'oracle'
        ? 'there is no LLM here (noisy oracle), so there is no LLM prior to remove'
        : "the trainer's policy has no LLM action prior (β·prior term off), so there is nothing to remove",
  };
}

function assembleAblations(
  rows: PlannedAblation[],
  outcomes: JobOutcome[],
  seeds: number[],
  model: string,
): RowResult[] {
  const results: RowResult[] = [];
  for (const row of rows) {
    const real = row.changes.mode === 'real';
    const base = {
      id: row.id,
      label: row.label,
      mode: real ? ('real' as const) : ('dream' as const),
      algo: 'grpo' as const,
      ...(real ? {} : { experienceModel: model }),
      changes: row.changes,
    };
    if (row.how === 'run') {
      const picked = row.jobs.map((i) => (row.phase === 'dream' ? outcomes[i].dreamPhase! : outcomes[i]));
      const note = row.phase
        ? 'the S2R GRPO runs of Table 1 (same seeds), read at the end of their dream phase'
        : row.model && `dreams with the ${row.model}, trained by the same recipe with the part removed`;
      const own = row.model ? { experienceModel: row.model } : {};
      results.push(rowFrom({ ...base, ...own, kind: 'train', ...(note ? { note } : {}) }, picked, seeds));
    } else if (row.how === 'inert') {
      const full = results.find((r) => r.id === 'full')!;
      const ignored = Object.keys(row.changes).join(', ');
      const note = `identical to the full row by construction: the noisy oracle ignores ${ignored} (not re-run)`;
      results.push({ ...full, ...base, kind: 'train', sameAs: 'full', wallSeconds: stat(seeds.map(() => 0)), note });
    } else {
      const none = stat([]);
      const empty = { success: none, score: none, realSteps: none, dreamSteps: none, wallSeconds: none };
      results.push({ ...base, kind: 'not-applicable', ...empty, seeds, note: `not applicable: ${row.why}` });
    }
  }
  return results;
}

function pessimismNotes(options: ExperimentOptions): string[] {
  return [
    'Every row: dream GRPO (zero real training steps), evaluated on the same held-out real tasks; Δ is the change ' +
      'in held-out success against the full row, in percentage points.',
    splitNote(options),
    'The full row is the dream of config.ts defaults: a verdict ensemble of 5 (a success pays only where every ' +
      'member grants it), the halt at quantile 0.99 of held-out real steps (0.9 for successes) with offers backed ' +
      "by data and 3 redraws, and half of each iteration's tasks begun at a real state for at most 10 steps.",
    'An ensemble row uses the first N of the verdict members the model stores. The halt rows move the success ' +
      'quantile, the threshold that decides which claimed successes are unlike every real one.',
    'The hand-written rules the pessimism replaced are code, not a setting: they are measured at their own ' +
      'commit (docs/results/honest-dream.md), not here.',
    ...(options.quick ? ['QUICK run (--quick): few iterations and held-out tasks; a smoke test, not a result.'] : []),
  ];
}

function table2Notes(options: ExperimentOptions, engine: EngineKind): string[] {
  if (options.ablations === 'pessimism') return pessimismNotes(options);
  const oracle = engine === 'oracle';
  const prompt =
    engine === 'learned'
      ? 'For the learned experience model, the plain retrieval and history rows change what it is shown at dream ' +
        'time only (the model was trained with its own k and H): how far the dream leans on them. The ' +
        '"trained and dreamed" rows dream with a model trained with k = 0 (H = 0) by the base model\'s recipe ' +
        "(its manifest's network, format, seed and epochs; default fit settings): the model without the part. " +
        'It writes no reasoning step, so that row is not applicable. The full row is the verdict head ' +
        "judging the generator's pages."
      : "The retrieval, reasoning and history ablations change the LLM experience model's prompt " +
        '(retrieved transitions, the reasoning step, the recent history).';
  return [
    'Every row but the last: dream GRPO (zero real training steps), evaluated on the same held-out real tasks; ' +
      'Δ is the change in held-out success against the full row, in percentage points.',
    "The last row is real GRPO given only the real steps S2R's real phase gets (s2rRealFraction × the real " +
      'budget), with no dream: what those steps buy alone.',
    splitNote(options),
    oracle
      ? `With the noisy oracle (${llmSpecLabel(options.llm)}) the retrieval, reasoning and history ablations change nothing: retrieved buffer transitions, the reasoning step and the recent history only feed an LLM experience model's prompt, and the oracle reads none of them. Those rows repeat the full row${options.rerunInertAblations ? ' (re-run here: the numbers are identical)' : ' (not re-run)'}; to measure them, run with --llm openai:BASE_URL#MODEL.`
      : prompt,
    "w/o verdict head: a learned model's endings and rewards come from its generator alone (verdictHead = false).",
    oracle
      ? '"w/o LLM prior" is not applicable without an LLM: there is no prior to remove.'
      : '"w/o LLM prior" is not applicable: the trainer\'s policy runs without an LLM action prior.',
    'The curriculum ablation is real for every experience model: without it the tasks come from the fixed pool.',
    "The paper's Table 2 has no history row; history is ablated only in its quality study (Fig. 4).",
    ...(options.quick ? ['QUICK run (--quick): few iterations and held-out tasks; a smoke test, not a result.'] : []),
  ];
}

export async function runTable2(options: ExperimentOptions, deps: ExperimentDeps = {}): Promise<TableResult> {
  const ctx = new Context(deps);
  const plan = planTable2(ctx, options);
  return plan.assemble(await runJobs(ctx, plan.jobs));
}
