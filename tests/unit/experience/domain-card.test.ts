import { describe, expect, it } from 'vitest';
import {
  abstractAdmissible,
  abstractObservation,
  builtInDomainCard,
  concreteAdmissible,
  concreteObservation,
  deriveDomainCard,
  domainCardFor,
  globalActionsOf,
} from '../../../src/core/experience/domain-card';
import { WEBSHOP_ELEMENT_CHARS } from '../../../src/core/envs/webshop';
import { checkEnv } from '../../../src/core/envs/check-env';
import { TimeLimit } from '../../../src/core/envs/env';
import { DreamEnv } from '../../../src/core/experience/dream-env';
import { ReasoningExperienceModel } from '../../../src/core/experience/reasoning-model';
import type { Task, Trajectory } from '../../../src/core/types';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';
import { answer, HOUSEHOLD, rollouts, WEBSHOP } from './fixtures';

function allStates(
  trajectories: Trajectory[],
): { text: string; admissible: string[]; first: string[]; instruction: string }[] {
  return trajectories.flatMap((t) => [
    ...t.steps.map((s) => ({
      text: s.observation,
      admissible: s.admissible,
      first: t.steps[0].admissible,
      instruction: t.task.instruction,
    })),
    {
      text: t.final_observation,
      admissible: [] as string[],
      first: t.steps[0].admissible,
      instruction: t.task.instruction,
    },
  ]);
}

describe('domain cards', () => {
  it('have a written card per built-in env, and a clear error for an unknown one without data', () => {
    for (const env of [WEBSHOP, HOUSEHOLD]) {
      const card = builtInDomainCard(env)!;
      expect(card.env).toBe(env);
      expect(card.text.length).toBeLessThan(700); // part of every prompt
    }
    expect(builtInDomainCard(WEBSHOP)!.text).toMatch(/search\[query\].*click\[buy now\]/);
    expect(builtInDomainCard(HOUSEHOLD)!.text).toMatch(/take O from R.*put O in\/on R/);
    expect(() => domainCardFor('my-domain-v0')).toThrow(/deriveDomainCard/);
  });

  it('WebShop: abstract pages drop header and buttons; concrete pages and admissible lists come back exactly', async () => {
    const card = builtInDomainCard(WEBSHOP)!;
    let exact = 0,
      total = 0;
    for (const s of allStates(await rollouts(WEBSHOP, 10, 71_000))) {
      const abstract = abstractObservation(card, s.text);
      expect(abstract).not.toContain('[SEP]');
      expect(abstract).not.toContain(s.instruction);
      // Buttons come back from the page kind.
      if (s.admissible.length)
        expect(concreteAdmissible(card, abstractAdmissible(card, s.admissible), [], s.text)).toEqual(s.admissible);
      if (s.text.startsWith('Thank you')) continue;
      total++;
      const shortened = s.text.split(' [SEP] ').some((p) => p.length > WEBSHOP_ELEMENT_CHARS && p !== s.instruction);
      if (!shortened) {
        expect(concreteObservation(card, abstract, s.instruction)).toBe(s.text);
        exact++;
      }
    }
    expect(exact).toBeGreaterThan(total / 4);
  });

  it('household: globals leave the prompt and come back from the first state', async () => {
    const card = builtInDomainCard(HOUSEHOLD)!;
    for (const s of allStates(await rollouts(HOUSEHOLD, 4, 72_000))) {
      const local = abstractAdmissible(card, s.admissible);
      expect(local.some((a) => a.startsWith('go to ') || a === 'look' || a === 'inventory')).toBe(false);
      if (s.admissible.length)
        expect(concreteAdmissible(card, local, globalActionsOf(card, s.first), s.text)).toEqual(s.admissible);
      expect(abstractObservation(card, s.text)).not.toContain('Welcome to TextWorld');
    }
  });

  it('deriveDomainCard writes a card from imported trajectories: verbs, examples, stats and globals', async () => {
    const imported = (await rollouts(HOUSEHOLD, 8, 73_000)).map((t) => ({
      ...t,
      env: 'my-household-v0',
      task: { ...t.task, env: 'my-household-v0', origin: 'imported' as const },
    }));
    const card = deriveDomainCard(imported, { name: 'my household' });
    expect(card).toMatchObject({
      env: 'my-household-v0',
      name: 'my household',
      abstraction: 'generic',
      showAdmissible: true,
      sortedAdmissible: true,
    });
    expect(card.text).toMatch(/learned from 8 episodes/);
    expect(card.text).toMatch(/go e\.g\. "go to /);
    expect(card.text).toMatch(/% of episodes succeed/);
    expect(card.text).toContain(imported[0].task.instruction);
    const pattern = new RegExp(card.globalActions!);
    expect(pattern.test('go to desk 1') && pattern.test('look') && pattern.test('inventory')).toBe(true);
    expect(pattern.test('take pen 1 from desk 1')).toBe(false);
    expect(domainCardFor('my-household-v0', imported)).toEqual(deriveDomainCard(imported));

    const shop = deriveDomainCard(await rollouts(WEBSHOP, 6, 74_000));
    expect(shop.globalActions).toBeUndefined();
    expect(shop.text).toMatch(/click\[…\] e\.g\./);
    expect(shop.text).toMatch(/search\[…\] e\.g\./);
  });

  it('a DreamEnv of an imported domain runs on its derived card (model-written start, checkEnv passes)', async () => {
    const envId = 'my-domain-v0';
    const imported = (await rollouts(HOUSEHOLD, 4, 75_000)).map((t) => ({
      ...t,
      env: envId,
      task: { ...t.task, env: envId, origin: 'imported' as const },
    }));
    const card = deriveDomainCard(imported);
    const chat = new ScriptedChatModel((request) => {
      const system = request.messages[0].content;
      if (system.includes('write the first state'))
        return JSON.stringify({
          observation: 'You are in the middle of a room.',
          admissible: ['go to desk 1', 'look'],
        });
      return answer({
        observation: 'You arrive at desk 1. On the desk 1, you see a pen 1.',
        admissible: ['take pen 1 from desk 1', 'examine desk 1'],
      });
    });
    const tasks = imported.map((t) => t.task);
    const taskForSeed = (seed: number): Task => tasks[seed % tasks.length];
    const dream = new TimeLimit(
      new DreamEnv(new ReasoningExperienceModel(chat, { domainCard: card }), { envId, taskForSeed }),
      6,
    );
    const report = await checkEnv(dream, { seeds: [0, 1] });
    expect(report.failures).toEqual([]);
    expect(chat.requests[0].messages[0].content).toContain(card.text);
    const first = await dream.reset({ seed: 0 });
    const r = await dream.step('go to desk 1');
    expect(r.admissible).toEqual(['examine desk 1', 'go to desk 1', 'look', 'take pen 1 from desk 1']); // globals of the first state re-added
    expect(first.task.origin).toBe('imported');
  });
});
