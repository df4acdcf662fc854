/**
 * Imported domains (bring your own application) in this browser's IndexedDB: what the CLI keeps
 * in runs/domains/<name>/ (src/node/domain-folder.ts), as four rows under the domain's name.
 * The page writes them; a worker that trains on a domain would read them here.
 *
 *   manifests   name → the manifest's text (name, env id, tasks, stats, warnings, split, source,
 *               the checksums of the three others) and its own CRC-32
 *   cards       name → the derived domain card (JSON)
 *   train       name → training episodes (our JSONL)
 *   heldOut     name → held-out episodes (our JSONL)
 *
 * One writer: a save checks for a domain of that name and writes all four rows in ONE readwrite
 * transaction. IndexedDB runs readwrite transactions over the same stores one at a time (tabs
 * included), so two saves of one name never interleave, and a crash leaves the old domain or the
 * new one. A name that is taken is refused unless the save says `replace`. A read takes the four
 * rows in one transaction and checks every checksum, so a damaged domain is named, never used.
 */
import type { IDBPDatabase } from 'idb';
import { IdbConnection } from './idb-connection';
import type { TrajectoryFormat } from '../../core/data/formats';
import { parseTrajectoriesJsonl, trajectoriesToJsonl } from '../../core/data/trajectory';
import type { Domain, UnrecordedOutcome } from '../../core/domain/domain';
import type { DomainCard } from '../../core/experience/domain-card';
import { crc32 } from '../../core/experience/learned/model-file';
import { DreamGymError, type ErrorFacts } from '../../core/errors';

export const DOMAIN_DB_NAME = 'dreamgym-domains';
export const STORED_DOMAIN_FORMAT = 'dreamgym-domain-idb/1';
const STORES = ['manifests', 'cards', 'train', 'heldOut'] as const;

/** Where the episodes came from and how they were read, for the card and the CLI command that rebuilds it. */
export interface DomainSource {
  file: string;
  format: TrajectoryFormat;
  /** The format was detected from the records ('auto'), not named. */
  detected: boolean;
  unrecordedOutcome: UnrecordedOutcome;
}

/** The domain less its card and episodes (rows of their own), as stored. */
export interface StoredDomainManifest extends Omit<Domain, 'train' | 'heldOut' | 'card'> {
  format: typeof STORED_DOMAIN_FORMAT;
  source: DomainSource;
  /** ms since epoch (given by the caller). */
  createdAt: number;
  /** CRC-32 of each other row's text. */
  checksums: { card: string; train: string; heldOut: string };
}

/** A stored domain in the list: its manifest, or why it cannot be read (then only delete helps). */
export type StoredDomainEntry =
  | { name: string; manifest: StoredDomainManifest; damaged?: undefined }
  | { name: string; manifest?: undefined; damaged: string };

export interface StoredDomain {
  manifest: StoredDomainManifest;
  domain: Domain;
}

interface TextRow {
  name: string;
  text: string;
  /** Only the manifest's row: the CRC-32 of its text (the others' are in the manifest). */
  crc32?: string;
}

export class DomainStoreError extends DreamGymError {
  /** A subclass passes the facts of its own cause. */
  constructor(
    message: string,
    facts: ErrorFacts = {
      code: 'domain-store-damaged',
      fix: 'Delete the stored domain on the Domains page and import the file again.',
    },
  ) {
    super(message, facts);
    this.name = 'DomainStoreError';
  }
}

/** The name is taken and the save did not say replace. */
export class DomainExistsError extends DomainStoreError {
  constructor(readonly domain: string) {
    super(
      `A domain named '${domain}' is already stored in this browser: nothing was written. Choose another name, ` +
        'or tick "Replace the stored domain of that name" to overwrite it.',
      {
        code: 'domain-exists',
        fix: 'Choose another name, or tick "Replace the stored domain of that name" to overwrite it.',
      },
    );
    this.name = 'DomainExistsError';
  }
}

const checksum = (text: string) => crc32(new TextEncoder().encode(text));

function damagedError(name: string, what: string): DomainStoreError {
  return new DomainStoreError(
    `The stored domain '${name}' is damaged (${what}): delete it on the Domains page and import the file again.`,
  );
}

/** The manifest of a row, checked (checksum, format, name); a DomainStoreError says what is wrong. */
function readManifest(name: string, row: TextRow | undefined): StoredDomainManifest {
  if (!row) throw damagedError(name, 'its manifest is missing');
  if (checksum(row.text) !== row.crc32) throw damagedError(name, 'its manifest does not match its checksum');
  const manifest = JSON.parse(row.text) as StoredDomainManifest;
  if (manifest.format !== STORED_DOMAIN_FORMAT) {
    throw new DomainStoreError(
      `The stored domain '${name}' is of format '${String(manifest.format)}'; this build reads ` +
        `'${STORED_DOMAIN_FORMAT}'. Delete it and import the file again.`,
    );
  }
  if (manifest.name !== name) throw damagedError(name, `its manifest names '${manifest.name}'`);
  return manifest;
}

/** A row's text, checked against the manifest's checksum. */
function checkedText(name: string, what: string, row: TextRow | undefined, expected: string): string {
  if (!row) throw damagedError(name, `its ${what} is missing`);
  if (checksum(row.text) !== expected) throw damagedError(name, `the checksum of its ${what} is not the manifest's`);
  return row.text;
}

