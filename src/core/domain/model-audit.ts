/**
 * The audit of a domain's experience model alone, before any agent is trained on it (the Domains
 * page's Audit button): the same checks `domain train` runs (health.ts `domainHealth`), so a model
 * the CLI calls FAILED is FAILED here too, with the same reasons:
 *   - its verdict head at chance (`verdictProblem`);
 *   - the audit against held-out recorded transitions (evaluate.ts `auditDomain`): terminated
 *     accuracy under `MIN_TERMINATED_ACCURACY`;
 *   - the held-out dream played by the untrained policy a dream-only run starts from: at least
 *     `FIRST_STEP_FAILURE_SHARE` of its episodes ending at their first step.
 * What needs a trained agent (action agreement, transfer) is left out: there is none yet.
 */
import type { ExperienceModel } from '../experience/types';
import type { LlmSpecText } from '../llm/spec';
import type { FeatureSchema } from '../policy/feature-schema';
import type { Domain } from './domain';
import type { DomainAuditReport, DreamSuccessReport } from './evaluate';
import { domainHealth, type DomainHealth, type VerdictFit } from './health';
import { DomainTrainer } from './trainer';

export interface DomainModelAudit {
  /** 'failed' when any check failed (problems say which, with the fix). */
  health: DomainHealth;
  /** (c): the model against held-out recorded transitions. */
  audit: DomainAuditReport;
  /** The held-out dream of an untrained policy (its first-step share is judged). */
  dream: DreamSuccessReport;
  verdict: VerdictFit | null;
}

/** Only what judges the model; the policy-dependent checks wait for an agent. */
const MODEL_CHECKS = new Set(['verdict-at-chance', 'terminated-accuracy', 'unaudited-endings', 'first-step']);

export interface DomainModelAuditOptions {
  /** The model's engine spec (never the oracle: the domain has no real env). */
  llm: LlmSpecText;
  /** Held-out transitions audited and held-out tasks dreamed (at most). */
  auditTransitions: number;
  evalEpisodes: number;
  seed: number;
  stepLimit?: number;
  /** The learned model's verdict head fit (its manifest's `verdict.fittedOn`), where it has one. */
  verdict?: VerdictFit | null;
  featureSchema?: FeatureSchema;
  signal?: AbortSignal;
  onProgress?: (stage: string, done: number, total: number) => void;
}

/** Audits `model` on `domain` as `domain train` judges it before and after a dream. */
export async function auditDomainModel(
  model: ExperienceModel,
  domain: Domain,
  options: DomainModelAuditOptions,
): Promise<DomainModelAudit> {
  const trainer = new DomainTrainer(
    domain,
    model,
    {
      llm: options.llm,
      agent: 'dream',
      seed: options.seed,
      auditTransitions: options.auditTransitions,
      evalEpisodes: options.evalEpisodes,
      ...(options.stepLimit !== undefined ? { stepLimit: options.stepLimit } : {}),
    },
    {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.featureSchema ? { featureSchema: options.featureSchema } : {}),
    },
  );
  try {
    const evaluation = await trainer.evaluate(options.onProgress ? { onProgress: options.onProgress } : {});
    const verdict = options.verdict ?? null;
    const full = domainHealth([], evaluation, [...domain.train, ...domain.heldOut], verdict);
    const problems = full.problems.filter((p) => MODEL_CHECKS.has(p.kind));
    const health: DomainHealth = {
      status: problems.some((p) => p.severity === 'failed') ? 'failed' : 'ok',
      problems,
    };
    return { health, audit: evaluation.audit, dream: evaluation.dream, verdict };
  } finally {
    trainer.dispose();
  }
}
