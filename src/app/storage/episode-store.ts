/**
 * Episode traces of each run, in IndexedDB, for the Inspect page: the trainer worker writes an
 * iteration's episodes right after its rollouts; the page (same origin) lists and loads them.
 * Only the last `keep` iterations of a run are kept, so storage stays bounded (a household
 * iteration of 8 episodes × 50 steps is a few MB of text).
 *
 * Two object stores under the same key [runId, iteration, index]: `summaries` (small: what the
 * episode list and its filters need) and `traces` (the full steps), so listing never reads the
 * observations. A repeated iteration (a resumed run after a crash) replaces its rows.
 */
import type { IDBPDatabase } from 'idb';
import { IdbConnection } from './idb-connection';
import type { Phase } from '../../core/train/config';
import type { EpisodeTrace } from '../../core/train/trace';
import type { TaskOrigin } from '../../core/types';

export const EPISODE_DB_NAME = 'dreamgym-episodes';
/** Iterations of a run kept by default. */
export const KEEP_ITERATIONS = 20;

export interface EpisodeSummary {
  runId: string;
  iteration: number;
  index: number;
  episodeId: string;
  phase: Phase;
  experienceModel?: string;
  taskId: string;
  instruction: string;
  origin: TaskOrigin;
  success: boolean;
  return: number;
  length: number;
  /** Steps the env (or the dream) refused as no-ops. */
  refusedSteps: number;
  /** Dreamed steps whose answer was unusable (never learned from). */
  dreamInvalidSteps: number;
  /** A dream begun at a recorded real state: the step of the real episode it began at. */
  realStartStep?: number;
}

interface TraceRow {
  runId: string;
  iteration: number;
  index: number;
  trace: EpisodeTrace;
}

export function summarize(runId: string, trace: EpisodeTrace): EpisodeSummary {
  return {
    runId,
    iteration: trace.iteration,
    index: trace.index,
    episodeId: trace.episodeId,
    phase: trace.phase,
    ...(trace.experienceModel ? { experienceModel: trace.experienceModel } : {}),
    taskId: trace.task.id,
    instruction: trace.task.instruction,
    origin: trace.task.origin,
    success: trace.success,
    return: trace.return,
    length: trace.steps.length,
    refusedSteps: trace.steps.filter((s) => !s.valid && !s.dreamInvalid).length,
    dreamInvalidSteps: trace.steps.filter((s) => s.dreamInvalid).length,
    ...(trace.realStart ? { realStartStep: trace.realStart.fromStep } : {}),
  };
}

const runRange = (runId: string) => IDBKeyRange.bound([runId, -Infinity, -Infinity], [runId, Infinity, Infinity]);
const iterationRange = (runId: string, from: number, to: number) =>
  IDBKeyRange.bound([runId, from, -Infinity], [runId, to, Infinity]);

export class EpisodeStore {
  private readonly db: IdbConnection;

  constructor(
    readonly name = EPISODE_DB_NAME,
    readonly keep = KEEP_ITERATIONS,
  ) {
    this.db = new IdbConnection(name, (db) => {
      for (const store of ['summaries', 'traces'])
        db.createObjectStore(store, { keyPath: ['runId', 'iteration', 'index'] });
    });
  }

  private open(): Promise<IDBPDatabase> {
    return this.db.open();
  }

  /** Writes one iteration's episodes (replacing a repeated iteration) and drops iterations older than `keep`. */
  async put(runId: string, iteration: number, traces: readonly EpisodeTrace[]): Promise<void> {
    const db = await this.open();
    const tx = db.transaction(['summaries', 'traces'], 'readwrite');
    const summaries = tx.objectStore('summaries'),
      rows = tx.objectStore('traces');
    const stale = iterationRange(runId, iteration, Infinity);
    const old = iterationRange(runId, -Infinity, iteration - this.keep);
    const work: Promise<unknown>[] = [summaries.delete(stale), rows.delete(stale)];
    if (iteration - this.keep >= 0) work.push(summaries.delete(old), rows.delete(old));
    for (const trace of traces) {
      work.push(summaries.put(summarize(runId, trace)));
      work.push(rows.put({ runId, iteration, index: trace.index, trace } satisfies TraceRow));
    }
    work.push(tx.done);
    await Promise.all(work);
  }

  /** Every kept episode of a run, oldest iteration first. */
  async list(runId: string): Promise<EpisodeSummary[]> {
    return (await (await this.open()).getAll('summaries', runRange(runId))) as EpisodeSummary[];
  }

  async get(runId: string, iteration: number, index: number): Promise<EpisodeTrace | null> {
    const row = (await (await this.open()).get('traces', [runId, iteration, index])) as TraceRow | undefined;
    return row?.trace ?? null;
  }

  async remove(runId: string): Promise<void> {
    const db = await this.open();
    const tx = db.transaction(['summaries', 'traces'], 'readwrite');
    await Promise.all([
      tx.objectStore('summaries').delete(runRange(runId)),
      tx.objectStore('traces').delete(runRange(runId)),
      tx.done,
    ]);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
