/**
 * The reads of a store that loads the whole buffer into a MemoryBufferStore when it opens and
 * serves every read from there: the IndexedDB store and the folder store (src/node/buffer-folder.ts).
 * Records handed out are the store's own copies: treat them as read-only.
 */
import type {
  BufferEpisode,
  BufferStats,
  BufferStore,
  BufferTransition,
  RunRecord,
  TaskBankEntry,
  TransitionFilter,
  TransitionSource,
} from '../types';
import type { MemoryBufferStore } from './memory';

type BufferReads = Pick<
  BufferStore,
  | 'getTransition'
  | 'listTransitions'
  | 'forEachTransition'
  | 'countTransitions'
  | 'hasEpisode'
  | 'listEpisodes'
  | 'listTasks'
  | 'listRuns'
  | 'stats'
>;

export abstract class MemoryServedStore implements BufferReads {
  /** The loaded contents (loading them first where needed); throws or rejects once the store is closed. */
  protected abstract loadedState(): MemoryBufferStore | Promise<MemoryBufferStore>;

  async getTransition(id: string): Promise<BufferTransition | undefined> {
    return (await this.loadedState()).getTransition(id);
  }

  async listTransitions(filter?: TransitionFilter): Promise<BufferTransition[]> {
    return (await this.loadedState()).listTransitions(filter);
  }

  async forEachTransition(visit: (t: BufferTransition) => void, filter?: TransitionFilter): Promise<void> {
    return (await this.loadedState()).forEachTransition(visit, filter);
  }

  async countTransitions(filter?: TransitionFilter): Promise<number> {
    return (await this.loadedState()).countTransitions(filter);
  }

  async hasEpisode(id: string): Promise<boolean> {
    return (await this.loadedState()).hasEpisode(id);
  }

  async listEpisodes(filter?: { env?: string; source?: TransitionSource }): Promise<BufferEpisode[]> {
    return (await this.loadedState()).listEpisodes(filter);
  }

  async listTasks(env?: string): Promise<TaskBankEntry[]> {
    return (await this.loadedState()).listTasks(env);
  }

  async listRuns(): Promise<RunRecord[]> {
    return (await this.loadedState()).listRuns();
  }

  async stats(): Promise<BufferStats> {
    return (await this.loadedState()).stats();
  }
}
