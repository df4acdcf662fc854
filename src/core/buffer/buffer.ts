/**
 * The replay buffer (DreamGym's experience replay): a store for the records, an embedder for
 * φ(instruction, observation, action), and an in-memory exact top-k index over the vectors.
 * Seeded with offline real trajectories, enriched online with real and dreamed transitions, and
 * queried for the k most similar past transitions at every dreamed step.
 */
import type { Task, Trajectory } from '../types';
import { HashedNgramEmbedder, transitionText, type Embedder } from './embedders';
import { RetrievalIndex, type SearchOptions } from './retrieval';
import { trajectoryToTransitions, transitionId } from './transitions';
import type {
  BufferEpisode,
  BufferStats,
  BufferStore,
  BufferTransition,
  EvictionPolicy,
  TaskBankEntry,
  TransitionSource,
} from './types';

export interface RetrievedTransition {
  transition: BufferTransition;
  score: number;
}

export interface ImportResult {
  /** Episodes written (new). */
  episodes: number;
  /** Transitions written (new). */
  transitions: number;
  /** Episodes skipped because the buffer already holds them whole (re-import is a no-op). */
  skipped: number;
  /**
   * Episodes the buffer held only in part — some transitions, or no task-bank entry (what an
   * interrupted import of an older version left) — written again whole.
   */
  repaired: number;
}

/** Raised for an import that names one episode id more than once (nothing is imported). */
export class DuplicateEpisodeError extends Error {
  constructor(readonly ids: string[]) {
    const shown =
      ids
        .slice(0, 5)
        .map((id) => `'${id}'`)
        .join(', ') + (ids.length > 5 ? `, … (${ids.length} in all)` : '');
    super(
      `The import names ${ids.length === 1 ? 'an episode id' : `${ids.length} episode ids`} more than once (${shown}); nothing was imported. ` +
        'Every episode needs an id of its own: convert the file again with `dreamgym convert` (it writes unique ids), or rename the repeats.',
    );
    this.name = 'DuplicateEpisodeError';
  }
}

/** What the buffer holds of an episode about to be imported. */
type Stored = 'whole' | 'partial' | 'absent';

export class ReplayBuffer {
  readonly index: RetrievalIndex;
  private loaded = false;
  /** A cap on transitions kept (see keepAtMost); none by default. */
  private capacity: EvictionPolicy | null = null;

  constructor(
    readonly store: BufferStore,
    readonly embedder: Embedder = new HashedNgramEmbedder(),
  ) {
    if (!embedder.dims)
      throw new Error(
        'ReplayBuffer: the embedder must know its dims before the buffer is built (embed one text first).',
      );
    this.index = new RetrievalIndex(embedder.dims, { embedder: embedder.id });
  }

  /** Builds the retrieval index from the store (cold start); vectors of another embedder are recomputed. */
  async load(): Promise<{ transitions: number; reembedded: number }> {
    let count = 0;
    const pending: BufferTransition[] = [];
    const flush = async () => {
      const vectors = await this.embedder.embed(pending.map((t) => transitionText(t)));
      this.index.add(pending.map((t, i) => ({ ...t, embedding: vectors[i], embedder: this.embedder.id })));
      pending.length = 0;
    };
    let reembedded = 0;
    const batch: BufferTransition[] = [];
    await this.store.forEachTransition((t) => {
      count++;
      if (t.embedding && t.embedder === this.embedder.id && t.embedding.length === this.embedder.dims) batch.push(t);
      else {
        pending.push(t);
        reembedded++;
      }
      if (batch.length >= 4096) {
        this.index.add(batch);
        batch.length = 0;
      }
    });
    if (batch.length) this.index.add(batch);
    while (pending.length) await flush();
    this.loaded = true;
    return { transitions: count, reembedded };
  }

  private async ensureLoaded(): Promise<void> {
    if (!this.loaded) await this.load();
  }

  /**
   * Keeps at most `maxTransitions`: before each add, the oldest transitions of `sources` (in that
   * order) make room for the batch, so the cap holds at every moment, not only after a write.
   */
  keepAtMost(maxTransitions: number, sources: EvictionPolicy['sources'] = ['dream', 'real']): void {
    this.capacity = { maxTransitions, sources };
  }

