/**
 * Cross-domain transfer (the paper's Fig. 3): a policy dreamed in one env, evaluated in every env's
 * real held-out tasks, with the random policy of each env for reference.
 */
import { llmSpecLabel, parseLlmSpec } from '../llm/spec';
import { stat } from '../train/stats';
import { baselineJob, trainJob } from './jobs';
import { Context, runJobs } from './runner';
import { baseConfig, checkOptions, computeSeconds, rowConfig, seedList, setupOf, splitNote, splitOf } from './setup';
import {
  ExperimentError,
  type ExperimentDeps,
  type ExperimentOptions,
  type Job,
  type JobOutcome,
  type Plan,
  type Stat,
  type TransferResult,
} from './types';

export function planTransfer(ctx: Context, options: ExperimentOptions): Plan<TransferResult> {
  checkOptions(options);
  if (options.envs.length < 2)
    throw new ExperimentError(`Cross-domain transfer needs at least two environments; got ${options.envs.join(', ')}.`);
  const seeds = seedList(options);
  const split = splitOf(options);
  const label = llmSpecLabel(options.llm);
  const targets = options.envs.map((env) => baseConfig(env, options));
  const jobs: Job[] = [];
  for (const target of targets) for (const seed of seeds) jobs.push(baselineJob(ctx, 'random', target, seed, split));
  for (const source of options.envs) {
    for (const seed of seeds) {
      const config = rowConfig(source, options, seed, { mode: 'dream', algo: 'grpo', curriculum: true });
      jobs.push(
        trainJob(
          ctx,
          `${source} dream GRPO [${label}] seed ${seed}, evaluated in every env`,
          config,
          split,
          targets.filter((t) => t.env !== source),
        ),
      );
    }
  }
  return {
    jobs,
    assemble(outcomes) {
      let at = 0;
      const random = { success: {} as Record<string, Stat>, score: {} as Record<string, Stat> };
      for (const target of targets) {
        const slice = outcomes.slice(at, at + seeds.length);
        at += seeds.length;
        random.success[target.env] = stat(slice.map((o) => o.success));
        random.score[target.env] = stat(slice.map((o) => o.score));
      }
      const rows = options.envs.map((source) => {
        const slice = outcomes.slice(at, at + seeds.length);
        at += seeds.length;
        const success: Record<string, Stat> = {},
          score: Record<string, Stat> = {};
        for (const target of targets) {
          const pick = (o: JobOutcome) =>
            target.env === source ? { success: o.success, score: o.score } : o.elsewhere![target.env];
          success[target.env] = stat(slice.map((o) => pick(o).success));
          score[target.env] = stat(slice.map((o) => pick(o).score));
        }
        return {
          trainedIn: source,
          label: `dream GRPO trained in ${source} [${label}]`,
          success,
          score,
          dreamSteps: stat(slice.map((o) => o.dreamSteps)),
        };
      });
      return {
        split,
        llm: options.llm,
        experienceModel: label,
        seeds,
        quick: !!options.quick,
        targets: targets.map((t) => setupOf(t, split)),
        rows,
        random,
        notes: transferNotes(options),
        computeSeconds: computeSeconds(outcomes),
      };
    },
  };
}

function transferNotes(options: ExperimentOptions): string[] {
  return [
    'Each policy is trained only in the dream of its source env (dream GRPO, zero real steps), then evaluated greedily on the held-out real tasks of every env; the diagonal is in-domain, the rest is cross-domain transfer. The random policy is shown for reference.',
    splitNote(options),
    'The candidate-scoring policy sees only generic text features of (instruction, observation, candidate action), so it can run in any env; but the two envs share almost no action vocabulary or task structure, so little is expected to carry over, and a transfer result near zero (or near random) is the honest outcome, not a bug.',
    'The paper (§7.4) reports transfer between its two web domains and a significant drop when the gap is as large as web → ALFWorld; webshop-lite ↔ household is that large-gap case.',
    ...(parseLlmSpec(options.llm).kind === 'oracle'
      ? [`The dream is the noisy oracle (${llmSpecLabel(options.llm)}), a control instrument, not a learned model.`]
      : []),
    ...(options.quick ? ['QUICK run (--quick): few iterations and held-out tasks; a smoke test, not a result.'] : []),
  ];
}

export async function runTransfer(options: ExperimentOptions, deps: ExperimentDeps = {}): Promise<TransferResult> {
  const ctx = new Context(deps);
  const plan = planTransfer(ctx, options);
  return plan.assemble(await runJobs(ctx, plan.jobs));
}
