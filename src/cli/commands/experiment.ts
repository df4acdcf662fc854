/**
 * `dreamgym experiment`: the paper's tables in miniature (Table 1, Table 2, the (ε_R, ε_P) grid,
 * cross-domain transfer), written as markdown and JSON to OUT. The core lives in
 * src/core/experiments/; this edge reads the shipped datasets, keeps the clock, draws the
 * progress lines and spreads the jobs over worker processes (one per CPU core by default: each
 * run is single-threaded wasm). Every job is deterministic given the request, so the numbers do
 * not depend on the number of workers.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { exitWithParent } from '../../node/parent-watch';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initBackend, type BackendName } from '../../core/tfjs/backend';
import { loadSeedDataset } from '../../core/data/seed-datasets';
import { envIds } from '../../core/envs/registry';
import { formatLlmSpec, parseLlmSpec } from '../../core/llm/spec';
import {
  ABLATION_SETS,
  planExperiment,
  type AblationSet,
  presetForEnv,
  type ExperimentSize,
  type ExperimentDeps,
  type ExperimentProgress,
  type ExperimentRequest,
  type ExperimentResult,
  type JobOutcome,
} from '../../core/experiments/experiment';
import type { EvalSplit } from '../../core/train/evaluate';
import { nodeEngineDeps, readPublicFile } from '../../node/edge';
import {
  renderGrid,
  renderReport,
  renderTable,
  renderTransfer,
  shellQuote,
  type RunTiming,
} from '../experiments/report';
import { UsageError, type CommandSpec, type ParsedArgs } from '../args';
import { BACKEND_OPTION } from '../common-options';
import { currentProvenance, filesFingerprint, JobCache, sameCode, type RunProvenance } from '../experiments/job-cache';
import { ensureAblationModel, RETRAINED_ABLATIONS, type RetrainedAblation } from '../experiments/ablation-models';
import { printJsonLast, progressBar } from '../output';

export const experimentCommand: CommandSpec = {
  name: 'experiment',
  summary: "reproduce the paper's tables in miniature (Table 1, Table 2, the ε grid, cross-domain transfer)",
  usage:
    'dreamgym experiment --table 1|2 [--envs webshop-lite-v0,household-v0] [--llm oracle:EPS_R,EPS_P|openai:URL#MODEL] [--seeds N] [--size easy|llm-demo] [--split dev|test] [--out DIR] [--grid] [--transfer] [--quick] [--workers N] [--json]',
  options: {
    table: { type: 'string', description: 'which table: 1 (methods) or 2 (ablations)', choices: ['1', '2'] },
    envs: {
      type: 'string',
      description: 'comma-separated environment ids (each runs its <short>-<size> preset)',
      default: 'webshop-lite-v0,household-v0',
    },
    size: {
      type: 'string',
      description:
        'the presets the rows run: easy, or llm-demo (a few thousand dreamed transitions a run, for a language model or a learned model)',
      choices: ['easy', 'llm-demo'],
      default: 'easy',
    },
    llm: {
      type: 'string',
      description:
        'experience model of the dream rows: oracle:EPS_R,EPS_P, openai:BASE_URL#MODEL (key from DREAMGYM_API_KEY, else OPENAI_API_KEY) or learned:PATH',
      default: 'oracle:0.1,0.1',
    },
    seeds: {
      type: 'integer',
      description: 'seeds per row (mean, sample std, 95 % interval; default 3, with --report 5 for Table 1)',
      min: 1,
      max: 100,
    },
    split: {
      type: 'string',
      description:
        'held-out tasks of the final evaluations: dev (seeds from 1e9, for tuning; the default) ' +
        'or test (seeds from 2e9, for reported tables only; the default with --report)',
      choices: ['dev', 'test'],
    },
    report: {
      type: 'boolean',
      description:
        'a reported table: the test split, 5 seeds for Table 1 (3 for Table 2), runs kept in runs/results, ' +
        'and the table with its command, machine, date and commit written to docs/results/',
    },
    ablations: {
      type: 'string',
      description:
        "Table 2's rows: paper (the paper's ablations of the dream's context, curriculum and verdict) or " +
        'pessimism (the verdict ensemble, the halt and real starts, each removed or at two other values)',
      choices: [...ABLATION_SETS],
      default: 'paper',
    },
    fresh: { type: 'boolean', description: 're-run every job, even one a previous run of this request finished' },
    out: { type: 'string', description: 'output folder (default runs/experiment-<table>; with --report runs/results)' },
    grid: {
      type: 'boolean',
      description: 'also run the transfer-bound grid: dream GRPO over (ε_R, ε_P) ∈ {0, 0.1, 0.3}²',
    },
    transfer: {
      type: 'boolean',
      description: 'also run cross-domain transfer: dream in one env, evaluate in the other (needs two envs)',
    },
    quick: { type: 'boolean', description: 'smoke run: few iterations and held-out tasks (not a result)' },
    workers: {
      type: 'integer',
      description: 'worker processes running jobs side by side (default: one per CPU core)',
      min: 1,
      max: 256,
    },
    backend: BACKEND_OPTION,
    json: { type: 'boolean', description: 'print every number as one JSON object on the last line' },
  },
};

type Backend = 'wasm' | 'cpu';

export async function runExperimentCommand(args: ParsedArgs): Promise<void> {
  const o = args.options as {
    table?: '1' | '2';
    envs: string;
    size: ExperimentSize;
    llm: string;
    seeds?: number;
    split?: EvalSplit;
    report?: boolean;
    ablations: AblationSet;
    fresh?: boolean;
    out?: string;
    grid?: boolean;
    transfer?: boolean;
    quick?: boolean;
    workers?: number;
    backend: Backend;
    json?: boolean;
  };
  if (!o.table && !o.grid && !o.transfer)
    throw new UsageError('experiment needs --table 1|2, --grid or --transfer.', experimentCommand);
  const envs = o.envs
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (envs.length === 0) throw new UsageError('--envs is empty.', experimentCommand);
  const known = envIds();
  for (const env of envs) {
    if (!known.includes(env))
      throw new UsageError(
        `Unknown environment '${env}' in --envs. Valid ids: ${known.join(', ')}.`,
        experimentCommand,
      );
    presetForEnv(env, o.size);
  }
  if (o.report && !o.table) throw new UsageError('--report writes a table: give --table 1 or 2.', experimentCommand);
  const seeds = o.seeds ?? (o.report && o.table === '1' ? 5 : 3);
  const split: EvalSplit = o.split ?? (o.report ? 'test' : 'dev');
  if (seeds < 1 || seeds > 100) throw new UsageError(`--seeds must be within 1..100; got ${seeds}.`, experimentCommand);
  if (o.workers !== undefined && (o.workers < 1 || o.workers > 256))
    throw new UsageError(`--workers must be within 1..256; got ${o.workers}.`, experimentCommand);
  if (o.transfer && envs.length < 2)
    throw new UsageError(`--transfer needs two environments in --envs; got ${envs.join(', ')}.`, experimentCommand);
  const llm = formatLlmSpec(parseLlmSpec(o.llm));
  const table = o.table ? (Number(o.table) as 1 | 2) : undefined;
  const ablations = o.ablations;
  if (ablations === 'pessimism' && table !== 2)
    throw new UsageError('--ablations pessimism chooses the rows of Table 2: add --table 2.', experimentCommand);
  const named = `experiment-${table ?? (o.grid ? 'grid' : 'transfer')}${ablations === 'pessimism' ? '-pessimism' : ''}`;
  const out = o.out ?? (o.report ? join('runs', 'results') : join('runs', named));
  const request: ExperimentRequest = {
    envs,
    size: o.size,
    llm,
    seeds,
    split,
    quick: !!o.quick,
    table,
    grid: !!o.grid,
    transfer: !!o.transfer,
  };

  const backend = await initBackend(o.backend);
  process.stderr.write(`backend: ${backend.reason}\n`);
  const started = performance.now();
  if (table === 2 && ablations === 'pessimism') request.ablations = ablations;
  else if (table === 2) request.retrainedModels = await retrainedModels(envs, llm, out, backend.backend);
  const plan = planExperiment(
    request,
    edgeDeps(() => {}),
  );
  const cacheOf = jobCaches(join(out, 'jobs'), envs, llm);
  const provenance = currentProvenance();
  const { outcomes, provenances, pending, otherCode } = cachedOutcomes(plan.jobs, cacheOf, !!o.fresh, provenance);
  if (otherCode.length > 0) {
    process.stderr.write(
      `experiment: ${otherCode.length} kept run${otherCode.length === 1 ? '' : 's'} of other code ` +
        `(${codeLines(otherCode).join('; ')}) run again with this code (${codeLines([provenance])[0].replace(/: 1 run$/, '')})` +
        '\n',
    );
  }
  let workers = Math.max(1, Math.min(o.workers ?? cpus().length, pending.length));
  if (workers > 1 && !canFork()) {
    process.stderr.write(
      'note: worker processes need the tsx loader (run through `npm run dreamgym`); running the jobs in this process\n',
    );
    workers = 1;
  }
  process.stderr.write(
    `experiment: ${plan.jobs.length} runs, ${plan.jobs.length - pending.length} of them finished before ` +
      `(${join(out, 'jobs')}); ` +
      `${pending.length} to run on ${workers} worker${workers === 1 ? '' : 's'} (${cpus().length} CPU cores); ` +
      `final evaluations on the ${split} split\n`,
  );
  const print = progressPrinter(started, workers > 1);
  const keep = (index: number, outcome: JobOutcome) => {
    outcomes[index] = outcome;
    cacheOf(plan.jobs[index]).write(plan.jobs[index].key, outcome, provenance);
    provenances[index] = provenance;
  };
  if (workers === 1) {
    const local = planExperiment(request, edgeDeps(print));
    for (const job of pending) keep(job.index, await local.runJob(job.index));
  } else if (pending.length) {
    await runInWorkers(request, o.backend, { all: plan.jobs.length, pending }, workers, print, keep);
  }
  const result: ExperimentResult = plan.assemble(outcomes);
  const elapsed = (performance.now() - started) / 1000;
  // This command's elapsed time describes the table only when it ran every job itself.
  const timing: RunTiming | undefined =
    pending.length === plan.jobs.length ? { elapsedSeconds: elapsed, workers, cpus: cpus().length } : undefined;

  mkdirSync(out, { recursive: true });
  const written: string[] = [];
  const write = (name: string, text: string) => {
    writeFileSync(join(out, name), text);
    written.push(join(out, name));
  };
  const markdown: string[] = [];
  if (result.table) {
    const md = renderTable(result.table, timing);
    write(`table${result.table.table}.md`, md);
    markdown.push(md);
    if (o.report) {
      const set = result.table.ablations === 'pessimism' ? '-pessimism' : '';
      const file = join('docs', 'results', `table${result.table.table}${set}-${envs.join('+')}.md`);
      const reused = plan.jobs.length - pending.length;
      const facts = { command: commandLine(), date: new Date(), provenances: provenances as RunProvenance[] };
      writeFileSync(file, renderReport(md, { ...facts, jobs: plan.jobs.length, reused, runs: join(out, 'jobs') }));
      written.push(file);
    }
  }
  if (result.grid) {
    const md = renderGrid(result.grid, timing);
    write('grid.md', md);
    markdown.push(md);
  }
  if (result.transfer) {
    const md = renderTransfer(result.transfer, timing);
    write('transfer.md', md);
    markdown.push(md);
  }
  const summary = {
    command: 'experiment',
    request,
    backend: backend.backend,
    workers,
    host: { cpus: cpus().length, node: process.version },
    elapsed_seconds: Math.round(elapsed * 10) / 10,
    out,
    files: [...written, join(out, o.report ? `table${table}.json` : 'experiment.json')],
    ...result,
    // Which code ran each job (kept from an earlier run or run now).
    jobs: plan.jobs.map((job, i) => ({
      key: job.key,
      commit: provenances[i]!.commit,
      source_tree: provenances[i]!.sourceTree,
      dirty: provenances[i]!.dirty,
      reused: !pending.includes(job),
    })),
  };
  write(o.report ? `table${table}.json` : 'experiment.json', JSON.stringify(summary, null, 2) + '\n');
  process.stderr.write(
    `experiment done in ${elapsed.toFixed(0)} s (${(elapsed / 60).toFixed(1)} min); wrote ${written.join(', ')}\n`,
  );
  if (o.json) printJsonLast(summary);
  else
    console.log(
      `${markdown.join('\n')}\nCode: ${codeLines(provenances as RunProvenance[]).join('; ')}.\nElapsed (total): ${elapsed.toFixed(0)} s (${(elapsed / 60).toFixed(1)} min), ${workers} worker${workers === 1 ? '' : 's'} on ${cpus().length} CPU cores; files in ${out}`,
    );
}

/** The edge's dependencies: shipped datasets from public/, the API key from the environment, the clock. */
export function edgeDeps(onProgress: (e: ExperimentProgress) => void): ExperimentDeps {
  return {
    loadDataset: (env) => loadSeedDataset(env, readPublicFile),
    engine: nodeEngineDeps({ decodeThreads: 1 }), // jobs already run one per core
    now: () => performance.now(),
    onProgress,
  };
}

