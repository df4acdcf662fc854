/**
 * The Experience model worker's protocol (docs/architecture.md §9.2): a discriminated union of requests, each
 * with a request id, answered by `return | throw | progress` replies carrying the same id.
 *
 * - `train` trains (or, with `resume`, continues from its IndexedDB checkpoint) a learned
 *   experience model on the buffer's real episodes of an env, streaming `progress` (status, each
 *   batch, each epoch, each checkpoint) and `return`ing how it ended: finished (the model stored
 *   as learned:local/<name>) or stopped (the last epoch's checkpoint kept for a resume).
 * - `keep` stores the best epoch of a stopped training's checkpoint as the model learned:local/<name>
 *   (usable at once, its record listing the epochs it finished), and keeps the checkpoint for a
 *   resume. The page sends it after a Stop, to a fresh worker where the training one was ended.
 * - `evaluate` audits a learned model against the real env and dreams a few held-out transitions
 *   beside what really happened, streaming the audit's progress.
 * - `stop` asks a running `train` or `evaluate` to stop at its next batch; `status` answers at once.
 */
import type { AuditReport } from '../../../core/experience/audit';
import type { EpochRecord, FitProgress } from '../../../core/experience/learned/fit';
import type { TrainingRecord } from '../../../core/experience/learned/model-file';
import type { VerdictHead } from '../../../core/experience/learned/verdict';
import type { BackendName } from '../../../core/tfjs/backend';
import type { BackendPreference, ExpModelSettings } from '../../state/model/expmodel-settings';
import type { StoredModelSummary } from '../../storage/learned-store';
import type { WorkerReply } from '../worker-protocol';

export type ExpModelState =
  'idle' | 'starting' | 'training' | 'saving' | 'evaluating' | 'finished' | 'stopped' | 'error';

export interface ExpModelStatus {
  state: ExpModelState;
  /** The model being trained or evaluated (`local/<name>` or `models/<env>`). */
  path: string | null;
  backend: BackendName | null;
  backendReason: string | null;
  /** A short human sentence about the last thing that happened. */
  message: string;
}

/** One held-out transition: what the learned model dreamed, and what the real env did for the same action. */
export interface DreamSample {
  episodeSeed: number;
  instruction: string;
  /** 1-based step of the episode. */
  stepIndex: number;
  state: string;
  action: string;
  dreamed: {
    /** An unusable answer (never learned from), with the reason. */
    usable: boolean;
    invalidReason?: string;
    actionValid: boolean;
    reward: number;
    /** The outcome it called (a graded reward's own; else reward ≥ 1). */
    success: boolean;
    terminated: boolean;
    observation: string;
    admissible: string[];
  };
  real: {
    valid: boolean;
    reward: number;
    success: boolean;
    terminated: boolean;
    observation: string;
    admissible: string[];
  };
}

export interface Evaluation {
  path: string;
  env: string;
  /** The model's label (`learned NAME (k=…, H=…)`). */
  label: string;
  /** The fidelity audit against the real env (null when it was not asked for). */
  audit: { report: AuditReport; outcomeSteps: number; probes: number } | null;
  /** The same audit of the noisy oracle at (0.1, 0.1), for scale. */
  oracle: AuditReport | null;
  samples: DreamSample[];
  /** How fast the audit's predictions came (null: no audit). */
  speed: PredictionSpeed | null;
  /** The model's own training record (from its manifest). */
  training: TrainingRecord;
  /** What its verdict head was fitted on (verdict.ts), or null: the generator judges endings. */
  verdict: VerdictHead['fittedOn'] | null;
}

/** The wall time the audit waited for the model's predictions, asked `batch` at a time. */
export interface PredictionSpeed {
  transitions: number;
  seconds: number;
  transitionsPerSecond: number;
  batch: number;
  /** Where the model decoded, in a sentence (decode-workers.ts). */
  decoding: string;
}

export type TrainOutcome =
  | { outcome: 'finished'; path: string; summary: StoredModelSummary; training: TrainingRecord }
  | { outcome: 'stopped'; path: string; epochsDone: number };

/** What `keep` stored: the model of a stopped training's best epoch (its checkpoint stays). */
export interface KeptModel {
  path: string;
  summary: StoredModelSummary;
  epochsDone: number;
  /** The most epochs the training was started with. */
  epochs: number;
  bestEpoch: number;
}

export type ExpModelRequest =
  | {
      id: number;
      type: 'train';
      settings: ExpModelSettings;
      /** Continue the checkpoint of `settings.name` (its own settings win; a fresh start when there is none is an error). */
      resume: boolean;
    }
  | { id: number; type: 'keep'; name: string; backend: BackendPreference }
  | {
      id: number;
      type: 'evaluate';
      path: string;
      env: string;
      audit: number;
      samples: number;
      seed: number;
      backend: BackendPreference;
    }
  | { id: number; type: 'stop' }
  | { id: number; type: 'status' };

export type ExpModelRequestType = ExpModelRequest['type'];

export type ExpModelProgress =
  | { kind: 'status'; status: ExpModelStatus }
  | FitProgress
  /** On resume: the epochs trained before (the loss chart continues). */
  | { kind: 'history'; records: EpochRecord[] }
  | { kind: 'checkpoint'; epochsDone: number }
  | { kind: 'audit'; done: number; total: number };

export type ExpModelReply = WorkerReply<ExpModelProgress>;
