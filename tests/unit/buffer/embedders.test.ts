import { describe, expect, it } from 'vitest';
import type { MLCEngineInterface } from '@mlc-ai/web-llm';
import {
  EmbedderError,
  HashedNgramEmbedder,
  LlmEmbedder,
  RECOMMENDED_EMBEDDING_MODEL,
  transitionText,
  type EmbeddingEngine,
  type EmbeddingResponse,
} from '../../../src/core/buffer/embedders';
import { benchEmbedder, syntheticTransitionTexts } from '../../../src/bench/buffer-retrieval';

// The adapter's engine shape must accept WebLLM's real engine (checked by the compiler only).
const acceptsWebLlm = (engine: MLCEngineInterface): EmbeddingEngine => engine;
void acceptsWebLlm;

const dot = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * b[i], 0);
const norm = (a: Float32Array): number => Math.sqrt(dot(a, a));

const RESULTS =
  'Instruction: [SEP] i need a blue cotton shirt, and price lower than 40.00 dollars [SEP] Back to Search [SEP] ' +
  'Page 1 (Total results: 50) [SEP] Next > [SEP] B0ABC12345 [SEP] Red Leather Sofa With Wood Frame [SEP] $299.00 [SEP] ' +
  'B0XYZ98765 [SEP] Blue Cotton Shirt For Men [SEP] $25.50';
const ITEM =
  'Instruction: [SEP] i need a blue cotton shirt, and price lower than 40.00 dollars [SEP] Back to Search [SEP] < Prev [SEP] ' +
  'size [SEP] small [SEP] large [SEP] Blue Cotton Shirt For Men [SEP] Price: $25.50 [SEP] Rating: N.A. [SEP] Description [SEP] Buy Now';
const SHIRT = 'i need a blue cotton shirt, and price lower than 40.00 dollars';

describe('transitionText', () => {
  it('writes one line per field and drops the instruction copy of WebShop pages', () => {
    const text = transitionText({ instruction: SHIRT, observation: RESULTS, action: 'click[b0xyz98765]' });
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(`Instruction: ${SHIRT}`);
    expect(lines[1].startsWith('Observation: Back to Search [SEP] Page 1')).toBe(true);
    expect(lines[2]).toBe('Action: click[b0xyz98765]');
    expect(
      transitionText({
        instruction: 'x y',
        observation: 'WebShop [SEP] Instruction: [SEP] x y [SEP] Search',
        action: 'search[x]',
      }),
    ).toBe('Instruction: x y\nObservation: WebShop [SEP] Search\nAction: search[x]');
  });

  it('collapses newlines and bounds long observations to head … tail', () => {
    const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join('\n');
    const text = transitionText({ instruction: 'a', observation: long, action: 'look' });
    expect(text.split('\n')).toHaveLength(3);
    const observation = text.split('\n')[1];
    expect(observation.length).toBeLessThanOrEqual('Observation: '.length + 512 + 256 + 3);
    expect(observation).toContain('word0 word1');
    expect(observation).toContain(' … ');
    expect(observation.endsWith('word399')).toBe(true);
    // Cut between words: every piece is a whole word or the elision mark.
    expect(
      observation
        .slice('Observation: '.length)
        .split(' ')
        .every((w) => /^word\d+$/.test(w) || w === '…'),
    ).toBe(true);
    const short = transitionText({ instruction: 'a', observation: 'You arrive at desk 1.', action: 'look' });
    expect(short).toBe('Instruction: a\nObservation: You arrive at desk 1.\nAction: look');
  });
});

