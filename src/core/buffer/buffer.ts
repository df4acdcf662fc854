/**
 * The replay buffer (DreamGym's experience replay): a store for the records, an embedder for
 * φ(instruction, observation, action), and an in-memory exact top-k index over the vectors.
 * Seeded with offline real trajectories, enriched online with real and dreamed transitions, and
 * queried for the k most similar past transitions at every dreamed step.
 */
import type { Task, Trajectory } from '../types';
import { HashedNgramEmbedder, transitionText, type Embedder } from './embedders';
import { RetrievalIndex, type SearchOptions } from './retrieval';
import { trajectoryToTransitions } from './transitions';
import type { BufferEpisode, BufferStats, BufferStore, BufferTransition, EvictionPolicy, TaskBankEntry, TransitionSource } from './types';

export interface RetrievedTransition { transition: BufferTransition; score: number }

export interface ImportResult {
  /** Episodes written (new). */
  episodes: number;
  /** Transitions written (new). */
  transitions: number;
  /** Episodes skipped because the buffer already holds them (re-import is a no-op). */
  skipped: number;
}

export class ReplayBuffer {
  readonly index: RetrievalIndex;
  private loaded = false;

  constructor(readonly store: BufferStore, readonly embedder: Embedder = new HashedNgramEmbedder()) {
    if (!embedder.dims) throw new Error('ReplayBuffer: the embedder must know its dims before the buffer is built (embed one text first).');
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
      else { pending.push(t); reembedded++; }
      if (batch.length >= 4096) { this.index.add(batch); batch.length = 0; }
    });
    if (batch.length) this.index.add(batch);
    while (pending.length) await flush();
    this.loaded = true;
    return { transitions: count, reembedded };
  }

  private async ensureLoaded(): Promise<void> {
    if (!this.loaded) await this.load();
  }

  /** Embeds what is not embedded yet, writes the batch atomically, then indexes it. */
  async add(transitions: BufferTransition[], episodes: BufferEpisode[] = []): Promise<{ added: number; replaced: number }> {
    await this.ensureLoaded();
    const missing = transitions.filter((t) => !(t.embedding && t.embedder === this.embedder.id));
    const vectors = missing.length ? await this.embedder.embed(missing.map((t) => transitionText(t))) : [];
    const byId = new Map(missing.map((t, i) => [t.id, vectors[i]]));
    const embedded = transitions.map((t) => (byId.has(t.id) ? { ...t, embedding: byId.get(t.id)!, embedder: this.embedder.id } : t));
    const result = await this.store.putTransitions(embedded, episodes);
    this.index.add(embedded);
    return result;
  }

  /**
   * Adds whole episodes (as offline/real/dream transitions) and their tasks to the task bank.
   * Episodes already in the buffer are skipped, so importing the same file twice adds nothing.
   */
  async importTrajectories(trajectories: readonly Trajectory[], options: { source: TransitionSource; createdAt: number; runId?: string; batchSize?: number }): Promise<ImportResult> {
    await this.ensureLoaded();
    const fresh: Trajectory[] = [];
    const seen = new Set<string>();
    for (const t of trajectories) {
      if (seen.has(t.id) || (await this.store.hasEpisode(t.id))) continue;
      seen.add(t.id);
      fresh.push(t);
    }
    let transitions = 0;
    const batchSize = options.batchSize ?? 200;
    for (let start = 0; start < fresh.length; start += batchSize) {
      const chunk = fresh.slice(start, start + batchSize).map((t) => trajectoryToTransitions(t, options));
      const result = await this.add(chunk.flatMap((c) => c.transitions), chunk.map((c) => c.episode));
      transitions += result.added;
    }
    const tasks = new Map<string, Task>();
    for (const t of fresh) tasks.set(t.task.id, t.task);
    const existing = new Map((await this.store.listTasks()).map((e) => [e.id, e]));
    const entries: TaskBankEntry[] = [...tasks.values()].map((task) => {
      const before = existing.get(task.id);
      const outcomes = fresh.filter((t) => t.task.id === task.id);
      return {
        id: task.id, env: task.env, task, origin: task.origin, ...(task.parent ? { parent: task.parent } : {}),
        rollouts: (before?.rollouts ?? 0) + outcomes.length,
        successes: (before?.successes ?? 0) + outcomes.filter((t) => t.result.success).length,
        createdAt: before?.createdAt ?? options.createdAt,
      };
    });
    if (entries.length) await this.store.putTasks(entries);
    return { episodes: fresh.length, transitions, skipped: trajectories.length - fresh.length };
  }

  /**
   * The k most similar stored transitions to a state–action (or free text, read as both the
   * instruction and the page), by cosine of the embeddings; valid transitions only unless asked.
   */
  async retrieve(query: { instruction: string; observation: string; action: string } | string, k: number, options: SearchOptions = {}): Promise<RetrievedTransition[]> {
    await this.ensureLoaded();
    // Free text is matched as both the task and the page (the stored vectors are field-marked;
    // unmarked text would land in a field of its own and match nothing well).
    const text = transitionText(typeof query === 'string' ? { instruction: query, observation: query, action: '' } : query);
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

/** Buffer transitions → our trajectory records (for export), grouped by episode in step order. */
export function transitionsToTrajectories(transitions: readonly BufferTransition[], tasks: ReadonlyMap<string, Task>): Trajectory[] {
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
    const task: Task = tasks.get(first.taskId) ?? { id: first.taskId, env: first.env, instruction: first.instruction, difficulty: 0.5, origin: 'imported' };
    const reward = steps.reduce((s, x) => s + x.reward, 0);
    const success = last.terminated && last.reward >= 1;
    const seedMatch = /(\d+)$/.exec(id);
    return {
      format: 'dreamgym-trajectory/1', id, env: first.env, seed: task.seed ?? (seedMatch ? Number(seedMatch[1]) : 0),
      source: first.source === 'dream' ? 'dream' : first.source === 'real' ? 'agent' : 'imported',
      task,
      steps: steps.map((s) => ({ observation: s.observation, admissible: s.admissible, ...(s.reasoning ? { thought: s.reasoning } : {}),
        action: s.action, reward: s.reward, terminated: s.terminated, truncated: s.truncated, valid: s.valid })),
      final_observation: last.nextObservation,
      result: { reward, success, score: success ? 1 : last.terminated ? reward : 0, steps: steps.length,
        terminate_reason: success ? 'success' : last.terminated ? 'terminated' : last.truncated ? 'truncated' : 'unfinished' },
    };
  });
}
