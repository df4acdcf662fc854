/**
 * The curriculum task generator (DreamGym §4, Eqs. 6–7): after each iteration, the tasks whose
 * rollout group had mixed outcomes — reward variance V = p(1 − p) > 0 for binary success, the
 * paper's "reward entropy" — become seeds, and variations of them (one notch harder when the
 * group mostly succeeded, easier when it mostly failed) join the next batches. λ caps the share
 * of synthetic tasks in a batch exactly; the rest comes from the original task pool.
 *
 * Everything is deterministic in (seed, iteration) and the recorded outcomes, and the state is
 * plain data, so a checkpoint resumes the same curriculum.
 */
import { clusterTasks, selectClusterSeeds, type GroupOutcome } from './clusters';
import { Rng } from '../rng';
import type { Task } from '../types';
import type { EnvDefinition } from '../envs/env';
import type { LlmTaskGenerator } from './llm-variations';

/** V = p(1 − p) for a group's success rate p (0 for an empty group). */
export function rewardVariance(successes: number, rollouts: number): number {
  if (rollouts <= 0) return 0;
  const p = successes / rollouts;
  return p * (1 - p);
}

export type { GroupOutcome };

/** The top-m groups with V > 0, highest V first (ties: lower success rate first, then task id). */
export function selectSeedTasks(groups: readonly GroupOutcome[], m: number): GroupOutcome[] {
  return groups
    .map((g) => ({ g, v: rewardVariance(g.successes, g.rollouts), p: g.rollouts ? g.successes / g.rollouts : 0 }))
    .filter((x) => x.v > 0)
    .sort((a, b) => b.v - a.v || a.p - b.p || (a.g.task.id < b.g.task.id ? -1 : a.g.task.id > b.g.task.id ? 1 : 0))
    .slice(0, Math.max(0, m))
    .map((x) => x.g);
}

/** How many of a batch of `batchSize` may be synthetic under λ (floor, so λ is never exceeded). */
export function syntheticSlots(batchSize: number, lambda: number): number {
  return Math.floor(batchSize * Math.min(1, Math.max(0, lambda)) + 1e-9);
}

export interface CurriculumOptions {
  /** Share of each batch that may be synthetic (variations), 0..1. */
  lambda: number;
  /** Seeds taken per iteration (top-m by variance). */
  seedsPerIteration: number;
  /** Difficulty of the original task pool. */
  difficulty: number;
  /** Original pool: seeds 0..taskPool-1. */
  taskPool: number;
  seed: number;
  /** false = the fixed task pool only (the "no curriculum" ablation). */
  enabled: boolean;
  /** What a group is: one task's rollouts (default), or a k-means cluster of similar tasks (clusters.ts). */
  grouping?: 'task' | 'cluster';
  /** k of the clustering (0 or absent: round(√tasks)). */
  clusters?: number;
  /** Pending variations kept at most (oldest dropped). */
  maxPending?: number;
  /**
   * Where variations come from: 'procedural' (default: `mutateTask`, validated by the expert
   * solver), 'llm' (`generateLlmVariations` with an LlmTaskGenerator: dream-only tasks) or 'both'.
   */
  variations?: VariationSource;
}

export const VARIATION_SOURCES = ['procedural', 'llm', 'both'] as const;
export type VariationSource = (typeof VARIATION_SOURCES)[number];

export interface TaskOutcome {
  rollouts: number;
  successes: number;
  origin: Task['origin'];
  parent?: string;
  instruction: string;
  /** Iterations whose batch held the task, and the last one. */
  iterations: number;
  lastIteration: number;
}

export interface CurriculumState {
  pending: Task[];
  /** Per task id: rollouts and successes over the whole run, and when it ran (the Curriculum page's task bank). */
  outcomes: Record<string, TaskOutcome>;
  lastMeanVariance: number;
  lastSyntheticShare: number;
}

export interface CurriculumBatch {
  tasks: Task[];
  synthetic: number;
}

export interface BatchOptions {
  /**
   * The batch is played in a real env: tasks only the dream can play (origin 'llm', no spec) are
   * skipped — they stay queued — and their slots go to other variations or pool tasks.
   */
  realEnv?: boolean;
}

/** Tasks only a DreamEnv can play: LLM-written, no spec a real env could rebuild. */
export function isDreamOnly(task: Task): boolean {
  return task.origin === 'llm';
}

export class Curriculum {
  private pending: Task[] = [];
  private readonly poolCache = new Map<number, Task>();
  readonly outcomes = new Map<string, TaskOutcome>();
  lastMeanVariance = 0;
  lastSyntheticShare = 0;
  /** LLM variations queued and broken LLM answers of the last recorded iteration (0 when none were asked for). */
  lastLlmQueued = 0;
  lastLlmInvalid = 0;
  /** The seeds `record` picked last, kept for `generateLlmVariations` (same iteration). */
  private lastSeeds: { iteration: number; seeds: GroupOutcome[] } | null = null;

  constructor(
    readonly definition: EnvDefinition<unknown>,
    readonly options: CurriculumOptions,
  ) {}

  private poolTask(seed: number): Task {
    let task = this.poolCache.get(seed);
    if (!task) {
      task = this.definition.generateTask(seed, this.options.difficulty);
      this.poolCache.set(seed, task);
    }
    return task;
  }

