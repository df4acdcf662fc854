/**
 * The Domains page's path after the import, in Node (fake-indexeddb; the workers' hosts called
 * directly): a model of a stored domain trained by the Experience model worker's host (the domain's
 * training episodes and card, its pairs account), audited by the Domains worker's host (OK or
 * FAILED with the reasons, kept with the model until it is retrained), and the agent trained by
 * behaviour cloning alone and BC then the dream, its checkpoint serialized as the CLI saves it.
 */
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeTrajectories } from '../../../src/core/data/formats';
import { describePairAccount } from '../../../src/core/experience/learned/sft-data';
import { initBackend } from '../../../src/core/tfjs/backend';
import { deserializeCheckpoint, type CheckpointManifest } from '../../../src/core/train/checkpoint';
import { DomainHost } from '../../../src/app/workers/domain/domain-host';
import type {
  AgentSettings,
  DomainWorkerProgress,
  DomainWorkerReply,
  DomainWorkerRequest,
  StoredDomainAudit,
  Suggestion,
  TrainedAgent,
} from '../../../src/app/workers/domain/domain-protocol';
import { DomainStore } from '../../../src/app/storage/domain-store';
import { ExpModelHost } from '../../../src/app/workers/expmodel/expmodel-host';
import type { ExpModelReply, TrainOutcome } from '../../../src/app/workers/expmodel/expmodel-protocol';
import { LearnedModelStore } from '../../../src/app/storage/learned-store';
import { DEFAULT_IMPORT_SETTINGS, readDomain } from '../../../src/app/state/domains/domains';
import { TINY_SETTINGS, defaultSettings } from '../../../src/app/state/model/expmodel-settings';
import { foreignOurs } from '../domain/fixtures';

const store = new LearnedModelStore('domain-worker-test');
let clock = 1_700_000_000_000;
/** What the Experience model host is given here: the test's store and clock, wasm, and no page buffer. */
const hostDeps = {
  openBuffer: () => Promise.reject(new Error('a domain model reads no page buffer')),
  store,
  chooseBackend: async () => ({ backend: 'wasm' as const, reason: 'wasm (test)' }),
  date: () => (clock += 1000),
};

beforeAll(async () => {
  await initBackend('wasm');
  const text = writeTrajectories(await foreignOurs(16, 'shop'), 'eto');
  const { domain } = readDomain(text, 'shop.json', { ...DEFAULT_IMPORT_SETTINGS, name: 'shop' });
  const source = { file: 'shop.json', format: 'eto' as const, detected: true, unrecordedOutcome: 'unknown' as const };
  await new DomainStore().save(domain, source, { createdAt: 0 });
}, 60_000);

/** Sends one request to a host and collects its progress and its answer. */
async function ask<R, P>(
  handle: (post: (reply: { id: number; kind: string }) => void) => (request: { id: number }) => Promise<void>,
  request: object,
): Promise<{ value: R; progress: P[] }> {
  const progress: P[] = [];
  let answer: { kind: string; value?: unknown; error?: { message: string } } | null = null;
  await handle((reply) => {
    const r = reply as { kind: string; progress?: P };
    if (r.kind === 'progress') progress.push(r.progress!);
    else answer = reply;
  })({ id: 1, ...request });
  const a = answer as unknown as { kind: string; value?: unknown; error?: { message: string } };
  if (a.kind === 'throw') throw new Error(a.error!.message);
  return { value: a.value as R, progress };
}

const trainModel = (name: string) =>
  ask<TrainOutcome, unknown>(
    (post) => {
      const host = new ExpModelHost(post as (r: ExpModelReply) => void, hostDeps);
      return (request) => host.handle(request as never);
    },
    {
      type: 'train',
      resume: false,
      settings: { ...defaultSettings('byo:shop'), ...TINY_SETTINGS, name, epochs: 1, episodes: 0, backend: 'wasm' },
    },
  );

/** A model training of the domain stopped after its first epoch's checkpoint, then resumed (as after a reload). */
async function stopAfterFirstEpoch(name: string): Promise<TrainOutcome> {
  const settings = {
    ...defaultSettings('byo:shop'),
    ...TINY_SETTINGS,
    name,
    epochs: 3,
    episodes: 0,
    backend: 'wasm' as const,
  };
  let host: ExpModelHost | null = null;
  host = new ExpModelHost((reply) => {
    if (reply.kind === 'progress' && reply.progress.kind === 'checkpoint') void host!.handle({ id: 9, type: 'stop' });
    if (reply.kind === 'return' && reply.id === 1) outcome = reply.value as TrainOutcome;
  }, hostDeps);
  let outcome: TrainOutcome | null = null;
  await host.handle({ id: 1, type: 'train', resume: false, settings });
  return outcome!;
}

const domainHost = (post: (reply: { id: number; kind: string }) => void) => {
  const host = new DomainHost(post as (r: DomainWorkerReply) => void, {
    readDomain: async (name) => {
      const stored = await new DomainStore().read(name);
      return stored && { domain: stored.domain, checksum: stored.manifest.checksums.train };
    },
    store,
    initBackend: async () => {},
    date: () => (clock += 1000),
  });
  return (request: { id: number }) => host.handle(request as DomainWorkerRequest);
};

const agentSettings = (agent: AgentSettings['agent']): AgentSettings => ({
  agent,
  bcEpochs: 3,
  iterations: 2,
  tasksPerIteration: 2,
  groupSize: 2,
  evalEpisodes: 2,
  auditTransitions: 6,
  seed: 0,
});

