/**
 * The Domains page's path after the import, its words and its state (fake workers and store): the
 * domain's model settings, the pairs line as the CLI prints it, the audit's OK or FAILED with its
 * reasons, each agent's returned checkpoint and why, the plain sentence of what the path got, and
 * the state that trains, audits, trains both agents and downloads.
 */
import { describe, expect, it } from 'vitest';
import type { DomainHealth } from '../../../src/core/domain/health';
import type { PairAccount } from '../../../src/core/experience/learned/sft-data';
import type { ExpModelClient } from '../../../src/app/workers/expmodel/expmodel-client';
import type { DomainWorkerClient } from '../../../src/app/workers/domain/domain-client';
import type { StoredDomainAudit, TrainedAgent } from '../../../src/app/workers/domain/domain-protocol';
import type { StoredModelSummary } from '../../../src/app/storage/learned-store';
import { settingsProblems } from '../../../src/app/state/model/expmodel-settings';
import {
  agentView,
  auditView,
  DEFAULT_AGENT_SETTINGS,
  domainModelSettings,
  pairsLine,
  plainSummary,
} from '../../../src/app/state/domains/domain-path';
import { DomainPathState } from '../../../src/app/state/domains/domain-path.svelte';

const failed: DomainHealth = {
  status: 'failed',
  problems: [
    { kind: 'terminated-accuracy', severity: 'failed', message: "The audit's terminated accuracy is 0.280 …" },
    { kind: 'unaudited-endings', severity: 'warning', message: 'a warning' },
  ],
};

function storedAudit(health: DomainHealth): StoredDomainAudit {
  return {
    health,
    audit: {
      env: 'byo:shop',
      llm: 'learned:local/shop-model',
      n: 8,
      valid_agreement: 1,
      reward_accuracy: null,
      outcome_steps: 0,
      terminated_accuracy: 0.28,
      terminated_known: 8,
      observation_f1: 0.4,
      with_next_observation: 8,
      admissible_jaccard: null,
      with_next_admissible: 0,
      invalid_rate: 0,
      tokens_per_transition: 10,
      ms_per_transition: 5,
    },
    dream: { episodes: 2, success_rate: 1, mean_return: 1, mean_length: 1, invalid_rate: 0, first_step_share: 1 },
    verdict: null,
    domain: 'shop',
    model: 'shop-model',
    modelSavedAt: 1,
    auditedAt: 2,
  };
}

function trainedAgent(agent: 'bc' | 'bc-then-dream', returned: 'bc' | 'dream', health: DomainHealth): TrainedAgent {
  return {
    domain: 'shop',
    model: 'shop-model',
    settings: { ...DEFAULT_AGENT_SETTINGS, agent },
    agent: {
      trained: agent,
      returned,
      reason: returned === 'bc' ? 'the experience model failed before any dream (terminated-accuracy): …' : 'healthy',
      dreamIterations: 0,
      stoppedAt: null,
    },
    health,
    evaluation: {
      dream: { episodes: 2, success_rate: 1, mean_return: 1, mean_length: 1, invalid_rate: 0, first_step_share: 1 },
      agreement: { agreement: 0.5, usable_steps: 10, held_out_steps: 12, chance: 0.2 },
      audit: storedAudit(health).audit,
    },
    bc: { demonstrations: 'successes', episodes: 7, examples: 30, epochs: 3, accuracyBefore: 0.2, accuracy: 0.8 },
    iterations: 0,
    dreamSteps: 0,
    stepLimit: 10,
    checkpoint: {
      manifest: JSON.stringify({ weights: { file: `shop-${agent}.weights.bin` } }),
      weights: new Uint8Array(8),
    },
  };
}

describe("the path's words", () => {
  it("trains a model of the domain's env id under the domain's name, within the page's rules", () => {
    const s = domainModelSettings('shop', 'tiny');
    expect(s).toMatchObject({ env: 'byo:shop', name: 'shop-model', size: 'tiny', epochs: 1, episodes: 0 });
    expect(settingsProblems(s)).toEqual([]);
    expect(settingsProblems({ ...s, env: 'byo:' })[0]).toMatch(/nor an imported domain/);
    // A domain whose lists were inferred retrieves no examples, as the CLI's expmodel train does.
    expect(domainModelSettings('shop', 'small').k).toBe(4);
    expect(domainModelSettings('shop', 'small', true).k).toBe(0);
  });

  it('prints the pairs account as the CLI does', () => {
    const account: PairAccount = {
      transitions: 60,
      nextPairs: 40,
      initialPairs: 10,
      leftOut: { 'step-limit': 10 },
    } as never;
    expect(pairsLine({ data: { account } } as never)).toMatch(
      /^data: 50 pairs from 60 recorded transitions .*; 10 left out: /,
    );
    expect(pairsLine({ data: {} } as never)).toBeNull();
  });

  it('shows a failed audit as FAILED with every reason and its figures', () => {
    const view = auditView(storedAudit(failed));
    expect(view.status).toBe('FAILED');
    expect(view.figures[0]).toMatch(/^terminated accuracy 0\.280 on 8 held-out transitions \(at least 0\.9 needed\)/);
    expect(view.figures[1]).toMatch(/^first-step endings 1\.00 of 2 held-out dreamed episodes/);
    expect(view.problems).toEqual([
      { severity: 'failed', message: expect.stringMatching(/terminated accuracy is 0\.280/) },
      { severity: 'warning', message: 'a warning' },
    ]);
    expect(auditView(storedAudit({ status: 'ok', problems: [] })).status).toBe('OK');
  });

  it("says which checkpoint an agent returned and why, and never calls a failed model's dream a success", () => {
    const view = agentView(trainedAgent('bc-then-dream', 'bc', failed));
    expect(view).toMatchObject({ label: 'Behaviour cloning, then the dream', status: 'FAILED', checks: 'FAILED' });
    const warned = {
      status: 'ok' as const,
      problems: [{ kind: 'near-chance-agreement' as const, severity: 'warning' as const, message: 'w' }],
    };
    expect(agentView(trainedAgent('bc', 'bc', warned)).checks).toBe('OK, 1 warning');
    expect(view.returned).toBe('the behaviour-cloning checkpoint');
    expect(view.reason).toMatch(/failed before any dream/);
    expect(view.rows.find((r) => r.key === 'dream')!.value).toBe('not dreamed in');
    expect(view.rows.find((r) => r.key === 'dream-success')!.value).toMatch(/it FAILED, so this is no success/);
    expect(view.rows.find((r) => r.key === 'agreement')!.value).toBe('0.500 on 10 of 12 held-out steps (chance 0.200)');
  });

  it('says plainly what the path got', () => {
    const agents = [trainedAgent('bc', 'bc', failed), trainedAgent('bc-then-dream', 'bc', failed)];
    const text = plainSummary(9, storedAudit(failed), agents);
    expect(text).toMatch(
      /^From 9 training episodes \(7 successful ones cloned\); the experience model FAILED its audit \(terminated-accuracy\)/,
    );
    expect(text).toMatch(
      /behaviour cloning alone returned the behaviour-cloning checkpoint, agreeing with 0\.50 .* \(chance 0\.20\)/,
    );
    expect(text).toMatch(/the dream did not help: its agent is the behaviour-cloning one\.$/);
    expect(plainSummary(9, null, [])).toBe(
      'From 9 training episodes; the experience model is not audited yet; no agent is trained yet.',
    );
  });
});

