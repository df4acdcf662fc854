/**
 * NODE ONLY (src/node/): uses node:fs. Nothing under src/core or the page may import this file.
 *
 * An imported domain as a folder (what `dreamgym domain import` writes and `domain train` reads):
 *
 *   <dir>/<name>/current               a link to the data folder of the domain (data.N): the commit point
 *   <dir>/<name>/data.N/domain.json    the manifest: name, env id, card, tasks, held-out task ids, stats, warnings,
 *                                      split seed, format (its marker: a data folder this code wrote)
 *   <dir>/<name>/data.N/card.json      the derived domain card on its own (to read or hand-edit)
 *   <dir>/<name>/data.N/train.jsonl    training episodes (our trajectory format)
 *   <dir>/<name>/data.N/held-out.jsonl held-out episodes (our trajectory format)
 *   <dir>/<name>/data.N/buffer/        the replay buffer seeded with the training episodes (FolderBufferStore)
 *   <dir>/<name>/runs/                 runs of `domain train`, and any file of the user: never moved or removed
 *   <dir>/<name>/writer.lock           held while an import writes the domain: one writer per name (folder-lock.ts)
 *
 * An import builds the next data folder beside the current one (a staging marker first, the
 * manifest last), makes a new link to it and renames that link over `current`: one rename swaps
 * the whole domain, and a crash before it leaves the old domain, after it the new one. Then the
 * old data folder goes (the files of the user in it move to the new one first); what a crash left
 * (a data folder no link names, a new link) is removed by the next import. runs/ sits outside the
 * data, so a replace never moves it. A reader resolves `current` once and reads that data folder
 * whole, and reads again from the new one if a replace removed it meanwhile.
 *
 * Format 1 (up to issue 44) kept the data files in <dir>/<name>/ itself and swapped by two
 * renames; a reader refuses such a folder, naming the fix: import it again with --replace, which
 * turns it into this layout in place (runs/ and the user's files stay).
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { ReplayBuffer, type ImportResult } from '../core/buffer/buffer';
import { parseTrajectoriesJsonl, trajectoriesToJsonl } from '../core/data/trajectory';
import { validateDomainData, type Domain } from '../core/domain/domain';
import type { DomainCard } from '../core/experience/domain-card';
import { FolderBufferStore } from './buffer-folder';
import { BufferFolderMissingError } from './buffer-folder-format';
import { acquireLockFile, LOCK_FILE } from './folder-lock';
import { DreamGymError } from '../core/errors';

/** 2: the data in a data folder behind the `current` link (1: in the domain folder itself). */
export const DOMAIN_FORMAT = 'dreamgym-domain/2';
const OLD_DOMAIN_FORMAT = 'dreamgym-domain/1';
export const DEFAULT_DOMAIN_DIR = 'runs/domains';
const MANIFEST = 'domain.json';
const CURRENT = 'current';
/** What an import writes in a data folder (the manifest last); anything else there is the user's. */
const DATA_ENTRIES = ['buffer', 'train.jsonl', 'held-out.jsonl', 'card.json', MANIFEST];
/** The first file of a data folder being built: it marks an unfinished one as ours to remove. */
const STAGING_MARKER = '.dreamgym-domain-staging';
const DATA_FOLDER = /^data\.(\d+)$/;
const NEW_LINK = /^current\.new-\d+$/;
/** How long an import waits for another import of the same name (ms). */
export const DOMAIN_LOCK_WAIT_MS = 30_000;
/** Reads a reader starts over when replaces keep removing the data folder under it. */
const READ_ATTEMPTS = 5;

/** The domain without its episodes (they are in train.jsonl and held-out.jsonl), and where it came from. */
export interface DomainManifest extends Omit<Domain, 'train' | 'heldOut'> {
  format: typeof DOMAIN_FORMAT;
  /** Where the episodes came from (file and format), for the record. */
  source?: { file: string; format: string };
  /** ms since epoch (given by the caller). */
  createdAt: number;
}

export class DomainFolderError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'domain-folder-invalid',
      fix: 'Choose another --name or --dir, or import the domain again.',
    });
    this.name = 'DomainFolderError';
  }
}

