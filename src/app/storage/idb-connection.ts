/**
 * One IndexedDB connection of a store (schema version 1), opened on first use and shared by its calls.
 * Another tab upgrading or deleting the database closes it (the next call reopens it), and an open that
 * failed is forgotten (the next call tries again), so a store never holds a dead or blocking connection.
 */
import { openDB, type IDBPDatabase } from 'idb';

export class IdbConnection {
  private db: Promise<IDBPDatabase> | null = null;

  constructor(
    readonly name: string,
    /** Creates the object stores of a new database. */
    private readonly createStores: (db: IDBPDatabase) => void,
  ) {}

  open(): Promise<IDBPDatabase> {
    const opening = (this.db ??= openDB(this.name, 1, {
      upgrade: (db) => this.createStores(db),
      blocking: () => {
        void this.close();
      },
    }));
    opening.catch(() => {
      if (this.db === opening) this.db = null;
    });
    return opening;
  }

  async close(): Promise<void> {
    const db = this.db;
    this.db = null;
    if (db) (await db.catch(() => null))?.close();
  }
}
