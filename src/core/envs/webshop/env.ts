/**
 * WebShopEnv: the `webshop-lite-v0` environment behind the Env contract. Synchronous inside
 * (`resetSync` / `stepSync` for benchmarks), async outside. The env never truncates; makeEnv
 * wraps it in TimeLimit(15).
 */
import type { Observation, StepResult, Task } from '../../types';
import { refuseRecordedStart, type EnvCreateOptions, type GroundTruthEnv, type ResetOptions } from '../env';
import { DEFAULT_CATALOG_SIZE } from './catalog';
import type { ShopEpisode } from './episode';
import { expertAction } from './expert';
import { knobsForLevel } from './knobs';
import { admissibleActions, observe, transition } from './machine';
import type { PageState } from './pages';
import { DEFAULT_CATALOG_SEED, episodeOf, generateTask, WEBSHOP_ENV_ID } from './tasks';

export interface WebShopCreateOptions extends EnvCreateOptions {
  /** Level used when reset generates a task from the seed (default 0.5). */
  difficulty?: number;
  /** Catalog seed for generated tasks (default 0). */
  catalogSeed?: number;
  /** Catalog size for generated tasks (default 1,000; keep to a few fixed values). */
  catalogSize?: number;
}

export class WebShopEnv implements GroundTruthEnv {
  readonly id = WEBSHOP_ENV_ID;
  readonly difficulty: number;
  readonly catalogSeed: number;
  readonly catalogSize: number;
  private task: Task | null = null;
  private episode: ShopEpisode | null = null;
  private state: PageState = { kind: 'search' };
  private text = '';
  private admissible: string[] = [];
  private steps = 0;
  private readonly generated = new Map<number, Task>();

  constructor(options: WebShopCreateOptions = {}) {
    this.difficulty = options.difficulty ?? 0.5;
    this.catalogSeed = options.catalogSeed ?? DEFAULT_CATALOG_SEED;
    this.catalogSize = options.catalogSize ?? DEFAULT_CATALOG_SIZE;
    if (!(this.difficulty >= 0 && this.difficulty <= 1)) {
      throw new RangeError(`webshop: difficulty must be in [0, 1], got ${options.difficulty}`);
    }
  }

  get currentTask(): Task | null {
    return this.task;
  }

  /** The page state (read-only view for tools and tests). */
  get pageState(): Readonly<PageState> {
    return this.state;
  }

  /** The task reset({seed}) plays: generated at this env's difficulty and catalog (cached). */
  taskForSeed(seed: number): Task {
    let task = this.generated.get(seed);
    if (!task) {
      task =
        this.catalogSize === DEFAULT_CATALOG_SIZE
          ? generateTask(seed, this.difficulty, { catalogSeed: this.catalogSeed })
          : generateTask(seed, knobsForLevel(this.difficulty, this.catalogSize), {
              catalogSeed: this.catalogSeed,
              difficulty: this.difficulty,
            });
      if (this.generated.size >= 512) this.generated.clear();
      this.generated.set(seed, task);
    }
    return task;
  }

  resetSync(opts: ResetOptions): Observation {
    if (!opts || !Number.isFinite(opts.seed)) throw new RangeError('webshop: reset needs { seed: number, task? }');
    refuseRecordedStart(this.id, opts);
    const task = opts.task ?? this.taskForSeed(opts.seed);
    this.episode = episodeOf(task);
    this.task = task;
    this.state = { kind: 'search' };
    this.steps = 0;
    this.refresh();
    return { text: this.text, admissible: this.admissible.slice(), task };
  }

  stepSync(action: string): StepResult {
    const episode = this.episode;
    const task = this.task;
    if (!episode || !task) throw new Error('webshop: call reset() before step()');
    this.steps++;
    const ended = this.state.kind === 'done';
    const next = ended || typeof action !== 'string' ? null : transition(this.state, action, episode);
    if (!next) {
      return {
        text: this.text,
        admissible: this.admissible.slice(),
        task,
        reward: 0,
        terminated: ended,
        truncated: false,
        info: { valid: false, success: false, steps: this.steps },
      };
    }
    this.state = next;
    this.refresh();
    if (next.kind === 'done') {
      const reward = next.reward.reward;
      return {
        text: this.text,
        admissible: [],
        task,
        reward,
        terminated: true,
        truncated: false,
        info: { valid: true, success: reward === 1, score: reward, steps: this.steps },
      };
    }
    return {
      text: this.text,
      admissible: this.admissible.slice(),
      task,
      reward: 0,
      terminated: false,
      truncated: false,
      info: { valid: true, success: false, steps: this.steps },
    };
  }

  async reset(opts: ResetOptions): Promise<Observation> {
    return this.resetSync(opts);
  }

  async step(action: string): Promise<StepResult> {
    return this.stepSync(action);
  }

  expertAction(): string | null {
    if (!this.episode) return null;
    return expertAction(this.state, this.episode);
  }

  private refresh(): void {
    this.text = observe(this.state, this.episode!);
    this.admissible = admissibleActions(this.state, this.episode!);
  }
}
