import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { abstractObservation, builtInDomainCard } from '../../../../src/core/experience/domain-card';
import { getEnvDefinition } from '../../../../src/core/envs/registry';
import type { VerdictView } from '../../../../src/core/envs/env';
import {
  answerBySubjectFeature,
  endsByPageFeature,
  reachesSubjectFeature,
  subjectOf,
  WEBARENA_ENV_ID,
} from '../../../../src/core/envs/webarena';

const ORDERS = [
  'Orders - Admin',
  'admin.local/admin/orders',
  'link Order #000000122',
  'cell David Moreau',
  'cell $254.99',
  'cell Pending',
  'link Order #000000121',
  'cell Ben Silva',
  'cell $147.50',
  'cell Complete',
  '(showing elements 15–22 of 38)',
].join(' | ');

const POST = [
  'Hot take on old maps - history',
  'forum.local/f/history/127',
  'heading Hot take on old maps',
  'text Submitted by jpark',
  'text 55 points',
  'button Upvote',
  'heading 2 comments',
].join(' | ');

function view(instruction: string, state: string, action: string, history: string[] = [], pages: string[] = []) {
  return { instruction, state, action, history, historyPages: pages } satisfies VerdictView;
}

describe('webarena verdict features', () => {
  it('reads the subject of an instruction: its quoted name, else its order number', () => {
    expect(subjectOf("Open the post 'Hot take on old maps' in the history forum.")).toBe('hot take on old maps');
    expect(subjectOf('What is the status of order #000000121?')).toBe('#000000121');
    expect(subjectOf('What is the title of the highest-scored post in the history forum?')).toBeNull();
  });

  it("answer_by_subject: an answer of the asked form in the subject's row, not another row's or column's", () => {
    const asked = 'What is the status of order #000000121?';
    expect(answerBySubjectFeature.compute(view(asked, ORDERS, 'stop [Complete]'))).toBe(1);
    expect(answerBySubjectFeature.compute(view(asked, ORDERS, 'stop [Pending]'))).toBe(0);
    expect(answerBySubjectFeature.compute(view(asked, ORDERS, 'stop [$147.50]'))).toBe(0);
    const price = "What is the price of 'Order #000000121' in the store admin?";
    expect(answerBySubjectFeature.compute(view(price, ORDERS, 'stop [$147.50]'))).toBe(1);
    expect(answerBySubjectFeature.compute(view(asked, ORDERS, "click [6] 'Order #000000121'"))).toBe(0);
  });

  it("answer_by_subject: on the subject's own page, and across the scroll that cut its row", () => {
    const count = "How many comments does the post 'Hot take on old maps' in the history forum have?";
    expect(answerBySubjectFeature.compute(view(count, POST, 'stop [2 comments]'))).toBe(1);
    expect(answerBySubjectFeature.compute(view(count, POST, 'stop [Submitted by jpark]'))).toBe(0);
    expect(answerBySubjectFeature.compute(view(count, POST, 'stop [55 points]'))).toBe(0);
    const cut = 'Orders - Admin | admin.local/admin/orders | cell Ben Silva | cell $147.50 | cell Complete';
    const asked = 'What is the status of order #000000121?';
    expect(answerBySubjectFeature.compute(view(asked, cut, 'stop [Complete]'))).toBe(0);
    expect(answerBySubjectFeature.compute(view(asked, cut, 'stop [Complete]', ['scroll [down]'], [ORDERS]))).toBe(1);
  });

  it("reaches_subject: an Open task's click on the named link, or a step on the named page", () => {
    const open = "Open the post 'Hot take on old maps' in the history forum.";
    const list = 'history - Forum | forum.local/f/history | link Hot take on old maps | text 55 points';
    expect(reachesSubjectFeature.compute(view(open, list, "click [4] 'Hot take on old maps'"))).toBe(1);
    expect(reachesSubjectFeature.compute(view(open, list, 'stop [55 points]'))).toBe(0);
    expect(reachesSubjectFeature.compute(view(open, POST, 'stop [2 comments]'))).toBe(1);
    const ask = "How many comments does the post 'Hot take on old maps' in the history forum have?";
    expect(reachesSubjectFeature.compute(view(ask, POST, 'stop [2 comments]'))).toBe(0);
  });

  it('ends_by_page: every ending but a stop', () => {
    expect(endsByPageFeature.compute(view('Cancel order #000000121.', ORDERS, "click [9] 'Cancel order'"))).toBe(1);
    expect(endsByPageFeature.compute(view('Cancel order #000000121.', ORDERS, "type [3] [Pending] 'Status'"))).toBe(1);
    expect(endsByPageFeature.compute(view('Cancel order #000000121.', ORDERS, 'stop [Pending]'))).toBe(0);
  });

  it('separate the shipped data: every real ending but a stop a success, and right answers read by the subject', () => {
    const card = builtInDomainCard(WEBARENA_ENV_ID)!;
    const lines = readFileSync('public/datasets/webarena-lite-v0.jsonl', 'utf8').trim().split('\n');
    const tally = { byPage: [0, 0], answered: [0, 0], answers: 0 };
    for (const episode of lines.map((l) => JSON.parse(l))) {
      const steps = episode.steps.filter((s: { valid: boolean }) => s.valid);
      steps.forEach((s: { observation: string; action: string; reward: number; terminated: boolean }, i: number) => {
        if (!s.terminated) return;
        const shown = steps.slice(Math.max(0, i - 4), i);
        const v = view(
          episode.task.instruction,
          abstractObservation(card, s.observation),
          s.action,
          shown.map((x: { action: string }) => x.action),
          shown.map((x: { observation: string }) => abstractObservation(card, x.observation)),
        );
        const success = s.reward > 0 ? 1 : 0;
        if (endsByPageFeature.compute(v)) tally.byPage[success]++;
        if (answerBySubjectFeature.compute(v)) tally.answered[success]++;
        if (success && episode.task.spec.kind === 'information') tally.answers++;
      });
    }
    expect(tally.byPage[0]).toBe(0);
    expect(tally.byPage[1]).toBeGreaterThan(100);
    expect(tally.answered[0]).toBe(0);
    expect(tally.answered[1]).toBeGreaterThanOrEqual(0.9 * tally.answers);
  });

  it('are the ones the env definition adds to an outcome head', () => {
    expect(getEnvDefinition(WEBARENA_ENV_ID).verdictFeatures?.map((f) => f.name)).toEqual([
      'answer_by_subject',
      'reaches_subject',
      'ends_by_page',
    ]);
  });
});
