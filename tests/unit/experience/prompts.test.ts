import { describe, expect, it } from 'vitest';
import { ReasoningExperienceModel } from '../../../src/core/experience/reasoning-model';
import {
  buildInitialPrompt,
  buildNextPrompt,
  DEFAULT_PROMPT_OPTIONS,
  estimatePromptTokens,
  nextStateSchema,
  staticShare,
} from '../../../src/core/experience/prompts';
import { builtInDomainCard } from '../../../src/core/experience/domain-card';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';
import { answer, contextAt, HOUSEHOLD, rollouts, smallBuffer, WEBSHOP } from './fixtures';

describe('experience prompts', () => {
  it('hold the task, the last H steps, the k retrieved examples and the action', async () => {
    const buffer = await smallBuffer(HOUSEHOLD, 10);
    const episode = (await rollouts(HOUSEHOLD, 2, 91_000))[1]; // a random episode: long
    expect(episode.steps.length).toBeGreaterThan(6);
    const t = 6;
    const ctx = contextAt(episode, t);
    const chat = new ScriptedChatModel([answer()]);
    const model = new ReasoningExperienceModel(chat, { buffer, k: 3, historyLength: 2 });
    const prediction = await model.next(ctx);
    expect(prediction.valid).toBe(true);
    const user = chat.userPrompt();
    expect(user).toContain(`Task: ${episode.task.instruction}`);
    expect(user.split('\n').at(-1)).toBe(`Action: ${ctx.action}`);
    // k = 3 retrieved examples, numbered, each from another episode (diverse), ids reported.
    expect(prediction.retrievedIds).toHaveLength(3);
    expect(new Set(prediction.retrievedIds!.map((id) => id.split('#')[0])).size).toBe(3);
    expect(user.match(/^\d\. .* => .* => /gm)).toHaveLength(3);
    // H = 2: exactly the two latest actions, not the earlier ones.
    const recent = user.split('\n').find((l) => l.startsWith('Recent steps: '))!;
    expect(recent.split('; ').filter((x) => x.includes(' => '))).toHaveLength(2);
    expect(recent).toContain(`=> ${episode.steps[t - 1].action}`);
    expect(recent).toContain(`=> ${episode.steps[t - 2].action}`);
    expect(recent).not.toContain(`=> ${episode.steps[t - 3].action}`);
    // Household: the current state's local actions are shown, the always-admissible ones are not.
    expect(user).toMatch(/^State: /m);
    const admissibleLine = user.split('\n').find((l) => l.startsWith('Admissible: '))!;
    expect(admissibleLine).not.toContain('go to ');
    // The system message carries the domain card and the bounded output format; the schema goes along.
    const system = chat.requests[0].messages[0].content;
    expect(system).toContain(builtInDomainCard(HOUSEHOLD)!.text);
    expect(system).toContain('Reply JSON only');
    expect(chat.requests[0].jsonSchema).toEqual(nextStateSchema(model.prompt));
    expect(chat.requests[0].temperature).toBe(0);
  });

  it('bound every string in the schema and restrict the reward to [0, 1]', () => {
    const schema = nextStateSchema(DEFAULT_PROMPT_OPTIONS) as any;
    expect(schema.required).toEqual(['reasoning', 'valid', 'next_state', 'reward', 'terminated']);
    expect(Object.keys(schema.properties)[0]).toBe('reasoning');
    expect(schema.properties.reasoning.maxLength).toBe(DEFAULT_PROMPT_OPTIONS.reasoningChars);
    expect(schema.properties.next_state.properties.observation.maxLength).toBe(DEFAULT_PROMPT_OPTIONS.observationChars);
    expect(schema.properties.next_state.properties.admissible.items.maxLength).toBe(DEFAULT_PROMPT_OPTIONS.actionChars);
    expect(schema.properties.next_state.properties.admissible.maxItems).toBe(DEFAULT_PROMPT_OPTIONS.maxAdmissible);
    expect(schema.properties.reward).toEqual({ type: 'integer', enum: [0, 1] });
    expect(schema.additionalProperties).toBe(false);
  });

  it('ablation switches: no reasoning drops the field, H = 0 drops the history, k = 0 drops the examples', async () => {
    const [episode] = await rollouts(WEBSHOP, 1, 92_000);
    const ctx = contextAt(episode, 2);
    const buffer = await smallBuffer(WEBSHOP, 8);
    const card = builtInDomainCard(WEBSHOP)!;
    const retrieved = (
      await buffer.retrieve({ instruction: ctx.task.instruction, observation: ctx.state.text, action: ctx.action }, 4, {
        env: WEBSHOP,
        diverse: true,
      })
    ).map((h) => h.transition);
    const full = buildNextPrompt({ card, ...ctx, retrieved });
    const text = (p: typeof full) => p.messages.map((m) => m.content).join('\n');
    expect(text(full)).toContain('"reasoning"');
    expect(text(full)).toContain('Recent steps:');
    expect(text(full)).toContain('Similar transitions');

    const noReasoning = buildNextPrompt({ card, ...ctx, retrieved }, { ...DEFAULT_PROMPT_OPTIONS, reasoning: false });
    expect(text(noReasoning)).not.toContain('reasoning');
    expect((noReasoning.jsonSchema as any).properties.reasoning).toBeUndefined();
    expect((noReasoning.jsonSchema as any).required).toEqual(['valid', 'next_state', 'reward', 'terminated']);

    const noHistory = buildNextPrompt({ card, ...ctx, retrieved }, { ...DEFAULT_PROMPT_OPTIONS, historyLength: 0 });
    expect(text(noHistory)).not.toContain('Recent steps:');
    const noRetrieval = buildNextPrompt({ card, ...ctx, retrieved }, { ...DEFAULT_PROMPT_OPTIONS, k: 0 });
    expect(text(noRetrieval)).not.toContain('Similar transitions');
    expect(text(noRetrieval).length).toBeLessThan(text(full).length);

    // The model's switches reach the request.
    const chat = new ScriptedChatModel([
      JSON.stringify({
        valid: true,
        next_state: { observation: 'Search', admissible: ['search[x]'] },
        reward: 0,
        terminated: false,
      }),
    ]);
    const model = new ReasoningExperienceModel(chat, { buffer, reasoning: false, historyLength: 0, k: 0 });
    const p = await model.next(ctx);
    expect(p.valid).toBe(true);
    expect(p.reasoning).toBe('');
    expect(model.label).toContain('no reasoning');
    expect((chat.requests[0].jsonSchema as any).properties.reasoning).toBeUndefined();
    expect(chat.promptText()).not.toContain('Similar transitions');
  });

  it('start with the static part (same for every call), then task, history, state, examples, action; each ablation changes only its own part', async () => {
    const buffer = await smallBuffer(HOUSEHOLD, 10);
    const episode = (await rollouts(HOUSEHOLD, 2, 91_000))[1];
    const card = builtInDomainCard(HOUSEHOLD)!;
    const promptAt = async (t: number, options = DEFAULT_PROMPT_OPTIONS) => {
      const ctx = contextAt(episode, t);
      const retrieved = (
        await buffer.retrieve(
          { instruction: ctx.task.instruction, observation: ctx.state.text, action: ctx.action },
          4,
          { env: HOUSEHOLD, diverse: true, validOnly: true },
        )
      ).map((h) => h.transition);
      return buildNextPrompt({ card, ...ctx, retrieved }, options);
    };
    const a = await promptAt(3);
    const b = await promptAt(5);
    // The system message is the static part: identical for two different steps, and first.
    expect(a.messages[0].role).toBe('system');
    expect(a.messages[0].content).toBe(b.messages[0].content);
    expect(a.messages[0].content).toContain(card.text);
    expect(a.messages[0].content).toContain('Reply JSON only');
    const share = staticShare(a.messages);
    expect(share).toBeGreaterThan(0.3);
    expect(share).toBeLessThan(1);
    expect(share).toBeCloseTo(estimatePromptTokens(a.messages.slice(0, 1)) / estimatePromptTokens(a.messages));
    // The user message, most shared first.
    const heads = a.messages[1].content.split('\n').map((l) => l.split(':')[0].replace(/^\d\. .*/, 'example'));
    expect(heads.filter((h, i) => h !== heads[i - 1])).toEqual([
      'Task',
      'Recent steps',
      'State',
      'Admissible',
      'Similar transitions (state => action => next {admissible}; reward 0 unless END)',
      'example',
      'Action',
    ]);

    // Ablations: each changes only its own part.
    const lines = (p: typeof a) => p.messages[1].content.split('\n');
    const noHistory = await promptAt(3, { ...DEFAULT_PROMPT_OPTIONS, historyLength: 0 });
    expect(noHistory.messages[0]).toEqual(a.messages[0]);
    expect(lines(noHistory)).toEqual(lines(a).filter((l) => !l.startsWith('Recent steps: ')));
    const noExamples = await promptAt(3, { ...DEFAULT_PROMPT_OPTIONS, k: 0 });
    expect(noExamples.messages[0]).toEqual(a.messages[0]);
    expect(lines(noExamples)).toEqual(
      lines(a).filter((l) => !l.startsWith('Similar transitions') && !/^\d\. /.test(l)),
    );
    const noReasoning = await promptAt(3, { ...DEFAULT_PROMPT_OPTIONS, reasoning: false });
    expect(noReasoning.messages[1]).toEqual(a.messages[1]);
    expect(noReasoning.messages[0].content).not.toBe(a.messages[0].content);
    expect(noReasoning.messages[0].content.split('\n').slice(0, 2)).toEqual(
      a.messages[0].content.split('\n').slice(0, 2),
    );
  });

  it('WebShop prompts use abstract pages: no instruction header, no [SEP], no page buttons', async () => {
    const [episode] = await rollouts(WEBSHOP, 1, 93_000);
    const ctx = contextAt(episode, 1); // a results page
    const prompt = buildNextPrompt({ card: builtInDomainCard(WEBSHOP)!, ...ctx, retrieved: [] });
    const state = prompt.messages[1].content.split('\n').find((l) => l.startsWith('State: '))!;
    expect(state).toMatch(/^State: Page 1 \(Total results: \d+\) \| B0/);
    expect(state).not.toContain('[SEP]');
    expect(state).not.toContain('Back to Search');
    expect(prompt.messages[1].content.match(/Task: /g)).toHaveLength(1);
  });

  it('an initial-state prompt for tasks without a real start page', () => {
    const card = builtInDomainCard(HOUSEHOLD)!;
    const task = {
      id: 'imported/1',
      env: HOUSEHOLD,
      instruction: 'put a mug in cabinet.',
      difficulty: 0.5,
      origin: 'llm' as const,
    };
    const p = buildInitialPrompt(card, task, []);
    expect(p.messages[1].content).toContain('Task: put a mug in cabinet.');
    expect((p.jsonSchema as any).required).toEqual(['observation', 'admissible']);
  });
});
