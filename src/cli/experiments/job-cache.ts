/**
 * Finished experiment jobs kept on disk (OUT/jobs/), so a long table survives an interrupted
 * command and two tables share the runs they have in common: Table 2's full row is Table 1's
 * S2R GRPO run. A job is found again by its key (the core's: kind, config, split) and by the
 * fingerprint of the files it read: the shipped datasets and, for a learned model, its files.
 * Each record also says which commit, source tree and uncommitted changes ran it: `experiment`
 * reuses a record only for the same code (`sameCode`), names the code of every job in its table
 * and experiment.json, and `--fresh` re-runs everything.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { JobOutcome } from '../../core/experiments/experiment';

/** Where a job ran: the code (commit, source tree, uncommitted changes) and the machine. */
export interface RunProvenance {
  commit: string;
  sourceTree: string;
  dirty: boolean;
  /** A hash of the uncommitted changes under src/ ('' when none; absent in records of older code). */
  changes?: string;
  machine: string;
}

export interface JobRecord {
  key: string;
  fingerprint: string;
  outcome: JobOutcome;
  finishedAt: string;
  provenance: RunProvenance;
}

export class JobCache {
  constructor(
    readonly dir: string,
    readonly fingerprint: string,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  private file(key: string): string {
    const name = createHash('sha256').update(`${this.fingerprint}\n${key}`).digest('hex').slice(0, 24);
    return join(this.dir, `${name}.json`);
  }

  /** The record of a finished job with this key and fingerprint; null when there is none (or it is unreadable). */
  read(key: string): JobRecord | null {
    const file = this.file(key);
    if (!existsSync(file)) return null;
    try {
      const record = JSON.parse(readFileSync(file, 'utf8')) as JobRecord;
      return record.key === key && record.fingerprint === this.fingerprint ? record : null;
    } catch {
      return null; // a torn or foreign file: the job runs again and rewrites it
    }
  }

  /** Keeps a finished job; written whole (temp file, then rename), so a kill never leaves half a record. */
  write(key: string, outcome: JobOutcome, provenance: RunProvenance, now = new Date()): void {
    const record: JobRecord = {
      key,
      fingerprint: this.fingerprint,
      outcome,
      finishedAt: now.toISOString(),
      provenance,
    };
    const file = this.file(key);
    writeFileSync(`${file}.tmp`, JSON.stringify(record, null, 2) + '\n');
    renameSync(`${file}.tmp`, file);
  }
}

/**
 * The fingerprint of the files a request's jobs read: every file under the given paths, by content.
 * Links are followed, but a folder reached again (`ln -s . M/a`) is read once: a loop ends.
 */
export function filesFingerprint(paths: string[]): string {
  const hash = createHash('sha256');
  const seen = new Set<string>(); // folders by real path: a link to a folder already read is read once
  const visit = (path: string) => {
    if (!existsSync(path)) {
      hash.update(`missing ${path}\n`);
      return;
    }
    if (statSync(path).isDirectory()) {
      const real = realpathSync(path);
      if (seen.has(real)) {
        hash.update(`again ${path}\n`);
        return;
      }
      seen.add(real);
      for (const name of readdirSync(path).sort()) visit(join(path, name));
      return;
    }
    hash.update(`${path}\n`).update(readFileSync(path));
  };
  for (const path of [...paths].sort()) visit(path);
  return hash.digest('hex').slice(0, 16);
}

/** A hash of what differs in src/ from HEAD (the diff, and the untracked files' contents); '' when nothing. */
function uncommittedChanges(): string {
  const diff = git(['diff', 'HEAD', '--', 'src']) ?? '';
  const untracked = (git(['ls-files', '--others', '--exclude-standard', '--', 'src']) ?? '')
    .split('\n')
    .filter(Boolean);
  if (diff === '' && untracked.length === 0) return '';
  const hash = createHash('sha256').update(diff);
  for (const file of untracked) hash.update(`\n${file}\n`).update(existsSync(file) ? readFileSync(file) : '');
  return hash.digest('hex').slice(0, 12);
}

/**
 * Whether a kept job ran on the code of `now`: the same committed source tree (known), and the
 * same uncommitted changes in src/ (none, or the very same).
 */
export function sameCode(kept: RunProvenance, now: RunProvenance): boolean {
  const changes = (p: RunProvenance) => (p.dirty ? (p.changes ?? 'unknown') : '');
  return (
    kept.sourceTree === now.sourceTree &&
    kept.sourceTree !== 'unknown' &&
    changes(kept) === changes(now) &&
    changes(kept) !== 'unknown'
  );
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** This checkout's commit and source tree, and this machine, as a record names them. */
export function currentProvenance(): RunProvenance {
  const cpu = cpus();
  return {
    commit: git(['rev-parse', '--short=12', 'HEAD']) ?? 'unknown',
    sourceTree: git(['rev-parse', '--short=12', 'HEAD:src']) ?? 'unknown',
    dirty: (git(['status', '--porcelain', '--', 'src']) ?? '') !== '',
    changes: uncommittedChanges(),
    machine: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`,
  };
}
