/**
 * The trainer worker's protocol (docs/architecture.md §9.2): a discriminated union of requests, each with a
 * request id, answered by `return | throw | progress` replies carrying the same id.
 *
 * A `start` request is the run itself: it streams `progress` replies (status changes and batches
 * of iteration metrics) for as long as the run lives and `return`s its final status when the run
 * finishes or is stopped. The control requests (`pause`, `resume`, `step`, `stop`, `status`)
 * answer at once with a `return` (or a `throw` naming what to do instead).
 */
import type { BackendName } from '../../../core/tfjs/backend';
import type { TrainConfig } from '../../../core/train/config';
import type { IterationRecord } from '../../../core/train/loop';
import type { LiveProgress } from '../../../core/train/progress';
import type { WorkerReply } from '../worker-protocol';
import type { EngineRuntime } from './experience-source';

export type RunState = 'idle' | 'starting' | 'running' | 'paused' | 'finished' | 'stopped' | 'error';

export interface TrainerStatus {
  runId: string | null;
  state: RunState;
  /** Iterations completed (the checkpoint on disk has this many). */
  iteration: number;
  /** Iterations the config asks for. */
  iterations: number;
  realSteps: number;
  dreamSteps: number;
  /** The tfjs backend the worker trains on, and why it was chosen. */
  backend: BackendName | null;
  backendReason: string | null;
  /** Where the learned experience model decodes, in a sentence (null: the run does not dream with one). */
  decoding: string | null;
  /** A short human sentence about the last thing that happened. */
  message: string;
}

export type TrainerRequest =
  | {
      id: number;
      type: 'start';
      runId: string;
      config: TrainConfig;
      /** Continue from the run's IndexedDB checkpoint (a fresh start when there is none). */
      resume: boolean;
      /**
       * S2R only: the finished dream run (same config but the mode) whose final checkpoint this run
       * continues from when it has none of its own, instead of dreaming the same dream again.
       */
      fromDream?: string;
      /** Which tfjs backend to try first (default wasm; see trainer-host.ts for why). */
      backend?: BackendName;
      /** The experience model's engine extras (API key, picked file, answer budget); config.llm names the engine. */
      engine?: EngineRuntime;
    }
  /**
   * Setup's "Try one step": the config's engine (loaded as for a run, and kept loaded) predicts one
   * transition from a real state of config.env; returns a TryStepResult. Refused while a run is
   * starting or running (the engine serves one call at a time).
   */
  | { id: number; type: 'tryStep'; config: TrainConfig; engine?: EngineRuntime; attempt: number }
  | { id: number; type: 'pause' }
  | { id: number; type: 'resume' }
  /** One iteration while paused; returns its record. */
  | { id: number; type: 'step' }
  | { id: number; type: 'stop' }
  | { id: number; type: 'status' }
  /** Test/debug only: throw an uncaught error inside the worker so its `error` event fires. */
  | { id: number; type: 'crash' };

export type TrainerRequestType = TrainerRequest['type'];

export type TrainerProgress =
  | { kind: 'status'; status: TrainerStatus }
  /** Iteration records since the last batch (sent at most every BATCH_MS, and at every state change). */
  | { kind: 'metrics'; records: IterationRecord[]; status: TrainerStatus }
  /** On resume: the saved metric history up to the checkpoint, so charts continue where they were. */
  | { kind: 'history'; records: IterationRecord[]; status: TrainerStatus }
  /** Inside an iteration: what the model is doing now (sent every LIVE_MS while an iteration runs). */
  | { kind: 'live'; live: LiveProgress };

export type TrainerReply = WorkerReply<TrainerProgress>;

/** Metric batches are flushed at most this often (and on every state change). */
export const BATCH_MS = 250;

/** Live progress inside an iteration is sent this often while an iteration runs. */
export const LIVE_MS = 1000;
