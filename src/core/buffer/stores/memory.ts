/**
 * MemoryBufferStore: the buffer in plain Maps. Used by tests and as the CLI default, and as the
 * in-memory half of FolderBufferStore (which stages a batch here, writes it to disk, then applies it).
 *
 * Same semantics as the IndexedDB store: a batch is checked and copied whole (as structuredClone
 * copies, so a value IndexedDB could not store fails here too) before anything changes, so a failed
 * batch leaves the store as it was. Records handed out by reads are the store's own copies: treat
 * them as read-only.
 */
import {
  TRANSITION_SOURCES,
  type BufferEpisode,
  type BufferImport,
  type BufferStats,
  type BufferStore,
  type BufferTransition,
  type EvictionPolicy,
  type RunRecord,
  type TaskBankEntry,
  type TransitionFilter,
  type TransitionSource,
} from '../types';
import {
  checkBatch,
  checkRun,
  checkTask,
  closedError,
  compareInsertion,
  evictionSources,
  matchesFilter,
  type BufferStoreTestHooks,
} from './common';

export interface MemoryBufferStoreOptions {
  testHooks?: BufferStoreTestHooks;
}

/** A checked, copied batch, not yet applied. */
export interface StagedTransitions {
  transitions: BufferTransition[];
  episodes: BufferEpisode[];
  added: number;
  replaced: number;
}

/** What an eviction will remove, in removal order. */
export interface EvictionPlan {
  transitionIds: string[];
  /** Episodes of the removed transitions that have no transition left afterwards. */
  episodeIds: string[];
}

/** Everything a store holds, as loaded from somewhere else (FolderBufferStore's files). */
export interface BufferContents {
  transitions: Iterable<BufferTransition>;
  episodes: Iterable<BufferEpisode>;
  tasks: Iterable<TaskBankEntry>;
  runs: Iterable<RunRecord>;
}

export class MemoryBufferStore implements BufferStore {
  readonly kind: BufferStore['kind'] = 'memory';
  private readonly transitions = new Map<string, BufferTransition>();
  private readonly episodes = new Map<string, BufferEpisode>();
  private readonly tasks = new Map<string, TaskBankEntry>();
  private readonly runs = new Map<string, RunRecord>();
  /** Transitions in insertion order; null when a write broke the order (rebuilt on the next read). */
  private ordered: BufferTransition[] | null = [];
  private closed = false;
  private readonly hooks: BufferStoreTestHooks;

  constructor(options: MemoryBufferStoreOptions = {}) {
    this.hooks = options.testHooks ?? {};
  }

  // ---------------------------------------------------------------------------------------------
  // Writes
  // ---------------------------------------------------------------------------------------------

  async putTransitions(
    transitions: BufferTransition[],
    episodes: BufferEpisode[] = [],
  ): Promise<{ added: number; replaced: number }> {
    const staged = this.stageTransitions(transitions, episodes);
    this.hooks.beforeCommit?.('putTransitions');
    this.applyTransitions(staged);
    return { added: staged.added, replaced: staged.replaced };
  }

  /**
   * Checks and copies a batch and counts what is new, changing nothing (the first half of
   * putTransitions); embeddings handed over (BufferImport) are kept, not copied. Throws for a bad
   * record, an uncloneable value, or a throwing test hook.
   */
  stageTransitions(
    transitions: BufferTransition[],
    episodes: BufferEpisode[] = [],
    embeddingsHandedOver = false,
  ): StagedTransitions {
    this.assertOpen();
    checkBatch(transitions, episodes);
    const seen = new Set<string>();
    let added = 0;
    const copies = transitions.map((t, index) => {
      const copy = copyTransition(t, embeddingsHandedOver);
      if (!this.transitions.has(t.id) && !seen.has(t.id)) added++;
      seen.add(t.id);
      this.hooks.afterPut?.(index, copy);
      return copy;
    });
    return {
      transitions: copies,
      episodes: episodes.map((e) => structuredClone(e)),
      added,
      replaced: transitions.length - added,
    };
  }

  /** Applies a staged batch (cannot fail). */
  applyTransitions(staged: StagedTransitions): void {
    for (const t of staged.transitions) {
      const replacing = this.transitions.has(t.id);
      this.transitions.set(t.id, t);
      if (this.ordered === null) continue;
      const last = this.ordered[this.ordered.length - 1];
      // Appending in order keeps the cache (the usual case); anything else rebuilds it on the next read.
      if (!replacing && (last === undefined || compareInsertion(last, t) < 0)) this.ordered.push(t);
      else this.ordered = null;
    }
    for (const e of staged.episodes) this.episodes.set(e.id, e);
  }

