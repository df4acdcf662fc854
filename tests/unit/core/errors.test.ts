import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DreamGymError } from '../../../src/core/errors';

const SRC = join(__dirname, '../../../src');

/** Every TypeScript file under `dir` (the page's .svelte.ts state included). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

interface ClassFound {
  name: string;
  base: string;
  file: string;
  exported: boolean;
}

/** Every `class X extends Y` in src, read from the text (so a class no test imports is found too). */
function classesInSrc(): ClassFound[] {
  return sourceFiles(SRC).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/^(export )?(?:abstract )?class (\w+)(?:<[^>]*>)? extends (\w+)/gm)].map(
      (m) => ({ name: m[2], base: m[3], file, exported: m[1] !== undefined }),
    ),
  );
}

/** The classes whose line of bases reaches the built-in Error, each with that line. */
function errorClasses(classes: ClassFound[]): { found: ClassFound; line: string[] }[] {
  const byName = new Map(classes.map((c) => [c.name, c]));
  const lineOf = (c: ClassFound): string[] => {
    const line = [c.name];
    for (let at = c; ;) {
      line.push(at.base);
      const next = byName.get(at.base);
      if (!next || line.length > 20) return line;
      at = next;
    }
  };
  return classes.map((found) => ({ found, line: lineOf(found) })).filter(({ line }) => line.at(-1) === 'Error');
}

/** One way to build each error class, to read its code and fix; a new class needs a line here. */
const SAMPLE_ARGS: Record<string, unknown[]> = {
  BrowserEngineError: ['webllm:model'],
  BufferFolderMissingError: ['/no/such/dir'],
  BufferQuotaError: [null, null, 3],
  BufferSchemaError: ['m'],
  BufferTooLargeError: ['/no/such/dir', 3e9, 9e9, 1e9],
  CheckpointFormatError: ['m'],
  CheckpointMismatchError: ['m'],
  ConfigError: ['m'],
  DatasetImportError: ['file.jsonl', [{ line: 1, message: 'not JSON' }]],
  DiskFullError: ['saving the checkpoint in DIR', tmpdir(), 100, 'The last checkpoint is kept.'],
  DomainError: ['shop', [{ code: 'too-few-episodes', message: 'm' }]],
  DomainExistsError: ['shop'],
  DomainFolderError: ['m'],
  DomainStoreError: ['m'],
  DomainWorkerCrashedError: ['exit'],
  DomainWorkerStoppedError: [],
  DuplicateEpisodeError: [['e1']],
  EmbedderError: ['m'],
  EngineFailureError: [8, 'consecutive', 'timeout'],
  EpisodeIdTakenError: ['e1', 'e2'],
  ExperienceModelError: ['m'],
  ExperimentError: ['m'],
  ExpModelBusyError: ['m'],
  ExpModelStoppedError: [],
  ExpModelWorkerCrashedError: ['exit'],
  FolderLockedError: ['/no/such/dir', null, 1000],
  HouseholdTaskError: ['m'],
  IterationStoppedError: [],
  LearnedModelEnvError: ['models/a', 'a', 'b'],
  LearnedPathError: ['m'],
  LlmError: ['m', 'timeout'],
  LlmSpecError: ['m'],
  ModelFileError: ['m'],
  ModelFileMissingError: ['model.gguf'],
  NoCheckpointError: ['run'],
  NoShippedModelError: ['household-v0'],
  NoStoredModelError: ['mine'],
  OpfsUnavailableError: ['no storage'],
  PolicyConfigError: ['m'],
  RetrievalIndexError: ['m'],
  SeedDatasetMissingError: ['household-v0'],
  SftDataError: ['m'],
  TeachFinishedError: ['m'],
  TeachNotStartedError: [],
  TeachWorkerCrashedError: ['exit'],
  TrainerBusyError: ['m'],
  TrainerWorkerCrashedError: ['exit'],
  UngroundedDreamError: ['household-v0', 'empty'],
  UnknownEnvError: ['nope'],
  UnknownFormatError: ['nope'],
  UnusableModelError: ['model', 10, 2],
  UsageError: ['m'],
  WebArenaTaskError: ['m'],
  WorkerCrashedError: ['test worker', 'exit', { code: 'test-worker-crashed', fix: 'Start it again.' }],
  WorkerError: [{ name: 'ConfigError', message: 'm' }],
  WorkerStoppedError: [{ code: 'test-worker-stopped', fix: 'Start it again.' }],
  WorldSpecError: ['m'],
};

describe('DreamGymError, the root of the errors', () => {
  it('keeps the message, and carries the code and the fix', () => {
    const error = new DreamGymError('It broke.', { code: 'broke', fix: 'Mend it.', cause: 'why' });
    expect([error.message, error.code, error.fix, error.cause, error instanceof Error]).toEqual([
      'It broke.',
      'broke',
      'Mend it.',
      'why',
      true,
    ]);
  });

  const errors = errorClasses(classesInSrc()).filter(({ found }) => found.name !== 'DreamGymError');
  const exported = errors.map(({ found }) => found).filter((c) => c.exported);

  it('is the root of every error class in src', () => {
    expect(errors.length).toBeGreaterThanOrEqual(Object.keys(SAMPLE_ARGS).length);
    const offRoot = errors
      .filter(({ line }) => !line.includes('DreamGymError'))
      .map(({ found, line }) => `${relative(SRC, found.file)}: ${line.join(' → ')}`);
    expect(offRoot).toEqual([]);
  });

  it('gives every exported error class its own name, a kebab-case code and a fix', async () => {
    const problems: string[] = [];
    for (const found of exported) {
      const args = SAMPLE_ARGS[found.name];
      if (!args) {
        problems.push(`${found.name}: add a way to build it to SAMPLE_ARGS`);
        continue;
      }
      const module = (await import(found.file)) as Record<string, new (...args: unknown[]) => unknown>;
      const error = new module[found.name](...args);
      if (!(error instanceof DreamGymError)) {
        problems.push(`${found.name}: not a DreamGymError`);
        continue;
      }
      const name = found.name === 'WorkerError' ? 'ConfigError' : found.name; // a worker's error keeps its name
      if (error.name !== name) problems.push(`${found.name}: name '${error.name}'`);
      if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(error.code)) problems.push(`${found.name}: code '${error.code}'`);
      if (!/^[A-Z].*\.$/s.test(error.fix)) problems.push(`${found.name}: fix '${error.fix}' (a sentence)`);
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('gives each class its own code', async () => {
    const codes = new Map<string, string>();
    for (const found of exported.filter((c) => SAMPLE_ARGS[c.name])) {
      const module = (await import(found.file)) as Record<string, new (...args: unknown[]) => DreamGymError>;
      const code = new module[found.name](...SAMPLE_ARGS[found.name]).code;
      expect(codes.get(code), `${found.name} and ${codes.get(code)} share '${code}'`).toBeUndefined();
      codes.set(code, found.name);
    }
  }, 60_000);
});
