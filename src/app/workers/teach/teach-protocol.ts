/**
 * The teach worker's protocol (docs/architecture.md §9.2): a discriminated union of requests, each with a
 * request id, answered by `return | throw` replies carrying the same id (no request streams
 * progress: an update takes about a second).
 *
 * - `reset` builds a fresh TeachSession from settings (disposing the old one) and returns its info;
 * - `step` runs one update of the current session and returns the TeachUpdate taken apart.
 */
import type { BackendName } from '../../../core/tfjs/backend';
import type { TeachSettings } from '../../../core/train/teach';
import type { WorkerReply } from '../worker-protocol';

export type TeachRequest =
  { id: number; type: 'reset'; settings: TeachSettings; backend?: BackendName } | { id: number; type: 'step' };

export interface TeachInfo {
  settings: TeachSettings;
  /** The training preset the session runs on. */
  preset: string;
  /** Where experience comes from, in words ('the real environment' or 'dream: oracle (ε_R=…, ε_P=…)'). */
  experience: string;
  /** The tfjs backend in use, and why. */
  backend: BackendName;
  backendReason: string;
}

/** No request streams progress; a return's value is a TeachInfo (`reset`) or a TeachUpdate (`step`). */
export type TeachReply = WorkerReply;
