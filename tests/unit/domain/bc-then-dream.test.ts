/**
 * The agent of an imported domain (issue 45, item 2): behaviour cloning on the training episodes,
 * then the dream, stopped by the dream's own health (never by a real evaluation). On a synthetic
 * application with its own verbs (synthetic.ts): BC reaches the demonstrations' actions on the
 * training states; an unhealthy dream (a model that fails its audit, or whose dream ends every
 * episode at once) returns the BC checkpoint and says why; with the dream only, there is none to
 * return and the result says so.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { demonstrations } from '../../../src/core/domain/clone';
import type { DomainTrainConfig } from '../../../src/core/domain/config';
import { buildDomain, type Domain } from '../../../src/core/domain/domain';
import { restoreDomainAgent, seedDomainBuffer, trainDomain } from '../../../src/core/domain/trainer';
import { initBackend } from '../../../src/core/tfjs/backend';
import { sftAccuracy, sftExamples } from '../../../src/core/train/sft';
import { domainModel, SCRIPTED_LLM as LLM } from './fixtures';
import { crateYard, crateYardChat } from './synthetic';

beforeAll(async () => {
  await initBackend('wasm');
});

const STEP_LIMIT = 4;
const base: Partial<DomainTrainConfig> & Pick<DomainTrainConfig, 'llm'> = {
  llm: LLM,
  bcEpochs: 40,
  bcLearningRate: 0.03,
  iterations: 5,
  tasksPerIteration: 2,
  groupSize: 2,
  stepLimit: STEP_LIMIT,
  evalEpisodes: 3,
  auditTransitions: 12,
};

async function run(domain: Domain, config: Partial<DomainTrainConfig>) {
  const buffer = await seedDomainBuffer(domain);
  const model = await domainModel(crateYardChat(), domain, { buffer, k: 1, history: 1 });
  return trainDomain(domain, model, { ...base, ...config }, { buffer, now: () => 0 });
}

/** The saved checkpoint's agreement with the demonstrated actions of the training states. */
async function checkpointAgreement(domain: Domain, checkpoint: Parameters<typeof restoreDomainAgent>[1]) {
  const trainer = await restoreDomainAgent(domain, checkpoint, STEP_LIMIT);
  try {
    const { episodes } = demonstrations(domain);
    const examples = sftExamples(episodes, [...new Set(episodes.map((t) => t.source))], STEP_LIMIT);
    return sftAccuracy(trainer.policy, examples);
  } finally {
    trainer.dispose();
  }
}

describe('behaviour cloning, then the dream, on a synthetic domain', () => {
  const domain = buildDomain('crateyard', crateYard(2, 3), { seed: 0 });

  it("BC alone reaches the demonstrations' actions on the training states, and returns its checkpoint", async () => {
    const result = await run(domain, { agent: 'bc' });
    expect(result.bc).toMatchObject({ demonstrations: 'successes' });
    expect(result.bc!.episodes).toBe(domain.train.filter((t) => t.result.success).length);
    expect(result.bc!.examples).toBe(2 * result.bc!.episodes); // two demonstrated steps each
    expect(result.bc!.accuracyBefore).toBeLessThan(result.bc!.accuracy); // cloning taught it something
    expect(result.bc!.accuracy).toBe(1);
    expect(result.agent).toMatchObject({ trained: 'bc', returned: 'bc', dreamIterations: 0, stoppedAt: null });
    expect(result.iterations).toEqual([]);
    expect(result.dreamSteps).toBe(0);
    expect(await checkpointAgreement(domain, result.checkpoint)).toBe(1);
  }, 120_000);

  it('a model that fails its audit is never dreamed in: BC is returned, and the model failed', async () => {
    const result = await run(domain, {});
    expect(result.evaluation.audit.terminated_accuracy).toBeLessThan(0.9);
    expect(result.agent).toMatchObject({ trained: 'bc-then-dream', returned: 'bc', dreamIterations: 0 });
    expect(result.agent.reason).toMatch(
      /failed before any dream \(terminated-accuracy\).*behaviour-cloning checkpoint/,
    );
    expect(result.iterations).toEqual([]);
    expect(result.health.status).toBe('failed');
    expect(await checkpointAgreement(domain, result.checkpoint)).toBe(1);
  }, 120_000);

  it('a dream that ends every episode at once is stopped, and the BC checkpoint is returned as it was', async () => {
    // No audit (0 transitions): only the dream's own health can stop it.
    const stopped = await run(domain, { auditTransitions: 0 });
    expect(stopped.iterations).toHaveLength(2); // of 5: stopped when two iterations in a row were unhealthy
    expect(stopped.agent).toMatchObject({ returned: 'bc', dreamIterations: 2, stoppedAt: 2 });
    expect(stopped.agent.reason).toMatch(/turned unhealthy at iteration 2 \(first-step\)/);
    expect(stopped.health.status).toBe('failed');
    expect(stopped.health.problems.map((p) => p.kind)).toContain('first-step');
    // The returned weights are the cloned ones, not the dream's: equal to a BC-only run of the same seed.
    const cloned = await run(domain, { agent: 'bc', auditTransitions: 0 });
    expect(stopped.checkpoint.policy.tensors).toEqual(cloned.checkpoint.policy.tensors);
  }, 180_000);

  it("with a KL term the dream's reference is the cloned policy, not the untrained one", async () => {
    const result = await run(domain, { auditTransitions: 0, klCoef: 0.5 });
    expect(result.iterations.length).toBeGreaterThan(0);
    // The first update starts at the reference: KL(π ‖ π_ref) is about 0. An untrained reference is far from
    // the cloned policy (its agreement went from about a half to 1), so the KL would be large.
    const kl = result.iterations[0].metrics['losses/ref_kl'];
    expect(kl).toBeGreaterThanOrEqual(0);
    expect(kl).toBeLessThan(0.05);
    const dreamOnly = await run(domain, { agent: 'dream', auditTransitions: 0, klCoef: 0.5 });
    expect(dreamOnly.iterations[0].metrics['losses/ref_kl']).toBeUndefined(); // no reference to keep near
  }, 180_000);

  it('with the dream only there is no BC checkpoint: the stopped dream says so', async () => {
    const result = await run(domain, { agent: 'dream', auditTransitions: 0 });
    expect(result.bc).toBeNull();
    expect(result.iterations).toHaveLength(2);
    expect(result.agent).toMatchObject({ trained: 'dream', returned: 'dream', stoppedAt: 2 });
    expect(result.agent.reason).toMatch(/\(first-step\).*no behaviour-cloning checkpoint/);
  }, 120_000);
});