/** A name that cannot be a domain's (a path such as '../base') is refused as the import refuses it. */
export function checkDomainName(name: string): void {
  const problem = validateDomainData(name, [], { minEpisodes: 0 }).find((p) => p.code === 'bad-name');
  if (problem) throw new DomainFolderError(problem.message);
}

/** The folder of the domain `name` in `dir`; the name is checked first, so it never leads out of `dir`. */
export function domainPath(dir: string, name: string): string {
  checkDomainName(name);
  return join(dir, name);
}

function writeAtomic(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

/** The points of a save, in order; a test hook may stop the process at any of them (the kill trial). */
export const SAVE_POINTS = ['building', 'built', 'linked', 'swapped', 'removing'] as const;
export type SavePoint = (typeof SAVE_POINTS)[number];

export interface SaveDomainOptions {
  createdAt: number;
  replace?: boolean;
  source?: { file: string; format: string };
  /** How long to wait for another import of the same name (ms; default DOMAIN_LOCK_WAIT_MS). */
  lockWaitMs?: number;
  /** Called at each point of the save (tests stop or kill the process there). */
  at?: (point: SavePoint) => void;
}

/** The domain a save replaces: its data folder, a folder of the old layout, or none. */
type OldDomain = { data: string } | 'format-1' | null;

/**
 * Writes the domain to `<dir>/<name>/` (see the file comment) and seeds its buffer with the
 * training episodes. An existing domain of that name is an error unless `replace`; a folder this
 * code did not write is an error either way, and nothing is written in it. One import of a name at
 * a time: a second waits up to `lockWaitMs`. `keptEntries`: what the replaced domain held besides
 * its data (runs/, the user's files), all kept; `data` is the link to the new data folder.
 */
export async function saveDomainFolder(
  domain: Domain,
  dir: string,
  options: SaveDomainOptions,
): Promise<{ path: string; data: string; buffer: ImportResult; keptEntries: string[] }> {
  const path = domainPath(dir, domain.name);
  const replace = options.replace === true;
  checkTarget(path, domain.name, replace); // before anything is written there
  mkdirSync(path, { recursive: true });
  const lock = await acquireLockFile(path, join(path, LOCK_FILE), {
    waitMs: options.lockWaitMs ?? DOMAIN_LOCK_WAIT_MS,
  });
  const link = join(path, `${CURRENT}.new-${process.pid}`);
  let building: string | null = null;
  try {
    const old = checkTarget(path, domain.name, replace); // again: another import may have saved it meanwhile
    removeLeftovers(path);
    const at = options.at ?? (() => {});
    building = nextDataFolder(path);
    const data = building;
    const buffer = await buildDataFolder(domain, join(path, data), options, at);
    at('built');
    symlinkSync(data, link, 'dir');
    at('linked');
    renameSync(link, join(path, CURRENT)); // the commit: one rename swaps the whole domain
    building = null;
    at('swapped');
    const moved = retireOld(path, old, data, at);
    const keptEntries = old === null ? [] : [...userEntries(path), ...moved];
    return { path, data: join(path, CURRENT), buffer, keptEntries };
  } catch (error) {
    // Not committed: what this save began goes, and the folder is as it was.
    if (building !== null) {
      rmSync(link, { force: true });
      rmSync(join(path, building), { recursive: true, force: true });
    }
    throw error;
  } finally {
    lock.release(); // the folder itself stays, even empty: another import may be waiting for its lock
  }
}

/**
 * What `path` holds that a save would replace (null: nothing there, an empty folder, or what a
 * crashed import left). A domain without `replace`, a file, or a folder this code did not write is
 * refused with the fix.
 */
function checkTarget(path: string, name: string, replace: boolean): OldDomain {
  if (!existsSync(path)) return null;
  if (!statSync(path).isDirectory())
    throw new DomainFolderError(`${path} is a file, not a domain folder: choose another --name or --dir.`);
  const current = currentData(path);
  const old: OldDomain = current ? { data: current } : manifestFormat(path) === OLD_DOMAIN_FORMAT ? 'format-1' : null;
  if (old !== null) {
    if (!replace)
      throw new DomainFolderError(
        `A domain named '${name}' already exists in ${path}. Choose another --name, or pass --replace to overwrite it.`,
      );
    if (old === 'format-1' && lexists(join(path, CURRENT)))
      throw new DomainFolderError(
        `${path} holds a domain of the old layout and a '${CURRENT}' of its own, where the new layout puts its ` +
          'link; nothing was written. Move that away, then import again.',
      );
    return old; // runs/ and the user's files stay where they are
  }
  const others = readdirSync(path).filter((entry) => !isOurs(path, entry));
  if (others.length === 0) return null;
  const shown = others.slice(0, 5).join(', ') + (others.length > 5 ? `, … (${others.length - 5} more)` : '');
  throw new DomainFolderError(
    `${path} is not a domain folder written by 'dreamgym domain import' (it has no ${CURRENT} link to a data folder ` +
      `holding a ${MANIFEST} of format ${DOMAIN_FORMAT}) and holds ${shown}; the import writes over nothing it did ` +
      'not write, even with --replace. Choose another --name or --dir, or move that folder away yourself.',
  );
}

/** Whether an entry of a domain folder is one an import writes: the lock, a link, a data folder of ours. */
function isOurs(path: string, entry: string): boolean {
  const at = join(path, entry);
  if (entry === LOCK_FILE) return true;
  if (entry === CURRENT || NEW_LINK.test(entry)) return isOurLink(at);
  return DATA_FOLDER.test(entry) && oursData(at);
}

/** A link to a data folder's name (what `current` and a new link are). */
function isOurLink(path: string): boolean {
  return lstatSync(path).isSymbolicLink() && DATA_FOLDER.test(readlinkSync(path));
}

/** A data folder of ours: being built (the marker), whole (the manifest), or emptied. */
function oursData(folder: string): boolean {
  if (!statSync(folder).isDirectory()) return false;
  return existsSync(join(folder, STAGING_MARKER)) || manifestFormat(folder) === DOMAIN_FORMAT || isEmpty(folder);
}

function isEmpty(folder: string): boolean {
  return readdirSync(folder).length === 0;
}

function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The format of the manifest in `folder`, if there is one to read. */
function manifestFormat(folder: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(folder, MANIFEST), 'utf8')) as { format?: string }).format;
  } catch {
    return undefined;
  }
}

