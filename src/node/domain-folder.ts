/**
 * NODE ONLY (src/node/): uses node:fs. Nothing under src/core or the page may import this file.
 *
 * An imported domain as a folder (what `dreamgym domain import` writes and `domain train` reads):
 *
 *   <dir>/<name>/domain.json     the manifest: name, env id, card, tasks, held-out task ids, stats, warnings, split seed
 *   <dir>/<name>/card.json       the derived domain card on its own (to read or hand-edit)
 *   <dir>/<name>/train.jsonl     training episodes (our trajectory format)
 *   <dir>/<name>/held-out.jsonl  held-out episodes (our trajectory format)
 *   <dir>/<name>/buffer/         the replay buffer seeded with the training episodes (FolderBufferStore)
 *   <dir>/<name>/runs/           runs of `domain train` (kept when the domain is replaced)
 *   <dir>/<name>.writer.lock     held while an import writes the domain: one writer per name (folder-lock.ts)
 *
 * A domain.json of our format is the marker of a folder this code wrote: a folder without one is
 * never written over or removed. An import builds the domain beside its place, in
 * <name>.new-PID (the manifest last), then moves it in. Replacing a domain moves the old folder's
 * other entries (runs/, files of the user) into the new one, sets the old aside as <name>.old-PID
 * and renames the new one into place: a directory cannot be renamed over a full one, so that is
 * two renames, and a crash between them leaves both folders whole. Whoever opens the domain next
 * finishes or undoes the swap (recoverDomainFolder): the new domain goes in once the old one has
 * been set aside, else the old one stays; a leftover's own entries go back to the domain first.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { ReplayBuffer, type ImportResult } from '../core/buffer/buffer';
import { parseTrajectoriesJsonl, trajectoriesToJsonl } from '../core/data/trajectory';
import { validateDomainData, type Domain } from '../core/domain/domain';
import type { DomainCard } from '../core/experience/domain-card';
import { FolderBufferStore } from './buffer-folder';
import { acquireLockFile, tryLockFile } from './folder-lock';

export const DOMAIN_FORMAT = 'dreamgym-domain/1';
export const DEFAULT_DOMAIN_DIR = 'runs/domains';
const MANIFEST = 'domain.json';
/** What an import writes in a domain folder; anything else there (runs/, the user's files) is moved, never removed. */
const DOMAIN_ENTRIES = new Set([MANIFEST, 'card.json', 'train.jsonl', 'held-out.jsonl', 'buffer']);
/** The first file of a folder being built: it marks a leftover <name>.new-PID as ours to remove. */
const STAGING_MARKER = '.dreamgym-domain-staging';
/** How long an import waits for another import of the same name (ms). */
export const DOMAIN_LOCK_WAIT_MS = 30_000;

/** The domain without its episodes (they are in train.jsonl and held-out.jsonl), and where it came from. */
export interface DomainManifest extends Omit<Domain, 'train' | 'heldOut'> {
  format: typeof DOMAIN_FORMAT;
  /** Where the episodes came from (file and format), for the record. */
  source?: { file: string; format: string };
  /** ms since epoch (given by the caller). */
  createdAt: number;
}