  async putImport(batch: BufferImport): Promise<{ added: number; replaced: number }> {
    const staged = this.stageTransitions(batch.transitions, batch.episodes, batch.embeddingsHandedOver);
    const tasks = this.stageTasks(batch.tasks);
    this.hooks.beforeCommit?.('putImport');
    this.applyTransitions(staged);
    this.applyTasks(tasks);
    return { added: staged.added, replaced: staged.replaced };
  }

  async putTasks(tasks: TaskBankEntry[]): Promise<void> {
    const copies = this.stageTasks(tasks);
    this.hooks.beforeCommit?.('putTasks');
    for (const task of copies) this.tasks.set(task.id, task);
  }

  /** Checks and copies tasks without storing them. */
  stageTasks(tasks: TaskBankEntry[]): TaskBankEntry[] {
    this.assertOpen();
    tasks.forEach(checkTask);
    return tasks.map((task) => structuredClone(task));
  }

  /** Stores already-checked copies (FolderBufferStore, after its files are written). */
  applyTasks(tasks: TaskBankEntry[]): void {
    for (const task of tasks) this.tasks.set(task.id, task);
  }

  async putRun(run: RunRecord): Promise<void> {
    const copy = this.stageRun(run);
    this.hooks.beforeCommit?.('putRun');
    this.runs.set(copy.id, copy);
  }

  stageRun(run: RunRecord): RunRecord {
    this.assertOpen();
    checkRun(run);
    return structuredClone(run);
  }

  applyRun(run: RunRecord): void {
    this.runs.set(run.id, run);
  }

  async evict(policy: EvictionPolicy): Promise<string[]> {
    const plan = this.planEviction(policy);
    if (plan.transitionIds.length === 0) return [];
    this.hooks.beforeCommit?.('evict');
    this.applyEviction(plan);
    return plan.transitionIds;
  }

  /** Which transitions and episodes `evict(policy)` removes: sources in the policy's order, oldest first within each. */
  planEviction(policy: EvictionPolicy): EvictionPlan {
    this.assertOpen();
    const sources = evictionSources(policy);
    const env = policy.env;
    const held =
      env === undefined ? this.transitions.size : this.orderedTransitions().filter((t) => t.env === env).length;
    let excess = held - policy.maxTransitions;
    const transitionIds: string[] = [];
    const touchedEpisodes = new Set<string>();
    for (const source of sources) {
      if (excess <= 0) break;
      for (const t of this.orderedTransitions()) {
        if (excess <= 0) break;
        if (t.source !== source || (env !== undefined && t.env !== env)) continue;
        transitionIds.push(t.id);
        touchedEpisodes.add(t.episodeId);
        excess--;
      }
    }
    const removed = new Set(transitionIds);
    const stillUsed = new Set<string>();
    for (const t of this.transitions.values()) {
      if (touchedEpisodes.has(t.episodeId) && !removed.has(t.id)) stillUsed.add(t.episodeId);
    }
    const episodeIds = [...touchedEpisodes].filter((id) => !stillUsed.has(id) && this.episodes.has(id));
    return { transitionIds, episodeIds };
  }

  applyEviction(plan: EvictionPlan): void {
    for (const id of plan.transitionIds) this.transitions.delete(id);
    for (const id of plan.episodeIds) this.episodes.delete(id);
    // Removing oldest-first keeps the rest in order; filtering is cheaper than re-sorting.
    if (this.ordered !== null) this.ordered = this.ordered.filter((t) => this.transitions.get(t.id) === t);
  }

  async clear(): Promise<void> {
    this.assertOpen();
    this.hooks.beforeCommit?.('clear');
    this.applyClear();
  }

  applyClear(): void {
    this.transitions.clear();
    this.episodes.clear();
    this.tasks.clear();
    this.runs.clear();
    this.ordered = [];
  }

  /** Replaces the contents with records loaded elsewhere (taken as they are: no checks, no copies). */
  load(contents: BufferContents): void {
    this.applyClear();
    for (const t of contents.transitions) this.transitions.set(t.id, t);
    for (const e of contents.episodes) this.episodes.set(e.id, e);
    for (const task of contents.tasks) this.tasks.set(task.id, task);
    for (const run of contents.runs) this.runs.set(run.id, run);
    this.ordered = null;
  }

  // ---------------------------------------------------------------------------------------------
  // Reads
  // ---------------------------------------------------------------------------------------------

  async getTransition(id: string): Promise<BufferTransition | undefined> {
    this.assertOpen();
    return this.transitions.get(id);
  }

  /** The stored transition, synchronously (FolderBufferStore needs it while staging). */
  peekTransition(id: string): BufferTransition | undefined {
    return this.transitions.get(id);
  }

  async listTransitions(filter?: TransitionFilter): Promise<BufferTransition[]> {
    this.assertOpen();
    return this.orderedTransitions().filter((t) => matchesFilter(t, filter));
  }

