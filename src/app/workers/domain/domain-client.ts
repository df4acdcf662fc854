/**
 * Page-side client of the Domains worker (worker-client.ts: ids, progress, errors, crashes). Stop
 * terminates the worker: an audit or an agent's training keeps nothing half done, and the next
 * request starts a fresh worker.
 */
import type {
  AgentSettings,
  DomainWorkerProgress,
  DomainWorkerRequest,
  StoredDomainAudit,
  Suggestion,
  TrainedAgent,
} from './domain-protocol';
import { WorkerClient, WorkerCrashedError, WorkerStoppedError, type WorkerLike } from '../worker-client';

export class DomainWorkerCrashedError extends WorkerCrashedError {
  constructor(detail: string) {
    super('Domains worker', detail, {
      code: 'domain-worker-crashed',
      fix: 'Press the button again to start the worker afresh.',
    });
    this.name = 'DomainWorkerCrashedError';
  }
}

/** The worker was terminated to stop it (the running request rejects with this). */
export class DomainWorkerStoppedError extends WorkerStoppedError {
  constructor() {
    super({
      code: 'domain-worker-stopped',
      fix: 'Nothing is wrong: the work was stopped on request; start it again to redo it.',
    });
    this.name = 'DomainWorkerStoppedError';
  }
}

export function createDomainWorker(): WorkerLike {
  return new Worker(new URL('./domain.worker.ts', import.meta.url), { type: 'module', name: 'dreamgym-domain' });
}

export class DomainWorkerClient extends WorkerClient<DomainWorkerRequest, DomainWorkerProgress> {
  constructor(worker: WorkerLike = createDomainWorker()) {
    super(worker, (detail) => new DomainWorkerCrashedError(detail));
  }

  audit(
    options: { domain: string; model: string; transitions: number; episodes: number; seed: number },
    onprogress: (p: DomainWorkerProgress) => void,
  ): Promise<StoredDomainAudit> {
    return this.request({ type: 'audit', ...options }, onprogress) as Promise<StoredDomainAudit>;
  }

  readAudit(model: string): Promise<StoredDomainAudit | null> {
    return this.request({ type: 'readAudit', model }) as Promise<StoredDomainAudit | null>;
  }

  trainAgent(
    options: { domain: string; model: string; settings: AgentSettings },
    onprogress: (p: DomainWorkerProgress) => void,
  ): Promise<TrainedAgent> {
    return this.request({ type: 'trainAgent', ...options }, onprogress) as Promise<TrainedAgent>;
  }

  suggest(options: {
    domain: string;
    agent: Pick<TrainedAgent, 'checkpoint' | 'stepLimit' | 'settings'>;
    episode: number;
    step: number;
  }): Promise<Suggestion> {
    return this.request({ type: 'suggest', ...options }) as Promise<Suggestion>;
  }

  stop(): void {
    if (!this.gone) this.terminate('terminated to stop it', new DomainWorkerStoppedError());
  }
}
