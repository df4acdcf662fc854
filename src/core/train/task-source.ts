/**
 * Where a trainer's tasks and envs come from (docs/architecture.md §4.1, steps 1, 2 and 5). A registered env
 * has a seeded task pool, a curriculum, a real env and DreamEnvs over the experience model; an
 * imported domain (src/core/domain/task-source.ts) has only its recorded tasks and dreams. The loop
 * asks its source for tasks, envs, outcomes and evaluation, and never asks which kind it is.
 */
import type { Rng } from '../rng';
import type { Task } from '../types';
import type { Env, EnvDefinition } from '../envs/env';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import { Curriculum, isDreamOnly, type GroupOutcome } from '../curriculum/curriculum';
import type { LlmTaskGenerator } from '../curriculum/llm-variations';
import { makeDreamEnv } from '../experience/dream-env';
import type { ExperienceModel } from '../experience/types';
import type { CandidatePolicy } from '../policy/policy';
import { ConfigError, type Phase, type TrainConfig } from './config';
import { evaluatePolicy, type EvalResult, type EvalSplit } from './evaluate';

export interface TaskSource {
  /** The env id of its tasks, observations and buffer records; must equal config.env. */
  readonly envId: string;
  /** Step limit of its episodes (its envs end them there; the policy sees it). */
  readonly stepLimit: number;
  /** A real env exists: real phases and held-out real evaluation are possible. */
  readonly hasRealEnv: boolean;
  /** The curriculum that chooses the tasks (null: a fixed pool, or the domain's own tasks). */
  readonly curriculum: Curriculum | null;
  /** The `count` tasks of iteration `iteration` (1-based) in `phase`, drawn with the iteration's task stream. */
  chooseTasks(iteration: number, count: number, phase: Phase, rng: Rng): Task[];
  /** A task to play instead of `task`, whose dreamed first state could not be written (null: none, the error stands). */
  replacement(task: Task, phase: Phase, rng: Rng): Task | null;
  /** A fresh env for an episode of `phase`. */
  makeEnv(phase: Phase): Env;
  /** The iteration's group outcomes (a curriculum picks its next seeds by their reward variance). */
  recordOutcomes(iteration: number, phase: Phase, groups: GroupOutcome[], generator?: LlmTaskGenerator): Promise<void>;
  /**
   * Greedy evaluation on held-out real tasks of a split (dev unless asked: the trainer's own
   * evaluations never pass one, so training never sees the test split).
   */
  evaluate(policy: CandidatePolicy, episodes: number, split?: EvalSplit): Promise<EvalResult>;
}

/** A registered env (see `dreamgym envs`): its task pool or curriculum, its real env, DreamEnvs over the experience model. */
export class RegisteredEnvSource implements TaskSource {
  readonly definition: EnvDefinition<unknown>;
  readonly curriculum: Curriculum | null;
  readonly hasRealEnv = true;
  /** Pool tasks by seed (generation proves solvability, so it is not free). */
  private readonly pool = new Map<number, Task>();

  constructor(
    private readonly config: TrainConfig,
    private readonly experienceModel?: ExperienceModel,
  ) {
    this.definition = getEnvDefinition(config.env);
    if (config.mode !== 'real' && !experienceModel) {
      throw new Error(
        `Mode '${config.mode}' dreams: the trainer needs an experience model (config.llm = '${config.llm}'); build one with buildRunParts().`,
      );
    }
    this.curriculum = config.curriculum
      ? new Curriculum(this.definition, {
          lambda: config.lambda,
          seedsPerIteration: config.curriculumSeeds,
          difficulty: config.difficulty,
          taskPool: config.taskPool,
          seed: config.seed,
          enabled: true,
          grouping: config.curriculumGrouping,
          clusters: config.curriculumClusters,
          variations: config.curriculumVariations,
        })
      : null;
  }

  get envId(): string {
    return this.config.env;
  }
  get stepLimit(): number {
    return this.definition.defaultStepLimit;
  }

  /** The training task of a pool seed. */
  task(seed: number): Task {
    let task = this.pool.get(seed);
    if (!task) {
      task = this.definition.generateTask(seed, this.config.difficulty);
      this.pool.set(seed, task);
    }
    return task;
  }

  private poolTask(rng: Rng): Task {
    return this.task(rng.int(0, this.config.taskPool - 1));
  }

  /** The curriculum's batch (at most λ synthetic) or pool tasks; a real phase never gets a dream-only task. */
  chooseTasks(iteration: number, count: number, phase: Phase, rng: Rng): Task[] {
    const tasks = this.curriculum
      ? this.curriculum.nextBatch(iteration, count, { realEnv: phase === 'real' }).tasks
      : Array.from({ length: count }, () => this.poolTask(rng));
    // Dream-only tasks (LLM-written: no spec) never reach a real env, whatever queued them.
    return phase === 'real' ? tasks.map((task) => (isDreamOnly(task) ? this.poolTask(rng) : task)) : tasks;
  }

  /** An LLM-written task without a usable first state gives way to a pool task (dream phases). */
  replacement(task: Task, phase: Phase, rng: Rng): Task | null {
    return phase === 'dream' && isDreamOnly(task) ? this.poolTask(rng) : null;
  }

  makeEnv(phase: Phase): Env {
    return phase === 'real'
      ? makeEnv(this.config.env)
      : makeDreamEnv(this.experienceModel!, { envId: this.config.env, difficulty: this.config.difficulty });
  }

  async recordOutcomes(
    iteration: number,
    phase: Phase,
    groups: GroupOutcome[],
    generator?: LlmTaskGenerator,
  ): Promise<void> {
    if (!this.curriculum) return;
    this.curriculum.record(iteration, groups);
    // LLM variations of this iteration's seeds (dream phases only: a real phase cannot play them).
    if (this.curriculum.usesLlm && phase === 'dream' && generator)
      await this.curriculum.generateLlmVariations(iteration, generator);
  }

  evaluate(policy: CandidatePolicy, episodes: number, split: EvalSplit = 'dev'): Promise<EvalResult> {
    return evaluatePolicy(policy, this.config.env, this.config.difficulty, episodes, { split });
  }
}

/** What a config asks that its source cannot give (a source without a real env only dreams). */
export function checkSourceConfig(config: TrainConfig, source: TaskSource): void {
  const problems: string[] = [];
  const name = `'${source.envId}'`;
  if (config.env !== source.envId) problems.push(`'env' must be the task source's env id ${name}; got '${config.env}'`);
  if (!source.hasRealEnv && config.mode !== 'dream')
    problems.push(`'mode' ${config.mode} trains in a real env, and ${name} has none; use mode dream`);
  if (!source.hasRealEnv && config.evalInterval !== 0) {
    problems.push(
      `'evalInterval' ${config.evalInterval} evaluates on held-out real tasks, and ${name} has no real env; set evalInterval 0`,
    );
  }
  if (config.curriculum && !source.curriculum)
    problems.push(
      `'curriculum' builds variations with a registered env's task generator, and ${name} has none; set curriculum false`,
    );
  if (!Number.isInteger(source.stepLimit) || source.stepLimit < 1)
    problems.push(`the source's stepLimit must be a positive integer; got ${source.stepLimit}`);
  if (problems.length)
    throw new ConfigError(`Invalid training config for the task source ${name}:\n- ${problems.join('\n- ')}`);
}
