/**
 * `experiment`'s worker processes die with their parent (issue 44, repro 11, first part): after
 * kill -9 of the command, they used to run on until their job ended (minutes at full size).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a process runs (a zombie, dead but not yet reaped by its new parent, does not). */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z';
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

describe('experiment worker processes', () => {
  it.skipIf(process.platform !== 'linux')(
    'end within seconds of a kill -9 of the command, in the middle of a job',
    async () => {
      const out = mkdtempSync(join(tmpdir(), 'dreamgym-orphans-'));
      // A full-size table: its jobs take minutes, so a worker outliving its parent would be seen.
      const args = ['--import', 'tsx', 'src/cli/bin.ts', 'experiment', '--table', '1'];
      const parent = spawn(process.execPath, [...args, '--seeds', '1', '--workers', '2', '--out', out], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let log = '';
      parent.stderr.on('data', (chunk) => (log += String(chunk)));
      for (let waited = 0; waited < 90_000 && !/\] start /.test(log); waited += 250) await sleep(250);
      const workers = childrenOf(parent.pid!).filter((pid) => running(pid));
      expect(workers.length).toBeGreaterThanOrEqual(2);
      await sleep(1000); // in their jobs
      parent.kill('SIGKILL');
      try {
        for (let waited = 0; waited < 5000 && workers.some(running); waited += 100) await sleep(100);
        expect(workers.filter(running)).toEqual([]);
      } finally {
        for (const pid of workers.filter(running)) process.kill(pid, 'SIGKILL');
      }
    },
    120_000,
  );
});