export class DomainFolderError extends Error {
  constructor(message: string) {
    super(message);
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

function domainLockPath(dir: string, name: string): string {
  return join(dir, `${name}.writer.lock`);
}

function writeAtomic(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

/** The points of a save, in order; a test hook may stop the process at any of them (the kill trial). */
export const SAVE_POINTS = ['building', 'built', 'entries-moved', 'old-aside', 'swapped'] as const;
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

/**
 * Writes the domain to `<dir>/<name>/` and seeds its buffer with the training episodes. An
 * existing domain of that name is an error unless `replace`; a folder this code did not write is
 * an error either way. One import of a name at a time: a second waits up to `lockWaitMs`.
 */
export async function saveDomainFolder(
  domain: Domain,
  dir: string,
  options: SaveDomainOptions,
): Promise<{ path: string; buffer: ImportResult; keptEntries: string[] }> {
  const path = domainPath(dir, domain.name);
  mkdirSync(dir, { recursive: true });
  const lock = await acquireLockFile(path, domainLockPath(dir, domain.name), {
    waitMs: options.lockWaitMs ?? DOMAIN_LOCK_WAIT_MS,
  });
  try {
    recoverDomainFolder(dir, domain.name);
    const replacing = checkTarget(path, domain.name, options.replace === true);
    const at = options.at ?? (() => {});
    const staging = `${path}.new-${process.pid}`;
    const buffer = await buildDomainFolder(domain, staging, options, at);
    at('built');
    if (!replacing) {
      renameSync(staging, path);
      return { path, buffer, keptEntries: [] };
    }
    const keptEntries = moveOtherEntries(path, staging);
    at('entries-moved');
    const old = `${path}.old-${process.pid}`;
    renameSync(path, old);
    at('old-aside');
    renameSync(staging, path);
    at('swapped');
    removeLeftover(old, path);
    return { path, buffer, keptEntries };
  } finally {
    lock.release();
  }
}

/**
 * Whether `path` holds a domain to replace (false: nothing there, or an empty folder, removed).
 * A domain without `replace`, a file, or a folder this code did not write is refused with the fix.
 */
function checkTarget(path: string, name: string, replace: boolean): boolean {
  if (!existsSync(path)) return false;
  if (!statSync(path).isDirectory())
    throw new DomainFolderError(`${path} is a file, not a domain folder: choose another --name or --dir.`);
  if (isDomainFolder(path)) {
    if (replace) return true;
    throw new DomainFolderError(
      `A domain named '${name}' already exists in ${path}. Choose another --name, or pass --replace to overwrite it.`,
    );
  }
  const entries = readdirSync(path);
  if (entries.length === 0) {
    rmdirSync(path); // empty: nothing of anyone's is lost
    return false;
  }
  const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? `, … (${entries.length - 5} more)` : '');
  throw new DomainFolderError(
    `${path} is not a domain folder written by 'dreamgym domain import' (it has no ${MANIFEST} of format ` +
      `${DOMAIN_FORMAT}) and holds ${shown}; the import writes over nothing it did not write, even with --replace. ` +
      'Choose another --name or --dir, or move that folder away yourself.',
  );
}

/** Whether `path` holds a manifest of our format: the marker of a domain folder this code wrote. */
function isDomainFolder(path: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(path, MANIFEST), 'utf8')) as DomainManifest).format === DOMAIN_FORMAT;
  } catch {
    return false;
  }
}

