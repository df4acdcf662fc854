/**
 * The fused decoder (fused-network.ts, decodeFused in decode.ts) against the tfjs reference: the same heads
 * step by step within 1e-4, the same answers greedy and sampled; continuous batching equal to one
 * row at a time at any capacity; and on the shipped models, 128 held-out predictions per
 * environment identical to the tfjs decoder's.
 */
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../../src/core/tfjs/backend';
import { buildMasks, decodeBatch, decodeFused, type Sampling } from '../../../../src/core/experience/learned/decode';
import { decodeLimits } from '../../../../src/core/experience/learned/format';
import { FusedNetwork } from '../../../../src/core/experience/learned/fused-network';
import { heldOutContexts } from '../../../../src/core/experience/held-out';
import { loadModelFolder } from '../../../../src/node/model-folder';
import { teacherForcedHeads, TOY_FORMAT, tinyNetwork, toyPairs, toyTokenizer, trainedToyNetwork } from './fixtures';

beforeAll(async () => {
  expect((await initBackend('wasm')).backend).toBe('wasm');
});

const limits = decodeLimits(TOY_FORMAT);

describe('the fused decoder', () => {
  it('computes the heads the tfjs network computes, step by step (within 1e-4)', () => {
    const tokenizer = toyTokenizer();
    const pairs = toyPairs(tokenizer);
    const net = tinyNetwork(tokenizer, 7);
    const { batch, vocab, pointer, gate, V, Lc, P } = teacherForcedHeads(net, tokenizer, pairs);
    const fused = FusedNetwork.fromNetwork(net, pairs.length);
    const slots = pairs.map((_, b) => b);
    pairs.forEach((p, b) => fused.encode(b, p.context));
    const everything = { allowed: new Uint8Array(V).fill(1) };
    const feed = (t: number, pick: (p: (typeof pairs)[number], t: number) => number) => pairs.map((p) => pick(p, t));
    for (let t = 0; t < P; t++)
      fused.step(
        slots,
        feed(t, (p) => p.prompt.ids[t]),
        feed(t, (p) => p.prompt.spaces[t]),
        feed(t, (p) => p.prompt.cases[t]),
        pairs.map(() => ({ allowed: null })),
      );
    let fed = pairs.map(() => ({ id: tokenizer.special('<ans>'), space: 0, letterCase: 0 }));
    const steps = Math.max(...pairs.map((p) => p.answer.ids.length));
    let compared = 0;
    for (let t = 0; t < steps; t++) {
      const heads = fused.step(
        slots,
        fed.map((f) => f.id),
        fed.map((f) => f.space),
        fed.map((f) => f.letterCase),
        pairs.map(() => everything),
      );
      pairs.forEach((p, b) => {
        if (t >= p.answer.ids.length) return; // this row's answer is over (it is fed padding)
        const row = b * batch.answerLength + P + t;
        const h = heads[b]!;
        for (let w = 0; w < V; w++) expect(Math.abs(h.vocab[w] - vocab[row * V + w])).toBeLessThan(1e-4);
        for (let j = 0; j < p.context.ids.length; j++)
          expect(Math.abs(h.pointer[j] - pointer[row * Lc + j])).toBeLessThan(1e-4);
        expect(Math.abs(h.gate - gate[row])).toBeLessThan(1e-4);
        compared++;
      });
      fed = pairs.map((p) =>
        t < p.answer.ids.length
          ? { id: p.answer.ids[t], space: p.answer.spaces[t], letterCase: p.answer.cases[t] }
          : { id: tokenizer.special('<pad>'), space: 0, letterCase: 0 },
      );
    }
    expect(compared).toBe(pairs.reduce((n, p) => n + p.answer.ids.length, 0));
    net.dispose();
  });

  it('writes the answers the tfjs decoder writes, greedy and sampled, at any capacity (continuous batching)', async () => {
    const { tokenizer, pairs, net } = await trainedToyNetwork();
    const masks = buildMasks(tokenizer);
    const many = Array.from({ length: 13 }, (_, i) => pairs[i % pairs.length]);
    const contexts = many.map((p) => p.context),
      prompts = many.map((p) => p.prompt),
      kinds = many.map(() => 'next' as const);
    for (const sampling of [undefined, { temperature: 0.8, seed: 5 } satisfies Sampling]) {
      const reference = await decodeBatch(net, tokenizer, masks, contexts, prompts, kinds, limits, sampling);
      expect(new Set(reference.map((d) => d.steps)).size).toBeGreaterThan(1);
      for (const capacity of [1, 3, 8, 64]) {
        const fused = FusedNetwork.fromNetwork(net, capacity);
        const answers = await decodeFused(
          fused,
          tokenizer,
          masks.allowedIds,
          contexts,
          prompts,
          kinds,
          limits,
          sampling,
        );
        answers.forEach((d, i) => expect(d.tokens, `row ${i}, capacity ${capacity}`).toEqual(reference[i].tokens));
      }
    }
    masks.table.dispose();
    net.dispose();
  });

  it('refuses a context longer than the network takes, naming both lengths', () => {
    const tokenizer = toyTokenizer();
    const net = tinyNetwork(tokenizer, 3);
    const fused = FusedNetwork.fromNetwork(net, 2);
    const n = net.config.maxContext + 1;
    const long = {
      ids: new Array(n).fill(0),
      spaces: new Array(n).fill(0),
      cases: new Array(n).fill(0),
      segments: new Array(n).fill(0),
    };
    expect(() => fused.encode(0, long)).toThrow(new RegExp(`${n} tokens .*\\(${net.config.maxContext}\\)`));
    net.dispose();
  });
});

