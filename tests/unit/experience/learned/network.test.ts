import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { initBackend } from '../../../../src/core/tfjs/backend';
import { buildMasks } from '../../../../src/core/experience/learned/decode';
import { decodeAnswer, decodeLimits, type Answer } from '../../../../src/core/experience/learned/format';
import { DEFAULT_FIT_OPTIONS, fitNetwork, makeBatch } from '../../../../src/core/experience/learned/fit';
import { DecodeCache } from '../../../../src/core/experience/learned/decode-cache';
import { ExperienceNetwork } from '../../../../src/core/experience/learned/network';
import {
  decodeNext,
  fitToy,
  teacherForcedHeads,
  TOY_CARD,
  TOY_FORMAT,
  TOY_STEPS,
  tinyConfig,
  tinyNetwork as tinyNetworkOf,
  toyPairs,
  toyTokenizer,
  trainedToyNetwork,
} from './fixtures';
import { encodeAnswer, encodeContext, encodePrompt } from '../../../../src/core/experience/learned/format';
import { Tokenizer } from '../../../../src/core/experience/learned/tokenizer';

beforeAll(async () => {
  expect((await initBackend('wasm')).backend).toBe('wasm');
});

const limits = decodeLimits(TOY_FORMAT);

describe('experience network', () => {
  const tinyNetwork = tinyNetworkOf;

  it('has gradients that match finite differences', () => {
    const tokenizer = toyTokenizer();
    const net = tinyNetwork(tokenizer, 3, { dModel: 8, selfDim: 4, attentionDim: 4 });
    const batch = makeBatch(toyPairs(tokenizer).slice(0, 2), tokenizer);
    const lossValue = () => tf.tidy(() => net.loss(batch).total.dataSync()[0]);
    const { grads } = tf.variableGrads(() => net.loss(batch).total, net.trainableVariables());
    // A few entries of weights on every path: the encoder conv, the cross-attention, the pointer gate, the output, the continuation's strengths.
    for (const name of [
      'enc0/conv_w',
      'dec0/xk_w',
      'dec0/qkv_w',
      'gate_w',
      'vocab_w',
      'vocab_b',
      'dec_ln_g',
      'tok',
      'ptr_cont_w',
      'ptr_cont_b',
      'gate_cont_w',
    ]) {
      const variable = [...net.variables.entries()].find(([n]) => n === name)![1];
      const analytic = grads[variable.name].dataSync();
      const values = variable.dataSync().slice();
      for (const index of [0, Math.floor(values.length / 2), values.length - 1]) {
        const eps = 1e-2;
        const at = (delta: number) => {
          const v = values.slice();
          v[index] += delta;
          variable.assign(tf.tensor(v, variable.shape));
          return lossValue();
        };
        const numeric = (at(eps) - at(-eps)) / (2 * eps);
        variable.assign(tf.tensor(values, variable.shape));
        expect(Math.abs(numeric - analytic[index])).toBeLessThan(2e-3 + 0.05 * Math.abs(numeric));
      }
    }
    tf.dispose(Object.values(grads));
    net.dispose();
  });

  it('trains on a batch of one pair (one attention group: its split has one part)', () => {
    const tokenizer = toyTokenizer();
    const net = tinyNetwork(tokenizer, 3, { dModel: 8, selfDim: 4, attentionDim: 4 });
    const batch = makeBatch(toyPairs(tokenizer).slice(0, 1), tokenizer);
    const { value, grads } = tf.variableGrads(() => net.loss(batch).total, net.trainableVariables());
    expect(Number.isFinite(value.dataSync()[0])).toBe(true);
    expect(Object.values(grads).every((g) => g.dataSync().every(Number.isFinite))).toBe(true);
    tf.dispose([value, ...Object.values(grads)]);
  });

  it('overfits a handful of transitions exactly, and decodes them back', async () => {
    const tokenizer = toyTokenizer();
    const pairs = toyPairs(tokenizer);
    const net = tinyNetwork(tokenizer, 5, { dModel: 32, selfDim: 16, attentionDim: 16 });
    const state = await fitToy(net, tokenizer, pairs, { epochs: 150, batchSize: 4, warmupSteps: 10, seed: 1 });
    expect(state.history.at(-1)!.trainLoss).toBeLessThan(0.05);
    const masks = buildMasks(tokenizer);
    const decoded = await decodeNext(net, tokenizer, masks, pairs, limits);
    decoded.forEach((d, i) => expect(decodeAnswer(tokenizer, d.tokens)).toEqual(TOY_STEPS[i].answer));
    masks.table.dispose();
    net.dispose();
  }, 120_000);

  it('decodes with the KV cache what the full recomputation predicts, step by step', async () => {
    const tokenizer = toyTokenizer();
    const pairs = toyPairs(tokenizer);
    const net = tinyNetwork(tokenizer, 7);
    const { batch, vocab, pointer, gate, V, Lc, P } = teacherForcedHeads(net, tokenizer, pairs);
    const B = pairs.length;
    const lengths = Int32Array.from(pairs, (p) => p.context.ids.length);
    const flat = (pick: (c: (typeof pairs)[number]['context']) => number[]) => {
      const out = new Int32Array(B * Lc);
      pairs.forEach((p, b) => out.set(pick(p.context), b * Lc));
      return out;
    };
    const cache = DecodeCache.prefill(
      net,
      {
        ids: flat((c) => c.ids),
        spaces: flat((c) => c.spaces),
        cases: flat((c) => c.cases),
        segments: flat((c) => c.segments),
        positions: Int32Array.from({ length: B * Lc }, (_, i) => i % Lc),
      },
      B,
      Lc,
      lengths,
    );
    const noMask = tf.zeros([B, V]) as tf.Tensor2D;
    let fed = {
      ids: new Int32Array(pairs.flatMap((p) => [...p.prompt.ids, tokenizer.special('<ans>')])),
      spaces: new Int32Array(B * (P + 1)),
      cases: new Int32Array(B * (P + 1)),
    };
    pairs.forEach((p, b) => {
      fed.spaces.set(p.prompt.spaces, b * (P + 1));
      fed.cases.set(p.prompt.cases, b * (P + 1));
    });
    const steps = Math.min(...pairs.map((p) => p.answer.ids.length));
    for (let t = 0; t < steps; t++) {
      const out = await cache.step(fed, noMask);
      for (let b = 0; b < B; b++) {
        const row = b * batch.answerLength + P + t;
        for (let w = 0; w < V; w++) expect(Math.abs(out.vocab[b * V + w] - vocab[row * V + w])).toBeLessThan(1e-4);
        for (let j = 0; j < lengths[b]; j++)
          expect(Math.abs(out.pointer[b * Lc + j] - pointer[row * Lc + j])).toBeLessThan(1e-4);
        expect(Math.abs(out.gate[b] - gate[row])).toBeLessThan(1e-4);
      }
      fed = {
        ids: Int32Array.from(pairs, (p) => p.answer.ids[t]),
        spaces: Int32Array.from(pairs, (p) => p.answer.spaces[t]),
        cases: Int32Array.from(pairs, (p) => p.answer.cases[t]),
      };
    }
    cache.dispose();
    noMask.dispose();
    net.dispose();
  });

  it('decodes a batch exactly as each row alone, whatever the padding', async () => {
    // Trained a little, so the rows' answers differ in length (and a big batch shrinks as they end).
    const { tokenizer, pairs, net } = await trainedToyNetwork();
    const masks = buildMasks(tokenizer);
    const together = await decodeNext(net, tokenizer, masks, pairs, limits);
    for (let i = 0; i < pairs.length; i++) {
      const [alone] = await decodeNext(net, tokenizer, masks, [pairs[i]], limits);
      expect(alone.tokens).toEqual(together[i].tokens);
      // In another company (a different longest context), the row still decodes the same.
      const company = [0, 1, 2].map((k) => pairs[(i + k) % pairs.length]);
      const [first] = await decodeNext(net, tokenizer, masks, company, limits);
      expect(first.tokens).toEqual(together[i].tokens);
    }
    // A batch big enough to shrink as its rows finish (finished rows leave the cache) decodes the same.
    const many = Array.from({ length: 12 }, (_, i) => pairs[i % pairs.length]);
    const compact = vi.spyOn(DecodeCache.prototype, 'compact');
    const shrinking = await decodeNext(net, tokenizer, masks, many, limits);
    shrinking.forEach((d, i) => expect(d.tokens).toEqual(together[i % pairs.length].tokens));
    expect(new Set(together.map((d) => d.steps)).size).toBeGreaterThan(1);
    expect(compact).toHaveBeenCalled();
    compact.mockRestore();
    masks.table.dispose();
    net.dispose();
  });

  it('keeps tf.memory flat across training steps and decoding', async () => {
    const tokenizer = toyTokenizer();
    const pairs = toyPairs(tokenizer);
    const net = tinyNetwork(tokenizer, 13);
    const masks = buildMasks(tokenizer);
    const fit = { ...DEFAULT_FIT_OPTIONS, epochs: 1, batchSize: 2, warmupSteps: 1 };
    await fitNetwork(net, tokenizer, pairs, pairs, fit);
    await decodeNext(net, tokenizer, masks, pairs, limits);
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) {
      await fitNetwork(net, tokenizer, pairs, pairs, fit);
      await decodeNext(net, tokenizer, masks, pairs, limits);
    }
    expect(tf.memory().numTensors).toBe(before);
    masks.table.dispose();
    net.dispose();
  });

  it('leaves no tensor behind: created, rebuilt from its weights, trained and disposed', async () => {
    const tokenizer = toyTokenizer();
    const pairs = toyPairs(tokenizer);
    const before = tf.memory().numTensors;
    const net = tinyNetwork(tokenizer, 5);
    await fitNetwork(net, tokenizer, pairs, pairs, { ...DEFAULT_FIT_OPTIONS, epochs: 1, batchSize: 2 });
    const copy = ExperienceNetwork.fromWeights(net.config, await net.getWeights());
    net.dispose();
    copy.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('builds the same network from the same seed, and refuses weights of another shape', async () => {
    const tokenizer = toyTokenizer();
    const a = tinyNetwork(tokenizer, 17),
      b = tinyNetwork(tokenizer, 17),
      c = tinyNetwork(tokenizer, 18);
    const [wa, wb, wc] = await Promise.all([a.getWeights(), b.getWeights(), c.getWeights()]);
    expect(wa.map((w) => Array.from(w.data))).toEqual(wb.map((w) => Array.from(w.data)));
    expect(wa[0].data).not.toEqual(wc[0].data);
    expect(() => ExperienceNetwork.fromWeights(tinyConfig(tokenizer.size, { dModel: 8 }), wa)).toThrow(/needs \[/);
    // A file without one of the network's weights (a model of another network) is refused, naming it.
    expect(() =>
      ExperienceNetwork.fromWeights(
        tinyConfig(tokenizer.size),
        wa.filter((w) => w.name !== 'ptr_cont_w'),
      ),
    ).toThrow(/no weight 'ptr_cont_w'/);
    const extra = { name: 'match_w', shape: [1], data: new Float32Array(1) };
    expect(() => ExperienceNetwork.fromWeights(tinyConfig(tokenizer.size), [...wa, extra])).toThrow(/'match_w'/);
    // setWeights runs the same check, and leaves the weights as they were when it refuses.
    const short = wa.map((w) => (w.name === 'tok' ? { ...w, data: w.data.slice(1) } : w));
    expect(() => c.setWeights(short)).toThrow(/Weight 'tok' has/);
    expect(Array.from((await c.getWeights())[0].data)).toEqual(Array.from(wc[0].data));
    [a, b, c].forEach((n) => n.dispose());
  });
});

describe("the verdicts' loss weight", () => {
  it('weighs the verdict tokens ×4 by default, as asked otherwise, and the contents at 1', () => {
    const tokenizer = toyTokenizer();
    const [pair] = toyPairs(tokenizer);
    const P = pair.prompt.ids.length;
    const heavy = makeBatch([pair], tokenizer, { verdictWeight: 40 });
    const plain = makeBatch([pair], tokenizer);
    expect(plain.targetMask[P]).toBe(4);
    expect(heavy.targetMask[P]).toBe(40);
    expect(heavy.targetMask[P + 3]).toBe(plain.targetMask[P + 3]);
  });
});

describe('unchanged states', () => {
  it('decides whether the state changed by the whole masses: an empty state only when <eos> holds at least half', async () => {
    const { unchangedOrNew } = await import('../../../../src/core/experience/learned/decode');
    const V = 40,
      eos = 3;
    const step = (pEos: number, gate = 1) => {
      const vocab = new Float32Array(2 * V);
      vocab[V + eos] = pEos;
      for (let w = 30; w < 40; w++) vocab[V + w] = (1 - pEos) / 10; // the rest spread over ten first words, each less likely than <eos>
      return {
        vocab,
        bestWord: new Int32Array(2),
        pointer: new Float32Array(2),
        gate: Float32Array.of(1, gate),
        space: new Int32Array(2),
        letterCase: new Int32Array(2),
      };
    };
    const choice = { allowed: 3, unchangedChoice: true } as Parameters<typeof unchangedOrNew>[0];
    expect(unchangedOrNew(choice, step(0.6), 1, V, eos)).toEqual({ forced: eos });
    // <eos> is the likeliest single token but a new state is likelier as a whole: a new state, its first word chosen among text.
    const written = unchangedOrNew(choice, step(0.4), 1, V, eos);
    expect('forced' in written).toBe(false);
    expect(written).not.toEqual(choice);
    // The copy share of the gate counts against <eos> (never in a context).
    expect('forced' in unchangedOrNew(choice, step(0.6, 0.5), 1, V, eos)).toBe(false);
    // Anywhere else the plan stands.
    expect(unchangedOrNew({ allowed: 3 } as Parameters<typeof unchangedOrNew>[0], step(0.9), 1, V, eos)).toEqual({
      allowed: 3,
    });
  });

  it('learns to answer a step that leaves the state as it was with an empty state, and never a finished one so', async () => {
    const page = 'Brass Lamp | color | red | blue | Price: $25.99';
    const steps: { state: string; action: string; answer: Answer }[] = [
      {
        state: page,
        action: 'click[red]',
        answer: {
          valid: true,
          terminated: false,
          reward: 0,
          observation: page,
          admissible: ['click[red]', 'click[blue]'],
          unchanged: true,
        },
      },
      {
        state: 'Page 1 | B07ZZ1 | Brass Lamp | $25.99',
        action: 'click[b07zz1]',
        answer: {
          valid: true,
          terminated: false,
          reward: 0,
          observation: page,
          admissible: ['click[red]', 'click[blue]'],
        },
      },
      {
        state: page,
        action: 'click[buy now]',
        answer: {
          valid: true,
          terminated: true,
          reward: 1,
          observation: 'Thank you for shopping with us!',
          admissible: [],
        },
      },
    ];
    const tokenizer = Tokenizer.learn(
      steps.flatMap((s) => [s.state, s.action, s.answer.observation, ...s.answer.admissible]),
      { minCount: 1 },
    );
    const format = TOY_FORMAT;
    const pairs = steps.map((s, i) => ({
      kind: 'next' as const,
      taskId: `t${i}`,
      episodeId: `e${i}`,
      prompt: encodePrompt(tokenizer, s.action),
      answer: encodeAnswer(tokenizer, s.answer, format),
      context: encodeContext(
        tokenizer,
        TOY_CARD,
        {
          task: { instruction: 'buy a red lamp' },
          history: [],
          state: { text: s.state, admissible: ['click[red]', 'click[blue]'] },
          action: s.action,
          retrieved: [],
        },
        format,
      ),
    }));
    // The unchanged step is `<yes> <no> <r0> <obs> <eos>`; a changed one is written out.
    expect(pairs[0].answer.ids).toEqual(
      (['<yes>', '<no>', '<r0>', '<obs>', '<eos>'] as const).map((t) => tokenizer.special(t)),
    );
    expect(pairs[1].answer.ids.length).toBeGreaterThan(10);
    const net = tinyNetworkOf(tokenizer, 5, { dModel: 32, selfDim: 16, attentionDim: 16 });
    await fitToy(net, tokenizer, pairs, { epochs: 120, batchSize: 3, warmupSteps: 10, seed: 1 });
    const masks = buildMasks(tokenizer);
    const decoded = await decodeNext(net, tokenizer, masks, pairs, limits);
    const answers = decoded.map((d) => decodeAnswer(tokenizer, d.tokens));
    expect(answers[0]).toEqual({
      valid: true,
      terminated: false,
      reward: 0,
      observation: '',
      admissible: [],
      unchanged: true,
    });
    const { unchanged: _u, ...written } = steps[1].answer;
    expect(answers[1]).toEqual(written);
    // A finished episode's state is always written: the terminal step is read back in full.
    expect(answers[2]).toEqual(steps[2].answer);
    masks.table.dispose();
    net.dispose();
  }, 120_000);
});