/** Writes every file of the domain into `folder` (created afresh), the manifest last. */
async function buildDomainFolder(
  domain: Domain,
  folder: string,
  options: SaveDomainOptions,
  at: (point: SavePoint) => void,
): Promise<ImportResult> {
  rmSync(folder, { recursive: true, force: true }); // this process's own leftover: the lock is ours
  mkdirSync(folder);
  writeFileSync(join(folder, STAGING_MARKER), '');
  writeAtomic(join(folder, 'train.jsonl'), trajectoriesToJsonl(domain.train));
  at('building');
  writeAtomic(join(folder, 'held-out.jsonl'), trajectoriesToJsonl(domain.heldOut));
  writeAtomic(join(folder, 'card.json'), JSON.stringify(domain.card, null, 2) + '\n');
  const buffer = new ReplayBuffer(await FolderBufferStore.open(join(folder, 'buffer')));
  const imported = await buffer.importTrajectories(domain.train, { source: 'offline', createdAt: options.createdAt });
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

/** Moves the entries of `from` that an import does not write (runs/, the user's files) into `to`; their names. */
function moveOtherEntries(from: string, to: string): string[] {
  const moved: string[] = [];
  for (const entry of readdirSync(from)) {
    if (DOMAIN_ENTRIES.has(entry) || entry.endsWith('.tmp') || entry === STAGING_MARKER) continue;
    if (existsSync(join(to, entry))) continue; // the domain has one already: this one stays in `from`
    renameSync(join(from, entry), join(to, entry));
    moved.push(entry);
  }
  return moved;
}

/** Removes a leftover folder of ours after moving what else it holds into `domain`; a folder with more stays. */
function removeLeftover(leftover: string, domain: string): void {
  if (existsSync(domain)) moveOtherEntries(leftover, domain);
  const others = readdirSync(leftover).filter(
    (e) => !DOMAIN_ENTRIES.has(e) && !e.endsWith('.tmp') && e !== STAGING_MARKER,
  );
  if (others.length === 0) rmSync(leftover, { recursive: true, force: true });
}

/**
 * Finishes or undoes a save a crash interrupted (see the file comment). Call it holding the
 * domain's lock: leftovers of a running import are never touched, since that import holds it.
 */
export function recoverDomainFolder(dir: string, name: string): void {
  const path = join(dir, name);
  const left = leftovers(dir, name);
  if (left.length === 0) return;
  if (!existsSync(path)) {
    const built = left.find((f) => f.kind === 'new' && isDomainFolder(f.path));
    const old = left.find((f) => f.kind === 'old');
    const back = built ?? old;
    if (back) renameSync(back.path, path);
  }
  for (const f of leftovers(dir, name)) removeLeftover(f.path, path);
}

/** <name>.new-PID and <name>.old-PID folders this code wrote (a manifest, or the staging marker), newest first. */
function leftovers(dir: string, name: string): { path: string; kind: 'new' | 'old' }[] {
  if (!existsSync(dir)) return [];
  const pattern = new RegExp(`^${name}\\.(new|old)-\\d+$`);
  return readdirSync(dir)
    .map((entry) => ({ entry, match: pattern.exec(entry) }))
    .filter(({ entry, match }) => match && ours(join(dir, entry)))
    .map(({ entry, match }) => ({ path: join(dir, entry), kind: match![1] as 'new' | 'old' }))
    .sort((a, b) => statSync(b.path).mtimeMs - statSync(a.path).mtimeMs);
}

function ours(folder: string): boolean {
  return isDomainFolder(folder) || existsSync(join(folder, STAGING_MARKER));
}

/**
 * Recovers `<dir>/<name>` before a reader opens it, when no import is running (one that is holds
 * the lock and recovers itself); without leftovers this only reads the folder's listing.
 */
function recoverForReading(dir: string, name: string): void {
  if (leftovers(dir, name).length === 0) return;
  const lock = tryLockFile(domainLockPath(dir, name));
  if (!lock) return;
  try {
    recoverDomainFolder(dir, name);
  } finally {
    lock.release();
  }
}

/** Reads `<dir>/<name>/` back into a Domain (the card from card.json, so a hand-edited card is used). */
export function loadDomainFolder(dir: string, name: string): Domain {
  const path = domainPath(dir, name);
  recoverForReading(dir, name);
  const manifestPath = join(path, 'domain.json');
  if (!existsSync(manifestPath)) {
    throw new DomainFolderError(
      `No domain named '${name}' in ${dir} (${manifestPath} is missing). Import it first: dreamgym domain import FILE --name ${name}${dir === DEFAULT_DOMAIN_DIR ? '' : ` --dir ${dir}`}`,
    );
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as DomainManifest;
  if (manifest.format !== DOMAIN_FORMAT) {
    throw new DomainFolderError(
      `${manifestPath} has format '${String(manifest.format)}', not '${DOMAIN_FORMAT}': not a domain folder this code wrote. Import the domain again.`,
    );
  }
  const knownEnvs = [manifest.envId];
  const read = (file: string) =>
    parseTrajectoriesJsonl(readFileSync(join(path, file), 'utf8'), { knownEnvs, sourceName: join(path, file) });
  const cardPath = join(path, 'card.json');
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

/** The domain's buffer folder, opened to read (close its store when done). */
export async function openDomainBuffer(dir: string, name: string): Promise<ReplayBuffer> {
  const path = domainPath(dir, name);
  recoverForReading(dir, name);
  return new ReplayBuffer(await FolderBufferStore.open(join(path, 'buffer'), { readOnly: true }));
}
