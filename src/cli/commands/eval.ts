/**
 * `dreamgym eval`: a run's checkpoint played on held-out real tasks; and the evaluations a training run ends
 * with (train, train --mode sft), as summary.json and `eval --json` write them.
 */
import { initBackend } from '../../core/tfjs/backend';
import type { Trainer } from '../../core/train/loop';
import type { EvalResult, EvalSplit } from '../../core/train/evaluate';
import { UsageError, type CommandSpec, type ParsedArgs } from '../args';
import { BACKEND_OPTION, jsonOption } from '../common-options';
import { printJsonLast, round } from '../output';
import { SPLIT_OPTION } from './train-options';
import { loadRunAgent } from './run-folder';

export const evalCommand: CommandSpec = {
  name: 'eval',
  summary: "evaluate a run's checkpoint on held-out real tasks",
  usage: 'dreamgym eval --run DIR [--episodes N] [--split dev|test] [--json]',
  options: {
    run: { type: 'string', description: 'run folder written by train' },
    split: SPLIT_OPTION,
    episodes: { type: 'integer', description: 'held-out tasks', default: 200, min: 1, max: 100_000 },
    backend: BACKEND_OPTION,
    json: jsonOption('the result'),
  },
};

export async function runEval(args: ParsedArgs): Promise<void> {
  const o = args.options as {
    run?: string;
    episodes: number;
    split: EvalSplit;
    backend: 'wasm' | 'cpu';
    json?: boolean;
  };
  if (!o.run) throw new UsageError('eval needs --run DIR (a folder written by train).', evalCommand);
  await initBackend(o.backend);
  const agent = await loadRunAgent(o.run);
  const { trainer } = agent;
  const evaluation = await trainer.source.evaluate(trainer.policy, o.episodes, o.split).finally(() => agent.close());
  const { config, iteration } = agent.trainer;
  const result = {
    run: o.run,
    preset: config.preset,
    algo: config.algo,
    iteration,
    eval: evalSummary(evaluation),
  };
  if (o.json) printJsonLast(result);
  else
    console.log(
      `${o.run}: held-out success ${result.eval.success}, score ${result.eval.score} ` +
        `over ${result.eval.episodes} tasks of the ${result.eval.split} split`,
    );
}

/**
 * The run's own final evaluation (dev: the last iteration made it; a run resumed already finished
 * had none) and, with split test, one on the test tasks, made here after training is over.
 */
export async function finalEvaluations(
  trainer: Trainer,
  split: EvalSplit,
): Promise<{ evaluation: EvalResult; dev: EvalResult }> {
  const episodes = trainer.config.finalEvalEpisodes;
  const dev = trainer.finalEvaluation?.result ?? (await trainer.evaluate(episodes));
  const evaluation = split === 'dev' ? dev : await trainer.source.evaluate(trainer.policy, episodes, split);
  return { evaluation, dev };
}

/** An evaluation as summary.json and `eval --json` write it: its split, rounded rates and its task count. */
export function evalSummary(e: EvalResult): { split: EvalSplit; success: number; score: number; episodes: number } {
  return { split: e.split, success: round(e.success), score: round(e.score), episodes: e.episodes };
}
