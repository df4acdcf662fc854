/**
 * Plain logic of the Domains page's path after the import (no Svelte; unit-tested in Node): the
 * settings of a domain's experience model and agent, and what the page shows of each step in
 * words — the pairs account (core's describePairAccount, the CLI's line), the audit's OK or FAILED
 * with its reasons, each agent's returned checkpoint and why, the two agents side by side, and one
 * plain sentence of what the whole path got. Every text is plain text, never HTML.
 */
import { domainEnvId } from '../../../core/domain/domain';
import type { DomainEvaluation } from '../../../core/domain/evaluate';
import { describePairAccount } from '../../../core/experience/learned/sft-data';
import type { TrainingRecord } from '../../../core/experience/learned/model-file';
import type { AgentSettings, StoredDomainAudit, TrainedAgent } from '../../workers/domain/domain-protocol';
import { defaultSettings, TINY_SETTINGS, type ExpModelSettings, type ModelSize } from '../model/expmodel-settings';

/** The model a domain's page trains: learned:local/<domain>-model. */
export function domainModelName(domain: string): string {
  return `${domain}-model`;
}

/** The experience model's settings for a domain (the Experience model page's, smaller by default: few episodes). */
export function domainModelSettings(
  domain: string,
  size: ModelSize = 'small',
  inferredLists = false,
): ExpModelSettings {
  const base = defaultSettings(domainEnvId(domain));
  return {
    ...base,
    // Lists the import inferred are not modelled, and no examples are retrieved (the CLI's default too).
    ...(inferredLists ? { k: 0 } : {}),
    ...(size === 'tiny' ? TINY_SETTINGS : { size }),
    name: domainModelName(domain),
    episodes: 0, // every training episode of the domain
    epochs: size === 'tiny' ? 1 : 4,
    audit: 0,
    samples: 0,
  };
}

/** The agent's settings the page starts with (core's defaults, config.ts, but for a page's patience). */
export const DEFAULT_AGENT_SETTINGS: Omit<AgentSettings, 'agent'> = {
  bcEpochs: 20,
  iterations: 5,
  tasksPerIteration: 4,
  groupSize: 4,
  evalEpisodes: 10,
  auditTransitions: 20,
  seed: 0,
};

/** The pairs line exactly as `dreamgym expmodel train` prints it ("data: …"); null: a model from before accounts. */
export function pairsLine(training: Pick<TrainingRecord, 'data'>): string | null {
  return training.data.account ? `data: ${describePairAccount(training.data.account)}` : null;
}

const show = (x: number | null, digits = 3) => (x === null ? 'n/a' : x.toFixed(digits));

export interface AuditView {
  status: 'OK' | 'FAILED';
  /** The figures, one a line. */
  figures: string[];
  problems: { severity: 'failed' | 'warning'; message: string }[];
  /** When, and of which model. */
  of: string;
}

/** The kept audit of a model in words: OK or FAILED, the figures it was judged on, every reason. */
export function auditView(a: StoredDomainAudit): AuditView {
  const { audit, dream, verdict } = a;
  const figures = [
    `terminated accuracy ${show(audit.terminated_accuracy)} on ${audit.terminated_known} held-out transitions ` +
      '(at least 0.9 needed)',
    `first-step endings ${show(dream.first_step_share, 2)} of ${dream.episodes} held-out dreamed episodes ` +
      `(under 0.5 allowed; mean length ${show(dream.mean_length, 2)})`,
    verdict
      ? `verdict head: balanced accuracy ${verdict.balancedAccuracy.toFixed(3)} on ${verdict.successes} successful ` +
        `and ${verdict.failures} failed endings (0.5 is chance)`
      : 'no verdict head: the generator judges endings',
    `reward accuracy ${show(audit.reward_accuracy)} (${audit.outcome_steps} outcome steps), observation F1 ` +
      `${show(audit.observation_f1)}, admissible Jaccard ${show(audit.admissible_jaccard)}, invalid answers ` +
      `${show(audit.invalid_rate, 2)}`,
  ];
  return {
    status: a.health.status === 'failed' ? 'FAILED' : 'OK',
    figures,
    problems: a.health.problems.map((p) => ({ severity: p.severity, message: p.message })),
    of: `learned:local/${a.model}, audited ${new Date(a.auditedAt).toLocaleString()}`,
  };
}

export const AGENT_LABELS: Record<AgentSettings['agent'], string> = {
  bc: 'Behaviour cloning alone',
  'bc-then-dream': 'Behaviour cloning, then the dream',
  dream: 'The dream alone',
};