describe('DomainPathState', () => {
  it('trains the model, audits it, trains both agents, and downloads them', async () => {
    const model: StoredModelSummary = { name: 'shop-model', savedAt: 5, epochs: 1 } as StoredModelSummary;
    let stored: StoredModelSummary[] = [];
    let kept: StoredDomainAudit | null = null;
    const saved: string[] = [];
    const expmodel = {
      gone: false,
      train: async (settings: { env: string; name: string }, resume: boolean, onprogress: (p: unknown) => void) => {
        expect(settings).toMatchObject({ env: 'byo:shop', name: 'shop-model', epochs: 2 });
        expect(resume).toBe(false);
        onprogress({ kind: 'checkpoint', epochsDone: 1 });
        stored = [model];
        return {
          outcome: 'finished',
          path: 'local/shop-model',
          summary: model,
          training: { bestValidationLoss: 1, bestEpoch: 1, epochs: [{}], seconds: 3 },
        };
      },
    } as unknown as ExpModelClient;
    const worker = {
      gone: false,
      audit: async (options: { model: string }, onprogress: (p: unknown) => void) => {
        onprogress({ kind: 'stage', text: 'Auditing…' });
        kept = { ...storedAudit(failed), model: options.model };
        return kept;
      },
      trainAgent: async (options: { settings: { agent: 'bc' | 'bc-then-dream' } }) =>
        trainedAgent(options.settings.agent, 'bc', failed),
      suggest: async (options: { episode: number; step: number; agent: TrainedAgent }) => ({
        agent: options.agent.settings.agent,
        episode: options.episode,
        step: options.step,
        suggested: 'go to cart 1',
        recorded: 'go to cart 1',
      }),
    } as unknown as DomainWorkerClient;
    const account = { transitions: 4, nextPairs: 3, initialPairs: 1, leftOut: {} };
    const state = new DomainPathState({
      expmodel: () => expmodel,
      domainWorker: () => worker,
      store: {
        listModels: async () => stored,
        listCheckpoints: async () => [],
        readAudit: async () => kept as never,
        readFiles: async () => ({
          manifest: JSON.stringify({ training: { data: { account } } }),
          weights: new Uint8Array(4),
        }),
        deleteCheckpoint: async () => {},
      },
      save: (name) => saved.push(name),
    });
    await state.open('shop');
    expect(state.model).toBeNull();
    state.epochs = 2;
    await state.trainModel();
    expect(state.error).toBeNull();
    expect(state.stage).toMatch(/^Trained learned:local\/shop-model: best validation loss 1\.000 at epoch 1 of 1/);
    expect(state.model).toEqual(model);
    expect(state.pairs).toBe(
      'data: 4 pairs from 4 recorded transitions (3 next-state pairs, 1 first-state pairs); none left out',
    );

    await state.auditModel();
    expect(state.audit?.health.status).toBe('failed');
    expect(state.stage).toBe('Audited learned:local/shop-model: FAILED.');

    await state.trainBoth();
    expect(state.agents.map((a) => a.settings.agent)).toEqual(['bc', 'bc-then-dream']);

    state.suggestWith = 'bc-then-dream';
    state.suggestEpisode = 2;
    state.suggestStep = 3;
    await state.suggest();
    expect(state.suggestion).toMatchObject({ agent: 'bc-then-dream', episode: 2, step: 3, suggested: 'go to cart 1' });

    await state.downloadModel();
    state.downloadAgent(state.agents[1]);
    expect(saved).toEqual([
      'shop-model.json',
      'shop-model.weights.bin',
      'shop-bc-then-dream.checkpoint.json',
      'shop-bc-then-dream.weights.bin',
    ]);

    // Another domain: its own (absent) model, no agents of the first.
    stored = [];
    kept = null;
    await state.open('other');
    expect(state.agents).toEqual([]);
    expect(state.model).toBeNull();
    expect(state.audit).toBeNull();
    expect(state.suggestion).toBeNull();
    await state.suggest();
    expect(state.error).toBe('Train that agent first.');
  });
});
