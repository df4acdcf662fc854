/**
 * NODE ONLY (src/node/): one writer at a time for a folder, by a lock file.
 *
 *   DIR/writer.lock   {"pid":…,"host":…,"command":…,"since":…,"token":…}, created with O_EXCL
 *
 * A second writer polls until the lock is free or `waitMs` has passed, then fails with a
 * FolderLockedError that names the holder. A lock is stale — taken over at once — when its
 * process is gone (same host, no such pid), or when it is empty or unreadable and older than
 * STALE_EMPTY_MS (a writer that died between creating and filling it). A lock of another host is
 * never judged stale: its pid means nothing here, so the message says how to remove it by hand.
 * Taking over renames the stale file aside first and checks it is the one judged stale, so two
 * processes taking over at once cannot delete each other's fresh lock. Locks of this process are
 * released on exit; one killed outright leaves its lock, which is stale from then on.
 */
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DreamGymError } from '../core/errors';

export const LOCK_FILE = 'writer.lock';
/** An empty or unreadable lock older than this is taken to be a writer that died while creating it. */
const STALE_EMPTY_MS = 10_000;

export interface LockHolder {
  pid: number;
  host: string;
  command: string;
  since: string;
  token: string;
}

export class FolderLockedError extends DreamGymError {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder | null,
    waitedMs: number,
    lock = join(dir, LOCK_FILE),
  ) {
    const who = holder
      ? `process ${holder.pid} on ${holder.host === hostname() ? 'this machine' : `host '${holder.host}'`} (${holder.command}, since ${holder.since})`
      : 'a process that left an unreadable lock';
    super(
      `${dir} is being written by ${who}; waited ${Math.round(waitedMs / 1000)} s for it. Only one writer may use a folder at a time: ` +
        `wait until that one finishes and run again (or wait longer), or — if that process is gone — delete ${lock}.`,
      {
        code: 'folder-locked',
        fix: `Wait until the other writer finishes and run again, or — if that process is gone — delete ${lock}.`,
      },
    );
    this.name = 'FolderLockedError';
  }
}

/** Locks this process holds, released when it exits (a normal exit or an uncaught error). */
const held = new Set<FolderLock>();
let exitHook = false;

export class FolderLock {
  private released = false;
  constructor(
    readonly path: string,
    readonly holder: LockHolder,
  ) {}

  /** Removes the lock file if it is still this lock's (by token). */
  release(): void {
    if (this.released) return;
    this.released = true;
    held.delete(this);
    if (readHolder(this.path)?.token === this.holder.token) rmSync(this.path, { force: true });
  }
}

export interface AcquireOptions {
  /** How long to wait for another writer (ms). */
  waitMs: number;
  /** Poll interval (ms; default 100). */
  pollMs?: number;
}

/** Takes the folder's writer lock, waiting up to `waitMs` for another writer; FolderLockedError names the holder. */
export function acquireFolderLock(dir: string, options: AcquireOptions): Promise<FolderLock> {
  return acquireLockFile(dir, join(dir, LOCK_FILE), options);
}

/**
 * The same lock under another file name: `dir` is what it guards (named in the error), `path` the
 * lock file (a folder that is swapped by renames keeps its lock beside it, not in it).
 */
export async function acquireLockFile(dir: string, path: string, options: AcquireOptions): Promise<FolderLock> {
  const started = Date.now();
  for (;;) {
    const lock = tryLockFile(path);
    if (lock) return lock;
    if (Date.now() - started >= options.waitMs)
      throw new FolderLockedError(dir, readHolder(path), Date.now() - started, path);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 100));
  }
}

/** The lock at `path` if it is free (or stale: taken over), without waiting; null while another writer holds it. */
export function tryLockFile(path: string): FolderLock | null {
  for (;;) {
    const lock = tryCreate(path);
    if (lock) return remember(lock);
    if (!isStale(path, readHolder(path))) return null;
    takeOver(path);
  }
}

function tryCreate(path: string): FolderLock | null {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  }
  const holder: LockHolder = {
    pid: process.pid,
    host: hostname(),
    command: commandLine(),
    since: new Date().toISOString(),
    token: randomUUID(),
  };
  try {
    writeSync(fd, JSON.stringify(holder));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return new FolderLock(path, holder);
}

function remember(lock: FolderLock): FolderLock {
  held.add(lock);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const l of [...held]) l.release();
    });
  }
  return lock;
}

/** The holder a lock file names; null when it is missing, empty or not a lock. */
function readHolder(path: string): LockHolder | null {
  try {
    const holder = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
    return Number.isInteger(holder?.pid) && typeof holder.token === 'string' ? holder : null;
  } catch {
    return null;
  }
}

function isStale(path: string, holder: LockHolder | null): boolean {
  if (holder === null) {
    try {
      return Date.now() - statSync(path).mtimeMs > STALE_EMPTY_MS;
    } catch {
      return false; // gone meanwhile: the next try creates it
    }
  }
  return holder.host === hostname() && !processAlive(holder.pid);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // it exists, under another user
  }
}

/**
 * Moves a stale lock aside and deletes it — unless what was moved is no longer stale (another
 * process took the lock over in between): then it goes back (link: never over a newer lock).
 */
function takeOver(path: string): void {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // someone else moved it first
  }
  if (!isStale(aside, readHolder(aside))) {
    try {
      linkSync(aside, path);
    } catch {
      /* a third writer holds the lock now; the moved one is lost to it */
    }
  }
  rmSync(aside, { force: true });
}

function commandLine(): string {
  const args = process.argv.slice(2).join(' ');
  return (args.length > 120 ? `${args.slice(0, 119)}…` : args) || process.argv[1] || 'node';
}
