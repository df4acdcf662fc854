/**
 * `household-v0`: the mini-ALFWorld environment (docs/architecture.md §3.3) over the Env contract
 * (docs/architecture.md §3.2). Synchronous inside (`resetSync` / `stepSync`); the async methods wrap them.
 *
 * Reward 1.0 on the step the goal holds (terminated, info.success, info.score 1), else 0. The env
 * never truncates: `makeEnv` wraps it in TimeLimit(50). An unparsable or inadmissible command is a
 * no-op with `info.valid: false` that returns the previous observation unchanged (ALFWorld would
 * print `Nothing happens.`; the contract asks the observation to stay as it was).
 */
import { refuseRecordedStart, type EnvCreateOptions, type GroundTruthEnv, type ResetOptions } from '../env';
import type { Observation, StepResult, Task } from '../../types';
import {
  admissibleCommands,
  execute,
  extractAction,
  globalCommands,
  isAdmissible,
  parseCommand,
  renderCommand,
} from './commands';
import { expertCommand } from './expert';
import { goalHolds, goalProgress, type Goal } from './goals';
import { generateTask, HOUSEHOLD_ENV_ID, taskSpecOf } from './tasks';
import { resetText, type PutVerb } from './text';
import { World } from './world';

export interface HouseholdEnvOptions extends EnvCreateOptions {
  /** Difficulty level 0..1 used when `reset` generates a task from the seed (default 0.5). */
  difficulty?: number;
  /** `put O in/on R` (default, AgentGym/ETO/ReAct data) or `move O to R` (ALFWorld master). */
  putVerb?: PutVerb;
}

export class HouseholdEnv implements GroundTruthEnv {
  readonly id = HOUSEHOLD_ENV_ID;
  readonly difficulty: number;
  readonly putVerb: PutVerb;
  private task: Task | null = null;
  private goal: Goal | null = null;
  private world: World | null = null;
  private global: string[] = [];
  private last: Observation | null = null;
  private steps = 0;
  private ended = false;
  private succeeded = false;

  constructor(options: HouseholdEnvOptions = {}) {
    this.difficulty = options.difficulty ?? 0.5;
    const putVerb = options.putVerb ?? 'put_in_on';
    if (putVerb !== 'put_in_on' && putVerb !== 'move_to') {
      throw new RangeError(`household-v0: putVerb must be 'put_in_on' or 'move_to', got ${JSON.stringify(putVerb)}`);
    }
    this.putVerb = putVerb;
  }

  get currentTask(): Task | null {
    return this.task;
  }

  /** The live world (for tests and diagnostics; mutate it only through `step`). */
  get state(): World | null {
    return this.world;
  }

  reset(opts: ResetOptions): Promise<Observation> {
    return Promise.resolve(this.resetSync(opts));
  }

  step(action: string): Promise<StepResult> {
    return Promise.resolve(this.stepSync(action));
  }

  resetSync(opts: ResetOptions): Observation {
    refuseRecordedStart(this.id, opts);
    const { seed, task } = opts;
    const played = task ?? generateTask(seed, this.difficulty);
    const spec = taskSpecOf(played);
    this.task = played;
    this.goal = spec.goal;
    this.world = new World(spec.world);
    this.global = globalCommands(this.world);
    this.steps = 0;
    this.ended = false;
    this.succeeded = false;
    this.last = {
      text: resetText(this.world, played.instruction),
      admissible: admissibleCommands(this.world, this.putVerb, this.global),
      task: played,
    };
    return this.last;
  }

  stepSync(action: string): StepResult {
    const world = this.world;
    const last = this.last;
    if (!world || !last || !this.goal) throw new Error('household-v0: call reset() before step()');
    this.steps++;
    const command = this.ended ? null : parseCommand(world, extractAction(action));
    if (!command || !isAdmissible(world, command)) {
      return {
        text: last.text,
        admissible: last.admissible,
        task: last.task,
        reward: 0,
        terminated: this.ended,
        truncated: false,
        info: { valid: false, success: this.succeeded, score: this.succeeded ? 1 : 0, steps: this.steps },
      };
    }
    const text = execute(world, command, this.putVerb);
    const success = goalHolds(world, this.goal);
    if (success) {
      this.ended = true;
      this.succeeded = true;
    }
    this.last = {
      text,
      admissible: success ? [] : admissibleCommands(world, this.putVerb, this.global),
      task: last.task,
    };
    return {
      ...this.last,
      reward: success ? 1 : 0,
      terminated: success,
      truncated: false,
      info: { valid: true, success, score: success ? 1 : 0, steps: this.steps },
    };
  }

  expertAction(): string | null {
    if (!this.world || !this.goal || this.ended) return null;
    const command = expertCommand(this.world, this.goal);
    return command ? renderCommand(command, this.putVerb) : null;
  }

  /** Goal conditions met / total (diagnostics only; the reward stays sparse). */
  goalProgress(): { met: number; total: number } {
    if (!this.world || !this.goal) return { met: 0, total: 0 };
    return goalProgress(this.world, this.goal);
  }
}
