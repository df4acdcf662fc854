/**
 * The Domains worker's protocol (docs/architecture.md §9.2): requests with an id, answered by
 * `return | throw | progress` replies with the same id (worker-protocol.ts).
 *
 * - `audit` audits a learned model of a stored domain as `domain train` judges it before any agent
 *   (core domain/model-audit.ts), and keeps the result with the model (learned-store.ts saveAudit).
 * - `readAudit` answers the audit kept with a model (null: none, or retrained since).
 * - `trainAgent` trains the domain's agent on that model (core domain/trainer.ts trainDomain: BC,
 *   BC then the dream, or the dream alone) and returns what it got: the returned checkpoint, why,
 *   the health and the evaluation, and the checkpoint's files to download.
 * - `suggest` restores a trained agent's checkpoint and suggests its action on a step of a held-out
 *   recorded episode (core restoreDomainAgent, the agent `dreamgym act --run` loads), beside the
 *   recorded action.
 * The page stops a request by terminating the worker (nothing of a running request is kept).
 */
import type { DomainAgentChoice } from '../../../core/domain/trainer';
import type { DomainAgentStart } from '../../../core/domain/config';
import type { DomainEvaluation } from '../../../core/domain/evaluate';
import type { DomainHealth } from '../../../core/domain/health';
import type { DomainModelAudit } from '../../../core/domain/model-audit';
import type { WorkerReply } from '../worker-protocol';

/** An audit as kept with the model: which model (its store name and save time) and when. */
export interface StoredDomainAudit extends DomainModelAudit {
  domain: string;
  /** The model's store name (`learned:local/<model>`) and its summary's savedAt. */
  model: string;
  modelSavedAt: number;
  auditedAt: number;
}

/** The agent's settings the page sends (the rest are core's defaults, config.ts). */
export interface AgentSettings {
  agent: DomainAgentStart;
  bcEpochs: number;
  iterations: number;
  tasksPerIteration: number;
  groupSize: number;
  evalEpisodes: number;
  auditTransitions: number;
  seed: number;
}

/** Behaviour cloning's record, less its weights. */
export interface BcSummary {
  demonstrations: 'successes' | 'all';
  episodes: number;
  examples: number;
  epochs: number;
  accuracyBefore: number;
  accuracy: number;
}

/** What `trainAgent` got: the returned checkpoint and why, and the checkpoint as the CLI's files. */
export interface TrainedAgent {
  domain: string;
  model: string;
  settings: AgentSettings;
  agent: DomainAgentChoice;
  health: DomainHealth;
  evaluation: DomainEvaluation;
  bc: BcSummary | null;
  iterations: number;
  dreamSteps: number;
  stepLimit: number;
  /** The checkpoint (core checkpoint.ts serializeCheckpoint): its manifest's text and its weights' bytes. */
  checkpoint: { manifest: string; weights: Uint8Array };
}

/** The agent's action on a recorded held-out step, beside the one recorded. */
export interface Suggestion {
  agent: AgentSettings['agent'];
  /** 1-based, as the page asked. */
  episode: number;
  episodes: number;
  step: number;
  steps: number;
  instruction: string;
  observation: string;
  recorded: string;
  suggested: string;
  probability: number;
  /** The most probable candidates, best first. */
  top: { action: string; probability: number }[];
  candidates: number;
}

export type DomainWorkerRequest =
  | { id: number; type: 'audit'; domain: string; model: string; transitions: number; episodes: number; seed: number }
  | { id: number; type: 'readAudit'; model: string }
  | { id: number; type: 'trainAgent'; domain: string; model: string; settings: AgentSettings }
  | {
      id: number;
      type: 'suggest';
      domain: string;
      agent: Pick<TrainedAgent, 'checkpoint' | 'stepLimit' | 'settings'>;
      episode: number;
      step: number;
    };

export type DomainWorkerProgress =
  | { kind: 'stage'; text: string }
  | { kind: 'bc'; epoch: number; epochs: number; loss: number; accuracy: number }
  | { kind: 'iteration'; iteration: number; iterations: number; dreamSuccess: number; meanLength: number };

export type DomainWorkerReply = WorkerReply<DomainWorkerProgress>;