  /** The tasks of iteration `iteration`: synthetic variations first (at most λ·B), then pool tasks. */
  nextBatch(iteration: number, batchSize: number, batchOptions: BatchOptions = {}): CurriculumBatch {
    const rng = Rng.fromSeed(this.options.seed, 'curriculum-batch', String(iteration));
    const slots = this.options.enabled ? syntheticSlots(batchSize, this.options.lambda) : 0;
    const synthetic: Task[] = [];
    if (batchOptions.realEnv) {
      // Dream-only tasks stay queued; the oldest playable variations take the slots.
      for (let i = 0; i < this.pending.length && synthetic.length < slots;) {
        if (isDreamOnly(this.pending[i])) i++;
        else synthetic.push(...this.pending.splice(i, 1));
      }
    } else {
      synthetic.push(...this.pending.splice(0, slots));
    }
    const tasks = [...synthetic];
    while (tasks.length < batchSize) tasks.push(this.poolTask(rng.int(0, this.options.taskPool - 1)));
    this.lastSyntheticShare = synthetic.length / batchSize;
    return { tasks, synthetic: synthetic.length };
  }

  /** Records an iteration's group outcomes, selects seeds and queues their variations. */
  record(iteration: number, groups: readonly GroupOutcome[]): { seeds: Task[]; variations: Task[] } {
    this.lastLlmQueued = 0;
    this.lastLlmInvalid = 0;
    for (const g of groups) {
      const entry: TaskOutcome = this.outcomes.get(g.task.id) ?? {
        rollouts: 0,
        successes: 0,
        origin: g.task.origin,
        ...(g.task.parent ? { parent: g.task.parent } : {}),
        instruction: g.task.instruction,
        iterations: 0,
        lastIteration: 0,
      };
      entry.rollouts += g.rollouts;
      entry.successes += g.successes;
      if (entry.lastIteration !== iteration) entry.iterations++;
      entry.lastIteration = iteration;
      this.outcomes.set(g.task.id, entry);
    }
    this.lastMeanVariance = groups.length
      ? groups.reduce((s, g) => s + rewardVariance(g.successes, g.rollouts), 0) / groups.length
      : 0;
    if (!this.options.enabled) return { seeds: [], variations: [] };
    // Groups are each task's rollouts, or (the paper's PPO grouping) clusters of similar tasks.
    const seeds =
      this.options.grouping === 'cluster'
        ? selectClusterSeeds(
            clusterTasks(
              groups,
              this.options.clusters ?? 0,
              Rng.fromSeed(this.options.seed, 'curriculum-clusters', String(iteration)),
            ),
            this.options.seedsPerIteration,
          )
        : selectSeedTasks(groups, this.options.seedsPerIteration);
    this.lastSeeds = { iteration, seeds: seeds.slice() };
    const rng = Rng.fromSeed(this.options.seed, 'curriculum-vary', String(iteration));
    const variations: Task[] = [];
    for (const s of this.options.variations === 'llm' ? [] : seeds) {
      const direction = s.successes / s.rollouts >= 0.5 ? 'harder' : 'easier';
      try {
        variations.push(this.definition.mutateTask(s.task, rng.split(s.task.id), direction));
      } catch {
        // A task with no valid neighbour in that direction yields no variation this time.
      }
    }
    this.enqueue(variations);
    return { seeds: seeds.map((s) => s.task), variations };
  }

  /** Queues variations under the pending limit (oldest dropped). */
  private enqueue(tasks: readonly Task[]): void {
    this.pending.push(...tasks);
    const max = this.options.maxPending ?? 256;
    if (this.pending.length > max) this.pending.splice(0, this.pending.length - max);
  }

  /** Whether this curriculum asks an LLM for variations ('llm' or 'both'). */
  get usesLlm(): boolean {
    return this.options.enabled && (this.options.variations === 'llm' || this.options.variations === 'both');
  }

  /** The tasks queued now (copies), oldest first. */
  get pendingTasks(): Task[] {
    return this.pending.map((t) => ({ ...t }));
  }

  /**
   * After `record(iteration, …)`: asks `generator` for variations of that iteration's seeds and
   * queues them (dream-only; λ caps them in `nextBatch` like every variation, and the pending
   * limit holds). Candidates duplicating a task of the bank or the queue are dropped by the
   * generator. A broken answer is counted in `lastLlmInvalid`, never thrown.
   */
  async generateLlmVariations(
    iteration: number,
    generator: LlmTaskGenerator,
    signal?: AbortSignal,
  ): Promise<{ queued: Task[]; invalid: number }> {
    this.lastLlmQueued = 0;
    this.lastLlmInvalid = 0;
    const seeds = this.lastSeeds?.iteration === iteration ? this.lastSeeds.seeds : [];
    if (!this.usesLlm || seeds.length === 0) return { queued: [], invalid: 0 };
    const known = [
      ...[...this.outcomes.entries()].map(([id, o]) => ({ id, instruction: o.instruction })),
      ...this.pending.map((t) => ({ id: t.id, instruction: t.instruction })),
    ];
    const examples = [...this.outcomes.values()]
      .filter((o) => o.origin === 'generated')
      .slice(0, 3)
      .map((o) => o.instruction);
    const result = await generator.generate(seeds, { iteration, known, examples, signal });
    this.enqueue(result.tasks);
    this.lastLlmQueued = result.tasks.length;
    this.lastLlmInvalid = result.invalid;
    return { queued: result.tasks, invalid: result.invalid };
  }

  state(): CurriculumState {
    return {
      pending: this.pending.map((t) => ({ ...t })),
      outcomes: Object.fromEntries([...this.outcomes.entries()].map(([id, o]) => [id, { ...o }])),
      lastMeanVariance: this.lastMeanVariance,
      lastSyntheticShare: this.lastSyntheticShare,
    };
  }

  restore(state: CurriculumState): void {
    this.pending = state.pending.map((t) => ({ ...t }));
    this.outcomes.clear();
    for (const [id, o] of Object.entries(state.outcomes)) this.outcomes.set(id, { ...o });
    this.lastMeanVariance = state.lastMeanVariance;
    this.lastSyntheticShare = state.lastSyntheticShare;
  }
}
