/**
 * `webarena-lite-v0`: the mini-WebArena environment over the Env contract (docs/architecture.md §3.2).
 * Synchronous inside (`resetSync` / `stepSync`); the async methods wrap them.
 *
 * Reward 1 on the step that succeeds (a right `stop` answer, or the URL or state check holding),
 * else 0; `terminated` at `stop` or success. The env never truncates: `makeEnv` wraps it in
 * TimeLimit(30), WebArena's max_steps. An unparsable or inadmissible action is a no-op with
 * `info.valid: false` that returns the previous observation unchanged. WebArena's early stop after
 * three repeated or unparsable actions is left out: the contract asks for no-ops until the limit.
 */
import type { Observation, StepResult, Task } from '../../types';
import { refuseRecordedStart, type EnvCreateOptions, type GroundTruthEnv, type ResetOptions } from '../env';
import { renderCommand } from './expert';
import { Playthrough } from './playthrough';
import { generateTask, taskSpecOf, WEBARENA_ENV_ID } from './tasks';
import { Sites, worldOf } from './world';

export interface WebArenaEnvOptions extends EnvCreateOptions {
  /** Level 0..1 used when `reset` generates a task from the seed (default 0.5). */
  difficulty?: number;
}

export class WebArenaEnv implements GroundTruthEnv {
  readonly id = WEBARENA_ENV_ID;
  readonly difficulty: number;
  private task: Task | null = null;
  private play: Playthrough | null = null;
  private last: Observation | null = null;
  private steps = 0;
  private readonly generated = new Map<number, Task>();

  constructor(options: WebArenaEnvOptions = {}) {
    this.difficulty = options.difficulty ?? 0.5;
    if (!(this.difficulty >= 0 && this.difficulty <= 1))
      throw new RangeError(`webarena-lite: difficulty must be in [0, 1], got ${options.difficulty}`);
  }

  get currentTask(): Task | null {
    return this.task;
  }

  /** The live episode (for tests and diagnostics; change it only through `step`). */
  get playthrough(): Playthrough | null {
    return this.play;
  }

  /** The task reset({seed}) plays at this env's difficulty (cached). */
  taskForSeed(seed: number): Task {
    let task = this.generated.get(seed);
    if (!task) {
      task = generateTask(seed, this.difficulty);
      if (this.generated.size >= 512) this.generated.clear();
      this.generated.set(seed, task);
    }
    return task;
  }

  reset(opts: ResetOptions): Promise<Observation> {
    return Promise.resolve(this.resetSync(opts));
  }

  step(action: string): Promise<StepResult> {
    return Promise.resolve(this.stepSync(action));
  }

  resetSync(opts: ResetOptions): Observation {
    if (!opts || !Number.isFinite(opts.seed))
      throw new RangeError('webarena-lite: reset needs { seed: number, task? }');
    refuseRecordedStart(this.id, opts);
    const task = opts.task ?? this.taskForSeed(opts.seed);
    const spec = taskSpecOf(task);
    this.task = task;
    this.play = new Playthrough(spec, task.instruction, new Sites(worldOf(spec.world)));
    this.steps = 0;
    this.last = { text: this.play.browser.observation(), admissible: this.play.browser.admissible().slice(), task };
    return this.last;
  }

  stepSync(action: string): StepResult {
    const play = this.play;
    const last = this.last;
    if (!play || !last) throw new Error('webarena-lite: call reset() before step()');
    this.steps++;
    const command = play.ended || typeof action !== 'string' ? null : play.browser.parse(action);
    if (!command) {
      return {
        ...last,
        admissible: last.admissible.slice(),
        reward: 0,
        terminated: play.ended,
        truncated: false,
        info: { valid: false, success: play.succeeded, score: play.succeeded ? 1 : 0, steps: this.steps },
      };
    }
    const success = play.run(command);
    const browser = play.browser;
    this.last = {
      text: browser.observation(),
      admissible: play.ended ? [] : browser.admissible().slice(),
      task: last.task,
    };
    return {
      ...this.last,
      reward: success ? 1 : 0,
      terminated: play.ended,
      truncated: false,
      info: { valid: true, success, score: success ? 1 : 0, steps: this.steps },
    };
  }

  expertAction(): string | null {
    const command = this.play?.expertCommand() ?? null;
    return command ? renderCommand(this.play!.browser, command) : null;
  }
}
