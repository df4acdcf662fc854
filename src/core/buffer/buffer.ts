/**
 * The replay buffer (DreamGym's experience replay): a store for the records, an embedder for
 * φ(instruction, observation, action), and an in-memory exact top-k index over the vectors.
 * Seeded with offline real trajectories, enriched online with real and dreamed transitions, and
 * queried for the k most similar past transitions at every dreamed step.
 */
import type { Task, Trajectory } from '../types';
import { hashString } from '../rng';
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
import { DreamGymError } from '../errors';

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
  /**
   * Episodes whose id (or task id) the buffer already holds for a different episode, stored under
   * a new id made from their content instead (so importing them again finds them there).
   */
  renamed: { id: string; storedAs: string }[];
}

/** Raised for an import that names one episode id more than once (nothing is imported). */
export class DuplicateEpisodeError extends DreamGymError {
  constructor(readonly ids: string[]) {
    const shown =
      ids
        .slice(0, 5)
        .map((id) => `'${id}'`)
        .join(', ') + (ids.length > 5 ? `, … (${ids.length} in all)` : '');
    super(
      `The import names ${ids.length === 1 ? 'an episode id' : `${ids.length} episode ids`} more than once (${shown}); nothing was imported. ` +
        'Every episode needs an id of its own: convert the file again with `dreamgym convert` (it writes unique ids), or rename the repeats.',
      {
        code: 'duplicate-episode',
        fix: 'Give every episode an id of its own: convert the file again with `dreamgym convert`, or rename the repeats.',
      },
    );
    this.name = 'DuplicateEpisodeError';
  }
}

/**
 * What the buffer holds of an episode about to be imported; 'different' when its id, or its task's
 * id, is already taken by a different episode or task (two files with the same seeds).
 */