  async forEachTransition(visit: (t: BufferTransition) => void, filter?: TransitionFilter): Promise<void> {
    this.assertOpen();
    for (const t of this.orderedTransitions()) if (matchesFilter(t, filter)) visit(t);
  }

  async countTransitions(filter?: TransitionFilter): Promise<number> {
    this.assertOpen();
    if (!filter || (filter.env === undefined && filter.source === undefined && !filter.validOnly))
      return this.transitions.size;
    let count = 0;
    for (const t of this.transitions.values()) if (matchesFilter(t, filter)) count++;
    return count;
  }

  async hasEpisode(id: string): Promise<boolean> {
    this.assertOpen();
    return this.episodes.has(id);
  }

  async listEpisodes(filter?: { env?: string; source?: TransitionSource }): Promise<BufferEpisode[]> {
    this.assertOpen();
    return [...this.episodes.values()]
      .filter(
        (e) =>
          (filter?.env === undefined || e.env === filter.env) &&
          (filter?.source === undefined || e.source === filter.source),
      )
      .sort(compareInsertion);
  }

  async listTasks(env?: string): Promise<TaskBankEntry[]> {
    this.assertOpen();
    return [...this.tasks.values()].filter((t) => env === undefined || t.env === env).sort(compareInsertion);
  }

  async listRuns(): Promise<RunRecord[]> {
    this.assertOpen();
    return [...this.runs.values()].sort(compareInsertion);
  }

  async stats(): Promise<BufferStats> {
    this.assertOpen();
    const byEnvAndSource: BufferStats['byEnvAndSource'] = {};
    let invalid = 0;
    const taskIds = new Set<string>();
    for (const t of this.transitions.values()) {
      const perSource = (byEnvAndSource[t.env] ??= {});
      perSource[t.source] = (perSource[t.source] ?? 0) + 1;
      if (!t.valid) invalid++;
      taskIds.add(`${t.env}\n${t.taskId}`);
    }
    return {
      transitions: this.transitions.size,
      episodes: this.episodes.size,
      tasks: this.tasks.size,
      transitionTasks: taskIds.size,
      runs: this.runs.size,
      byEnvAndSource: sortStats(byEnvAndSource),
      invalid,
    };
  }

  /** Record counts, synchronously. */
  sizes(): { transitions: number; episodes: number; tasks: number; runs: number } {
    return {
      transitions: this.transitions.size,
      episodes: this.episodes.size,
      tasks: this.tasks.size,
      runs: this.runs.size,
    };
  }

  /** Snapshots for FolderBufferStore's rewrites (insertion order). */
  allEpisodes(): BufferEpisode[] {
    return [...this.episodes.values()];
  }
  allTasks(): TaskBankEntry[] {
    return [...this.tasks.values()];
  }
  allRuns(): RunRecord[] {
    return [...this.runs.values()];
  }
  orderedTransitions(): BufferTransition[] {
    this.ordered ??= [...this.transitions.values()].sort(compareInsertion);
    return this.ordered;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw closedError(this.kind);
  }
}

/**
 * A checked transition copied as structuredClone copies it, several times faster (an import copies
 * half a million): its fields are strings, numbers, booleans, string arrays and a Float32Array,
 * which is kept as it is when it was handed over. Anything else in it (token usage, a field this
 * version does not know) goes through structuredClone, so a value IndexedDB could not store fails.
 */
function copyTransition(t: BufferTransition, embeddingHandedOver: boolean): BufferTransition {
  const copy: Record<string, unknown> = { ...t };
  for (const key of Object.keys(copy)) {
    const value = copy[key];
    if (typeof value !== 'object' || value === null) {
      if (typeof value === 'function' || typeof value === 'symbol') structuredClone(value); // throws, as for t
    } else if (key === 'embedding' && value instanceof Float32Array) {
      copy[key] = embeddingHandedOver ? value : new Float32Array(value);
    } else if ((key === 'admissible' || key === 'nextAdmissible') && Array.isArray(value)) {
      copy[key] = value.slice();
    } else copy[key] = structuredClone(value);
  }
  return copy as unknown as BufferTransition;
}

/** Stats keys in a stable order (env by name, sources as TRANSITION_SOURCES lists them). */
export function sortStats(byEnvAndSource: BufferStats['byEnvAndSource']): BufferStats['byEnvAndSource'] {
  const sorted: BufferStats['byEnvAndSource'] = {};
  for (const env of Object.keys(byEnvAndSource).sort()) {
    const perSource: Partial<Record<TransitionSource, number>> = {};
    for (const source of TRANSITION_SOURCES) {
      const count = byEnvAndSource[env][source];
      if (count) perSource[source] = count;
    }
    sorted[env] = perSource;
  }
  return sorted;
}
