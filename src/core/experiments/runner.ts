/**
 * The job runner: a run's context (the clock, the progress callback and the env datasets, each
 * parsed once and shared by every job of the process) and the loop that runs jobs in order and
 * reports their progress. The CLI spreads a plan's jobs over worker processes instead
 * (src/cli/commands/experiment.ts); each worker runs its jobs through runOne.
 */
import type { Trajectory } from '../types';
import { ReplayBuffer } from '../buffer/buffer';
import { MemoryBufferStore } from '../buffer/stores/memory';
import type { ExperimentDeps, Job, JobOutcome } from './types';

export class Context {
  private readonly datasets = new Map<string, Promise<readonly Trajectory[] | null>>();
  constructor(readonly deps: ExperimentDeps) {}
  now(): number {
    return this.deps.now?.() ?? 0;
  }

  /** The env's shipped offline dataset (parsed once per env); null: none handed in. */
  dataset(envId: string): Promise<readonly Trajectory[] | null> {
    let data = this.datasets.get(envId);
    if (!data) {
      data = Promise.resolve(this.deps.loadDataset?.(envId) ?? null);
      this.datasets.set(envId, data);
    }
    return data;
  }

  /** A fresh in-memory buffer seeded from the env's shipped dataset. */
  async freshBuffer(envId: string): Promise<ReplayBuffer> {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const trajectories = await this.dataset(envId);
    if (trajectories?.length)
      await buffer.importTrajectories(trajectories, { source: 'offline', createdAt: this.now() });
    return buffer;
  }
}

export async function runOne(ctx: Context, job: Job, index: number, jobs: number): Promise<JobOutcome> {
  const at = index + 1;
  ctx.deps.onProgress?.({ kind: 'start', job: at, jobs, label: job.label });
  const outcome = await job.run((e) =>
    ctx.deps.onProgress?.({ kind: 'iteration', job: at, jobs, label: job.label, ...e }),
  );
  ctx.deps.onProgress?.({
    kind: 'done',
    job: at,
    jobs,
    label: job.label,
    split: outcome.split,
    success: outcome.success,
    score: outcome.score,
    realSteps: outcome.realSteps,
    dreamSteps: outcome.dreamSteps,
    wallSeconds: outcome.wallSeconds,
  });
  return outcome;
}

export async function runJobs(ctx: Context, jobs: Job[]): Promise<JobOutcome[]> {
  const outcomes: JobOutcome[] = [];
  for (let i = 0; i < jobs.length; i++) outcomes.push(await runOne(ctx, jobs[i], i, jobs.length));
  return outcomes;
}