export class DomainStore {
  private readonly db: IdbConnection;

  constructor(readonly dbName = DOMAIN_DB_NAME) {
    this.db = new IdbConnection(dbName, (db) => {
      for (const store of STORES) db.createObjectStore(store, { keyPath: 'name' });
    });
  }

  private open(): Promise<IDBPDatabase> {
    return this.db.open();
  }

  /**
   * Stores `domain` under its name, its four rows in one transaction; a domain of that name is
   * refused (DomainExistsError) unless `replace`. Returns the manifest and whether one was replaced.
   */
  async save(
    domain: Domain,
    source: DomainSource,
    options: { createdAt: number; replace?: boolean },
  ): Promise<{ manifest: StoredDomainManifest; replaced: boolean }> {
    // Every text and checksum first: a transaction ends when it waits on anything but IndexedDB.
    const card = JSON.stringify(domain.card);
    const train = trajectoriesToJsonl(domain.train);
    const heldOut = trajectoriesToJsonl(domain.heldOut);
    const { card: _card, train: _train, heldOut: _heldOut, ...rest } = domain;
    const manifest: StoredDomainManifest = {
      format: STORED_DOMAIN_FORMAT,
      ...rest,
      source,
      createdAt: options.createdAt,
      checksums: { card: checksum(card), train: checksum(train), heldOut: checksum(heldOut) },
    };
    const manifestText = JSON.stringify(manifest);
    const name = domain.name;
    const tx = (await this.open()).transaction(STORES, 'readwrite');
    const taken = (await tx.objectStore('manifests').getKey(name)) !== undefined;
    if (taken && !options.replace) {
      tx.abort();
      await tx.done.catch(() => {}); // the abort is ours
      throw new DomainExistsError(name);
    }
    await Promise.all([
      tx.objectStore('manifests').put({ name, text: manifestText, crc32: checksum(manifestText) } satisfies TextRow),
      tx.objectStore('cards').put({ name, text: card } satisfies TextRow),
      tx.objectStore('train').put({ name, text: train } satisfies TextRow),
      tx.objectStore('heldOut').put({ name, text: heldOut } satisfies TextRow),
      tx.done,
    ]).catch((error: unknown) => {
      throw quotaError(error, name) ?? error;
    });
    return { manifest, replaced: taken };
  }

  /** Every stored domain, newest first; one that cannot be read is listed as damaged. */
  async list(): Promise<StoredDomainEntry[]> {
    const rows = (await (await this.open()).getAll('manifests')) as TextRow[];
    const entries = rows.map((row): StoredDomainEntry => {
      try {
        return { name: row.name, manifest: readManifest(row.name, row) };
      } catch (error) {
        return { name: row.name, damaged: error instanceof Error ? error.message : String(error) };
      }
    });
    const time = (e: StoredDomainEntry) => e.manifest?.createdAt ?? 0;
    return entries.sort((a, b) => time(b) - time(a) || (a.name < b.name ? -1 : 1));
  }

  /** The domain `name`, every row checked against its checksum; null when none is stored. */
  async read(name: string): Promise<StoredDomain | null> {
    const tx = (await this.open()).transaction(STORES, 'readonly');
    const get = (store: (typeof STORES)[number]) => tx.objectStore(store).get(name) as Promise<TextRow | undefined>;
    const [manifestRow, cardRow, trainRow, heldOutRow] = await Promise.all([
      get('manifests'),
      get('cards'),
      get('train'),
      get('heldOut'),
      tx.done,
    ]);
    if (!manifestRow && !cardRow && !trainRow && !heldOutRow) return null;
    const manifest = readManifest(name, manifestRow);
    const sums = manifest.checksums;
    const card = JSON.parse(checkedText(name, 'card', cardRow, sums.card)) as DomainCard;
    const episodes = (what: string, row: TextRow | undefined, sum: string) => {
      const text = checkedText(name, what, row, sum);
      return text === '' ? [] : parseTrajectoriesJsonl(text, { knownEnvs: [manifest.envId], sourceName: what });
    };
    const { format: _format, source: _source, createdAt: _createdAt, checksums: _checksums, ...rest } = manifest;
    const domain: Domain = {
      ...rest,
      card,
      train: episodes('training episodes', trainRow, sums.train),
      heldOut: episodes('held-out episodes', heldOutRow, sums.heldOut),
    };
    return { manifest, domain };
  }

  /** Removes the domain's four rows in one transaction (nothing there: nothing happens). */
  async remove(name: string): Promise<void> {
    const tx = (await this.open()).transaction(STORES, 'readwrite');
    await Promise.all([...STORES.map((store) => tx.objectStore(store).delete(name)), tx.done]);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** A storage-full failure as a message with the fix; null for any other error. */
function quotaError(error: unknown, name: string): DomainStoreError | null {
  if (!(error instanceof DOMException) || error.name !== 'QuotaExceededError') return null;
  return new DomainStoreError(
    `This browser has no room to store the domain '${name}' (nothing was written): free space (delete other ` +
      'domains, clear the replay buffer on the Buffer page) or import fewer episodes.',
  );
}
