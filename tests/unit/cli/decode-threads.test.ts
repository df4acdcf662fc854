/**
 * The learned model's decoder threads from the command line, in a process of its own: the idle
 * threads never hold the CLI open, yet a process waiting only on their answers stays alive until
 * they come (a test runner's own event loop would hide both).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const SHIPPED = 'public/models/household-v0/model.json';

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '',
    stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('decoder threads in the CLI', () => {
  it.skipIf(!existsSync(SHIPPED))(
    'an audit of the shipped household model on two decoder threads answers every transition and exits',
    async () => {
      const args = ['audit', '--env', 'household-v0', '--llm', 'learned:public/models', '--n', '24', '--json'];
      const { code, stdout, stderr } = await cli(args);
      expect(stderr).not.toMatch(/unsettled|Error/);
      expect(code).toBe(0);
      const report = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(report).toMatchObject({ n: 24, invalid_rate: 0, failed_calls: 0 });
    },
    300_000,
  );
});