export interface AgentView {
  label: string;
  /** 'FAILED' when the model failed a check on this run (never a success). */
  status: 'OK' | 'FAILED';
  /** The checks in words: 'FAILED', 'OK', or 'OK, 2 warnings'. */
  checks: string;
  returned: string;
  reason: string;
  rows: { key: string; label: string; value: string }[];
  problems: string[];
}

function agreementText(e: DomainEvaluation): string {
  const a = e.agreement;
  return `${show(a.agreement)} on ${a.usable_steps} of ${a.held_out_steps} held-out steps (chance ${show(a.chance)})`;
}

/** One trained agent in words: which checkpoint it returned and why, and its figures. */
export function agentView(t: TrainedAgent): AgentView {
  const e = t.evaluation;
  const bc = t.bc;
  const status = t.health.status === 'failed' ? 'FAILED' : 'OK';
  const warnings = t.health.problems.filter((p) => p.severity === 'warning').length;
  return {
    label: AGENT_LABELS[t.settings.agent],
    status,
    checks: status === 'OK' && warnings > 0 ? `OK, ${warnings} warning${warnings === 1 ? '' : 's'}` : status,
    returned: t.agent.returned === 'bc' ? 'the behaviour-cloning checkpoint' : 'the dream-trained policy',
    reason: t.agent.reason,
    rows: [
      {
        key: 'bc',
        label: 'Behaviour cloning',
        value: bc
          ? `${bc.examples} demonstrated steps of ${bc.episodes} ` +
            `${bc.demonstrations === 'successes' ? 'successful ' : ''}training episodes, ${bc.epochs} epochs; ` +
            `agreement on them ${show(bc.accuracyBefore)} → ${show(bc.accuracy)}`
          : 'none (the dream alone)',
      },
      {
        key: 'dream',
        label: 'Dream',
        value:
          t.iterations === 0
            ? 'not dreamed in'
            : `${t.iterations} of ${t.settings.iterations} iterations, ${t.dreamSteps} dreamed steps` +
              (t.agent.stoppedAt !== null ? `, stopped at iteration ${t.agent.stoppedAt}` : ''),
      },
      { key: 'agreement', label: 'Action agreement', value: agreementText(e) },
      {
        key: 'dream-success',
        label: 'Dream success',
        value:
          `${show(e.dream.success_rate)} on ${e.dream.episodes} held-out tasks (judged by the model: ` +
          `${t.health.status === 'failed' ? 'it FAILED, so this is no success' : 'no real env checks it'})`,
      },
    ],
    problems: t.health.problems.map((p) => `${p.severity === 'failed' ? 'FAILED' : 'warning'}: ${p.message}`),
  };
}

/**
 * What the whole path got, in one plain sentence (issue 45: at 40 episodes the page says plainly what
 * it got): the data, the model's audit, and the agents' returned checkpoints and agreement.
 */
export function plainSummary(
  trainEpisodes: number,
  audit: StoredDomainAudit | null,
  agents: readonly TrainedAgent[],
): string {
  const cloned = agents.find((t) => t.bc)?.bc;
  const which = cloned?.demonstrations === 'successes' ? 'successful ones' : 'of them, none recording a success,';
  const demos = cloned ? ` (${cloned.episodes} ${which} cloned)` : '';
  const parts = [
    `From ${trainEpisodes} training episodes${demos}`,
    audit
      ? `the experience model ${audit.health.status === 'failed' ? 'FAILED its audit' : 'passed its audit'}` +
        (audit.health.status === 'failed'
          ? ` (${audit.health.problems
              .filter((p) => p.severity === 'failed')
              .map((p) => p.kind)
              .join(', ')})`
          : '')
      : 'the experience model is not audited yet',
  ];
  for (const t of agents) {
    const a = t.evaluation.agreement;
    parts.push(
      `${AGENT_LABELS[t.settings.agent].toLowerCase()} returned ${agentView(t).returned}, ` +
        `agreeing with ${show(a.agreement, 2)} of the held-out demonstrated actions (chance ${show(a.chance, 2)})`,
    );
  }
  if (agents.length === 0) parts.push('no agent is trained yet');
  const dreamed = agents.find((t) => t.settings.agent !== 'bc');
  if (dreamed && dreamed.agent.returned === 'bc')
    parts.push('the dream did not help: its agent is the behaviour-cloning one');
  return `${parts.join('; ')}.`;
}

/** The file names a download gets (the domain's name leads). */
export function downloadNames(domain: string, agent?: AgentSettings['agent']) {
  return {
    modelManifest: `${domain}-model.json`,
    modelWeights: `${domain}-model.weights.bin`,
    agentManifest: `${domain}-${agent ?? 'agent'}.checkpoint.json`,
  };
}
