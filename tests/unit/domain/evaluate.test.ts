/**
 * The evaluation of a domain-trained policy on its own: (c) the audit against held-out recorded
 * transitions (the reward where the record has outcomes, deterministic in the seed) and (b)
 * action agreement counted over usable steps only. (a) and the whole run: trainer.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultStepLimit } from '../../../src/core/domain/config';
import { buildDomain } from '../../../src/core/domain/domain';
import { actionAgreement, auditDomain } from '../../../src/core/domain/evaluate';
import { CandidatePolicy } from '../../../src/core/policy/policy';
import { initBackend } from '../../../src/core/tfjs/backend';
import { domainModel, foreignOurs, scriptedDomainChat } from './fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

const inUnit = (x: number | null) => x === null || (x >= 0 && x <= 1);

describe('evaluation of an imported domain', () => {
  it('audits the reward where the record has outcomes (our format), and agreement counts only usable steps', async () => {
    const domain = buildDomain('myhouse', await foreignOurs(20), { seed: 1 });
    const model = await domainModel(scriptedDomainChat(), domain, { k: 0 });
    const audit = await auditDomain(model, domain, { n: 10, seed: 0 });
    expect(audit.n).toBe(10);
    expect(audit.outcome_steps).toBeGreaterThan(0);
    expect(inUnit(audit.reward_accuracy)).toBe(true);
    expect(audit.terminated_known).toBe(10);
    // deterministic in the seed
    const again = await domainModel(scriptedDomainChat(), domain, { k: 0 });
    expect(await auditDomain(again, domain, { n: 10, seed: 0 })).toEqual(audit);

    const policy = new CandidatePolicy({ seed: 0 });
    const stripped = domain.heldOut.map((t, i) =>
      i === 0 ? { ...t, steps: t.steps.map((s) => ({ ...s, admissible: [] })) } : t,
    );
    const report = await actionAgreement(policy, stripped, { stepLimit: defaultStepLimit(domain) });
    const total = stripped.reduce((s, t) => s + t.steps.length, 0);
    expect(report.held_out_steps).toBe(total);
    expect(report.usable_steps).toBe(total - stripped[0].steps.length);
    const none = await actionAgreement(policy, [stripped[0]], { stepLimit: 10 });
    expect(none).toEqual({
      agreement: null,
      usable_steps: 0,
      held_out_steps: stripped[0].steps.length,
      chance: null,
    });
    policy.dispose();
  });
});
