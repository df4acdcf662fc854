/**
 * NODE ONLY (src/node/): a write the disk had no room for, said plainly. Each writer removes what
 * it wrote before it throws, so a full disk never keeps a partial file that holds the space.
 */
import { statfsSync } from 'node:fs';
import { DreamGymError } from '../core/errors';

/** Whether `error` is the file system's "no space" (a full disk, or the user's quota). */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

export class DiskFullError extends DreamGymError {
  /** `saving` says what was written where ('saving the checkpoint in DIR'); `kept` what is left and what to do. */
  constructor(saving: string, dir: string, bytesNeeded: number, kept: string) {
    const free = freeBytes(dir);
    super(
      `The disk is full: ${saving} needs ${bytesNeeded} bytes (${megabytes(bytesNeeded)} MB)` +
        `${free === null ? '' : `, and ${megabytes(free)} MB are free`}. What it wrote was removed. ${kept}`,
      { code: 'disk-full', fix: 'Free space on that disk, then run the command again.' },
    );
    this.name = 'DiskFullError';
  }
}

/** Bytes free to this user on the disk of `dir`; null where the system cannot say. */
function freeBytes(dir: string): number | null {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}

const megabytes = (bytes: number) => (bytes / 1e6).toFixed(1);