/** Progress on stderr: a bar per run when jobs run one at a time, plain lines when they run side by side. */
function progressPrinter(started: number, parallel: boolean): (event: ExperimentProgress) => void {
  let bar: ReturnType<typeof progressBar> | null = null;
  const shown = new Map<number, number>();
  return (e) => {
    const clock = `${((performance.now() - started) / 1000).toFixed(0)}s`;
    if (e.kind === 'start') {
      if (parallel) process.stderr.write(`[${e.job}/${e.jobs}] start ${e.label} (elapsed ${clock})\n`);
      else bar = progressBar(`[${e.job}/${e.jobs}] ${e.label}`);
    } else if (e.kind === 'iteration') {
      const judged = e.phase === 'dream' ? 'dream-judged success' : 'real success';
      const text = `${judged} ${e.success === null ? '—' : e.success.toFixed(2)} real ${e.realSteps} dream ${e.dreamSteps}`;
      if (!parallel) {
        bar?.update(e.iteration, e.iterations, text);
        return;
      }
      const quarter = Math.floor((4 * e.iteration) / Math.max(1, e.iterations));
      if (quarter > (shown.get(e.job) ?? 0) && quarter < 4) {
        shown.set(e.job, quarter);
        process.stderr.write(`[${e.job}/${e.jobs}] ${e.label}: iteration ${e.iteration}/${e.iterations} ${text}\n`);
      }
    } else {
      bar?.end();
      bar = null;
      process.stderr.write(
        `[${e.job}/${e.jobs}] ${e.label}: held-out (${e.split}) success ${(100 * e.success).toFixed(1)}% score ${(100 * e.score).toFixed(1)}% real ${e.realSteps} dream ${e.dreamSteps} (${e.wallSeconds.toFixed(1)} s; elapsed ${clock})\n`,
      );
    }
  };
}

