/**
 * State of the "play an environment" page: one ground-truth env, the current observation and the
 * episode so far. The page renders it; all logic lives here and in src/core.
 */
import { expertOf, type Env } from '../../../core/envs/env';
import { getEnvDefinition, listEnvDefinitions, makeEnv } from '../../../core/envs/registry';
import type { Observation, StepResult } from '../../../core/types';

export interface PlayedStep {
  index: number;
  action: string;
  reward: number;
  valid: boolean;
  terminated: boolean;
  truncated: boolean;
}

export interface PlaySettings {
  envId: string;
  seed: number;
  difficulty: number;
}

export const DEFAULT_SETTINGS: PlaySettings = { envId: 'webshop-lite-v0', seed: 1, difficulty: 0.25 };

/** Reads ?env=&seed=&difficulty= (TensorFlow-Playground style shareable state); bad values fall back. */
export function settingsFromQuery(query: string): PlaySettings {
  const params = new URLSearchParams(query);
  const ids = listEnvDefinitions().map((d) => d.id);
  const envId = ids.includes(params.get('env') ?? '') ? params.get('env')! : DEFAULT_SETTINGS.envId;
  const seed = Number(params.get('seed'));
  const difficulty = Number(params.get('difficulty'));
  return {
    envId,
    seed: params.has('seed') && Number.isInteger(seed) && seed >= 0 ? seed : DEFAULT_SETTINGS.seed,
    difficulty:
      params.has('difficulty') && difficulty >= 0 && difficulty <= 1 ? difficulty : DEFAULT_SETTINGS.difficulty,
  };
}

export function settingsToQuery(s: PlaySettings): string {
  return `?env=${encodeURIComponent(s.envId)}&seed=${s.seed}&difficulty=${s.difficulty}`;
}

export class PlaySession {
  envId = $state(DEFAULT_SETTINGS.envId);
  seed = $state(DEFAULT_SETTINGS.seed);
  difficulty = $state(DEFAULT_SETTINGS.difficulty);
  observation = $state.raw<Observation | null>(null);
  last = $state.raw<StepResult | null>(null);
  steps = $state.raw<PlayedStep[]>([]);
  expertHint = $state<string | null>(null);
  error = $state<string | null>(null);
  busy = $state(false);
  private env: Env | null = null;

  readonly definitions = listEnvDefinitions();

  get definition() {
    return getEnvDefinition(this.envId);
  }
  get stepLimit() {
    return this.definition.defaultStepLimit;
  }
  get done() {
    return !!this.last && (this.last.terminated || this.last.truncated);
  }
  get totalReward() {
    return this.steps.reduce((s, x) => s + x.reward, 0);
  }
  get status(): string {
    if (!this.observation) return 'Pick an environment and start an episode.';
    if (!this.last) return `Episode started: ${this.observation.admissible.length} actions available.`;
    const r = this.last;
    if (r.terminated)
      return r.info.success
        ? `Success! Reward ${fmt(r.reward)} in ${r.info.steps} steps.`
        : `Episode over: reward ${fmt(r.reward)} (score ${fmt(r.info.score ?? 0)}) in ${r.info.steps} steps.`;
    if (r.truncated) return `Out of steps: the limit is ${this.stepLimit}. Reward 0.`;
    return r.info.valid
      ? `Step ${r.info.steps} of at most ${this.stepLimit}: reward ${fmt(r.reward)}.`
      : `That action is not admissible here: nothing happened (step ${r.info.steps} still counts).`;
  }

  apply(settings: PlaySettings): Promise<void> {
    this.envId = settings.envId;
    this.seed = settings.seed;
    this.difficulty = settings.difficulty;
    return this.reset();
  }

  /** Another environment: its episode starts at once (the old env's episode under the new env's labels misleads). */
  chooseEnv(envId: string): Promise<void> {
    if (envId === this.envId) return Promise.resolve();
    this.envId = envId;
    return this.reset();
  }

  async reset(): Promise<void> {
    this.busy = true;
    this.error = null;
    try {
      this.env = makeEnv(this.envId, { difficulty: this.difficulty });
      this.observation = await this.env.reset({ seed: this.seed });
      this.last = null;
      this.steps = [];
      this.expertHint = null;
    } catch (error) {
      this.error = (error as Error).message;
    } finally {
      this.busy = false;
    }
  }

  async act(action: string): Promise<void> {
    const text = action.trim();
    if (!this.env || this.done || this.busy || !text) return;
    this.busy = true;
    try {
      const result = await this.env.step(text);
      this.steps = [
        ...this.steps,
        {
          index: result.info.steps,
          action: text,
          reward: result.reward,
          valid: result.info.valid,
          terminated: result.terminated,
          truncated: result.truncated,
        },
      ];
      this.last = result;
      this.observation = result;
      this.expertHint = null;
    } catch (error) {
      this.error = (error as Error).message;
    } finally {
      this.busy = false;
    }
  }

  /** What the built-in expert would do now (it reads the true state; a teaching aid). */
  showExpertMove(): void {
    if (!this.env || this.done) return;
    this.expertHint = expertOf(this.env)?.expertAction() ?? null;
  }
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(3);
}
