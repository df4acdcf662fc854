/**
 * The one builder of a run's parts (src/core/train/run-parts.ts): for every engine kind × the LLM
 * prior on/off × curriculum variations procedural/llm, the right experience model, prior and task
 * generator — or the error naming the fix. Callers hand in only what they own (here: a scripted
 * chat model standing in for a loaded browser engine, an API key, a buffer, a learned-model loader).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTrajectoriesJsonl } from '../../../src/core/data/trajectory';
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import { LlmTaskGenerator } from '../../../src/core/curriculum/llm-variations';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import { ReasoningExperienceModel } from '../../../src/core/experience/reasoning-model';
import type { ExperienceModel } from '../../../src/core/experience/types';
import { OpenAiChatModel } from '../../../src/core/llm/openai';
import { ENGINE_KINDS, type EngineKind, type LlmSpecText } from '../../../src/core/llm/spec';
import { LlmActionPrior } from '../../../src/core/policy/llm-prior';
import { getPreset, validateConfig, type TrainConfig } from '../../../src/core/train/config';
import { BrowserEngineError, buildRunParts, type RunPartsDeps } from '../../../src/core/train/run-parts';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';

const SPECS: Record<EngineKind, LlmSpecText> = {
  oracle: 'oracle:0.1,0.2',
  openai: 'openai:http://127.0.0.1:9/v1#tiny',
  webllm: 'webllm:Qwen2.5-0.5B-Instruct-q4f32_1-MLC',
  wllama: 'wllama:file:stories260K.gguf',
  learned: 'learned:runs/models/m-exp',
};

const learned: ExperienceModel = {
  label: 'learned (test double)',
  initial: () => Promise.reject(new Error('unused')),
  next: () => Promise.reject(new Error('unused')),
};

/** A buffer holding one real episode of webshop-lite-v0 (a learned model that retrieves is refused on less: grounding.ts). */
async function groundedBuffer(): Promise<ReplayBuffer> {
  const buffer = new ReplayBuffer(new MemoryBufferStore());
  const line = readFileSync('public/datasets/webshop-lite-v0.jsonl', 'utf8').split('\n')[0];
  await buffer.importTrajectories(parseTrajectoriesJsonl(line), { source: 'offline', createdAt: 0 });
  return buffer;
}

function config(kind: EngineKind, llmPrior: boolean, variations: 'procedural' | 'llm'): TrainConfig {
  return validateConfig({
    ...getPreset('webshop-easy'),
    mode: 'dream',
    llm: SPECS[kind],
    llmPrior,
    curriculum: true,
    curriculumVariations: variations,
    realStartShare: 0, // the model itself, not the real-start wrapper (real-starts.test.ts)
  });
}

/** What each kind's caller owns: the page hands a loaded browser engine; Node a key and a learned-model loader. */
function deps(kind: EngineKind, chat: ScriptedChatModel, buffer: ReplayBuffer): RunPartsDeps {
  const loadLearnedModel = async () => learned;
  if (kind === 'webllm' || kind === 'wllama') return { chat, buffer };
  return { apiKey: 'sk-x', buffer, loadLearnedModel };
}

const isLanguageModel = (kind: EngineKind) => kind === 'openai' || kind === 'webllm' || kind === 'wllama';

