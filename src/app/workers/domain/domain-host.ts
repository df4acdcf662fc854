/**
 * The Domains worker's body (domain.worker.ts only wires it to `self`): the part of a
 * domain's path after its experience model is trained (the Experience model worker trains it,
 * expmodel-host.ts): the model's audit, kept with the model, and the agent's training, all core
 * code (domain/model-audit.ts, domain/trainer.ts) on the domain and the model stored in this
 * browser, and a trained agent's suggested action on a recorded held-out step. One request at a
 * time; the page stops one by terminating the worker.
 *
 * Everything outside comes in through DomainHostDeps, so the unit tests run it in Node.
 */
import {
  restoreDomainAgent,
  seedDomainBuffer,
  trainDomain,
  type DomainTrainResult,
} from '../../../core/domain/trainer';
import { recordedStepState } from '../../../core/domain/evaluate';
import { Rng } from '../../../core/rng';
import type { Domain } from '../../../core/domain/domain';
import { candidateInference } from '../../../core/data/candidates';
import { auditDomainModel } from '../../../core/domain/model-audit';
import type { LearnedExperienceModel, LearnedModelOptions } from '../../../core/experience/learned/learned-model';
import type { ModelManifest } from '../../../core/experience/learned/model-file';
import type { NamedWeight } from '../../../core/experience/learned/network';
import { initBackend } from '../../../core/tfjs/backend';
import { DREAM_SUCCESS } from '../../../core/train/metrics';
import {
  blobBytes,
  deserializeCheckpoint,
  serializeCheckpoint,
  type CheckpointManifest,
} from '../../../core/train/checkpoint';
import type { ReplayBuffer } from '../../../core/buffer/buffer';
import { serializeWorkerError } from '../worker-protocol';
import type {
  DomainWorkerProgress,
  DomainWorkerReply,
  DomainWorkerRequest,
  StoredDomainAudit,
  Suggestion,
  TrainedAgent,
} from './domain-protocol';
import { readStoredDomain } from '../expmodel/expmodel-host';
import { parseLearnedPath } from '../../state/setup/learned-path';
import { learnedModelWithThreads } from '../learned-source';
import { defaultLearnedStore, type LearnedModelStore } from '../../storage/learned-store';
import { WASM_PATHS } from '../wasm-paths';

type ModelFiles = { manifest: ModelManifest; weights: NamedWeight[] };

export interface DomainHostDeps {
  readDomain: (name: string) => Promise<{ domain: Domain; checksum: string } | null>;
  store: LearnedModelStore;
  /** Starts tfjs for the policy (the page: wasm). */
  initBackend: () => Promise<void>;
  /** The learned model of checked files, retrieving from `buffer` (default: with decode workers). */
  loadModel?: (files: ModelFiles, options: DomainModelLoad) => Promise<LearnedExperienceModel>;
  /** Wall-clock time (Date.now). */
  date?: () => number;
}

/** How the domain worker loads a model: retrieving from `buffer`, and inferring lists where the domain records none. */
type DomainModelLoad = { buffer: ReplayBuffer; env: string; seed: number; name: string } & Pick<
  LearnedModelOptions,
  'inferAdmissible'
>;

export function browserDomainHostDeps(): DomainHostDeps {
  return {
    readDomain: readStoredDomain,
    store: defaultLearnedStore(),
    initBackend: async () => {
      await initBackend('wasm', { wasmPaths: WASM_PATHS });
    },
  };
}

/** The domain, the model's files and summary time, and the model loaded over the domain's training episodes. */
interface Loaded {
  domain: Domain;
  model: LearnedExperienceModel;
  files: ModelFiles;
  savedAt: number;
  buffer: ReplayBuffer;
}

export class DomainHost {
  private queue: Promise<void> = Promise.resolve();
  private runningId = -1;

  constructor(
    private readonly post: (reply: DomainWorkerReply) => void,
    private readonly deps: DomainHostDeps,
  ) {}