type Stored = 'whole' | 'partial' | 'absent' | 'different';

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
   * Gives transitions made here (no caller holds them) this buffer's embedding, in batches. A text
   * met again (a state that many episodes share) is embedded once, and its transitions share the
   * vector: records are read-only.
   */
  private async embedFresh(transitions: BufferTransition[]): Promise<void> {
    // transitionText is made of these three: instruction → observation → action → the vector's slot.
    const slots = new Map<string, Map<string, Map<string, number>>>();
    const slotOf = new Int32Array(transitions.length);
    const firsts: BufferTransition[] = [];
    transitions.forEach((t, k) => {
      let byObservation = slots.get(t.instruction);
      if (!byObservation) slots.set(t.instruction, (byObservation = new Map()));
      let byAction = byObservation.get(t.observation);
      if (!byAction) byObservation.set(t.observation, (byAction = new Map()));
      let slot = byAction.get(t.action);
      if (slot === undefined) byAction.set(t.action, (slot = firsts.push(t) - 1));
      slotOf[k] = slot;
    });
    const vectors: Float32Array[] = [];
    for (let start = 0; start < firsts.length; start += EMBED_BATCH) {
      const part = firsts.slice(start, start + EMBED_BATCH);
      vectors.push(...(await this.embedder.embed(part.map((t) => transitionText(t)))));
    }
    transitions.forEach((t, k) => {
      t.embedding = vectors[slotOf[k]];
      t.embedder = this.embedder.id;
    });
  }

  /**
   * Adds whole episodes (as offline/real/dream transitions) and their tasks to the task bank, in
   * ONE store commit (putImport): an import interrupted by a crash, a kill or a reload leaves
   * nothing, and importing again writes it. Episodes the buffer already holds whole are skipped
   * (importing a file twice adds nothing); episodes it holds only in part are written again whole.
   * An id named twice in the import is an error (DuplicateEpisodeError), never a silent skip.
   * `loadIndex: false` (a buffer seeded, then closed): an index not loaded yet is left so, and the
   * next search loads it from the store, this import included.
   */
  async importTrajectories(
    trajectories: readonly Trajectory[],
    options: { source: TransitionSource; createdAt: number; runId?: string; loadIndex?: boolean },
  ): Promise<ImportResult> {
    if (options.loadIndex !== false) await this.ensureLoaded();
    const repeated = repeatedIds(trajectories);
    if (repeated.length > 0) throw new DuplicateEpisodeError(repeated);
    const tasks = new Map((await this.store.listTasks()).map((e) => [e.id, e]));
    const episodeSteps = new Map((await this.store.listEpisodes()).map((e) => [e.id, e.steps]));
    const write: Trajectory[] = [];
    const fresh = new Set<string>();
    const renamed: ImportResult['renamed'] = [];
    // An empty buffer holds none of them: no need to look each transition up.
    const empty = tasks.size === 0 && episodeSteps.size === 0 && (await this.store.countTransitions()) === 0;
    for (const given of trajectories) {
      let t = given;
      let stored = empty ? 'absent' : await this.stored(t, tasks, episodeSteps);
      if (stored === 'different') {
        // Never overwrite nor drop it: store it beside the other one, under an id from its content.
        t = underContentId(t, tasks);
        stored = await this.stored(t, tasks, episodeSteps);
        if (stored === 'different') throw new EpisodeIdTakenError(given.id, t.id);
        if (stored !== 'whole') renamed.push({ id: given.id, storedAs: t.id });
      }
      if (stored === 'whole') continue;
      if (stored === 'absent') fresh.add(t.id);
      write.push(t);
    }
    const parts = write.map((t) => trajectoryToTransitions(t, options));
    const transitions = parts.flatMap((p) => p.transitions);
    await this.embedFresh(transitions);
    const result = await this.store.putImport({
      transitions,
      episodes: parts.map((p) => p.episode),
      tasks: taskEntries(write, fresh, tasks, options.createdAt),
      embeddingsHandedOver: true, // embedFresh made them, and the index copies what it keeps
    });
    if (this.loaded) this.index.add(transitions);
    return {
      episodes: fresh.size,
      transitions: result.added,
      skipped: trajectories.length - write.length,
      repaired: write.length - fresh.size,
      renamed,
    };
  }

  /**
   * Whether the buffer holds an episode whole (its record, every transition, its task), in part,
   * not at all, or holds a different episode or task under its ids.
   */
  private async stored(
    t: Trajectory,
    tasks: ReadonlyMap<string, TaskBankEntry>,
    episodeSteps: ReadonlyMap<string, number>,
  ): Promise<Stored> {
    const steps = episodeSteps.get(t.id);
    const task = tasks.get(t.task.id);
    if ((steps !== undefined && steps !== t.steps.length) || (task && !sameTask(task.task, t.task))) return 'different';
    if (await this.store.getTransition(transitionId(t.id, t.steps.length))) return 'different'; // a longer episode
    const { transitions } = trajectoryToTransitions(t, { source: 'offline', createdAt: 0 });
    let present = 0;
    for (const incoming of transitions) {
      const held = await this.store.getTransition(incoming.id);
      if (!held) continue;
      if (!sameTransition(held, incoming)) return 'different';
      present++;
    }
    if (steps !== undefined && present === t.steps.length && task) return 'whole';
    return steps !== undefined || present > 0 ? 'partial' : 'absent';
  }

  /**
   * The k most similar stored transitions to a state–action (or free text, read as both the
   * instruction and the page), by cosine of the embeddings; valid transitions only unless asked.
   */
  async retrieve(query: RetrievalQuery, k: number, options: SearchOptions = {}): Promise<RetrievedTransition[]> {
    await this.ensureLoaded();
    const [vector] = await this.embedder.embed([queryText(query)]);
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

/** What a retrieval looks for: a state–action, or free text. */
export type RetrievalQuery = { instruction: string; observation: string; action: string } | string;

/**
 * The text a query is embedded as. Free text is matched as both the task and the page (the stored
 * vectors are field-marked; unmarked text would land in a field of its own and match nothing well).
 */
export function queryText(query: RetrievalQuery): string {
  return transitionText(typeof query === 'string' ? { instruction: query, observation: query, action: '' } : query);
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

/** Raised when an episode's content-made id is taken too (a digest collision): nothing is imported. */
export class EpisodeIdTakenError extends DreamGymError {
  constructor(
    readonly id: string,
    readonly storedAs: string,
  ) {
    super(
      `The buffer already holds a different episode under '${id}' and under '${storedAs}'; nothing was imported. ` +
        'Rename the episode in the file (every episode needs an id of its own), then import it again.',
      {
        code: 'episode-id-taken',
        fix: 'Rename the episode in the file (every episode needs an id of its own), then import it again.',
      },
    );
    this.name = 'EpisodeIdTakenError';
  }
}

/** Fields that make two transitions the same step of the same episode (not when or how they were imported). */
function sameTransition(a: BufferTransition, b: BufferTransition): boolean {
  return (
    a.env === b.env &&
    a.taskId === b.taskId &&
    a.instruction === b.instruction &&
    a.observation === b.observation &&
    a.action === b.action &&
    a.nextObservation === b.nextObservation &&
    a.reward === b.reward &&
    a.terminated === b.terminated &&
    a.truncated === b.truncated &&
    a.valid === b.valid &&
    (a.reasoning ?? '') === (b.reasoning ?? '')
  );
}

function sameTask(a: Task, b: Task): boolean {
  return a.env === b.env && a.instruction === b.instruction;
}

/**
 * The episode under `ID~DIGEST` (DIGEST from its task and steps), and its task too when the bank
 * holds a different task under its task's id: the same file imported again lands on the same ids.
 */
function underContentId(t: Trajectory, tasks: ReadonlyMap<string, TaskBankEntry>): Trajectory {
  const content = JSON.stringify([t.env, t.task.instruction, t.steps, t.final_observation]);
  const digest = hashString(content).toString(16).padStart(8, '0');
  const task = tasks.get(t.task.id);
  const taskId = task && !sameTask(task.task, t.task) ? `${t.task.id}~${digest}` : t.task.id;
  return { ...t, id: `${t.id}~${digest}`, task: { ...t.task, id: taskId } };
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
    // The seed ends the id, before a chat-format digest and a `~` suffix (see importTrajectories).
    const seedMatch = /(\d+)(?:_[0-9a-f]{8})?(?:~[0-9a-f]+)?$/.exec(id);
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
