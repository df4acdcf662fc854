/**
 * The environment contract (Gymnasium-style, async because a dreamed step is an LLM call) and
 * the standard wrappers. Real environments are synchronous inside; `DreamEnv` implements the
 * same interface over an experience model, so a trainer never knows whether it is dreaming.
 */
import type { Observation, Step, StepResult, Task } from '../types';
import type { Rng } from '../rng';
import type { PolicyFeatureSet } from '../policy/features';

export type { Observation, StepResult, Task };

/** Task seeds at or above this are the held-out evaluation range: never trained on. */
export const HELD_OUT_SEED_BASE = 1_000_000_000;

export interface ResetOptions {
  /** Seeds the task (when none is given) and any per-episode randomness. */
  seed: number;
  /** Play this task instead of generating one from the seed. */
  task?: Task;
  /**
   * Begin mid-episode at a recorded state of `task`, with the recorded steps before it as the
   * history (dreams that start from real states). Only a dream honours it: a real env cannot be
   * put into a recorded state, so it refuses (`refuseRecordedStart`).
   */
  start?: RecordedStart;
}

/** A recorded state and the real steps that led to it. */
export interface RecordedStart {
  history: readonly Step[];
  state: { text: string; admissible: readonly string[] };
}

/** What a real env says to a reset that asks it to begin at a recorded state. */
export function refuseRecordedStart(envId: string, opts: ResetOptions): void {
  if (opts.start)
    throw new Error(
      `${envId}: a real env starts its episodes at the task's first state; ` +
        'only a dream (DreamEnv) can begin at a recorded state.',
    );
}

export interface Env {
  /** Versioned id, e.g. 'webshop-lite-v0'. */
  readonly id: string;
  reset(opts: ResetOptions): Promise<Observation>;
  step(action: string): Promise<StepResult>;
}

/**
 * A ground-truth environment we own: besides the contract it exposes its step limit and a
 * privileged expert that reads the true state (for datasets, solvability proofs and baselines).
 */
export interface GroundTruthEnv extends Env {
  /** The best next action from the true current state (null once the episode is over). */
  expertAction(): string | null;
  /** The task being played (after reset). */
  readonly currentTask: Task | null;
}

export type Direction = 'harder' | 'easier';

/** Result of running the expert on a task from its start. */
export interface ExpertSolution {
  actions: string[];
  /** Number of steps of the expert's plan (its measure of the task's difficulty). */
  optimalLength: number;
  success: boolean;
}

/** Everything the registry knows about one environment family. */
export interface EnvDefinition<Knobs = unknown> {
  id: string;
  /** Human name, e.g. 'mini-WebShop'. */
  name: string;
  summary: string;
  defaultStepLimit: number;
  /** A fresh environment (no step limit: `makeEnv` adds TimeLimit). */
  create(options?: EnvCreateOptions): GroundTruthEnv;
  /** The knobs a scalar difficulty 0..1 maps to. */
  knobsForLevel(level: number): Knobs;
  /** A task from a seed at a difficulty (scalar or knobs), proved solvable by the expert. */
  generateTask(seed: number, difficulty: number | Knobs): Task;
  /** A valid, solvable task one step harder or easier than `task`. */
  mutateTask(task: Task, rng: Rng, direction: Direction): Task;
  /** Run the expert on the task from its start. */
  solve(task: Task): ExpertSolution;
  /**
   * A task in the same world whose goal is one detail off, which the expert reaches without
   * reaching `task`'s goal, or null: the `decoy-expert` offline data (envs whose episodes end only
   * at the goal, where a wrong finish does not end anything).
   */
  decoyTask?(task: Task, rng: Rng): Task | null;
  /**
   * Features this env adds to a learned model's outcome verdict head, beyond the generic ones the
   * dream mines from any domain's data (none: the generic ones alone). Structure an env knows and
   * its data cannot teach stays here, in the env's own folder, never in the dream's code.
   */
  verdictFeatures?: readonly OutcomeFeature[];
  /**
   * Features this env adds to the policy's, beyond those mined from any domain's data (policy/feature-schema.ts;
   * none: the mined ones alone). A policy's checkpoint saves their names, and it loads only with the same ones.
   */
  policyFeatures?: PolicyFeatureSet;
  /**
   * What an experience model is told about this env and how its text maps to the compact abstract
   * states the model reads and writes (experience/domain-card.ts builds the domain card from it).
   * None: the card is derived from the env's data, as for an imported domain.
   */
  experienceCard?: ExperienceCard;
}