  /** Requests run one after the other. */
  handle(request: DomainWorkerRequest): Promise<void> {
    this.queue = this.queue.then(async () => {
      this.runningId = request.id;
      try {
        const value =
          request.type === 'audit'
            ? await this.audit(request)
            : request.type === 'readAudit'
              ? await this.deps.store.readAudit<StoredDomainAudit>(request.model)
              : request.type === 'suggest'
                ? await this.suggest(request)
                : await this.trainAgent(request);
        this.post({ id: request.id, kind: 'return', value });
      } catch (error) {
        this.post({ id: request.id, kind: 'throw', error: serializeWorkerError(error) });
      } finally {
        this.runningId = -1;
      }
    });
    return this.queue;
  }

  private send(progress: DomainWorkerProgress): void {
    if (this.runningId >= 0) this.post({ id: this.runningId, kind: 'progress', progress });
  }

  private async load(domainName: string, modelName: string, seed: number): Promise<Loaded> {
    const text = `Reading the domain '${domainName}' and the model learned:local/${modelName}…`;
    this.send({ kind: 'stage', text });
    const stored = await this.deps.readDomain(domainName);
    if (!stored) throw new Error(`No domain named '${domainName}' is stored in this browser: import it first.`);
    const { domain } = stored;
    // The save time first: a model retrained after it is refused when the audit is kept (saveAudit).
    const summary = (await this.deps.store.listModels()).find((m) => m.name === modelName);
    const files = await this.deps.store.readModel(modelName);
    if (!summary) throw new Error(`No learned model named '${modelName}' is stored in this browser: train it first.`);
    if (files.manifest.env !== domain.envId)
      throw new Error(
        `The model learned:local/${modelName} is of '${files.manifest.env}', not of the domain '${domain.name}' ` +
          `(${domain.envId}): train a model of this domain first.`,
      );
    await this.deps.initBackend();
    const buffer = await seedDomainBuffer(domain);
    const options = {
      buffer,
      env: domain.envId,
      seed,
      name: modelName,
      // A domain that lists no actions: a dreamed state's candidates are inferred as its import's.
      ...(domain.card.inferredAdmissible ? { inferAdmissible: candidateInference(domain.train) } : {}),
    };
    const model = await (this.deps.loadModel ?? loadWithThreads)(files, options);
    return { domain, model, files, savedAt: summary.savedAt, buffer };
  }

  private async audit(request: Extract<DomainWorkerRequest, { type: 'audit' }>): Promise<StoredDomainAudit> {
    const { domain, model, files, savedAt } = await this.load(request.domain, request.model, request.seed);
    try {
      this.send({ kind: 'stage', text: `Auditing learned:local/${request.model} on the held-out episodes…` });
      const result = await auditDomainModel(model, domain, {
        llm: `learned:local/${request.model}`,
        auditTransitions: request.transitions,
        evalEpisodes: request.episodes,
        seed: request.seed,
        verdict: files.manifest.verdict?.fittedOn ?? null,
        onProgress: (stage) => this.send({ kind: 'stage', text: `Audit: ${stage} done…` }),
      });
      const audit: StoredDomainAudit = {
        ...result,
        domain: domain.name,
        model: request.model,
        modelSavedAt: savedAt,
        auditedAt: (this.deps.date ?? Date.now)(),
      };
      await this.deps.store.saveAudit(request.model, savedAt, audit);
      return audit;
    } finally {
      model.dispose();
    }
  }

