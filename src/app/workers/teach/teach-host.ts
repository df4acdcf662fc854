/**
 * The teach worker's body (teach.worker.ts only wires it to `self`): owns one
 * TeachSession and answers `reset` and `step` requests one at a time (a request that arrives
 * while another runs waits for it, so a double press never interleaves two updates).
 *
 * Backend: wasm first, as the trainer worker (see trainer-host.ts for why).
 */
import { WASM_PATHS } from '../wasm-paths';
import { initBackend, type BackendInfo } from '../../../core/tfjs/backend';
import { TeachSession } from '../../../core/train/teach';
import { serializeWorkerError } from '../worker-protocol';
import type { TeachInfo, TeachReply, TeachRequest } from './teach-protocol';
import { DreamGymError } from '../../../core/errors';

export class TeachNotStartedError extends DreamGymError {
  constructor() {
    super('No teach session yet: choose the settings and press Reset first.', {
      code: 'teach-not-started',
      fix: 'Choose the settings and press Reset first.',
    });
    this.name = 'TeachNotStartedError';
  }
}

export class TeachHost {
  private session: TeachSession | null = null;
  private backend: BackendInfo | null = null;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly post: (reply: TeachReply) => void) {}

  handle(request: TeachRequest): Promise<void> {
    this.queue = this.queue.then(async () => {
      try {
        this.post({ id: request.id, kind: 'return', value: await this.dispatch(request) });
      } catch (error) {
        this.post({ id: request.id, kind: 'throw', error: serializeWorkerError(error) });
      }
    });
    return this.queue;
  }

  private async dispatch(request: TeachRequest) {
    switch (request.type) {
      case 'reset': {
        this.backend ??= await initBackend(request.backend ?? 'wasm', { wasmPaths: WASM_PATHS });
        this.session?.dispose();
        this.session = null;
        const session = await TeachSession.create(request.settings);
        this.session = session;
        const info: TeachInfo = {
          settings: session.settings,
          preset: session.config.preset,
          experience: session.experience,
          backend: this.backend.backend,
          backendReason: this.backend.reason,
        };
        return info;
      }
      case 'step': {
        if (!this.session) throw new TeachNotStartedError();
        return this.session.step();
      }
    }
  }
}
