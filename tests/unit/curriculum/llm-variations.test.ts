/**
 * The curriculum's LLM variation source: the variation and selection prompts, the checks and the
 * deduplication, retries and recorded broken answers, λ with LLM tasks, dream-only tasks kept out
 * of real envs (s2r's real phase), checkpoints and determinism. The LLM is the scripted test double.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  jaccard,
  LlmTaskGenerator,
  llmTaskId,
  normaliseInstruction,
  instructionTokens,
  type VariationSeed,
} from '../../../src/core/curriculum/llm-variations';
import { Curriculum, type CurriculumOptions } from '../../../src/core/curriculum/curriculum';
import { builtInDomainCard } from '../../../src/core/experience/domain-card';
import { getEnvDefinition } from '../../../src/core/envs/registry';
import { WebShopEnv } from '../../../src/core/envs/webshop/env';
import type { ChatRequest } from '../../../src/core/llm/types';
import type { Task } from '../../../src/core/types';
import {
  ExperienceModelError,
  type DreamContext,
  type ExperienceModel,
  type Prediction,
} from '../../../src/core/experience/types';
import { initBackend } from '../../../src/core/tfjs/backend';
import { ConfigError, getPreset, validateConfig, type TrainConfig } from '../../../src/core/train/config';
import { Trainer } from '../../../src/core/train/loop';
import { buildRunParts } from '../../../src/core/train/run-parts';
import { deserializeCheckpoint, serializeCheckpoint } from '../../../src/core/train/checkpoint';
import type { EpisodeTrace } from '../../../src/core/train/trace';
import { hashString } from '../../../src/core/rng';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';

const ENV = 'webshop-lite-v0';
const SEED_TASK: Task = {
  id: 'webshop-lite-v0:7:0.00',
  env: ENV,
  difficulty: 0.3,
  origin: 'generated',
  seed: 7,
  instruction: 'i need a red cotton t-shirt in size m, and price lower than 30.00 dollars',
};
const seedOf = (task: Task, successes: number, rollouts = 8): VariationSeed => ({ task, successes, rollouts });

type Item = string | { instruction: string; change?: string; rationale?: string };
function variations(items: readonly Item[], change = 'harder'): string {
  return JSON.stringify({
    variations: items.map((i) =>
      typeof i === 'string'
        ? { instruction: i, difficulty_change: change, rationale: 'one more constraint' }
        : { instruction: i.instruction, difficulty_change: i.change ?? change, rationale: i.rationale ?? 'changed' },
    ),
  });
}

const isSelection = (r: ChatRequest) => r.messages[0].content.startsWith('You review candidate');
const userOf = (r: ChatRequest) => r.messages.filter((m) => m.role === 'user')[0].content;

/** The numbered candidates of a selection prompt, in the order shown. */
function shownCandidates(r: ChatRequest): string[] {
  const lines = userOf(r).split('\n');
  const start = lines.indexOf('Candidates:');
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^(\d+)\. (.*?)(?: \([^()]*\))?$/.exec(line);
    if (!m) break;
    out.push(m[2]);
  }
  return out;
}

/** A selection answer naming the candidates with these texts (1-based numbers as shown). */
function choose(r: ChatRequest, texts: readonly string[]): string {
  const shown = shownCandidates(r);
  return JSON.stringify({ chosen: texts.map((t) => shown.indexOf(t) + 1) });
}

/** A scripted LLM that writes variations of whatever seed it is shown and keeps the first K shown. */
function variationWriter(
  suffixes = [
    'wrapped in a gift box with a card',
    'shipped within two days by express courier',
    'made from recycled organic fibre',
  ],
) {
  return new ScriptedChatModel((r) => {
    if (isSelection(r))
      return JSON.stringify({
        chosen: shownCandidates(r)
          .slice(0, 2)
          .map((_, i) => i + 1),
      });
    const seed = /^Seed task: (.*)$/m.exec(userOf(r))![1];
    const direction = /one notch HARDER/.test(userOf(r)) ? 'harder' : 'easier';
    return variations(
      suffixes.map((s) => `${seed} ${s}`),
      direction,
    );
  });
}