describe('HashedNgramEmbedder', () => {
  const embedder = new HashedNgramEmbedder();
  const one = async (text: string): Promise<Float32Array> => (await embedder.embed([text]))[0];
  const t = (instruction: string, observation: string, action: string): string =>
    transitionText({ instruction, observation, action });

  it('has id hashed-ngram-256 and 256 unit-norm dims', async () => {
    expect(embedder.id).toBe('hashed-ngram-256');
    expect(embedder.dims).toBe(256);
    const vectors = await embedder.embed([t(SHIRT, RESULTS, 'click[b0xyz98765]'), 'plain text', '', '!!!']);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(256);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(vectors[2]).toEqual(vectors[3]); // no tokens at all: the same fixed unit vector
  });

  it('is deterministic across calls and instances', async () => {
    const text = t(SHIRT, ITEM, 'click[buy now]');
    const a = await one(text);
    const b = (await new HashedNgramEmbedder().embed(['other', text]))[1];
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(Array.from(await one(text))).toEqual(Array.from(a));
  });

  it('puts similar transitions closer than unrelated ones', async () => {
    const base = await one(t(SHIRT, RESULTS, 'click[b0xyz98765]'));
    const similar = await one(
      t(
        'i need a blue cotton shirts, and price lower than 30.00 dollars',
        RESULTS.replace('$25.50', '$27.00'),
        'click[b0xyz98765]',
      ),
    );
    const unrelated = await one(
      t(
        'put a clean apple in fridge.',
        'You arrive at sinkbasin 1. On the sinkbasin 1, you see nothing.',
        'clean apple 1 with sinkbasin 1',
      ),
    );
    expect(dot(base, similar)).toBeGreaterThan(0.8);
    expect(dot(base, unrelated)).toBeLessThan(0.2);
    // Character trigrams: plural/singular forms share most of their features.
    expect(dot(await one('shirts'), await one('shirt'))).toBeGreaterThan(
      dot(await one('shirt'), await one('kettle')) + 0.15,
    );
  });

  it('lets each of the three fields matter, by its weight', async () => {
    const base = await one(t(SHIRT, RESULTS, 'click[b0xyz98765]'));
    const otherInstruction = await one(t('i want a red leather sofa under 500 dollars', RESULTS, 'click[b0xyz98765]'));
    const otherObservation = await one(t(SHIRT, ITEM, 'click[b0xyz98765]'));
    const otherAction = await one(t(SHIRT, RESULTS, 'click[next >]'));
    for (const v of [otherInstruction, otherObservation, otherAction]) {
      expect(dot(base, v)).toBeLessThan(0.9);
      expect(dot(base, v)).toBeGreaterThan(0.3);
    }
    // Default weights: the page counts most, then the action, then the instruction.
    expect(dot(base, otherObservation)).toBeLessThan(dot(base, otherAction));
    expect(dot(base, otherAction)).toBeLessThan(dot(base, otherInstruction));
    // The same words in another field are other features.
    const asAction = await one(t('', '', 'blue cotton shirt'));
    const asInstruction = await one(t('blue cotton shirt', '', ''));
    expect(Math.abs(dot(asAction, asInstruction))).toBeLessThan(0.3);
  });

  it('names other settings as another vector space and validates them', () => {
    expect(new HashedNgramEmbedder({ dims: 512 }).id).toBe('hashed-ngram-512');
    const custom = new HashedNgramEmbedder({ weights: { instruction: 1, observation: 1, action: 1, text: 1 } });
    expect(custom.id).toMatch(/^hashed-ngram-256-[0-9a-f]{8}$/);
    expect(() => new HashedNgramEmbedder({ dims: 300 })).toThrow(EmbedderError);
    expect(() => new HashedNgramEmbedder({ weights: { instruction: 0, observation: 0, action: 0, text: 0 } })).toThrow(
      /not all zero/,
    );
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embed(['x'], controller.signal)).rejects.toThrow();
  });

  it('embeds well over 20,000 WebShop transitions per second', async () => {
    const texts = syntheticTransitionTexts(20);
    expect(texts.every((text) => text.split('\n').length === 3)).toBe(true);
    const result = await benchEmbedder(embedder, 4000);
    expect(result.embedder).toBe('hashed-ngram-256');
    expect(result.meanChars).toBeGreaterThan(300);
    // The target is ≥ 20,000/s; the test only guards against a gross regression on a loaded CI box.
    expect(result.embeddingsPerSecond).toBeGreaterThan(5000);
  });
});

// =============================================================================================
// LlmEmbedder against a fake engine (no weights can be downloaded here)
// =============================================================================================

type Request = { input: string | string[]; model?: string };

