/**
 * The audit of a domain's experience model alone (the Domains page's Audit button): the checks of
 * `domain train` that need no agent, so the page's OK or FAILED is the CLI's. On the synthetic
 * application of synthetic.ts, whose scripted model ends every episode at once and judges endings
 * unlike the records.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDomain } from '../../../src/core/domain/domain';
import { auditDomainModel } from '../../../src/core/domain/model-audit';
import { seedDomainBuffer } from '../../../src/core/domain/trainer';
import { initBackend } from '../../../src/core/tfjs/backend';
import { domainModel, SCRIPTED_LLM as LLM } from './fixtures';
import { crateYard, crateYardChat } from './synthetic';

beforeAll(async () => {
  await initBackend('wasm');
});

describe('auditDomainModel', () => {
  const domain = buildDomain('crateyard', crateYard(2, 3), { seed: 0 });
  const audit = async (options: {
    auditTransitions: number;
    verdict?: Parameters<typeof auditDomainModel>[2]['verdict'];
  }) => {
    const buffer = await seedDomainBuffer(domain);
    const model = await domainModel(crateYardChat(), domain, { buffer, k: 1, history: 1 });
    return auditDomainModel(model, domain, { llm: LLM, evalEpisodes: 3, seed: 0, stepLimit: 4, ...options });
  };

  it('fails a model whose endings are unlike the records, and one whose dream ends at the first step', async () => {
    const result = await audit({ auditTransitions: 12 });
    expect(result.audit.n).toBe(12);
    expect(result.audit.terminated_accuracy).toBeLessThan(0.9);
    expect(result.dream.first_step_share).toBeGreaterThanOrEqual(0.5);
    expect(result.health.status).toBe('failed');
    const kinds = result.health.problems.map((p) => p.kind);
    expect(kinds).toEqual(expect.arrayContaining(['terminated-accuracy', 'first-step']));
    // What needs a trained agent is not judged here.
    expect(kinds).not.toContain('near-chance-agreement');
    expect(result.health.problems.find((p) => p.kind === 'terminated-accuracy')!.message).toMatch(/at least 0\.9/);
  }, 120_000);

  it('fails a verdict head at chance, and says it with its figures', async () => {
    const verdict = { successes: 40, failures: 40, balancedAccuracy: 0.48 };
    const result = await audit({ auditTransitions: 0, verdict });
    expect(result.verdict).toEqual(verdict);
    const problem = result.health.problems.find((p) => p.kind === 'verdict-at-chance');
    expect(problem?.severity).toBe('failed');
    expect(problem?.message).toMatch(/balanced accuracy is 0\.480/);
  }, 120_000);
});