describe('normalisation and ids', () => {
  it('normalises case and punctuation, keeps decimals whole, and measures token-set overlap', () => {
    expect(normaliseInstruction('I NEED a Red, cotton T-shirt;  under $30.00!')).toBe(
      'i need a red cotton t shirt under 30.00',
    );
    expect(instructionTokens('price 30.00 or 3.5')).toEqual(['price', '30.00', 'or', '3.5']);
    expect(jaccard(new Set(['a', 'b', 'c']), new Set(['a', 'b', 'd']))).toBeCloseTo(0.5, 12);
    expect(llmTaskId(ENV, 'Buy a RED shirt.')).toBe(llmTaskId(ENV, 'buy a red shirt'));
    expect(llmTaskId(ENV, 'buy a red shirt')).not.toBe(llmTaskId(ENV, 'buy a blue shirt'));
    expect(llmTaskId(ENV, 'buy a red shirt')).toMatch(/^webshop-lite-v0\/llm\/[0-9a-f]{16}$/);
  });
});

describe('LlmTaskGenerator', () => {
  it('the variation prompt holds the seed, its success rate, the direction and the domain card; the schema bounds every string', async () => {
    const chat = variationWriter();
    const gen = new LlmTaskGenerator(chat, { candidates: 3, keep: 2 });
    await gen.generate(
      [
        seedOf(SEED_TASK, 6),
        seedOf(
          { ...SEED_TASK, id: 'other', instruction: 'i want spray bottle perfume, and price lower than 80.00 dollars' },
          2,
        ),
      ],
      { iteration: 1 },
    );
    const prompts = chat.requests.filter((r) => !isSelection(r));
    expect(prompts).toHaveLength(2);
    const card = builtInDomainCard(ENV)!;
    const [hard, easy] = prompts;
    expect(userOf(hard)).toContain(`Seed task: ${SEED_TASK.instruction}`);
    expect(userOf(hard)).toContain('p = 0.75');
    expect(userOf(hard)).toContain('one notch HARDER');
    expect(userOf(hard)).not.toContain('EASIER');
    expect(hard.messages[0].content).toContain(card.text);
    expect(userOf(easy)).toContain('Seed task: i want spray bottle perfume');
    expect(userOf(easy)).toContain('one notch EASIER');
    const schema = hard.jsonSchema as {
      properties: {
        variations: {
          maxItems: number;
          items: { properties: Record<string, { maxLength?: number; minLength?: number; enum?: string[] }> };
        };
      };
    };
    expect(schema.properties.variations.maxItems).toBe(3);
    const props = schema.properties.variations.items.properties;
    expect(props.instruction).toMatchObject({ minLength: 12, maxLength: 300 });
    expect(props.rationale.maxLength).toBe(160);
    expect(props.difficulty_change.enum).toContain('harder');
    // The selection prompt shows the seed, the direction and the card too.
    const selection = chat.requests.find(isSelection)!;
    expect(userOf(selection)).toContain(SEED_TASK.instruction);
    expect(userOf(selection)).toContain('HARDER');
    expect(selection.messages[0].content).toContain(card.text);
    expect(selection.jsonSchema).toMatchObject({
      properties: { chosen: { maxItems: 2, items: { minimum: 1, maximum: 3 } } },
    });
  });

  it('the selection step keeps exactly the candidates the model picks, in its order; tasks are dream-only', async () => {
    const texts = [
      'A: i need a red cotton t-shirt in size m with long sleeves, under 25.00 dollars',
      'B: i need a red cotton t-shirt in size m with a chest pocket, under 30.00 dollars',
      'C: i need a red organic cotton t-shirt in size m and a slim fit, under 20.00 dollars',
      'D: i need a red cotton polo shirt in size m with a collar and buttons, under 30.00 dollars',
    ];
    const chat = new ScriptedChatModel((r) => (isSelection(r) ? choose(r, [texts[2], texts[0]]) : variations(texts)));
    const gen = new LlmTaskGenerator(chat, { candidates: 4, keep: 2 });
    const { tasks, invalid } = await gen.generate([seedOf(SEED_TASK, 5)], { iteration: 3 });
    expect(invalid).toBe(0);
    expect(shownCandidates(chat.requests[1]).slice().sort()).toEqual(texts.slice().sort());
    expect(tasks.map((t) => t.instruction)).toEqual([texts[2], texts[0]]);
    for (const t of tasks) {
      expect(t).toEqual({
        id: llmTaskId(ENV, t.instruction),
        env: ENV,
        instruction: t.instruction,
        difficulty: 0.3,
        origin: 'llm',
        parent: SEED_TASK.id,
      });
      expect(t).not.toHaveProperty('spec');
      expect(t).not.toHaveProperty('seed');
    }
    expect(gen.stats).toMatchObject({ calls: 2, candidates: 4, notSelected: 2, tasks: 2, invalidAnswers: 0 });
  });

  it('drops exact, normalised and near duplicates, seed copies, bank tasks, wrong directions and bad lengths before selection', async () => {
    const keepD = 'i need a red cotton t-shirt in size m with long sleeves, and price lower than 20.00 dollars';
    const keepG = 'i need a green linen t-shirt in size l with a pocket, and price lower than 25.00 dollars';
    const bank = {
      id: 'webshop-lite-v0:99:0.00',
      instruction: 'i want blue wool socks in size 9, and price lower than 10.00 dollars',
    };
    const items: Item[] = [
      'I need a RED cotton t-shirt, in size M; and price lower than 30.00 dollars!', // the seed, normalised
      'i need a red cotton t-shirt in size m and price lower than 30.00 dollars please', // near-duplicate of the seed
      'I want BLUE wool socks in size 9 and price lower than 10.00 dollars.', // a bank task
      keepD,
      'I need a red cotton T-shirt in size M with long sleeves and price lower than 20.00 dollars', // normalised duplicate of D
      'i need a red cotton t-shirt in size m with long sleeves, and price lower than 20.00 dollars now', // near-duplicate of D
      { instruction: 'i need a red cotton t-shirt, any size, and price lower than 60.00 dollars', change: 'easier' }, // wrong direction
      'buy it', // too short
      keepG,
    ];
    const chat = new ScriptedChatModel((r) =>
      isSelection(r) ? JSON.stringify({ chosen: [1, 2] }) : variations(items),
    );
    const gen = new LlmTaskGenerator(chat, { candidates: 9, keep: 3 });
    const { tasks } = await gen.generate([seedOf(SEED_TASK, 6)], { iteration: 1, known: [bank] });
    expect(shownCandidates(chat.requests[1]).sort()).toEqual([keepD, keepG].sort());
    expect(tasks.map((t) => t.instruction).sort()).toEqual([keepD, keepG].sort());
    expect(gen.stats).toMatchObject({ candidates: 9, duplicates: 4, rejectedSchema: 2, rejectedDirection: 1 });

    // Asked again with those tasks in the bank, every candidate is a duplicate: retried, then recorded.
    const again = await gen.generate([seedOf(SEED_TASK, 6)], { iteration: 2, known: [bank, ...tasks] });
    expect(again).toEqual({ tasks: [], invalid: 1 });
    expect(gen.invalidLog.at(-1)).toMatchObject({ iteration: 2, seedTaskId: SEED_TASK.id, step: 'variation' });
    expect(gen.invalidLog.at(-1)!.reason).toMatch(/every candidate was rejected/);
  });

  it('a candidate duplicating a task made for an earlier seed of the same call is dropped', async () => {
    const same = 'i need a red cotton t-shirt in size m with long sleeves, and price lower than 20.00 dollars';
    const chat = new ScriptedChatModel((r) => (isSelection(r) ? JSON.stringify({ chosen: [1] }) : variations([same])));
    const gen = new LlmTaskGenerator(chat, { candidates: 2, keep: 1, retries: 0 });
    const { tasks, invalid } = await gen.generate([seedOf(SEED_TASK, 6), seedOf({ ...SEED_TASK, id: 'twin' }, 6)], {
      iteration: 1,
    });
    expect(tasks.map((t) => t.instruction)).toEqual([same]);
    expect(invalid).toBe(1);
  });

  it('retries a malformed answer with the rejected text and the reason, and accepts the corrected one', async () => {
    const good = 'i need a red cotton t-shirt in size m with long sleeves, and price lower than 20.00 dollars';
    const chat = new ScriptedChatModel([
      'Sure! Here are some ideas: a blue shirt',
      variations([good]),
      '{"chosen": [7]}',
      '{"chosen": [1]}',
    ]);
    const gen = new LlmTaskGenerator(chat, { candidates: 2, keep: 1 });
    const { tasks, invalid } = await gen.generate([seedOf(SEED_TASK, 6)], { iteration: 1 });
    expect(invalid).toBe(0);
    expect(tasks.map((t) => t.instruction)).toEqual([good]);
    expect(chat.requests).toHaveLength(4);
    const retry = chat.requests[1].messages;
    expect(retry.at(-2)).toEqual({ role: 'assistant', content: 'Sure! Here are some ideas: a blue shirt' });
    expect(retry.at(-1)!.content).toMatch(/rejected \(no JSON object/);
    expect(chat.requests[3].messages.at(-1)!.content).toMatch(/candidate numbers 1\.\.1/);
    expect(chat.requests[1].seed).toBe(chat.requests[0].seed! + 1);
    expect(gen.stats).toMatchObject({ calls: 4, retries: 2, invalidAnswers: 0 });
  });

  it('an answer still broken after its retries is recorded as invalid, never thrown', async () => {
    const chat = new ScriptedChatModel(() => '{"variations": "not a list"');
    const gen = new LlmTaskGenerator(chat, { retries: 2 });
    const result = await gen.generate(
      [
        seedOf(SEED_TASK, 6),
        seedOf(
          { ...SEED_TASK, id: 's2', instruction: 'i want spray bottle perfume, and price lower than 80.00 dollars' },
          1,
        ),
      ],
      { iteration: 4 },
    );
    expect(result).toEqual({ tasks: [], invalid: 2 });
    expect(chat.requests).toHaveLength(6);
    expect(gen.stats.invalidAnswers).toBe(2);
    expect(gen.invalidLog.map((e) => [e.seedTaskId, e.step])).toEqual([
      [SEED_TASK.id, 'variation'],
      ['s2', 'variation'],
    ]);
    expect(gen.invalidLog[0].raw).toBe('{"variations": "not a list"');

    // A broken selection answer too (and a length cut-off counts as broken).
    const picky = new ScriptedChatModel((r) =>
      isSelection(r)
        ? { text: '{"chosen": [1', finishReason: 'length' }
        : variations(['i need a red cotton t-shirt in size m with long sleeves, and price lower than 20.00 dollars']),
    );
    const gen2 = new LlmTaskGenerator(picky, { retries: 1 });
    expect(await gen2.generate([seedOf(SEED_TASK, 6)], { iteration: 1 })).toEqual({ tasks: [], invalid: 1 });
    expect(gen2.invalidLog[0]).toMatchObject({ step: 'selection' });
    expect(gen2.invalidLog[0].reason).toMatch(/length cut-off/);
    expect(picky.requests.filter(isSelection).map((r) => r.maxTokens)).toEqual([80, 120]);
  });

  it('is deterministic: the same seed and answers give the same tasks and requests; another seed other request seeds', async () => {
    const run = async (seed: number) => {
      const chat = variationWriter();
      const gen = new LlmTaskGenerator(chat, { seed, candidates: 3, keep: 2 });
      const { tasks } = await gen.generate(
        [
          seedOf(SEED_TASK, 6),
          seedOf(
            { ...SEED_TASK, id: 's2', instruction: 'i want spray bottle perfume, and price lower than 80.00 dollars' },
            3,
          ),
        ],
        { iteration: 5 },
      );
      return { tasks, requests: chat.requests };
    };
    const a = await run(11);
    const b = await run(11);
    const c = await run(12);
    expect(a.tasks).toHaveLength(4);
    expect(b.tasks).toEqual(a.tasks);
    expect(b.requests).toEqual(a.requests);
    expect(c.requests.map((r) => r.seed)).not.toEqual(a.requests.map((r) => r.seed));
  });
});

describe('Curriculum with LLM variations', () => {
  const definition = getEnvDefinition(ENV);
  const options: CurriculumOptions = {
    lambda: 0.25,
    seedsPerIteration: 4,
    difficulty: 0,
    taskPool: 500,
    seed: 3,
    enabled: true,
    variations: 'llm',
  };
  const mixed = [0, 4, 8, 2, 6, 1, 8, 0];

  async function primed(opts: CurriculumOptions = options) {
    const curriculum = new Curriculum(definition, opts);
    const first = curriculum.nextBatch(1, 8);
    const recorded = curriculum.record(
      1,
      first.tasks.map((t, i) => ({ task: t, successes: mixed[i], rollouts: 8 })),
    );
    const generator = new LlmTaskGenerator(variationWriter(), { seed: 3 });
    const llm = await curriculum.generateLlmVariations(1, generator);
    return { curriculum, recorded, llm, generator };
  }

  it("'llm': no procedural variations; the LLM's tasks are queued under the pending limit", async () => {
    const { curriculum, recorded, llm } = await primed();
    expect(recorded.seeds).toHaveLength(4);
    expect(recorded.variations).toEqual([]);
    expect(llm.invalid).toBe(0);
    expect(llm.queued).toHaveLength(8); // K = 2 per seed
    expect(new Set(llm.queued.map((t) => t.parent))).toEqual(new Set(recorded.seeds.map((s) => s.id)));
    expect(curriculum.pendingTasks).toEqual(llm.queued);
    expect(curriculum.lastLlmQueued).toBe(8);
    // The curriculum resets its own counters: an iteration recorded without asking the LLM reports 0.
    curriculum.record(
      2,
      curriculum.nextBatch(2, 8).tasks.map((t) => ({ task: t, successes: 0, rollouts: 8 })),
    );
    expect([curriculum.lastLlmQueued, curriculum.lastLlmInvalid]).toEqual([0, 0]);
    // Another iteration's call has no seeds of its own: nothing asked, nothing queued.
    expect(await curriculum.generateLlmVariations(2, new LlmTaskGenerator(new ScriptedChatModel([])))).toEqual({
      queued: [],
      invalid: 0,
    });
    // The pending limit holds for LLM tasks too.
    const small = await primed({ ...options, maxPending: 3 });
    expect(small.curriculum.pendingTasks).toEqual(small.llm.queued.slice(-3));
  });

  it('λ caps the synthetic share exactly with LLM tasks queued', async () => {
    for (const lambda of [0, 0.1, 0.25, 0.3, 0.5, 1]) {
      const { curriculum } = await primed({ ...options, lambda });
      for (const batch of [1, 3, 8]) {
        const before = curriculum.pendingTasks.length;
        const next = curriculum.nextBatch(2, batch);
        const expected = Math.min(before, Math.floor(batch * lambda + 1e-9));
        expect(next.synthetic).toBe(expected);
        expect(next.tasks).toHaveLength(batch);
        expect(next.tasks.filter((t) => t.origin === 'llm')).toHaveLength(expected);
        expect(curriculum.lastSyntheticShare).toBe(expected / batch);
      }
    }
  });

  it('a batch for a real env skips LLM tasks (they stay queued) and takes playable variations or pool tasks', async () => {
    const { curriculum, llm } = await primed({ ...options, variations: 'both' });
    const pending = curriculum.pendingTasks;
    const procedural = pending.filter((t) => t.origin === 'variation');
    expect(procedural.length).toBeGreaterThan(0);
    expect(pending.filter((t) => t.origin === 'llm')).toEqual(llm.queued);
    const real = curriculum.nextBatch(2, 8, { realEnv: true });
    expect(real.tasks.some((t) => t.origin === 'llm')).toBe(false);
    expect(real.tasks.slice(0, real.synthetic)).toEqual(procedural.slice(0, 2));
    expect(curriculum.pendingTasks.filter((t) => t.origin === 'llm')).toEqual(llm.queued);
    // Only LLM tasks queued: the real batch is pool tasks.
    const only = (await primed()).curriculum;
    const batch = only.nextBatch(2, 8, { realEnv: true });
    expect(batch.synthetic).toBe(0);
    expect(batch.tasks.every((t) => t.origin === 'generated')).toBe(true);
    expect(only.nextBatch(3, 8).tasks.filter((t) => t.origin === 'llm')).toHaveLength(2);
  });

  it('the bank records LLM tasks with origin and parent; known tasks are never asked for again', async () => {
    const { curriculum, llm } = await primed();
    const batch = curriculum.nextBatch(2, 8);
    const played = batch.tasks.filter((t) => t.origin === 'llm');
    curriculum.record(
      2,
      batch.tasks.map((t, i) => ({ task: t, successes: mixed[i], rollouts: 8 })),
    );
    for (const t of played)
      expect(curriculum.outcomes.get(t.id)).toMatchObject({
        origin: 'llm',
        parent: t.parent,
        instruction: t.instruction,
        iterations: 1,
        lastIteration: 2,
      });
    const chat = variationWriter();
    const result = await curriculum.generateLlmVariations(2, new LlmTaskGenerator(chat, { seed: 3 }));
    const before = new Set(llm.queued.map((t) => t.id));
    for (const t of result.queued) expect(before.has(t.id)).toBe(false);
    expect(new Set(curriculum.pendingTasks.map((t) => t.id)).size).toBe(curriculum.pendingTasks.length);
  });

  it('state → JSON → restore round-trips the queued LLM tasks and the bank', async () => {
    const { curriculum } = await primed({ ...options, variations: 'both' });
    const saved = JSON.parse(JSON.stringify(curriculum.state()));
    const restored = new Curriculum(definition, { ...options, variations: 'both' });
    restored.restore(saved);
    expect(restored.state()).toEqual(curriculum.state());
    expect(restored.pendingTasks.some((t) => t.origin === 'llm' && t.parent !== undefined)).toBe(true);
    expect(restored.nextBatch(2, 8)).toEqual(curriculum.nextBatch(2, 8));
  });
});

// =============================================================================================
// The trainer
// =============================================================================================

/**
 * A test double of the experience model: LLM tasks start from a written search page; every dreamed
 * step ends the episode, reward alternating 1, 0, 1, … (`alternate`) — so every group of an even
 * size has p = 0.5 and becomes a seed — or decided by a hash of (task, action) (stateless, for resuming).
 */
class EndingModel implements ExperienceModel {
  readonly label = 'one-step test double';
  asked = 0;
  initials: Task[] = [];
  constructor(private readonly alternate: boolean) {}
  async initial(task: Task) {
    this.initials.push(task);
    return {
      text: `WebShop [SEP] Instruction: [SEP] ${task.instruction} [SEP] Search`,
      admissible: ['search[shirt]', 'search[gift]'],
      task,
    };
  }
  async next(ctx: DreamContext): Promise<Prediction> {
    const reward = this.alternate ? this.asked++ % 2 : hashString(`${ctx.task.id}|${ctx.action}`) % 2;
    return {
      reasoning: '',
      next: { text: 'Thank you for shopping with us!', admissible: [], task: ctx.task },
      reward,
      terminated: true,
      valid: true,
      actionValid: true,
      score: reward,
      usage: { promptTokens: 0, completionTokens: 0, ms: 0 },
      attempts: 1,
      notes: [],
    };
  }
}

describe('the trainer with LLM variations', () => {
  beforeAll(async () => {
    await initBackend('wasm');
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const small = (overrides: Partial<TrainConfig> = {}): TrainConfig =>
    validateConfig({
      ...getPreset('webshop-easy'),
      iterations: 2,
      tasksPerIteration: 2,
      groupSize: 4,
      evalInterval: 0,
      evalEpisodes: 4,
      finalEvalEpisodes: 4,
      curriculum: true,
      curriculumVariations: 'llm',
      lambda: 0.5,
      ...overrides,
    });

  it('config: refused in real mode with the fix named; s2r and dream accepted; the oracle cannot write tasks', async () => {
    expect(() => small({ mode: 'real' })).toThrow(ConfigError);
    expect(() => small({ mode: 'real' })).toThrow(
      /'curriculumVariations' llm writes dream-only tasks.*use mode dream or s2r/s,
    );
    expect(() => small({ mode: 'real', curriculumVariations: 'both' })).toThrow(/curriculumVariations/);
    expect(small({ mode: 'real', curriculumVariations: 'procedural' }).curriculumVariations).toBe('procedural');
    expect(() => small({ mode: 's2r', curriculumVariations: 'sometimes' as never })).toThrow(
      /'curriculumVariations' must be one of procedural, llm, both/,
    );
    const s2r = small({ mode: 's2r' });
    const generator = async (config: TrainConfig, chat?: ScriptedChatModel) =>
      (await buildRunParts(config, chat ? { chat } : {})).taskGenerator;
    await expect(generator(s2r)).rejects.toThrow(
      /'curriculumVariations' needs a language model, but llm is 'oracle:0,0' \(the noisy oracle has none\).*curriculumVariations=procedural/,
    );
    expect(await generator({ ...s2r, llm: 'openai:http://127.0.0.1:9/v1#tiny' })).toBeInstanceOf(LlmTaskGenerator);
    expect(await generator(s2r, new ScriptedChatModel([]))).toBeInstanceOf(LlmTaskGenerator);
    expect(await generator({ ...s2r, curriculumVariations: 'procedural' })).toBeUndefined();
    expect(await generator({ ...s2r, curriculum: false })).toBeUndefined();
    expect(() => new Trainer(s2r, { experienceModel: new EndingModel(true) })).toThrow(
      /no task generator was given: build one with buildRunParts/,
    );
  });

  it('s2r: LLM tasks are dreamed (started by the model) and never reach the real env of the real phase', async () => {
    const config = small({ mode: 's2r', iterations: 2, realStepBudget: 200, s2rRealFraction: 0.2 });
    const model = new EndingModel(true);
    const chat = variationWriter();
    const traces: EpisodeTrace[] = [];
    const trainer = new Trainer(config, {
      experienceModel: model,
      taskGenerator: new LlmTaskGenerator(chat, { seed: config.seed }),
      onEpisodes: (e) => {
        traces.push(...e);
      },
    });
    const first = await trainer.runIteration();
    expect(first.metrics['curriculum/llm_variations']).toBe(4); // 2 seeds (p = 0.5) × K = 2
    expect(first.metrics['curriculum/llm_invalid']).toBe(0);
    const second = await trainer.runIteration();
    const dreamedLlm = traces.filter((t) => t.phase === 'dream' && t.task.origin === 'llm');
    expect(dreamedLlm).toHaveLength(4); // λ·B = 1 task × G = 4 rollouts
    expect(model.initials.map((t) => t.id)).toContain(dreamedLlm[0].task.id);
    expect(second.metrics['curriculum/synthetic_share']).toBe(0.5);
    expect(trainer.curriculum!.outcomes.get(dreamedLlm[0].task.id)).toMatchObject({ origin: 'llm', rollouts: 4 });
    // The real phase: LLM tasks are queued, yet the real env never sees one.
    expect(trainer.curriculum!.pendingTasks.filter((t) => t.origin === 'llm').length).toBeGreaterThan(1);
    const resets: Task[] = [];
    const original = WebShopEnv.prototype.resetSync;
    const spy = vi.spyOn(WebShopEnv.prototype, 'resetSync').mockImplementation(function (this: WebShopEnv, opts) {
      if (opts.task) resets.push(opts.task);
      return original.call(this, opts);
    });
    const chatCalls = chat.requests.length;
    const real: Record<string, number>[] = [];
    while (!trainer.finished) real.push((await trainer.runIteration()).metrics);
    spy.mockRestore();
    expect(real.length).toBeGreaterThan(0);
    expect(resets.length).toBeGreaterThan(0);
    expect(resets.some((t) => t.origin === 'llm')).toBe(false);
    expect(traces.filter((t) => t.phase === 'real' && t.task.origin === 'llm')).toEqual([]);
    expect(trainer.realSteps).toBe(40);
    expect(chat.requests.length).toBe(chatCalls); // no LLM variations asked in the real phase
    expect(real.every((m) => m['curriculum/llm_variations'] === 0)).toBe(true);
    trainer.dispose();
  });

  it('an LLM task the experience model cannot start is replaced by a pool task (counted), not a crash', async () => {
    class NoStart extends EndingModel {
      override async initial(task: Task): Promise<never> {
        throw new ExperienceModelError(`no usable first state for '${task.id}'`, '{"observation": ');
      }
    }
    const config = small({ mode: 'dream', iterations: 2 });
    const traces: EpisodeTrace[] = [];
    const trainer = new Trainer(config, {
      experienceModel: new NoStart(true),
      taskGenerator: new LlmTaskGenerator(variationWriter(), { seed: 1 }),
      onEpisodes: (e) => {
        traces.push(...e);
      },
    });
    await trainer.runIteration();
    const second = await trainer.runIteration();
    expect(second.metrics['curriculum/llm_start_failed']).toBe(1);
    expect(traces.filter((t) => t.iteration === 2).every((t) => t.task.origin === 'generated')).toBe(true);
    trainer.dispose();
  });

  it('dream: resuming from a checkpoint with LLM tasks queued continues exactly', async () => {
    const config = small({ mode: 'dream', iterations: 4, curriculumVariations: 'both' });
    const deps = () => ({
      experienceModel: new EndingModel(false),
      taskGenerator: new LlmTaskGenerator(variationWriter(), { seed: config.seed }),
    });
    const runAll = async (t: Trainer) => {
      const out: string[] = [];
      while (!t.finished) out.push(JSON.stringify(await t.runIteration()));
      return out;
    };
    const fullTrainer = new Trainer(config, deps());
    const full = await runAll(fullTrainer);
    fullTrainer.dispose();
    expect(full.some((l) => JSON.parse(l).metrics['curriculum/llm_variations'] > 0)).toBe(true);
    const first = new Trainer(config, deps());
    await first.runIteration();
    await first.runIteration();
    // Through the serialised checkpoint (manifest JSON + weights blob), as the stores keep it.
    const { manifest, blob } = serializeCheckpoint(await first.state());
    const state = deserializeCheckpoint(JSON.parse(JSON.stringify(manifest)), blob.slice());
    expect(state.curriculum!.pending.some((t) => t.origin === 'llm')).toBe(true);
    expect(state.curriculum).toEqual(first.curriculum!.state());
    first.dispose();
    const resumed = await Trainer.restore(state, {}, deps());
    expect(resumed.curriculum!.state()).toEqual(state.curriculum);
    expect(await runAll(resumed)).toEqual(full.slice(2));
    resumed.dispose();
  });
});
