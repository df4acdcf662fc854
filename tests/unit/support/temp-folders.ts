/** Temp folders for a test file, all removed after its last test. */
import { afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A maker of fresh folders named `dreamgym-<prefix>-…` under the OS temp folder. */
export function tempFolders(prefix: string): () => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `dreamgym-${prefix}-`));
    made.push(dir);
    return dir;
  };
}