describe('buildRunParts', () => {
  const cases = ENGINE_KINDS.flatMap((kind) =>
    [false, true].flatMap((prior) =>
      (['procedural', 'llm'] as const).map((variations) => [kind, prior, variations] as const),
    ),
  );

  it.each(cases)('%s, prior %s, variations %s', async (kind, prior, variations) => {
    const chat = new ScriptedChatModel([]);
    const buffer = await groundedBuffer();
    const built = buildRunParts(config(kind, prior, variations), deps(kind, chat, buffer));
    if (!isLanguageModel(kind) && (prior || variations === 'llm')) {
      const setting = prior ? 'llmPrior' : 'curriculumVariations';
      await expect(built).rejects.toThrow(
        new RegExp(`'${setting}' needs a language model, but llm is '${SPECS[kind]}'`),
      );
      return;
    }
    const parts = await built;
    // The experience model the kind names.
    if (kind === 'oracle') expect(parts.experienceModel).toBeInstanceOf(NoisyOracleModel);
    else if (kind === 'learned') expect(parts.experienceModel).toBe(learned);
    else {
      const model = parts.experienceModel as ReasoningExperienceModel;
      expect(model).toBeInstanceOf(ReasoningExperienceModel);
      expect(model.options.buffer).toBe(buffer);
      if (kind === 'openai') expect((model.chat as OpenAiChatModel).hasApiKey).toBe(true);
      else expect(model.chat).toBe(chat);
    }
    // The prior and the task generator, on the same chat model as the experience model.
    const chatOf = (x: { chat: unknown } | undefined) => x?.chat;
    expect(parts.prior === undefined).toBe(!prior);
    if (prior) {
      expect(parts.prior).toBeInstanceOf(LlmActionPrior);
      expect(chatOf(parts.prior as LlmActionPrior)).toBe((parts.experienceModel as ReasoningExperienceModel).chat);
    }
    expect(parts.taskGenerator === undefined).toBe(variations === 'procedural');
    if (variations === 'llm') {
      expect(parts.taskGenerator).toBeInstanceOf(LlmTaskGenerator);
      expect(chatOf(parts.taskGenerator)).toBe((parts.experienceModel as ReasoningExperienceModel).chat);
    }
  });

  it('builds only what the config asks for: no experience model in real mode, no engine loaded for nothing', async () => {
    const real = validateConfig({ ...getPreset('webshop-easy'), mode: 'real', llm: SPECS.webllm });
    // Only the policy's mined schema (train/policy-schema.ts): no experience model, no prior.
    const realParts = await buildRunParts(real);
    expect(Object.keys(realParts)).toEqual(['featureSchema']);
    expect(realParts.featureSchema.templates.length).toBeGreaterThan(0);
    const realWithPrior = { ...real, llm: SPECS.openai, llmPrior: true };
    const parts = await buildRunParts(realWithPrior);
    expect(parts.experienceModel).toBeUndefined();
    expect(parts.prior).toBeInstanceOf(LlmActionPrior);
  });

  it('says where a browser engine runs when no loaded engine is handed in (as in Node)', async () => {
    for (const kind of ['webllm', 'wllama'] as const) {
      const built = buildRunParts(config(kind, false, 'procedural'));
      await expect(built).rejects.toBeInstanceOf(BrowserEngineError);
      await expect(buildRunParts(config(kind, false, 'procedural'))).rejects.toThrow(
        /runs in the browser only.*From the command line use an OpenAI-compatible server/,
      );
    }
  });

  it('asks the caller for the learned model: a clear error without a loader, the path to the loader', async () => {
    await expect(buildRunParts(config('learned', false, 'procedural'))).rejects.toThrow(
      /'learned:runs\/models\/m-exp' .* hand buildRunParts a loadLearnedModel\(path\)/,
    );
    const paths: string[] = [];
    const parts = await buildRunParts(config('learned', false, 'procedural'), {
      buffer: await groundedBuffer(),
      loadLearnedModel: async (path) => {
        paths.push(path);
        return learned;
      },
    });
    expect(paths).toEqual(['runs/models/m-exp']);
    expect(parts.experienceModel).toBe(learned);
  });

  it('opens a lazily handed buffer once, for a model that retrieves or a halt that measures against it', async () => {
    let opened = 0;
    const open = async () => {
      opened++;
      return new ReplayBuffer(new MemoryBufferStore());
    };
    await buildRunParts(config('oracle', false, 'procedural'), { buffer: open });
    await buildRunParts({ ...config('openai', false, 'procedural'), retrievalK: 0, halt: false }, { buffer: open });
    expect(opened).toBe(0);
    await buildRunParts({ ...config('openai', false, 'procedural'), retrievalK: 0 }, { buffer: open });
    expect(opened).toBe(1);
    const { experienceModel } = await buildRunParts(config('openai', false, 'procedural'), { buffer: open });
    expect(opened).toBe(2);
    expect((experienceModel as ReasoningExperienceModel).options.buffer).toBeInstanceOf(ReplayBuffer);
  });

  it('hands the answer budget to the reasoning model', async () => {
    const { experienceModel } = await buildRunParts(config('wllama', false, 'procedural'), {
      chat: new ScriptedChatModel([]),
      answers: { maxTokens: 96, retries: 0 },
    });
    expect((experienceModel as ReasoningExperienceModel).options).toMatchObject({ maxTokens: 96, retries: 0 });
  });
});
