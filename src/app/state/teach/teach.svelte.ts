/**
 * State of the Teach page (docs/architecture.md §9.1: components render, state lives here). It owns the teach
 * worker's client, the settings (kept in the URL hash), the last update taken apart, a short
 * history of earlier updates, and which step the probability view shows.
 */
import type { TeachSettings, TeachUpdate } from '../../../core/train/teach';
import { TeachClient } from '../../workers/teach/teach-client';
import type { TeachInfo } from '../../workers/teach/teach-protocol';
import { mostChangedStep, sameSettings, teachSettingsFromQuery, updateSummary, type StepRef } from './teach-view';
import { rolloutSuccess } from '../../../core/train/metrics';

export interface UpdateDigest {
  iteration: number;
  successRate: number;
  meanReturn: number;
  policyLoss: number;
  signedSteps: number;
  alignedSteps: number;
}

/** Earlier updates kept for the small history table. */
const HISTORY = 20;

export class TeachState {
  settings = $state<TeachSettings>(teachSettingsFromQuery(''));
  /** The running session's info (null before the first Reset or after a crash). */
  info = $state.raw<TeachInfo | null>(null);
  update = $state.raw<TeachUpdate | null>(null);
  history = $state.raw<UpdateDigest[]>([]);
  selected = $state.raw<StepRef | null>(null);
  busy = $state(false);
  error = $state<string | null>(null);
  announcement = $state('Starting the teach worker…');

  private client: TeachClient | null = null;

  constructor(query = '') {
    this.settings = teachSettingsFromQuery(query);
  }

  /** The settings differ from the running session's (Next update resets first). */
  get stale(): boolean {
    return !this.info || !sameSettings(this.info.settings, this.settings);
  }

  /** A fresh session with the current settings: weights re-initialised from the seed. */
  async reset(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.doReset();
    } finally {
      this.busy = false;
    }
  }

  /** One update (resetting first when the settings changed). */
  async next(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      if (this.stale && !(await this.doReset())) return;
      this.announcement = `Running update ${this.history.length + 1}: rollouts, then the ${this.settings.algo.toUpperCase()} update…`;
      const update = await this.ensureClient().step();
      this.update = update;
      this.selected = mostChangedStep(update);
      const returns = update.groups.flatMap((g) => g.rollouts.map((r) => r.return));
      this.history = [
        ...this.history,
        {
          iteration: update.iteration,
          successRate: rolloutSuccess(update.metrics)?.value ?? 0,
          meanReturn: returns.reduce((a, b) => a + b, 0) / Math.max(1, returns.length),
          policyLoss: update.metrics['losses/policy_loss'] ?? NaN,
          signedSteps: update.signedSteps,
          alignedSteps: update.alignedSteps,
        },
      ].slice(-HISTORY);
      this.announcement = updateSummary(update);
    } catch (error) {
      this.fail(error);
    } finally {
      this.busy = false;
    }
  }

  select(ref: StepRef): void {
    this.selected = ref;
  }

  dispose(): void {
    this.client?.terminate();
    this.client = null;
  }

  private async doReset(): Promise<boolean> {
    this.error = null;
    this.announcement = 'Building a fresh session (policy weights from the seed)…';
    try {
      const settings = $state.snapshot(this.settings) as TeachSettings;
      this.info = await this.ensureClient().reset(settings);
      this.update = null;
      this.history = [];
      this.selected = null;
      this.announcement =
        `Ready: ${this.info.preset}, ${settings.algo.toUpperCase()}, experience from ${this.info.experience}, ` +
        `seed ${settings.seed}. Press Next update.`;
      return true;
    } catch (error) {
      this.fail(error);
      return false;
    }
  }

  private ensureClient(): TeachClient {
    if (!this.client || this.client.gone) this.client = new TeachClient();
    return this.client;
  }

  private fail(error: unknown): void {
    const message = (error as Error).message ?? String(error);
    this.error = message;
    this.announcement = `Error: ${message}`;
    if (this.client?.gone) this.info = null;
  }
}
