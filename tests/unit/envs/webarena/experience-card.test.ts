import { describe, expect, it } from 'vitest';
import { makeBaselinePolicy, rolloutEpisode } from '../../../../src/core/data/rollout';
import {
  abstractAdmissible,
  abstractObservation,
  builtInDomainCard,
  concreteAdmissible,
  concreteObservation,
} from '../../../../src/core/experience/domain-card';
import { getEnvDefinition, makeEnv } from '../../../../src/core/envs/registry';
import { candidateTexts, WEBARENA_ENV_ID } from '../../../../src/core/envs/webarena';
import type { Trajectory } from '../../../../src/core/types';

const FORUM_PAGE = [
  'Tab 0 (current): movies - Forum',
  'URL: http://forum.local/f/movies?page=2',
  '',
  "[9] link 'Forum'",
  "[10] StaticText 'Submitted by mkelly'",
  "[11] gridcell '104 points'",
  "[12] textbox 'Reply' value: 31.50",
  "[13] checkbox 'Enabled' checked: false",
  "[14] button 'Upvote' pressed: true",
  '(showing elements 9–14 of 36)',
].join('\n');

const FORUM_ADMISSIBLE = [
  "click [9] 'Forum'",
  "click [13] 'Enabled'",
  "click [14] 'Upvote'",
  "type [12] [Hot take] 'Reply'",
  "type [12] [104 points] 'Reply'",
  "type [12] [7] 'Reply'",
  'scroll [down]',
  'scroll [up]',
  'go_back',
  'goto [http://forum.local/]',
  'goto [http://admin.local/admin]',
  'stop [Submitted by mkelly]',
  'stop [104 points]',
  'stop [Hot take]',
  'stop [7]',
];

/** Expert, noisy-expert and random episodes at every level. */
async function episodes(count: number): Promise<Trajectory[]> {
  const definition = getEnvDefinition(WEBARENA_ENV_ID);
  const env = makeEnv(WEBARENA_ENV_ID);
  const policies = ['expert', 'noisy-expert', 'random'] as const;
  const out: Trajectory[] = [];
  for (let i = 0; i < count; i++) {
    const seed = 61_000 + i;
    const task = definition.generateTask(seed, [0, 0.25, 0.5, 0.75, 1][i % 5]);
    const policy = makeBaselinePolicy(policies[i % 3], { epsilon: 0.3 });
    out.push(await rolloutEpisode(env, policy, { seed, task }));
  }
  return out;
}

describe('webarena-lite-v0 experience card', () => {
  const card = builtInDomainCard(WEBARENA_ENV_ID)!;

  it('is written in the env folder and short enough for every prompt', () => {
    expect(card.abstraction).toBe('webarena');
    expect(card.showAdmissible).toBe(false);
    expect(card.text.length).toBeLessThan(900);
  });

  it('abstracts a hand-written page: no ids, no scheme, short roles; the page comes back exactly', () => {
    const abstract = abstractObservation(card, FORUM_PAGE);
    expect(abstract).toBe(
      'movies - Forum | forum.local/f/movies?page=2 | link Forum | text Submitted by mkelly | cell 104 points | ' +
        'textbox Reply value: 31.50 | checkbox Enabled checked: false | button Upvote pressed: true | ' +
        '(showing elements 9–14 of 36)',
    );
    expect(concreteObservation(card, abstract, 'any')).toBe(FORUM_PAGE);
  });

  it('keeps only go_back and the typed texts of a list, and puts the rest back in the browser order', () => {
    const local = abstractAdmissible(card, FORUM_ADMISSIBLE);
    expect(local).toEqual(['go_back', 'type [Hot take]', 'type [104 points]', 'type [7]']);
    expect(concreteAdmissible(card, local, [], FORUM_PAGE)).toEqual(FORUM_ADMISSIBLE);
    // Without history, no go_back; the page's candidates still give every type and stop.
    const noBack = FORUM_ADMISSIBLE.filter((a) => a !== 'go_back');
    expect(concreteAdmissible(card, abstractAdmissible(card, noBack), [], FORUM_PAGE)).toEqual(noBack);
  });

  it("round-trips the real env's pages exactly, and its lists but for candidate stops on pages without a field", async () => {
    let states = 0;
    let exactLists = 0;
    let abstractChars = 0;
    let concreteChars = 0;
    for (const t of await episodes(45)) {
      const candidates = new Set(candidateTexts(t.task.instruction));
      const pages = [...t.steps.map((s) => ({ text: s.observation, admissible: s.admissible }))];
      pages.push({ text: t.final_observation, admissible: [] });
      for (const { text, admissible } of pages) {
        const abstract = abstractObservation(card, text);
        abstractChars += abstract.length;
        concreteChars += text.length;
        expect(concreteObservation(card, abstract, t.task.instruction)).toBe(text);
        if (admissible.length === 0) continue;
        states++;
        const back = concreteAdmissible(card, abstractAdmissible(card, admissible), [], text);
        if (back.join('\n') === admissible.join('\n')) {
          exactLists++;
          continue;
        }
        // What is missing: only stops of the instruction's candidates, on a page with no text field.
        expect(admissible.some((a) => a.startsWith('type ['))).toBe(false);
        expect(admissible.filter((a) => back.includes(a))).toEqual(back);
        const missing = admissible.filter((a) => !back.includes(a));
        expect(missing.every((a) => candidates.has(/^stop \[(.*)\]$/.exec(a)?.[1] ?? ''))).toBe(true);
      }
    }
    console.log(
      `${states} states, ${exactLists} lists exact, abstract/concrete chars ${abstractChars}/${concreteChars}`,
    );
    expect(states).toBeGreaterThan(100);
    expect(exactLists).toBeGreaterThan(states / 4);
    expect(abstractChars).toBeLessThan(concreteChars * 0.8);
  });
});
