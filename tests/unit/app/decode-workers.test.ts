/**
 * The page's decode threads (decode-workers.ts over core's decode-service.ts): how many workers a
 * device gets and what the page says about it; a model decoding through thread ports gives the
 * same answers as one decoding in its own thread; workers that cannot start leave it decoding
 * itself, said so; and the Experience model page's stopwatch counts only the time in flight.
 */
import { describe, expect, it } from 'vitest';
import { heldOutContexts } from '../../../src/core/experience/held-out';
import {
  serveDecoding,
  threadDecoders,
  type DecodePort,
  type DecodeReply,
} from '../../../src/core/experience/learned/decode-service';
import type { LearnedExperienceModel } from '../../../src/core/experience/learned/learned-model';
import { decodeThreadsFor, decodeThreadsLine } from '../../../src/app/workers/decode/decode-workers';
import { decodeThreadsOf, loadPageLearnedModel, type LearnedSourceDeps } from '../../../src/app/workers/learned-source';
import { timedModel } from '../../../src/app/workers/expmodel/expmodel-evaluate';
import { ENV, tinyModel } from './learned-fixtures';

const BASE = 'http://app.test/';

/** A thread in this process: the same messages, answered a turn later. */
function inProcessPort(log: string[]): DecodePort {
  const serve = serveDecoding(async () => undefined);
  let reply: (r: DecodeReply) => void = () => undefined;
  return {
    post: (request) => {
      log.push(request.kind);
      void serve(request).then((r) => setTimeout(() => reply(r), 0));
    },
    listen: (onReply) => (reply = onReply),
    terminate: () => {
      log.push('terminate');
    },
  };
}

async function shippedTiny(cores: number, startDecoders?: LearnedSourceDeps['startDecoders']) {
  const { result, buffer } = await tinyModel();
  const files: Record<string, string | Uint8Array> = {
    [`models/${ENV}/model.json`]: result.manifest,
    [`models/${ENV}/weights.bin`]: result.weights,
  };
  const fetch = (async (input: string | URL | Request) => {
    const body = files[String(input).slice(BASE.length)];
    return body === undefined ? new Response('', { status: 404 }) : new Response(body as BodyInit);
  }) as typeof globalThis.fetch;
  const options = { buffer, env: ENV, transitionCache: false, seed: 4 };
  return loadPageLearnedModel(`models/${ENV}`, options, {
    fetch,
    base: BASE,
    cores,
    ...(startDecoders ? { startDecoders } : {}),
  });
}

async function answers(model: LearnedExperienceModel): Promise<string[]> {
  const contexts = (await heldOutContexts(ENV, 24)).map((s) => s.ctx);
  return (await Promise.all(contexts.map((c) => model.next(c)))).map((p) => p.raw ?? '');
}

describe('decode threads in the page', () => {
  it('one worker per core but the dreaming one, two at least, at most four; none on one core', () => {
    expect(decodeThreadsFor(1, true).workers).toBe(0);
    expect(decodeThreadsFor(2, true).workers).toBe(2);
    expect(decodeThreadsFor(4, true).workers).toBe(3);
    expect(decodeThreadsFor(16, true).workers).toBe(4);
    expect(decodeThreadsFor(undefined, true).workers).toBe(0);
    expect(decodeThreadsFor(8, false).workers).toBe(0);
    expect(decodeThreadsLine(decodeThreadsFor(2, true))).toBe(
      'Decoding on 2 web workers (this device reports 2 cores; the page is not cross-origin isolated, so each ' +
        'worker runs one wasm thread).',
    );
    expect(decodeThreadsLine(decodeThreadsFor(16, true))).toMatch(/4 web workers .*16 cores.*; at most 4\)\.$/);
    expect(decodeThreadsLine(decodeThreadsFor(8, false))).toBe(
      'Decoding in the dreaming worker, one thread (this browser cannot start a worker from a worker).',
    );
  });

  it('a model decoding on thread ports answers as one decoding itself; they stop with it', async () => {
    const alone = await shippedTiny(1);
    expect(decodeThreadsOf(alone)?.workers).toBe(0);
    const expected = await answers(alone);
    alone.dispose();
    expect(new Set(expected).size).toBeGreaterThan(3);

    const log: string[] = [];
    const threaded = await shippedTiny(3, (model, count, engine) =>
      threadDecoders(
        Array.from({ length: count }, () => inProcessPort(log)),
        model,
        engine,
      ),
    );
    expect(decodeThreadsOf(threaded)).toMatchObject({ workers: 2, why: expect.stringMatching(/3 cores/) });
    expect(await answers(threaded)).toEqual(expected);
    expect(log.filter((k) => k === 'load')).toHaveLength(2);
    expect(log.filter((k) => k === 'decode').length).toBeGreaterThanOrEqual(2);
    threaded.dispose();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(log.filter((k) => k === 'terminate')).toHaveLength(2);
  }, 120_000);

  it('workers that cannot start leave the model decoding itself, and the page says why', async () => {
    const failing: DecodePort = {
      post: () => undefined,
      listen: (_reply, onError) => setTimeout(() => onError(new Error('no nested workers')), 0),
      terminate: () => undefined,
    };
    const model = await shippedTiny(4, async (files, count, engine) =>
      threadDecoders(Array(count).fill(failing), files, engine).catch(() => null),
    );
    expect(decodeThreadsLine(decodeThreadsOf(model)!)).toBe(
      'Decoding in the dreaming worker, one thread (the decode workers did not start).',
    );
    expect((await answers(model)).every((raw) => raw.length > 0)).toBe(true);
    model.dispose();
  }, 120_000);
});

describe("the Experience model page's stopwatch", () => {
  it('counts the wall time while predictions are in flight, not the time between batches', async () => {
    let clock = 0;
    const inner = {
      label: 'fake',
      preferredBatch: 2,
      initial: async () => ({}) as never,
      next: async () => {
        await Promise.resolve();
        clock += 5;
        return {} as never;
      },
    };
    const { model, read } = timedModel(inner, () => clock);
    expect(model.preferredBatch).toBe(2);
    await Promise.all([model.next({} as never), model.next({} as never)]);
    clock += 100; // building the next batch: not counted
    await model.next({} as never);
    expect(read()).toEqual({ transitions: 3, seconds: 0.015 });
  });
});