/** An env's written domain card: its description, action grammar and state abstraction. */
export interface ExperienceCard {
  /** The name the model is told, e.g. 'mini-WebShop'. */
  name: string;
  /** The description shown to the model (compact: it is part of every prompt). */
  text: string;
  /**
   * Regular expression (source) of actions admissible in every state of an episode: they are
   * omitted from prompts and answers and re-added from the episode's first admissible list.
   */
  globalActions?: string;
  /** The env lists admissible actions sorted: re-sort after re-adding the globals. */
  sortedAdmissible?: boolean;
  /** Show the current state's admissible actions in the prompt (false: the page shows them). */
  showAdmissible: boolean;
  /** The separator between a page's elements, where the env's text has one (whole elements are spliced). */
  elementSeparator?: string;
  abstraction: StateAbstraction;
}

/**
 * How an env's concrete text maps to abstract states and back (the paper's abstract states, §4.1: "clean element
 * listings … discarding irrelevant structural artifacts"). A hook left out does the generic thing:
 * text collapsed; admissible lists less the card's globals, re-added after.
 */
export interface StateAbstraction {
  /** The key model files store for it (their card's `abstraction`). */
  kind: string;
  /** The abstract form of a concrete observation (before any bound on its length). */
  abstract(text: string): string;
  /** The env's own text for an abstract state (whitespace already collapsed). */
  concrete?(abstract: string, instruction: string): string;
  /**
   * A state's own admissible actions, less those its text implies (page buttons); with this hook a
   * first state's list is written so too, and the card's globals are not used.
   */
  abstractAdmissible?(admissible: readonly string[]): string[];
  /** The full list of a next state from the model's own actions and its concrete text (in the env's order). */
  concreteAdmissible?(local: readonly string[], concreteText: string): string[];
}

/** What an outcome feature reads of a step: only what an experience model may see (pages abstracted). */
export interface VerdictView {
  instruction: string;
  /** The shown history's actions, and the (abstract) page each was taken on. */
  history: readonly string[];
  historyPages: readonly string[];
  /** The (abstract) state the action is taken in. */
  state: string;
  action: string;
}

/** One env-supplied feature of an outcome verdict head, by name (model files store the names). */
export interface OutcomeFeature {
  name: string;
  compute(view: VerdictView): number;
}

export interface EnvCreateOptions {
  /** Difficulty used when `reset` generates a task from the seed (default 0.5). */
  difficulty?: number;
  /** Environment-specific options (catalog size, dialect flags, ...). */
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------------------------
// Wrappers
// ---------------------------------------------------------------------------------------------

export abstract class Wrapper<E extends Env = Env> implements Env {
  constructor(readonly env: E) {}
  get id(): string {
    return this.env.id;
  }
  /** The innermost environment. */
  get unwrapped(): Env {
    let inner: Env = this.env;
    while (inner instanceof Wrapper) inner = inner.env;
    return inner;
  }
  reset(opts: ResetOptions): Promise<Observation> {
    return this.env.reset(opts);
  }
  step(action: string): Promise<StepResult> {
    return this.env.step(action);
  }
}

/** Ends the episode with `truncated` once `maxSteps` steps were taken without termination. */
export class TimeLimit<E extends Env = Env> extends Wrapper<E> {
  private elapsed = 0;
  constructor(
    env: E,
    readonly maxSteps: number,
  ) {
    super(env);
    if (!Number.isInteger(maxSteps) || maxSteps < 1) {
      throw new RangeError(`TimeLimit: maxSteps must be a positive integer, got ${maxSteps}`);
    }
  }
  async reset(opts: ResetOptions): Promise<Observation> {
    this.elapsed = 0;
    return this.env.reset(opts);
  }
  async step(action: string): Promise<StepResult> {
    const result = await this.env.step(action);
    this.elapsed++;
    if (this.elapsed >= this.maxSteps && !result.terminated && !result.truncated) {
      return { ...result, truncated: true, admissible: [] };
    }
    return result;
  }
}

/** The trajectory record of one real step: the state it was taken in, the action, and what the env answered. */
export function stepRecord(state: Observation, action: string, result: StepResult): Step {
  return {
    observation: state.text,
    admissible: state.admissible,
    action,
    reward: result.reward,
    terminated: result.terminated,
    truncated: result.truncated,
    valid: result.info.valid,
  };
}

/** The environment's expert, reached through any wrappers (null for envs without one). */
export function expertOf(env: Env): GroundTruthEnv | null {
  const inner = env instanceof Wrapper ? env.unwrapped : env;
  return typeof (inner as GroundTruthEnv).expertAction === 'function' ? (inner as GroundTruthEnv) : null;
}
