/** The one request/reply client of the page's workers (worker-client.ts), against a stand-in worker. */
import { describe, expect, it } from 'vitest';
import { DreamGymError } from '../../../src/core/errors';
import { WorkerClient, WorkerError, type WorkerLike, type WorkerReply } from '../../../src/app/workers/worker-client';
import { serializeWorkerError } from '../../../src/app/workers/worker-protocol';

type Request = { id: number; type: 'work' | 'other'; n?: number };

function standIn(): WorkerLike & {
  posted: Request[];
  reply(r: WorkerReply<string>): void;
  fire(type: string, message?: string): void;
  terminated: boolean;
} {
  const listeners = new Map<string, ((event: Event) => void)[]>();
  const worker = {
    posted: [] as Request[],
    terminated: false,
    postMessage(m: unknown) {
      worker.posted.push(m as Request);
    },
    terminate() {
      worker.terminated = true;
    },
    addEventListener(type: string, listener: (event: Event) => void) {
      listeners.set(type, [...(listeners.get(type) ?? []), listener]);
    },
    reply(r: WorkerReply<string>) {
      for (const l of listeners.get('message') ?? []) l({ data: r } as MessageEvent as Event);
    },
    fire(type: string, message = '') {
      for (const l of listeners.get(type) ?? []) l({ message, preventDefault() {} } as unknown as Event);
    },
  };
  return worker;
}

const crashed = (detail: string) => new Error(`crashed: ${detail}`);

describe('WorkerClient', () => {
  it('matches replies to requests by id, routes progress to the request that asked, and re-throws worker errors by name', async () => {
    const worker = standIn();
    const client = new WorkerClient<Request, string>(worker, crashed);
    const seen: string[] = [];
    const first = client.request({ type: 'work', n: 1 }, (p) => seen.push(p));
    const second = client.request({ type: 'other' });
    expect(worker.posted).toEqual([
      { type: 'work', n: 1, id: 1 },
      { type: 'other', id: 2 },
    ]);
    expect(client.isOpen(['work'])).toBe(true);
    worker.reply({ id: 2, kind: 'throw', error: { name: 'ConfigError', message: 'bad' } });
    worker.reply({ id: 1, kind: 'progress', progress: 'half' });
    worker.reply({ id: 1, kind: 'return', value: 42 });
    worker.reply({ id: 9, kind: 'return', value: 'nobody asked' });
    await expect(first).resolves.toBe(42);
    const error = await second.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerError);
    expect(error).toMatchObject({ name: 'ConfigError', message: 'bad' });
    expect(seen).toEqual(['half']);
    expect(client.isOpen(['work', 'other'])).toBe(false);
  });

  it("carries a DreamGymError's code and fix across the message, so the page can show the fix", async () => {
    const worker = standIn();
    const client = new WorkerClient<Request>(worker, crashed);
    const thrown = new DreamGymError('The config is bad.', {
      code: 'config-invalid',
      fix: 'Set iterations to 1 or more.',
    });
    thrown.name = 'ConfigError';
    const requests = [
      client.request({ type: 'work' }),
      client.request({ type: 'other' }),
      client.request({ type: 'work' }),
    ];
    // structuredClone: what postMessage does to a reply on its way to the page.
    worker.reply(structuredClone({ id: 1, kind: 'throw', error: serializeWorkerError(thrown) }));
    worker.reply(structuredClone({ id: 2, kind: 'throw', error: serializeWorkerError(new RangeError('plain')) }));
    worker.reply(structuredClone({ id: 3, kind: 'throw', error: serializeWorkerError('a string') }));
    const [carried, plain, text] = await Promise.all(requests.map((r) => r.catch((e: unknown) => e)));
    expect(carried).toBeInstanceOf(WorkerError);
    expect(carried).toMatchObject({
      name: 'ConfigError',
      message: 'The config is bad.',
      code: 'config-invalid',
      fix: 'Set iterations to 1 or more.',
    });
    // An error that is not a DreamGymError has no code or fix of its own: the WorkerError's stand in.
    expect(plain).toMatchObject({ name: 'RangeError', message: 'plain', code: 'worker-error' });
    expect((plain as WorkerError).fix).toMatch(/^Do what the worker's message says/);
    expect(text).toMatchObject({ name: 'Error', message: 'a string', code: 'worker-error' });
  });

  it('a worker that dies rejects every open request and every later one with the crash error, and calls oncrash once', async () => {
    const worker = standIn();
    const client = new WorkerClient<Request>(worker, crashed);
    const crashes: string[] = [];
    client.oncrash = (e) => crashes.push(e.message);
    const open = client.request({ type: 'work' });
    worker.fire('error', 'boom');
    worker.fire('messageerror');
    await expect(open).rejects.toThrow('crashed: boom');
    await expect(client.request({ type: 'other' })).rejects.toThrow('crashed: boom');
    expect(client.gone).toBe(true);
    expect(crashes).toEqual(['crashed: boom']);
  });

  it('terminate ends the worker without oncrash; open requests may get their own error', async () => {
    const worker = standIn();
    const client = new WorkerClient<Request>(worker, crashed);
    client.oncrash = () => {
      throw new Error('not called');
    };
    const open = client.request({ type: 'work' });
    client.terminate('stopped by test', new Error('stopped'));
    await expect(open).rejects.toThrow('stopped');
    await expect(client.request({ type: 'work' })).rejects.toThrow('crashed: stopped by test');
    expect(worker.terminated).toBe(true);
  });
});
