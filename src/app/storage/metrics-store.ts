/**
 * Per-iteration metric history of each run, in IndexedDB (page and worker both can read it), so a
 * resumed run's charts continue from where they stopped. Written by the worker BEFORE the
 * iteration's checkpoint: if the tab dies between the two writes, the resumed run repeats that
 * iteration and overwrites the record (same key), so history and checkpoint never disagree.
 */
import type { IDBPDatabase } from 'idb';
import { IdbConnection } from './idb-connection';
import type { IterationRecord } from '../../core/train/loop';

const DB_NAME = 'dreamgym-train-metrics';
const STORE = 'metrics';

interface Row {
  runId: string;
  iteration: number;
  metrics: Record<string, number>;
}

export class MetricsHistoryStore {
  private readonly db = new IdbConnection(DB_NAME, (db) => {
    db.createObjectStore(STORE, { keyPath: ['runId', 'iteration'] });
  });

  private open(): Promise<IDBPDatabase> {
    return this.db.open();
  }

  async put(runId: string, record: IterationRecord): Promise<void> {
    const row: Row = { runId, iteration: record.iteration, metrics: record.metrics };
    await (await this.open()).put(STORE, row);
  }

  /** Records of a run with iteration ≤ upTo, in order. */
  async list(runId: string, upTo = Infinity): Promise<IterationRecord[]> {
    const rows = (await (await this.open()).getAll(STORE, IDBKeyRange.bound([runId, 0], [runId, Infinity]))) as Row[];
    return rows.filter((r) => r.iteration <= upTo).map((r) => ({ iteration: r.iteration, metrics: r.metrics }));
  }

  async remove(runId: string): Promise<void> {
    await (await this.open()).delete(STORE, IDBKeyRange.bound([runId, 0], [runId, Infinity]));
  }
}
