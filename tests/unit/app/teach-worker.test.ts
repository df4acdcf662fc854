/**
 * The teach worker's host and client wired together in Node (no real Worker): ids match replies
 * to requests, errors come back as named errors, requests run one at a time in arrival order, and
 * a dead worker fails every open request with a message that says what to do.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEACH_SETTINGS, type TeachUpdate } from '../../../src/core/train/teach';
import { TeachClient, TeachWorkerCrashedError } from '../../../src/app/workers/teach/teach-client';
import type { WorkerLike } from '../../../src/app/workers/worker-client';
import { TeachHost } from '../../../src/app/workers/teach/teach-host';
import type { TeachReply, TeachRequest } from '../../../src/app/workers/teach/teach-protocol';

/** A fake Worker whose other end is a TeachHost in the same thread (messages cloned like postMessage). */
function inProcessWorker(): WorkerLike & { fail(message: string): void } {
  const listeners: Record<string, ((event: Event) => void)[]> = { message: [], error: [], messageerror: [] };
  const host = new TeachHost((reply: TeachReply) => {
    const data = structuredClone(reply);
    setTimeout(() => {
      for (const l of listeners.message) l({ data } as MessageEvent);
    }, 0);
  });
  return {
    postMessage(message) {
      void host.handle(structuredClone(message) as TeachRequest);
    },
    terminate() {
      /* nothing to stop */
    },
    addEventListener(type, listener) {
      listeners[type].push(listener);
    },
    fail(message) {
      for (const l of listeners.error) l({ message, preventDefault() {} } as unknown as Event);
    },
  };
}

describe('teach worker protocol', () => {
  it('reset, then steps in order; a step before any reset names the fix; bad settings name the field', async () => {
    const client = new TeachClient(inProcessWorker());
    await expect(client.step()).rejects.toThrow('No teach session yet: choose the settings and press Reset first.');
    await expect(client.reset({ ...DEFAULT_TEACH_SETTINGS, group: 1 })).rejects.toThrow(
      /'group' must be an integer in 2\.\.8; got 1/,
    );

    const info = await client.reset({ ...DEFAULT_TEACH_SETTINGS, tasks: 1, group: 2, seed: 7 });
    expect(info.preset).toBe('webshop-easy');
    expect(info.experience).toBe('the real environment');
    expect(info.backend).toBe('wasm');
    // Two requests at once: the host runs them one after the other.
    const [a, b] = (await Promise.all([client.step(), client.step()])) as [TeachUpdate, TeachUpdate];
    expect([a.iteration, b.iteration]).toEqual([1, 2]);
    expect(a.groups).toHaveLength(1);
    expect(a.groups[0].rollouts).toHaveLength(2);

    // Reset starts over: the same seed gives the same first update.
    await client.reset({ ...DEFAULT_TEACH_SETTINGS, tasks: 1, group: 2, seed: 7 });
    const again = await client.step();
    expect(again.iteration).toBe(1);
    expect(JSON.stringify(again)).toBe(JSON.stringify(a));
  });

  it('a crashed worker rejects open and later requests with a TeachWorkerCrashedError', async () => {
    const worker = inProcessWorker();
    const client = new TeachClient(worker);
    const open = client.reset({ ...DEFAULT_TEACH_SETTINGS });
    worker.fail('boom');
    await expect(open).rejects.toBeInstanceOf(TeachWorkerCrashedError);
    await expect(client.step()).rejects.toThrow(
      'The teach worker stopped unexpectedly (boom). Press Reset to start a fresh session.',
    );
    expect(client.gone).toBe(true);
  });
});