// ---- worker processes -------------------------------------------------------------------------

const WORKER_FLAG = 'DREAMGYM_EXPERIMENT_WORKER';
const SELF = fileURLToPath(import.meta.url);

type ToWorker = { type: 'init'; request: ExperimentRequest; backend: Backend } | { type: 'run'; index: number };
type FromWorker =
  | { type: 'ready'; jobs: number }
  | { type: 'progress'; event: ExperimentProgress }
  | { type: 'done'; index: number; outcome: JobOutcome }
  | { type: 'error'; message: string };

/** Workers re-run this file under the same loader (tsx), which only works when that loader is there. */
function canFork(): boolean {
  return !SELF.endsWith('.ts') || process.execArgv.some((a) => a.includes('tsx'));
}

/** Runs the plan's jobs on `count` forked workers, longest first; outcomes come back in job order. */
async function runInWorkers(
  request: ExperimentRequest,
  backend: Backend,
  jobs: { all: number; pending: { index: number; cost: number }[] },
  count: number,
  onProgress: (e: ExperimentProgress) => void,
  onDone: (index: number, outcome: JobOutcome) => void,
): Promise<void> {
  const queue = [...jobs.pending].sort((a, b) => b.cost - a.cost || a.index - b.index).map((j) => j.index);
  const children: ChildProcess[] = [];
  try {
    await new Promise<void>((resolvePromise, reject) => {
      let remaining = jobs.pending.length;
      let failed = false;
      const fail = (error: Error) => {
        if (!failed) {
          failed = true;
          reject(error);
        }
      };
      for (let w = 0; w < count; w++) {
        const child = fork(SELF, [], {
          execArgv: process.execArgv,
          env: { ...process.env, [WORKER_FLAG]: '1' },
          stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
        });
        children.push(child);
        child.stdout?.pipe(process.stderr);
        const next = () => {
          const index = queue.shift();
          if (index === undefined) {
            child.disconnect();
            return;
          }
          child.send({ type: 'run', index } satisfies ToWorker);
        };
        child.on('message', (message: FromWorker) => {
          if (message.type === 'ready') {
            if (message.jobs !== jobs.all) fail(new Error(`worker planned ${message.jobs} jobs, expected ${jobs.all}`));
            else next();
          } else if (message.type === 'progress') {
            onProgress(message.event);
          } else if (message.type === 'done') {
            onDone(message.index, message.outcome);
            if (--remaining === 0) resolvePromise();
            else next();
          } else {
            fail(new Error(`worker ${w + 1}: ${message.message}`));
          }
        });
        child.on('exit', (code) => {
          if (remaining > 0 && code !== 0)
            fail(new Error(`worker ${w + 1} exited with code ${code} before the runs were done`));
        });
        child.on('error', (error) => fail(error));
        child.send({ type: 'init', request, backend } satisfies ToWorker);
      }
    });
  } finally {
    for (const child of children) if (child.exitCode === null && child.connected) child.disconnect();
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}

/** This command as typed, for a report to print beside its table. */
/** The command as a shell reads it back (the report's regenerate line): every argument quoted where needed. */
export function commandLine(args: readonly string[] = process.argv.slice(2)): string {
  return ['npm run dreamgym --', ...args.map(shellQuote)].join(' ');
}

/** The files the jobs read, whose content fixes their outcomes: the envs' shipped datasets and a learned model's folders. */
function inputFiles(envs: string[], llm: string): string[] {
  const files = envs.map((env) => join('public', 'datasets', `${env}.jsonl`));
  const spec = parseLlmSpec(llm);
  if (spec.kind === 'learned') for (const env of envs) files.push(modelFolderOf(spec.path, env));
  return files;
}

/** The kept jobs by what they read: a job that dreams with another model also depends on that model's files. */
function jobCaches(dir: string, envs: string[], llm: string): (job: { llm?: string }) => JobCache {
  const caches = new Map<string, JobCache>();
  return (job) => {
    const files = inputFiles(envs, llm);
    if (job.llm && job.llm !== llm) files.push(...inputFiles(envs, job.llm).slice(envs.length));
    const id = files.join('\n');
    if (!caches.has(id)) caches.set(id, new JobCache(dir, filesFingerprint(files)));
    return caches.get(id)!;
  };
}

/**
 * Table 2 with a learned model: the models trained without retrieval or without history
 * (experiments/ablation-models.ts), trained into OUT/models/<row> unless there; none for other engines.
 */
async function retrainedModels(
  envs: string[],
  llm: string,
  out: string,
  backend: BackendName,
): Promise<ExperimentRequest['retrainedModels']> {
  const spec = parseLlmSpec(llm);
  if (spec.kind !== 'learned') return undefined;
  const specs: NonNullable<ExperimentRequest['retrainedModels']> = {};
  for (const row of Object.keys(RETRAINED_ABLATIONS) as RetrainedAblation[]) {
    const dir = join(out, 'models', row);
    for (const env of envs)
      await ensureAblationModel(row, spec.path, env, dir, backend, (line) => process.stderr.write(`${line}\n`));
    specs[row] = formatLlmSpec({ kind: 'learned', path: dir });
  }
  return specs;
}

function modelFolderOf(path: string, env: string): string {
  return existsSync(join(path, env)) ? join(path, env) : path;
}

/**
 * The outcomes of jobs a previous run of the same request finished with the same code (none with
 * `fresh`), each job's provenance so far, the jobs left, and the kept ones of other code (another
 * source tree, or other uncommitted changes): those run again.
 */
function cachedOutcomes<J extends { index: number; key: string; llm?: string }>(
  jobs: J[],
  cacheOf: (job: J) => JobCache,
  fresh: boolean,
  code: RunProvenance,
) {
  const outcomes: JobOutcome[] = new Array(jobs.length);
  const provenances: (RunProvenance | undefined)[] = new Array(jobs.length);
  const pending: J[] = [];
  const otherCode: RunProvenance[] = [];
  for (const job of jobs) {
    const record = fresh ? null : cacheOf(job).read(job.key);
    if (record && sameCode(record.provenance, code)) {
      outcomes[job.index] = record.outcome;
      provenances[job.index] = record.provenance;
    } else {
      if (record) otherCode.push(record.provenance);
      pending.push(job);
    }
  }
  return { outcomes, provenances, pending, otherCode };
}

/** One line per code that ran the table's jobs: `commit C (src tree T[, uncommitted changes]): N runs`. */
export function codeLines(provenances: readonly RunProvenance[]): string[] {
  const tally = new Map<string, number>();
  for (const p of provenances) {
    const changes = p.dirty ? `, uncommitted changes ${p.changes ?? '(not recorded)'}` : '';
    const code = `commit ${p.commit} (src tree ${p.sourceTree}${changes})`;
    tally.set(code, (tally.get(code) ?? 0) + 1);
  }
  return [...tally].map(([code, n]) => `${code}: ${n} run${n === 1 ? '' : 's'}`);
}

/** A worker: plans the same request, then runs the jobs it is sent, one at a time. */
async function workerMain(): Promise<void> {
  exitWithParent();
  const send = (message: FromWorker) => process.send?.(message);
  let plan: ReturnType<typeof planExperiment> | null = null;
  let chain = Promise.resolve();
  // The channel closes when the parent is done with this worker, or dies (kill -9): nothing more
  // will be asked, and a job's result would go nowhere, so the worker ends now, not after its job.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: ToWorker) => {
    chain = chain.then(async () => {
      try {
        if (message.type === 'init') {
          await initBackend(message.backend);
          plan = planExperiment(
            message.request,
            edgeDeps((event) => send({ type: 'progress', event })),
          );
          send({ type: 'ready', jobs: plan.jobs.length });
        } else {
          if (!plan) throw new Error('run before init');
          send({ type: 'done', index: message.index, outcome: await plan.runJob(message.index) });
        }
      } catch (error) {
        send({ type: 'error', message: (error as Error).message });
      }
    });
  });
}

if (process.env[WORKER_FLAG] === '1' && process.argv[1] && resolve(process.argv[1]) === SELF) void workerMain();