describe("a stored domain's model, audit and agent", () => {
  it('trains a model of the domain with its pairs account, audits it, keeps the audit until it is retrained', async () => {
    const { value: trained } = await trainModel('shop-model');
    expect(trained.outcome).toBe('finished');
    const done = trained as Extract<TrainOutcome, { outcome: 'finished' }>;
    expect(done.summary.env).toBe('byo:shop');
    const account = done.training.data.account!;
    // Every recorded transition of the training episodes is a pair or a reason: none dropped silently.
    expect(describePairAccount(account)).toMatch(/^\d+ pairs from \d+ recorded transitions/);
    const { domain } = (await new DomainStore().read('shop'))!;
    expect(account.transitions).toBe(domain.train.reduce((n, t) => n + t.steps.length, 0));

    const stages: DomainWorkerProgress[] = [];
    const request = { type: 'audit', domain: 'shop', model: 'shop-model', transitions: 8, episodes: 2, seed: 0 };
    const { value: audit, progress } = await ask<StoredDomainAudit, DomainWorkerProgress>(domainHost, request);
    stages.push(...progress);
    expect(stages[0]).toMatchObject({ kind: 'stage' });
    expect(audit).toMatchObject({ domain: 'shop', model: 'shop-model', modelSavedAt: done.summary.savedAt });
    expect(audit.audit.n).toBe(8);
    expect(['ok', 'failed']).toContain(audit.health.status);
    expect(audit.health.status === 'failed').toBe(audit.health.problems.some((p) => p.severity === 'failed'));
    const kept = await ask<StoredDomainAudit | null, never>(domainHost, { type: 'readAudit', model: 'shop-model' });
    expect(kept.value).toEqual(audit);

    await trainModel('shop-model'); // retrained: the old audit is not this model's
    const after = await ask<StoredDomainAudit | null, never>(domainHost, { type: 'readAudit', model: 'shop-model' });
    expect(after.value).toBeNull();
  }, 240_000);

  it("resumes a stopped training of the domain's model, and refuses to once the domain's episodes changed", async () => {
    const stopped = await stopAfterFirstEpoch('shop-resume');
    expect(stopped).toMatchObject({ outcome: 'stopped', epochsDone: 1 });
    const saved = await store.readCheckpoint<{ data?: string }>('shop-resume');
    const stored = (await new DomainStore().read('shop'))!;
    expect(saved!.settings.data).toBe(stored.manifest.checksums.train);
    const resume = (settings: object) =>
      ask<TrainOutcome, unknown>(
        (post) => {
          const host = new ExpModelHost(post as (r: ExpModelReply) => void, hostDeps);
          return (request) => host.handle(request as never);
        },
        { type: 'train', resume: true, settings },
      );
    // The domain imported again with other episodes: the resume is refused, and says why.
    const other = { ...stored.manifest.checksums, train: 'ffffffff' };
    await store.saveCheckpoint(
      'shop-other',
      { ...saved!.settings, name: 'shop-other', data: other.train },
      saved!.checkpoint,
      1,
    );
    await expect(resume({ ...saved!.settings, name: 'shop-other' })).rejects.toThrow(
      /changed since the training 'shop-other' was saved/,
    );
    const { value } = await resume(saved!.settings);
    expect(value).toMatchObject({ outcome: 'finished' });
    expect((value as Extract<TrainOutcome, { outcome: 'finished' }>).training.epochs).toHaveLength(3);
  }, 240_000);

  it('trains the agent by BC alone and by BC then the dream, and says which checkpoint it returns', async () => {
    await trainModel('shop-agent-model');
    const train = (agent: AgentSettings['agent']) =>
      ask<TrainedAgent, DomainWorkerProgress>(domainHost, {
        type: 'trainAgent',
        domain: 'shop',
        model: 'shop-agent-model',
        settings: agentSettings(agent),
      });
    const bc = await train('bc');
    expect(bc.value.agent).toMatchObject({ trained: 'bc', returned: 'bc', dreamIterations: 0 });
    expect(bc.value.bc!.epochs).toBe(3);
    expect(bc.progress.filter((p) => p.kind === 'bc')).toHaveLength(3);
    const manifest = JSON.parse(bc.value.checkpoint.manifest) as CheckpointManifest;
    expect(manifest.weights!.file).toBe('shop-bc.weights.bin');
    const bytes = bc.value.checkpoint.weights;
    const blob = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    expect(deserializeCheckpoint(manifest, blob).policy.tensors.length).toBeGreaterThan(0);

    // The agent suggests its action on a recorded held-out step, beside the recorded one.
    const { domain } = (await new DomainStore().read('shop'))!;
    const suggest = (episode: number, step: number) =>
      ask<Suggestion, never>(domainHost, { type: 'suggest', domain: 'shop', agent: bc.value, episode, step });
    const { value: suggestion } = await suggest(1, 2);
    const recorded = domain.heldOut[0].steps[1];
    expect(suggestion).toMatchObject({ episode: 1, step: 2, recorded: recorded.action, agent: 'bc' });
    expect(recorded.admissible).toContain(suggestion.suggested);
    expect(suggestion.top[0]).toEqual({ action: suggestion.suggested, probability: suggestion.probability });
    expect(suggestion.candidates).toBe(recorded.admissible.length);
    await expect(suggest(domain.heldOut.length + 1, 1)).rejects.toThrow(/held-out episodes: pick one of 1\.\./);

    const both = await train('bc-then-dream');
    expect(both.value.agent.trained).toBe('bc-then-dream');
    expect(both.value.bc).not.toBeNull();
    // What it returned and why, never a dream policy of a failed model silently.
    if (both.value.health.status === 'failed') expect(both.value.agent.returned).toBe('bc');
    expect(both.value.agent.reason.length).toBeGreaterThan(20);
  }, 300_000);
});