  private async trainAgent(request: Extract<DomainWorkerRequest, { type: 'trainAgent' }>): Promise<TrainedAgent> {
    const s = request.settings;
    const { domain, model, files, buffer } = await this.load(request.domain, request.model, s.seed);
    try {
      this.send({ kind: 'stage', text: `Training the agent (${s.agent}) on '${domain.name}'…` });
      const result = await trainDomain(
        domain,
        model,
        { ...s, llm: `learned:local/${request.model}` },
        {
          buffer,
          now: this.deps.date ?? Date.now,
          verdict: files.manifest.verdict?.fittedOn ?? null,
          onBcEpoch: (r) =>
            this.send({ kind: 'bc', epoch: r.epoch, epochs: s.bcEpochs, loss: r.loss, accuracy: r.accuracy }),
          onIteration: (r) =>
            this.send({
              kind: 'iteration',
              iteration: r.iteration,
              iterations: s.iterations,
              dreamSuccess: r.metrics[DREAM_SUCCESS] ?? 0,
              meanLength: r.metrics['dream/episode_length'] ?? 0,
            }),
        },
      );
      return agentOf(request, result);
    } finally {
      model.dispose();
    }
  }

  private async suggest(request: Extract<DomainWorkerRequest, { type: 'suggest' }>): Promise<Suggestion> {
    const stored = await this.deps.readDomain(request.domain);
    if (!stored) throw new Error(`No domain named '${request.domain}' is stored in this browser: import it first.`);
    const { domain } = stored;
    const { episode, step } = request;
    const t = domain.heldOut[episode - 1];
    if (!t)
      throw new Error(
        `The domain has ${domain.heldOut.length} held-out episodes: pick one of 1..${domain.heldOut.length}.`,
      );
    if (!(step >= 1 && step <= t.steps.length))
      throw new Error(`Held-out episode ${episode} has ${t.steps.length} steps: pick one of 1..${t.steps.length}.`);
    await this.deps.initBackend();
    const { checkpoint, stepLimit } = request.agent;
    const manifest = JSON.parse(checkpoint.manifest) as CheckpointManifest;
    const bytes = checkpoint.weights;
    const blob = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    const trainer = await restoreDomainAgent(domain, deserializeCheckpoint(manifest, blob), stepLimit);
    try {
      const state = recordedStepState(t, step - 1, stepLimit);
      const acted = await trainer.policy.act([state], Rng.fromSeed(0, 'suggest'), { greedy: true });
      const probs = acted.probs[0];
      const top = state.admissible
        .map((action, i) => ({ action, probability: probs[i] }))
        .sort((a, b) => b.probability - a.probability)
        .slice(0, 3);
      return {
        agent: request.agent.settings.agent,
        episode,
        episodes: domain.heldOut.length,
        step,
        steps: t.steps.length,
        instruction: state.instruction,
        observation: state.observation,
        recorded: t.steps[step - 1].action,
        suggested: acted.actions[0],
        probability: probs[acted.actionIndices[0]],
        top,
        candidates: state.admissible.length,
      };
    } finally {
      trainer.dispose();
    }
  }
}

function loadWithThreads(files: ModelFiles, options: DomainModelLoad): Promise<LearnedExperienceModel> {
  const { name, ...rest } = options;
  return learnedModelWithThreads(parseLearnedPath(`local/${name}`), files, rest);
}

/** The result as the page keeps it: the checkpoint serialized as the CLI saves a run's (its weights' file named). */
function agentOf(request: Extract<DomainWorkerRequest, { type: 'trainAgent' }>, r: DomainTrainResult): TrainedAgent {
  const { manifest, blob } = serializeCheckpoint(r.checkpoint);
  const weightsFile = `${request.domain}-${request.settings.agent}.weights.bin`;
  const text = JSON.stringify({ ...manifest, weights: { ...manifest.weights!, file: weightsFile } }, null, 1);
  const bc = r.bc && {
    demonstrations: r.bc.demonstrations,
    episodes: r.bc.episodes,
    examples: r.bc.examples,
    epochs: r.bc.epochs.length,
    accuracyBefore: r.bc.accuracyBefore,
    accuracy: r.bc.accuracy,
  };
  return {
    domain: request.domain,
    model: request.model,
    settings: request.settings,
    agent: r.agent,
    health: r.health,
    evaluation: r.evaluation,
    bc,
    iterations: r.iterations.length,
    dreamSteps: r.dreamSteps,
    stepLimit: r.stepLimit,
    checkpoint: { manifest: text, weights: blobBytes(blob).slice() },
  };
}