/** The data folder `current` links to, when it is one (data.N, there); its manifest is not read. */
function linkedData(path: string): string | null {
  let target: string;
  try {
    target = readlinkSync(join(path, CURRENT));
  } catch {
    return null; // no link there (or not a link)
  }
  return DATA_FOLDER.test(target) && existsSync(join(path, target)) ? target : null;
}

/** The data folder of the domain in `path`: the one `current` links to, holding a manifest of our format. */
function currentData(path: string): string | null {
  const data = linkedData(path);
  return data !== null && manifestFormat(join(path, data)) === DOMAIN_FORMAT ? data : null;
}

/** The next data folder's name: one past the highest there. */
function nextDataFolder(path: string): string {
  let highest = 0;
  for (const entry of readdirSync(path)) highest = Math.max(highest, Number(DATA_FOLDER.exec(entry)?.[1] ?? 0));
  return `data.${highest + 1}`;
}

/** Writes every file of the domain into `folder` (created afresh), the manifest last. */
async function buildDataFolder(
  domain: Domain,
  folder: string,
  options: SaveDomainOptions,
  at: (point: SavePoint) => void,
): Promise<ImportResult> {
  mkdirSync(folder);
  writeFileSync(join(folder, STAGING_MARKER), '');
  writeAtomic(join(folder, 'train.jsonl'), trajectoriesToJsonl(domain.train));
  at('building');
  writeAtomic(join(folder, 'held-out.jsonl'), trajectoriesToJsonl(domain.heldOut));
  writeAtomic(join(folder, 'card.json'), JSON.stringify(domain.card, null, 2) + '\n');
  const buffer = new ReplayBuffer(await FolderBufferStore.open(join(folder, 'buffer')));
  const imported = await buffer.importTrajectories(domain.train, {
    source: 'offline',
    createdAt: options.createdAt,
    loadIndex: false, // nothing here searches it: the index would be built only to be dropped
  });
  await buffer.store.close();
  const manifest: DomainManifest = {
    format: DOMAIN_FORMAT,
    name: domain.name,
    envId: domain.envId,
    card: domain.card,
    tasks: domain.tasks,
    heldOutTaskIds: domain.heldOutTaskIds,
    stats: domain.stats,
    warnings: domain.warnings,
    seed: domain.seed,
    heldOutShare: domain.heldOutShare,
    ...(options.source ? { source: options.source } : {}),
    createdAt: options.createdAt,
  };
  writeAtomic(join(folder, MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
  rmSync(join(folder, STAGING_MARKER), { force: true });
  return imported;
}

/**
 * After the swap: removes the data of the domain replaced (its data folder, or the files of a
 * format-1 domain, which leaves the folder in this layout), moving files of the user in an old
 * data folder to the new one; their names.
 */
function retireOld(path: string, old: OldDomain, data: string, at: (point: SavePoint) => void): string[] {
  if (old === null) return [];
  if (old === 'format-1') {
    removeDataFiles(path, at);
    return [];
  }
  return retireData(path, old.data, data, at);
}

/** Removes a data folder of ours that no link names; the user's files in it move to `current`'s (or stay). */
function retireData(path: string, entry: string, current: string | null, at: (point: SavePoint) => void): string[] {
  const folder = join(path, entry);
  const moved = current ? moveOtherEntries(folder, join(path, current)) : [];
  removeDataFiles(folder, at);
  if (isEmpty(folder)) rmdirSync(folder);
  return moved;
}

/** Removes the files an import writes in `folder`, what marks it as ours (marker, then manifest) last. */
function removeDataFiles(folder: string, at: (point: SavePoint) => void): void {
  const entries = [...DATA_ENTRIES.filter((e) => e !== MANIFEST), STAGING_MARKER, MANIFEST];
  for (const [i, entry] of entries.entries()) {
    rmSync(join(folder, `${entry}.tmp`), { force: true });
    rmSync(join(folder, entry), { recursive: true, force: true });
    if (i === 0) at('removing');
  }
}

/** Moves the entries of `from` that an import does not write into `to` (one there already stays); their names. */
function moveOtherEntries(from: string, to: string): string[] {
  const moved: string[] = [];
  for (const entry of readdirSync(from)) {
    if ([...DATA_ENTRIES, STAGING_MARKER].some((e) => entry === e || entry === `${e}.tmp`)) continue;
    if (lexists(join(to, entry))) continue;
    renameSync(join(from, entry), join(to, entry));
    moved.push(entry);
  }
  return moved;
}

/**
 * Removes what a crashed import left (call it holding the lock): new links, data folders of ours
 * that no link names, and the files of a format-1 domain already turned into this layout.
 */
function removeLeftovers(path: string): void {
  const current = currentData(path);
  for (const entry of readdirSync(path)) {
    const at = join(path, entry);
    if (NEW_LINK.test(entry) && isOurLink(at)) rmSync(at);
    else if (DATA_FOLDER.test(entry) && entry !== current && oursData(at)) retireData(path, entry, current, () => {});
  }
  if (current !== null && manifestFormat(path) === OLD_DOMAIN_FORMAT) removeDataFiles(path, () => {});
}

/** The entries of a domain folder besides its data: runs/ and the user's files. */
function userEntries(path: string): string[] {
  return readdirSync(path).filter((entry) => !isOurs(path, entry));
}

// -------------------------------------------------------------------------------------------------
// Readers: `current` resolved once, its data folder read whole
// -------------------------------------------------------------------------------------------------

/** Reads the domain `<dir>/<name>` (the card from card.json, so a hand-edited card is used). */
export function loadDomainFolder(dir: string, name: string): Domain {
  for (let attempt = 1; ; attempt++) {
    const folder = dataFolder(dir, name);
    try {
      return readDomain(folder);
    } catch (error) {
      if (!replacedUnder(error, folder, dir, name, attempt)) throw damaged(error, folder);
    }
  }
}

/** The domain's buffer, opened to read (close its store when done). */
export function openDomainBuffer(dir: string, name: string): Promise<ReplayBuffer> {
  return readingData(dir, name, (folder) => openBuffer(folder));
}

/** The domain and its buffer, read from one data folder: a replace between the two reads cannot mix them. */
export function openDomainFolder(dir: string, name: string): Promise<{ domain: Domain; buffer: ReplayBuffer }> {
  return readingData(dir, name, async (folder) => ({ domain: readDomain(folder), buffer: await openBuffer(folder) }));
}

async function openBuffer(folder: string): Promise<ReplayBuffer> {
  return new ReplayBuffer(await FolderBufferStore.open(join(folder, 'buffer'), { readOnly: true }));
}

/** `read` of the domain's data folder, again from the new one if a replace removed it meanwhile. */
async function readingData<T>(dir: string, name: string, read: (folder: string) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const folder = dataFolder(dir, name);
    try {
      return await read(folder);
    } catch (error) {
      if (!replacedUnder(error, folder, dir, name, attempt)) throw damaged(error, folder);
    }
  }
}

/** The data folder of the domain `<dir>/<name>`; none, or a domain of the old layout, is an error naming the fix. */
function dataFolder(dir: string, name: string): string {
  const path = domainPath(dir, name);
  const data = linkedData(path);
  if (data !== null) return join(path, data);
  const dirOption = dir === DEFAULT_DOMAIN_DIR ? '' : ` --dir ${dir}`;
  if (manifestFormat(path) === OLD_DOMAIN_FORMAT) {
    const source = (JSON.parse(readFileSync(join(path, MANIFEST), 'utf8')) as Partial<DomainManifest>).source;
    const from = source ? `${shellWord(source.file)} --format ${source.format}` : 'FILE';
    throw new DomainFolderError(
      `${path} holds a domain in the layout of an older version (format ${OLD_DOMAIN_FORMAT}), which this version ` +
        `does not read. Import it again over itself (its runs/ and your files stay): ` +
        `dreamgym domain import ${from} --name ${name}${dirOption} --replace`,
    );
  }
  throw new DomainFolderError(
    `No domain named '${name}' in ${dir} (${join(path, CURRENT)} is not a link to its data). ` +
      `Import it first: dreamgym domain import FILE --name ${name}${dirOption}`,
  );
}

/** Whether a read failed because a replace removed its data folder meanwhile (then read the new one). */
function replacedUnder(error: unknown, folder: string, dir: string, name: string, attempt: number): boolean {
  const gone = (error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof BufferFolderMissingError;
  if (!gone || attempt >= READ_ATTEMPTS) return false;
  try {
    return dataFolder(dir, name) !== folder;
  } catch {
    return false;
  }
}

/** A file missing from a data folder no replace removed: the domain is damaged. */
function damaged(error: unknown, folder: string): unknown {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !(error instanceof BufferFolderMissingError)) return error;
  return new DomainFolderError(
    `The domain's data in ${folder} is incomplete (${(error as Error).message}). Import it again with --replace.`,
  );
}

function readDomain(folder: string): Domain {
  const manifestPath = join(folder, MANIFEST);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as DomainManifest;
  if (manifest.format !== DOMAIN_FORMAT) {
    throw new DomainFolderError(
      `${manifestPath} has format '${String(manifest.format)}', not '${DOMAIN_FORMAT}': not a domain folder this ` +
        'code wrote. Import the domain again.',
    );
  }
  const knownEnvs = [manifest.envId];
  const read = (file: string) =>
    parseTrajectoriesJsonl(readFileSync(join(folder, file), 'utf8'), { knownEnvs, sourceName: join(folder, file) });
  const cardPath = join(folder, 'card.json');
  const card = existsSync(cardPath) ? (JSON.parse(readFileSync(cardPath, 'utf8')) as DomainCard) : manifest.card;
  return {
    name: manifest.name,
    envId: manifest.envId,
    card,
    train: read('train.jsonl'),
    heldOut: read('held-out.jsonl'),
    tasks: manifest.tasks,
    heldOutTaskIds: manifest.heldOutTaskIds,
    stats: manifest.stats,
    warnings: manifest.warnings,
    seed: manifest.seed,
    heldOutShare: manifest.heldOutShare,
  };
}

/** A path as one shell word (quoted when it holds more than letters, digits and ./_-). */
function shellWord(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