const SHIPPED = 'public/models';

describe.each(['webshop-lite-v0', 'household-v0'])('the shipped model of %s', (env) => {
  it.skipIf(!existsSync(`${SHIPPED}/${env}/model.json`))(
    'predicts 128 held-out transitions with the fused decoder exactly as with tfjs (greedy and sampled)',
    async () => {
      const samples = await heldOutContexts(env, 128);
      for (const temperature of [0, 0.7]) {
        const raw: Record<string, string[]> = {};
        for (const decoder of ['fused', 'tfjs'] as const) {
          const model = await loadModelFolder(SHIPPED, { env, decoder, transitionCache: false, temperature, seed: 3 });
          const predictions = await Promise.all(samples.map((s) => model.next(s.ctx)));
          raw[decoder] = predictions.map((p) => p.raw ?? '');
          model.dispose();
        }
        expect(raw.fused.filter((r) => r.length > 0)).toHaveLength(128);
        raw.fused.forEach((r, i) => expect(r, `prediction ${i} at T=${temperature}`).toBe(raw.tfjs[i]));
      }
    },
    600_000,
  );
});

describe('the same seed, the same dream', () => {
  const env = 'household-v0';
  it.skipIf(!existsSync(`${SHIPPED}/${env}/model.json`))(
    'at batch 1, 8 and 64, on 1 and 2 decoder threads (shipped household model, sampled)',
    async () => {
      const samples = (await heldOutContexts(env, 64)).map((s) => s.ctx);
      const runs: string[][] = [];
      for (const threads of [1, 2])
        for (const batch of [1, 8, 64]) {
          const model = await loadModelFolder(SHIPPED, {
            env,
            threads,
            maxBatch: batch,
            transitionCache: false,
            temperature: 0.7,
            seed: 9,
          });
          const raw: string[] = [];
          for (let i = 0; i < samples.length; i += batch)
            raw.push(
              ...(await Promise.all(samples.slice(i, i + batch).map((c) => model.next(c)))).map((p) => p.raw ?? ''),
            );
          model.dispose();
          runs.push(raw);
        }
      expect(runs[0].every((r) => r.length > 0)).toBe(true);
      expect(new Set(runs[0]).size).toBeGreaterThan(8);
      for (const run of runs.slice(1)) expect(run).toEqual(runs[0]);
    },
    600_000,
  );
});
