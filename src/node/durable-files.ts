/**
 * NODE ONLY (src/node/): the file writes the folder stores commit with (buffer-folder.ts,
 * checkpoint-folder.ts): whole writes, fsync before a commit, and a rename as the commit.
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** writeSync's signature: tests inject a write that fails as a full disk does. */
export type WriteChunk = (fd: number, bytes: Uint8Array, offset: number, length: number) => number;

export interface DurableWriteOptions {
  /** fsync before closing (default true; only a benchmark on a slow disk turns it off). */
  fsync?: boolean;
  write?: WriteChunk;
}

/** Writes all of `bytes` (writeSync may write less than asked). */
export function writeAll(fd: number, bytes: Uint8Array, write: WriteChunk = writeSync): void {
  for (let offset = 0; offset < bytes.length;) offset += write(fd, bytes, offset, bytes.length - offset);
}

/**
 * Writes the chunks as the whole of `path` and syncs it; returns the bytes written. On any failure
 * the partial file is removed (nothing names it yet, and on a full disk it would hold the space).
 */
export function writeWholeFile(path: string, chunks: Iterable<Uint8Array>, options: DurableWriteOptions = {}): number {
  const fd = openSync(path, 'w');
  let total = 0;
  try {
    for (const chunk of chunks) {
      writeAll(fd, chunk, options.write);
      total += chunk.length;
    }
    if (options.fsync ?? true) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw error;
  }
  closeSync(fd);
  return total;
}

/** Writes `path.tmp`, then renames it over `path`: the rename is atomic, so a reader sees the old text or the new. */
export function replaceFileAtomically(path: string, text: string, options: DurableWriteOptions = {}): void {
  writeWholeFile(`${path}.tmp`, [Buffer.from(text, 'utf8')], options);
  renameSync(`${path}.tmp`, path);
}

/**
 * Appends the chunks to `path`, opened at the first non-empty chunk (nothing to append creates
 * nothing); returns the bytes written. What a failure left appended is the caller's to cut off.
 */
export function appendToFile(path: string, chunks: Iterable<Uint8Array>, options: DurableWriteOptions = {}): number {
  let fd: number | null = null;
  let total = 0;
  try {
    for (const chunk of chunks) {
      if (chunk.length === 0) continue;
      fd ??= openSync(path, 'a');
      writeAll(fd, chunk, options.write);
      total += chunk.length;
    }
    if ((options.fsync ?? true) && fd !== null) fsyncSync(fd);
  } finally {
    if (fd !== null) closeSync(fd);
  }
  return total;
}

/** Deletes the `*.tmp` files an interrupted atomic replace left in `dir`. */
export function removeTempFiles(dir: string): void {
  for (const name of readdirSync(dir)) if (name.endsWith('.tmp')) rmSync(join(dir, name), { force: true });
}
