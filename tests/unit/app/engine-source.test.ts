/**
 * The trainer worker's experience-model builder (src/app/workers/trainer/experience-source.ts) in Node:
 * which engine a config names, and the ablation settings and answer budget reaching the model.
 */
import { describe, expect, it } from 'vitest';
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import { getPreset, type TrainConfig } from '../../../src/core/train/config';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import { ReasoningExperienceModel } from '../../../src/core/experience/reasoning-model';
import { browserChatModel, trainerDeps } from '../../../src/app/workers/trainer/experience-source';
import { OpenAiChatModel } from '../../../src/core/llm/openai';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';

const config = (over: Partial<TrainConfig>): TrainConfig => ({ ...getPreset('household-easy'), ...over });

describe('trainerDeps', () => {
  it("builds nothing for a real run without a prior but the policy's mined schema", async () => {
    const deps = await trainerDeps(config({ mode: 'real' }));
    expect(Object.keys(deps)).toEqual(['featureSchema']);
    expect(deps.featureSchema?.templates.length).toBeGreaterThan(0);
  });

  it('builds the noisy oracle for oracle specs, and refuses an LLM prior with it', async () => {
    const deps = await trainerDeps(config({ mode: 'dream', llm: 'oracle:0.2,0' }));
    expect(deps.experienceModel).toBeInstanceOf(NoisyOracleModel);
    expect(deps.prior).toBeUndefined();
    await expect(trainerDeps(config({ mode: 'dream', llm: 'oracle:0,0', llmPrior: true }))).rejects.toThrow(
      /'llmPrior' needs a language model/,
    );
  });

  it('builds the reasoning model over an OpenAI-compatible server with the ablations and answer budget', async () => {
    const deps = await trainerDeps(
      config({
        mode: 's2r',
        llm: 'openai:http://127.0.0.1:9/v1#tiny',
        retrievalK: 0,
        historyLength: 2,
        reasoning: false,
        llmPrior: true,
      }),
      { maxTokens: 96, retries: 0, apiKey: 'sk-x' },
    );
    const model = deps.experienceModel as ReasoningExperienceModel;
    expect(model).toBeInstanceOf(ReasoningExperienceModel);
    expect(model.chat).toBeInstanceOf(OpenAiChatModel);
    expect((model.chat as OpenAiChatModel).hasApiKey).toBe(true);
    expect(model.label).toBe('openai tiny (k=0, H=2, no reasoning)');
    expect(model.options).toMatchObject({ maxTokens: 96, retries: 0, k: 0, historyLength: 2, reasoning: false });
    expect(deps.prior).toBeDefined();
  });

  it('dreams over the buffer the trainer writes to, so fresh transitions are retrievable at once', async () => {
    const buffer = new ReplayBuffer(new MemoryBufferStore());
    const deps = await trainerDeps(
      config({ mode: 'dream', llm: 'openai:http://127.0.0.1:9/v1#tiny', retrievalK: 4 }),
      {},
      async () => buffer,
    );
    expect(deps.buffer).toBe(buffer);
    expect((deps.experienceModel as ReasoningExperienceModel).options.buffer).toBe(buffer);
  });

  it('reuses one loaded browser engine for the same spec, and unloads it when another is loaded', async () => {
    const unloaded: string[] = [];
    const load = async (spec: { kind: string }) =>
      Object.assign(new ScriptedChatModel(() => ({ text: '' })), {
        unload: async () => {
          unloaded.push(spec.kind);
        },
      });
    const a = await browserChatModel({ kind: 'webllm', modelId: 'A-q4f32_1-MLC' }, {}, load);
    expect(await browserChatModel({ kind: 'webllm', modelId: 'A-q4f32_1-MLC' }, {}, load)).toBe(a);
    expect(unloaded).toEqual([]);
    expect(await browserChatModel({ kind: 'wllama', source: 'file', name: 'x.gguf' }, { nCtx: 512 }, load)).not.toBe(a);
    expect(unloaded).toEqual(['webllm']);
  });

  it('hands a loaded browser engine to the run builder: experience model, prior and LLM variations on one chat', async () => {
    const chat = new ScriptedChatModel(() => ({ text: '' }));
    await browserChatModel({ kind: 'wllama', source: 'file', name: 'tiny.gguf' }, { nCtx: 256 }, async () => chat);
    const deps = await trainerDeps(
      config({
        mode: 'dream',
        llm: 'wllama:file:tiny.gguf',
        llmPrior: true,
        curriculum: true,
        curriculumVariations: 'llm',
      }),
      { nCtx: 256 },
    );
    expect((deps.experienceModel as ReasoningExperienceModel).chat).toBe(chat);
    expect(deps.prior?.id).toBe(`llm-prior:test:${chat.id}`);
    expect(deps.taskGenerator?.chat).toBe(chat);
  });

  it('a resume or a second run with the same engine and prompt settings reuses the reasoning model and its transition cache', async () => {
    const chat = new ScriptedChatModel(() => ({ text: '' }));
    await browserChatModel({ kind: 'wllama', source: 'file', name: 'cache.gguf' }, { nCtx: 256 }, async () => chat);
    const dream = config({ mode: 'dream', llm: 'wllama:file:cache.gguf' });
    const first = (await trainerDeps(dream, { nCtx: 256, maxTokens: 96 })).experienceModel;
    expect((await trainerDeps(dream, { nCtx: 256, maxTokens: 96 })).experienceModel).toBe(first);
    expect((await trainerDeps({ ...dream, retrievalK: 1 }, { nCtx: 256, maxTokens: 96 })).experienceModel).not.toBe(
      first,
    );
    expect((await trainerDeps(dream, { nCtx: 256, maxTokens: 64 })).experienceModel).not.toBe(first);
  });

  it('names the fix for a spec it cannot read', async () => {
    await expect(trainerDeps(config({ mode: 'dream', llm: 'wllama:nope' }))).rejects.toThrow(
      /neither file:NAME nor a full http\(s\) URL/,
    );
  });
});
