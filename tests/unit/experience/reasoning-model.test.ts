import { describe, expect, it } from 'vitest';
import { extractJson, parseNextAnswer, ReasoningExperienceModel } from '../../../src/core/experience/reasoning-model';
import { checkConsistency } from '../../../src/core/experience/domain-card';
import { ExperienceModelError } from '../../../src/core/experience/types';
import { getEnvDefinition } from '../../../src/core/envs/registry';
import type { Observation, Task } from '../../../src/core/types';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';
import { answer, HOUSEHOLD, taskWithoutStartPage, WEBSHOP } from './fixtures';

const householdTask: Task = getEnvDefinition(HOUSEHOLD).generateTask(5, 0.3);
async function householdStart(): Promise<Observation> {
  return getEnvDefinition(HOUSEHOLD).create().reset({ seed: 5, task: householdTask });
}

describe('parsing and checking answers', () => {
  it('extracts the JSON object from fenced or chatty replies', () => {
    expect(extractJson('```json\n{"a": 1}\n```')).toEqual({ ok: true, value: { a: 1 } });
    expect(extractJson('Sure! {"a": {"b": 2}} hope this helps')).toEqual({ ok: true, value: { a: { b: 2 } } });
    expect(extractJson('no json here')).toMatchObject({ ok: false, kind: 'parse' });
    expect(extractJson('{"a": 1,')).toMatchObject({ ok: false, kind: 'parse' });
    expect(extractJson('[1, 2]')).toMatchObject({ ok: false, kind: 'parse' });
  });

  it('checks the schema: types and required fields', () => {
    const ok = parseNextAnswer(
      answer({ observation: '  You  open the drawer 1.  ', admissible: [' close drawer 1 ', ''] }),
      { reasoning: true },
    );
    expect(ok).toEqual({
      ok: true,
      value: {
        reasoning: 'the action works',
        valid: true,
        observation: 'You open the drawer 1.',
        admissible: ['close drawer 1'],
        reward: 0,
        terminated: false,
      },
    });
    const noReasoning = JSON.stringify({
      valid: true,
      next_state: { observation: 'x', admissible: ['y'] },
      reward: 0,
      terminated: false,
    });
    expect(parseNextAnswer(noReasoning, { reasoning: true })).toMatchObject({
      ok: false,
      kind: 'schema',
      reason: expect.stringContaining('reasoning'),
    });
    expect(parseNextAnswer(noReasoning, { reasoning: false })).toMatchObject({ ok: true });
    expect(
      parseNextAnswer(
        JSON.stringify({ reasoning: '', valid: 'yes', next_state: { observation: 1, admissible: 'a' }, reward: '1' }),
        { reasoning: true },
      ),
    ).toMatchObject({
      ok: false,
      kind: 'schema',
      reason: expect.stringMatching(/valid.*observation.*admissible.*reward.*terminated/),
    });
  });

  it('checks consistency', () => {
    const base = { reasoning: '', valid: true, observation: 'x', admissible: ['a'], reward: 0, terminated: false };
    expect(checkConsistency(base)).toBeNull();
    expect(checkConsistency({ ...base, reward: 0.5 })).toMatch(/0 or 1/);
    expect(checkConsistency({ ...base, reward: 1 })).toMatch(/only given on the final step/);
    expect(checkConsistency({ ...base, reward: 1, terminated: true, admissible: [] })).toBeNull();
    expect(checkConsistency({ ...base, admissible: [] })).toMatch(/needs admissible/);
    expect(checkConsistency({ ...base, admissible: [] }, ['go to desk 1'])).toBeNull(); // implied globals count
    expect(checkConsistency({ ...base, observation: '' })).toMatch(/empty/);
    expect(checkConsistency({ ...base, valid: false, reward: 1 })).toMatch(/invalid action/);
    expect(checkConsistency({ ...base, valid: false, terminated: true })).toMatch(/invalid action/);
    expect(checkConsistency({ ...base, valid: false, observation: '', admissible: [] })).toBeNull();
  });
});

