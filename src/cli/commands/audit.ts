/**
 * `dreamgym audit`: the experience model's fidelity on N held-out real transitions (seeds ≥ 1e9,
 * expert and random episodes mixed): validity agreement, reward accuracy (1 − ε̂_R, on the
 * outcome-bearing steps), terminated accuracy, admissible-set Jaccard, observation token-F1,
 * invalid-answer rate, tokens and ms per transition. See src/core/experience/audit.ts.
 */
import { auditDetailed, type AuditRecord } from '../../core/experience/audit';
import { predictedOutcome } from '../../core/experience/types';
import { recordGreedyEpisode } from '../../core/train/evaluate';
import { loadRunAgent } from './run-folder';
import { formatLlmSpec } from '../../core/llm/spec';
import type { CommandSpec, ParsedArgs } from '../args';
import { printJsonLast, progressBar, terminalSafe } from '../output';
import { ENV_MODEL_USAGE, envModelFromOptions, envModelOptions, type EnvModelValues } from '../experience-options';
import { DreamGymError } from '../../core/errors';

export const auditCommand: CommandSpec = {
  name: 'audit',
  summary:
    'measure an experience model against the real env on held-out transitions (reward accuracy, Jaccard, F1, cost)',
  usage:
    'dreamgym audit --env E --llm oracle:EPS_R,EPS_P|openai:BASE_URL#MODEL|learned:PATH ' +
    `[--n N] [--seed S] [--agent RUN_DIR] [--mistakes M] ${ENV_MODEL_USAGE}`,
  options: envModelOptions(
    {
      n: { type: 'integer', description: 'held-out transitions audited', default: 400, min: 1, max: 100_000 },
      seed: { type: 'integer', description: 'seed of the held-out episodes and of the draws', default: 0, min: 0 },
      agent: {
        type: 'string',
        description:
          'a run folder: its trained agent plays the audited episodes (the states a dream-trained policy reaches) instead of the expert and a random policy',
      },
      mistakes: {
        type: 'integer',
        description:
          'also print the first M outcome steps whose predicted outcome is wrong (instruction, actions, real score, predicted reward)',
        default: 0,
        min: 0,
        max: 10_000,
      },
    },
    'print the audit as JSON on the last line',
  ),
};

export async function runAudit(args: ParsedArgs): Promise<void> {
  const o = args.options as EnvModelValues & { n: number; agent?: string; mistakes: number };
  const { envId, llm, settings, model } = await envModelFromOptions(o, auditCommand);
  const agent = o.agent ? await loadRunAgent(o.agent) : null;
  const bar = progressBar(`audit ${envId}`);
  const details = await auditDetailed(model, {
    envId,
    n: o.n,
    seed: o.seed,
    llm: formatLlmSpec(llm),
    maxFailures: settings.llmMaxFailures,
    ...(agent
      ? {
          player: {
            name: 'agent',
            play: (env, task, seed) => recordGreedyEpisode(agent.trainer.policy, env, task, seed),
          },
        }
      : {}),
    onProgress: (done, total) => bar.update(done, total),
  }).finally(() => agent?.close());
  bar.end();
  const r = details.report;
  if (o.mistakes > 0) console.log(formatMistakes(details.records, o.mistakes));
  // The report is printed either way; a model with no usable answer then fails the command.
  const unusable = details.records.every((x) => !x.predicted.valid)
    ? new UnusableModelError(model.label, details.records.length, r.failed_calls ?? 0)
    : null;
  if (o.json) {
    printJsonLast(r);
    if (unusable) throw unusable;
    return;
  }
  const pct = (x: number | null) => (x === null ? 'n/a' : x.toFixed(4));
  console.log(
    [
      `${terminalSafe(model.label)} on ${envId}: ${r.n} held-out transitions ${agent ? `of the agent of ${terminalSafe(o.agent!)} ` : ''}(${details.outcomeSteps} outcome-bearing, ${details.probes} inadmissible probes)`,
      `  valid agreement       ${pct(r.valid_agreement)}`,
      `  reward accuracy       ${pct(r.reward_accuracy)}   (1 − ε̂_R, outcome-bearing steps; all steps: ${pct(details.rewardAccuracyAllSteps)})`,
      `  terminated accuracy   ${pct(r.terminated_accuracy)}`,
      `  admissible Jaccard    ${pct(r.admissible_jaccard)}`,
      `  observation token-F1  ${pct(r.observation_f1)}`,
      `  invalid answers       ${pct(r.invalid_rate)}   (${r.failed_calls} failed engine calls among them)`,
      `  per transition        ${r.tokens_per_transition} tokens, ${r.ms_per_transition} ms`,
    ].join('\n'),
  );
  if (unusable) throw unusable;
}

/** An experience model that answered, but never usably: no figure of it means anything (audit, dream). */
export class UnusableModelError extends DreamGymError {
  constructor(label: string, answers: number, failedCalls: number) {
    super(
      `${label}: none of its ${answers} answers was usable (${failedCalls} failed engine calls), ` +
        "so it has nothing to dream with. For a learned model, re-make it ('npm run models') " +
        "or train it again ('dreamgym expmodel train'); for a server, check that it serves a chat model " +
        'that follows the prompt. Then audit it again.',
      {
        code: 'unusable-model',
        fix: 'Re-make or retrain a learned model, or check that the server serves a chat model that follows the prompt; then audit it again.',
      },
    );
    this.name = 'UnusableModelError';
  }
}

/** The wrong outcome calls, counted by direction, and the first `limit` of them spelled out. */
export function formatMistakes(records: readonly AuditRecord[], limit: number): string {
  const wrong = records.filter(
    (x) => x.outcomeStep && x.predicted.valid && predictedOutcome(x.predicted) !== (x.real.success ? 1 : 0),
  );
  const falseSuccess = wrong.filter((x) => !x.real.success).length;
  const lines = [
    `wrong outcomes: ${wrong.length} of ${records.filter((x) => x.outcomeStep).length} outcome steps — ` +
      `${falseSuccess} called a success that really failed, ${wrong.length - falseSuccess} called a failure that really succeeded`,
  ];
  for (const x of wrong.slice(0, limit)) {
    lines.push(
      `  episode ${x.episodeSeed} (${terminalSafe(x.policy)}), step ${x.stepIndex}: ${terminalSafe(x.instruction)}`,
      `    actions: ${[...x.history, x.action].map((a) => terminalSafe(a)).join(' → ')}`,
      `    real: score ${x.real.reward.toFixed(2)}, ${x.real.success ? 'success' : 'failure'}; predicted: reward ${+x.predicted.reward.toFixed(3)}${x.predicted.success !== undefined ? `, ${x.predicted.success ? 'success' : 'failure'}` : ''}`,
    );
  }
  return lines.join('\n');
}