  /** Embeds what is not embedded yet, writes the batch atomically (after making room under the cap), then indexes it. */
  async add(
    transitions: BufferTransition[],
    episodes: BufferEpisode[] = [],
  ): Promise<{ added: number; replaced: number }> {
    await this.ensureLoaded();
    if (this.capacity && transitions.length > 0) {
      await this.evict({
        ...this.capacity,
        maxTransitions: Math.max(0, this.capacity.maxTransitions - transitions.length),
      });
    }
    const embedded = await this.embedded(transitions);
    const result = await this.store.putTransitions(embedded, episodes);
    this.index.add(embedded);
    return result;
  }

  /** The transitions with this buffer's embedding (computed for those without one, in batches). */
  private async embedded(transitions: BufferTransition[]): Promise<BufferTransition[]> {
    const missing = transitions.filter((t) => !(t.embedding && t.embedder === this.embedder.id));
    const byId = new Map<string, Float32Array>();
    for (let start = 0; start < missing.length; start += EMBED_BATCH) {
      const part = missing.slice(start, start + EMBED_BATCH);
      const vectors = await this.embedder.embed(part.map((t) => transitionText(t)));
      part.forEach((t, i) => byId.set(t.id, vectors[i]));
    }
    return transitions.map((t) =>
      byId.has(t.id) ? { ...t, embedding: byId.get(t.id)!, embedder: this.embedder.id } : t,
    );
  }

  /**
   * Adds whole episodes (as offline/real/dream transitions) and their tasks to the task bank, in
   * ONE store commit (putImport): an import interrupted by a crash, a kill or a reload leaves
   * nothing, and importing again writes it. Episodes the buffer already holds whole are skipped
   * (importing a file twice adds nothing); episodes it holds only in part are written again whole.
   * An id named twice in the import is an error (DuplicateEpisodeError), never a silent skip.
   */
  async importTrajectories(
    trajectories: readonly Trajectory[],
    options: { source: TransitionSource; createdAt: number; runId?: string },
  ): Promise<ImportResult> {
    await this.ensureLoaded();
    const repeated = repeatedIds(trajectories);
    if (repeated.length > 0) throw new DuplicateEpisodeError(repeated);
    const tasks = new Map((await this.store.listTasks()).map((e) => [e.id, e]));
    const write: Trajectory[] = [];
    const fresh = new Set<string>();
    for (const t of trajectories) {
      const stored = await this.stored(t, tasks);
      if (stored === 'whole') continue;
      if (stored === 'absent') fresh.add(t.id);
      write.push(t);
    }
    const parts = write.map((t) => trajectoryToTransitions(t, options));
    const transitions = await this.embedded(parts.flatMap((p) => p.transitions));
    const result = await this.store.putImport({
      transitions,
      episodes: parts.map((p) => p.episode),
      tasks: taskEntries(write, fresh, tasks, options.createdAt),
    });
    this.index.add(transitions);
    return {
      episodes: fresh.size,
      transitions: result.added,
      skipped: trajectories.length - write.length,
      repaired: write.length - fresh.size,
    };
  }

  /** Whether the buffer holds an episode whole (its record, every transition, its task), in part, or not at all. */
  private async stored(t: Trajectory, tasks: ReadonlyMap<string, TaskBankEntry>): Promise<Stored> {
    const episode = await this.store.hasEpisode(t.id);
    let present = 0;
    for (let i = 0; i < t.steps.length; i++) if (await this.store.getTransition(transitionId(t.id, i))) present++;
    if (episode && present === t.steps.length && tasks.has(t.task.id)) return 'whole';
    return episode || present > 0 ? 'partial' : 'absent';
  }

  /**
   * The k most similar stored transitions to a state–action (or free text, read as both the
   * instruction and the page), by cosine of the embeddings; valid transitions only unless asked.
   */
  async retrieve(
    query: { instruction: string; observation: string; action: string } | string,
    k: number,
    options: SearchOptions = {},
  ): Promise<RetrievedTransition[]> {
    await this.ensureLoaded();
    // Free text is matched as both the task and the page (the stored vectors are field-marked;
    // unmarked text would land in a field of its own and match nothing well).
    const text = transitionText(
      typeof query === 'string' ? { instruction: query, observation: query, action: '' } : query,
    );
    const [vector] = await this.embedder.embed([text]);
    const hits = this.index.search(vector, k, options);
    const out: RetrievedTransition[] = [];
    for (const hit of hits) {
      const transition = await this.store.getTransition(hit.id);
      if (transition) out.push({ transition, score: hit.score });
    }
    return out;
  }