describe('ReasoningExperienceModel', () => {
  it("turns a good answer into a prediction in the env's own format (globals re-added, sorted)", async () => {
    const state = await householdStart();
    const chat = new ScriptedChatModel([
      answer({
        reasoning: 'desk 1 holds a pen',
        observation: 'You arrive at desk 1. On the desk 1, you see a pen 1.',
        admissible: ['take pen 1 from desk 1', 'examine desk 1'],
      }),
    ]);
    const model = new ReasoningExperienceModel(chat);
    const p = await model.next({ task: householdTask, history: [], state, action: state.admissible[0] });
    expect(p).toMatchObject({
      valid: true,
      actionValid: true,
      reward: 0,
      terminated: false,
      attempts: 1,
      notes: [],
      reasoning: 'desk 1 holds a pen',
    });
    const globals = state.admissible.filter((a) => /^(go to |look$|inventory$)/.test(a));
    expect(p.next.admissible).toEqual([...globals, 'take pen 1 from desk 1', 'examine desk 1'].sort());
    expect(p.next.task).toBe(householdTask);
    expect(p.usage.promptTokens).toBeGreaterThan(0);
    expect(p.raw).toContain('desk 1 holds a pen');
  });

  it('renders WebShop answers back to WebShop pages with their buttons', async () => {
    const task = getEnvDefinition(WEBSHOP).generateTask(11, 0.5);
    const state = await getEnvDefinition(WEBSHOP).create().reset({ seed: 11, task });
    const chat = new ScriptedChatModel([
      answer({
        observation: 'Page 1 (Total results: 1) | B0ZZZ99999 | Shirt | $9.00',
        admissible: ['click[B0ZZZ99999]'],
      }),
    ]);
    const p = await new ReasoningExperienceModel(chat).next({ task, history: [], state, action: state.admissible[0] });
    expect(p.next.text).toBe(
      `Instruction: [SEP] ${task.instruction} [SEP] Back to Search [SEP] Page 1 (Total results: 1) [SEP] Next > [SEP] B0ZZZ99999 [SEP] Shirt [SEP] $9.00`,
    );
    expect(p.next.admissible).toEqual(['click[back to search]', 'click[next >]', 'click[b0zzz99999]']);
  });

  it('retries a length cut-off with a larger budget, and notes it', async () => {
    const state = await householdStart();
    const chat = new ScriptedChatModel([{ text: '{"reasoning": "the desk is', finishReason: 'length' }, answer()]);
    const model = new ReasoningExperienceModel(chat, { maxTokens: 100 });
    const p = await model.next({ task: householdTask, history: [], state, action: state.admissible[0] });
    expect(p.valid).toBe(true);
    expect(p.attempts).toBe(2);
    expect(p.notes).toEqual(['attempt 1: length cut-off at 100 tokens']);
    expect(chat.requests.map((r) => r.maxTokens)).toEqual([100, 150]);
    // The retry shows the model its cut answer and asks for a shorter one.
    const retry = chat.requests[1].messages;
    expect(retry.at(-2)).toEqual({ role: 'assistant', content: '{"reasoning": "the desk is' });
    expect(retry.at(-1)!.content).toMatch(/cut off.*shorter/);
    expect(chat.requests[1].seed).toBe(1);
  });

  it('retries a parse error and an inconsistency, then succeeds', async () => {
    const state = await householdStart();
    const chat = new ScriptedChatModel([
      'I think the agent goes to the desk.',
      answer({ reward: 1, terminated: false }),
      answer(),
    ]);
    const p = await new ReasoningExperienceModel(chat).next({
      task: householdTask,
      history: [],
      state,
      action: state.admissible[0],
    });
    expect(p.valid).toBe(true);
    expect(p.attempts).toBe(3);
    expect(p.notes).toEqual([
      'attempt 1: parse error: no JSON object in the answer',
      'attempt 2: inconsistent: reward 1 is only given on the final step (terminated true)',
    ]);
    expect(chat.requests[2].messages.at(-1)!.content).toContain('reward 1 is only given on the final step');
  });

  it('returns an INVALID prediction with the raw text and the reason after its retries — never throws', async () => {
    const state = await householdStart();
    const chat = new ScriptedChatModel(['{"valid": tru', '{"valid": tru', 'still not JSON']);
    const model = new ReasoningExperienceModel(chat, { retries: 2 });
    const p = await model.next({ task: householdTask, history: [], state, action: state.admissible[0] });
    expect(p.valid).toBe(false);
    expect(p.attempts).toBe(3);
    expect(p.notes).toHaveLength(3);
    expect(p.raw).toBe('still not JSON');
    expect(p.invalidReason).toBe('parse error: no JSON object in the answer');
    expect(p.next).toEqual(state);
    expect(p.reward).toBe(0);
    expect(p.terminated).toBe(false);
    expect(chat.remaining).toBe(0);
    // A schema error as the last straw is reported as such.
    const schema = new ScriptedChatModel(['{"valid": true}']);
    const q = await new ReasoningExperienceModel(schema, { retries: 0 }).next({
      task: householdTask,
      history: [],
      state,
      action: state.admissible[0],
    });
    expect(q).toMatchObject({
      valid: false,
      attempts: 1,
      raw: '{"valid": true}',
      invalidReason: expect.stringMatching(/^schema error: .*next_state/),
    });
  });

  it('does not retry a cancelled step: an aborted signal rejects', async () => {
    const state = await householdStart();
    const controller = new AbortController();
    const chat = new ScriptedChatModel(() => {
      controller.abort();
      return { text: '', finishReason: 'abort' };
    });
    await expect(
      new ReasoningExperienceModel(chat).next({
        task: householdTask,
        history: [],
        state,
        action: state.admissible[0],
        signal: controller.signal,
      }),
    ).rejects.toMatchObject({ code: 'aborted' });
    expect(chat.requests).toHaveLength(1);
  });

  it('passes the model\'s "invalid action" verdict on as a no-op prediction', async () => {
    const state = await householdStart();
    const chat = new ScriptedChatModel([answer({ valid: false, observation: 'Nothing happens.', admissible: [] })]);
    const p = await new ReasoningExperienceModel(chat).next({
      task: householdTask,
      history: [],
      state,
      action: state.admissible[0],
    });
    expect(p).toMatchObject({ valid: true, actionValid: false, reward: 0, terminated: false, next: state });
  });

  it('answers a repeated (task, history, action) from the transition cache at temperature 0', async () => {
    const state = await householdStart();
    const chat = new ScriptedChatModel(() => answer());
    const model = new ReasoningExperienceModel(chat);
    const ctx = { task: householdTask, history: [], state, action: state.admissible[0] };
    const first = await model.next(ctx);
    const again = await model.next(ctx);
    expect(chat.requests).toHaveLength(1);
    expect(again.cached).toBe(true);
    expect(again.usage).toEqual({ promptTokens: 0, completionTokens: 0, ms: 0 });
    expect(again.next).toEqual(first.next);
    await model.next({ ...ctx, action: state.admissible[1] });
    expect(model.cacheStats).toEqual({ hits: 1, misses: 2, size: 2 });
    // Another history is another transition.
    await model.next({
      ...ctx,
      history: [
        {
          observation: state.text,
          admissible: state.admissible,
          action: 'look',
          reward: 0,
          terminated: false,
          truncated: false,
          valid: true,
        },
      ],
    });
    expect(chat.requests).toHaveLength(3);
    // Off at temperature > 0 (and when switched off).
    const sampled = new ReasoningExperienceModel(chat, { temperature: 0.7 });
    await sampled.next(ctx);
    await sampled.next(ctx);
    expect(chat.requests).toHaveLength(5);
    expect(sampled.cacheStats).toEqual({ hits: 0, misses: 0, size: 0 });
    // Unusable answers are not cached.
    const flaky = new ScriptedChatModel(['nope', answer()]);
    const m2 = new ReasoningExperienceModel(flaky, { retries: 0 });
    expect((await m2.next(ctx)).valid).toBe(false);
    expect((await m2.next(ctx)).valid).toBe(true);
  });

  it('concurrent calls for the same step give the hits and answers of the same calls one after another', async () => {
    const state = await householdStart();
    const ctx = { task: householdTask, history: [], state, action: state.admissible[0] };
    const chat = new ScriptedChatModel(() => answer());
    const model = new ReasoningExperienceModel(chat);
    const answers = await Promise.all([
      model.next(ctx),
      model.next(ctx),
      model.next({ ...ctx, action: state.admissible[1] }),
      model.next(ctx),
    ]);
    expect(chat.requests).toHaveLength(2);
    expect(answers.map((p) => p.cached === true)).toEqual([false, true, false, true]);
    expect(model.cacheStats).toEqual({ hits: 2, misses: 2, size: 2 });
    // An unusable first answer is not shared: the waiting call asks again, as it would have after it.
    const flaky = new ScriptedChatModel(['nope', answer()]);
    const m2 = new ReasoningExperienceModel(flaky, { retries: 0 });
    const [a, b] = await Promise.all([m2.next(ctx), m2.next(ctx)]);
    expect([a.valid, b.valid, b.cached === true]).toEqual([false, true, false]);
  });

  it('writes a first state for a task without a real start page, or throws a named error', async () => {
    const task = taskWithoutStartPage('llm/1');
    const chat = new ScriptedChatModel([
      JSON.stringify({
        observation: 'You are in the middle of a room. You see a cabinet 1.',
        admissible: ['go to cabinet 1', 'look'],
      }),
    ]);
    const model = new ReasoningExperienceModel(chat);
    const first = await model.initial(task);
    expect(first).toEqual({
      text: 'You are in the middle of a room. You see a cabinet 1.',
      admissible: ['go to cabinet 1', 'look'],
      task,
    });
    expect(await model.initial(task)).toEqual(first);
    expect(chat.requests).toHaveLength(1);
    const bad = new ReasoningExperienceModel(new ScriptedChatModel(['x', 'y', 'z']));
    await expect(bad.initial(task)).rejects.toBeInstanceOf(ExperienceModelError);
  });
});