/** Implements WebLLM's `engine.embeddings.create` shape; answers in shuffled order. */
class FakeEmbeddingEngine implements EmbeddingEngine {
  readonly requests: Request[] = [];
  /** Rewrites an answer before it is returned (to inject faults). */
  tamper: (answer: EmbeddingResponse, request: Request) => EmbeddingResponse = (a) => a;
  constructor(readonly dims = 6) {}

  readonly embeddings = {
    create: async (request: Request): Promise<EmbeddingResponse> => {
      this.requests.push(request);
      const inputs = Array.isArray(request.input) ? request.input : [request.input];
      const data = inputs.map((text, index) => ({ embedding: this.vectorOf(text), index }));
      data.reverse(); // the adapter must order by `index`, not by position
      return this.tamper(
        { data, usage: { prompt_tokens: inputs.length * 3, total_tokens: inputs.length * 3 } },
        request,
      );
    },
  };

  /** A deterministic, unnormalised vector: its length depends on the text. */
  vectorOf(text: string): number[] {
    return Array.from({ length: this.dims }, (_, d) => (((text.length + 1) * (d + 1)) % 7) + 1);
  }
}

describe('LlmEmbedder', () => {
  const unit = (values: number[]): number[] => {
    const n = Math.hypot(...values);
    return values.map((x) => x / n);
  };

  it('batches, orders by index, normalises and discovers dims', async () => {
    const engine = new FakeEmbeddingEngine(6);
    const embedder = new LlmEmbedder({ engine, model: 'fake-embed', batchSize: 3 });
    expect(embedder.id).toBe('llm:fake-embed');
    expect(embedder.dims).toBe(0);
    const texts = ['a', 'bb', 'ccc', 'dddd', 'eeeee', 'ffffff', 'g'];
    const vectors = await embedder.embed(texts);
    expect(embedder.dims).toBe(6);
    expect(engine.requests.map((r) => r.input)).toEqual([['a', 'bb', 'ccc'], ['dddd', 'eeeee', 'ffffff'], ['g']]);
    expect(engine.requests.every((r) => r.model === 'fake-embed')).toBe(true);
    expect(vectors).toHaveLength(7);
    vectors.forEach((v, i) => {
      expect(v).toBeInstanceOf(Float32Array);
      expect(norm(v)).toBeCloseTo(1, 6);
      unit(engine.vectorOf(texts[i])).forEach((x, d) => expect(v[d]).toBeCloseTo(x, 6));
    });
    expect(embedder.usage).toEqual({ promptTokens: 21, requests: 3 });
    expect(await embedder.embed([])).toEqual([]);
    expect(engine.requests).toHaveLength(3);
  });

  it('wraps snowflake-arctic-embed inputs as WebLLM does, others unchanged', async () => {
    const engine = new FakeEmbeddingEngine();
    await new LlmEmbedder({ engine, model: RECOMMENDED_EMBEDDING_MODEL }).embed(['hello']);
    expect(engine.requests[0]).toEqual({
      input: ['[CLS] hello [SEP]'],
      model: 'snowflake-arctic-embed-s-q0f32-MLC-b4',
    });
    await new LlmEmbedder({ engine, model: 'other' }).embed(['hello']);
    expect(engine.requests[1].input).toEqual(['hello']);
    await new LlmEmbedder({ engine, model: RECOMMENDED_EMBEDDING_MODEL, inputTemplate: (s) => `q: ${s}` }).embed([
      'hello',
    ]);
    expect(engine.requests[2].input).toEqual(['q: hello']);
  });

  it('discovers dims with a probe and checks given dims', async () => {
    const embedder = new LlmEmbedder({ engine: new FakeEmbeddingEngine(5), model: 'm' });
    expect(await embedder.discoverDims()).toBe(5);
    const strict = new LlmEmbedder({ engine: new FakeEmbeddingEngine(5), model: 'm', dims: 384 });
    expect(strict.dims).toBe(384);
    await expect(strict.embed(['x'])).rejects.toThrow(/has 5 dims, expected 384/);
  });

  it('rejects an empty answer, naming the fix', async () => {
    const engine = new FakeEmbeddingEngine();
    engine.tamper = () => ({ data: [] });
    const error = await new LlmEmbedder({ engine, model: 'm' }).embed(['x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as Error).message).toMatch(
      /returned no vectors.*reload\(\[llmId, 'snowflake-arctic-embed-s-q0f32-MLC-b4'\]\)/,
    );
    engine.tamper = () => undefined as unknown as EmbeddingResponse;
    await expect(new LlmEmbedder({ engine, model: 'm' }).embed(['x'])).rejects.toThrow(/returned no vectors/);
  });

  it('rejects a wrong count of vectors', async () => {
    const engine = new FakeEmbeddingEngine();
    engine.tamper = (a) => ({ data: a.data.slice(1) });
    await expect(new LlmEmbedder({ engine, model: 'm' }).embed(['x', 'y', 'z'])).rejects.toThrow(
      /returned 2 vectors for 3 inputs.*batchSize/,
    );
  });

  it('rejects repeated or out-of-range indices', async () => {
    const engine = new FakeEmbeddingEngine();
    engine.tamper = (a) => ({ data: a.data.map((item) => ({ ...item, index: 0 })) });
    await expect(new LlmEmbedder({ engine, model: 'm' }).embed(['x', 'y'])).rejects.toThrow(/out of range or repeated/);
    engine.tamper = (a) => ({ data: a.data.map((item) => ({ ...item, index: item.index + 1 })) });
    await expect(new LlmEmbedder({ engine, model: 'm' }).embed(['x', 'y'])).rejects.toThrow(/index 2 is out of range/);
  });

  it('rejects vectors whose length changes between answers or within one', async () => {
    const engine = new FakeEmbeddingEngine(4);
    const embedder = new LlmEmbedder({ engine, model: 'm', batchSize: 1 });
    await embedder.embed(['x']);
    engine.tamper = (a) => ({ data: a.data.map((item) => ({ ...item, embedding: [...item.embedding, 1] })) });
    await expect(embedder.embed(['y'])).rejects.toThrow(/has 5 dims, expected 4.*separate LlmEmbedder/);
    const mixed = new FakeEmbeddingEngine(4);
    mixed.tamper = (a) => ({ data: a.data.map((item) => (item.index === 1 ? { ...item, embedding: [1, 2] } : item)) });
    await expect(new LlmEmbedder({ engine: mixed, model: 'm' }).embed(['x', 'y'])).rejects.toThrow(
      /vector 1 has 2 dims, expected 4/,
    );
  });

  it('rejects zero, non-finite and missing vectors', async () => {
    const engine = new FakeEmbeddingEngine(3);
    engine.tamper = () => ({ data: [{ embedding: [0, 0, 0], index: 0 }] });
    await expect(new LlmEmbedder({ engine, model: 'm' }).embed(['x'])).rejects.toThrow(/all zeros/);
    engine.tamper = () => ({ data: [{ embedding: [1, NaN, 0], index: 0 }] });
    await expect(new LlmEmbedder({ engine, model: 'm' }).embed(['x'])).rejects.toThrow(/non-finite/);
    engine.tamper = () => ({ data: [{ embedding: [], index: 0 }] });
    await expect(new LlmEmbedder({ engine, model: 'm' }).embed(['x'])).rejects.toThrow(/no embedding array/);
  });

  it('rejects bad options with the fix', () => {
    const engine = new FakeEmbeddingEngine();
    expect(() => new LlmEmbedder({ engine, model: '' })).toThrow(/model id is required/);
    expect(() => new LlmEmbedder({ engine, model: 'm', batchSize: 0 })).toThrow(/batchSize/);
    expect(() => new LlmEmbedder({ engine, model: 'm', dims: -1 })).toThrow(/dims/);
    expect(() => new LlmEmbedder({ engine: {} as EmbeddingEngine, model: 'm' })).toThrow(/embeddings\.create/);
  });

  it('stops between batches when aborted', async () => {
    const controller = new AbortController();
    const engine = new FakeEmbeddingEngine();
    engine.tamper = (a) => {
      controller.abort();
      return a;
    };
    await expect(
      new LlmEmbedder({ engine, model: 'm', batchSize: 1 }).embed(['x', 'y', 'z'], controller.signal),
    ).rejects.toThrow();
    expect(engine.requests).toHaveLength(1);
  });
});