  async evict(policy: EvictionPolicy): Promise<number> {
    await this.ensureLoaded();
    const removed = await this.store.evict(policy);
    this.index.remove(removed);
    return removed.length;
  }

  async clear(): Promise<void> {
    await this.store.clear();
    this.index.clear();
  }

  stats(): Promise<BufferStats> {
    return this.store.stats();
  }
}

/** Texts embedded at once while importing (bounds the embedder's working memory). */
const EMBED_BATCH = 2048;

/** Ids named more than once, each once. */
function repeatedIds(trajectories: readonly Trajectory[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const t of trajectories) (seen.has(t.id) ? repeated : seen).add(t.id);
  return [...repeated];
}

/**
 * Task-bank entries of the written episodes: a task new to the bank counts all of them; a task
 * already there adds only the episodes new to the buffer (a repaired one was counted before).
 */
function taskEntries(
  written: readonly Trajectory[],
  fresh: ReadonlySet<string>,
  existing: ReadonlyMap<string, TaskBankEntry>,
  createdAt: number,
): TaskBankEntry[] {
  const byTask = new Map<string, Trajectory[]>();
  for (const t of written) {
    const list = byTask.get(t.task.id);
    if (list) list.push(t);
    else byTask.set(t.task.id, [t]);
  }
  const entries: TaskBankEntry[] = [];
  for (const [id, episodes] of byTask) {
    const before = existing.get(id);
    const counted = before ? episodes.filter((t) => fresh.has(t.id)) : episodes;
    if (before && counted.length === 0) continue;
    const task = episodes[0].task;
    entries.push({
      id,
      env: task.env,
      task,
      origin: task.origin,
      ...(task.parent ? { parent: task.parent } : {}),
      rollouts: (before?.rollouts ?? 0) + counted.length,
      successes: (before?.successes ?? 0) + counted.filter((t) => t.result.success).length,
      createdAt: before?.createdAt ?? createdAt,
    });
  }
  return entries;
}

/** Buffer transitions → our trajectory records (for export), grouped by episode in step order. */
export function transitionsToTrajectories(
  transitions: readonly BufferTransition[],
  tasks: ReadonlyMap<string, Task>,
): Trajectory[] {
  const episodes = new Map<string, BufferTransition[]>();
  for (const t of transitions) {
    let list = episodes.get(t.episodeId);
    if (!list) episodes.set(t.episodeId, (list = []));
    list.push(t);
  }
  return [...episodes.entries()].map(([id, steps]) => {
    steps.sort((a, b) => a.stepIndex - b.stepIndex);
    const first = steps[0];
    const last = steps[steps.length - 1];
    const task: Task = tasks.get(first.taskId) ?? {
      id: first.taskId,
      env: first.env,
      instruction: first.instruction,
      difficulty: 0.5,
      origin: 'imported',
    };
    const reward = steps.reduce((s, x) => s + x.reward, 0);
    const success = last.terminated && last.reward >= 1;
    const seedMatch = /(\d+)$/.exec(id);
    return {
      format: 'dreamgym-trajectory/1',
      id,
      env: first.env,
      seed: task.seed ?? (seedMatch ? Number(seedMatch[1]) : 0),
      source: first.source === 'dream' ? 'dream' : first.source === 'real' ? 'agent' : 'imported',
      task,
      steps: steps.map((s) => ({
        observation: s.observation,
        admissible: s.admissible,
        ...(s.reasoning ? { thought: s.reasoning } : {}),
        action: s.action,
        reward: s.reward,
        terminated: s.terminated,
        truncated: s.truncated,
        valid: s.valid,
      })),
      final_observation: last.nextObservation,
      result: {
        reward,
        success,
        score: success ? 1 : last.terminated ? reward : 0,
        steps: steps.length,
        terminate_reason: success
          ? 'success'
          : last.terminated
            ? 'terminated'
            : last.truncated
              ? 'truncated'
              : 'unfinished',
      },
    };
  });
}
