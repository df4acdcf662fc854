/**
 * Every recorded transition of an import becomes an SFT pair of the learned experience model
 * (issue 29: 28 ETO episodes of about 110 transitions gave 18 pairs, only their last steps,
 * because no step listed its admissible actions). Only what the data cannot say is left out.
 */
import { describe, expect, it } from 'vitest';
import { readTrajectories, writeTrajectories } from '../../../src/core/data/formats';
import { buildDomain } from '../../../src/core/domain/domain';
import { seedDomainBuffer } from '../../../src/core/domain/trainer';
import { builtInDomainCard, type DomainCard } from '../../../src/core/experience/domain-card';
import { answerOf, ENDED_OBSERVATION } from '../../../src/core/experience/learned/sft-data';
import { learnedTrainOptions, prepareData } from '../../../src/core/experience/learned/train-model';
import { householdEpisodes } from './fixtures';
import { transition } from '../support/transition';

describe('answerOf at the ends of recorded episodes', () => {
  const generic = { abstraction: 'generic' } as DomainCard;

  it("an imported episode's truncated last step teaches 'not terminated', with the state's own list", () => {
    expect(answerOf(generic, transition({ truncated: true }))).toEqual({
      valid: true,
      terminated: false,
      reward: 0,
      observation: 'you arrive at a',
      admissible: ['go to a', 'go to b'],
    });
  });

  it('an ended step with no recorded final observation gets ENDED_OBSERVATION (a dreamed state is never empty)', () => {
    const answer = answerOf(generic, transition({ terminated: true, reward: 1, nextObservation: '' }));
    expect(answer).toMatchObject({ terminated: true, reward: 1, observation: ENDED_OBSERVATION, admissible: [] });
  });

  it('leaves out what the data cannot say: an unknown ending, and a registered env at its step limit', () => {
    expect(answerOf(generic, transition({}))).toBeUndefined();
    expect(answerOf(builtInDomainCard('household-v0')!, transition({ truncated: true }))).toBeUndefined();
  });
});

describe('SFT pairs of an ETO import', () => {
  it('every recorded transition of the training episodes becomes a pair, plus one first state a task', async () => {
    const episodes = readTrajectories(writeTrajectories(await householdEpisodes(12), 'eto'), 'eto');
    const domain = buildDomain('hh', episodes);
    const buffer = await seedDomainBuffer(domain);
    const options = learnedTrainOptions({ validationShare: 0.2 });
    const data = await prepareData(buffer, domain.envId, domain.card, options);
    const learnedFrom = domain.train.filter((t) => data.trainEpisodes.some((e) => e.id === t.id));
    const validation = domain.train.filter((t) => !data.trainEpisodes.some((e) => e.id === t.id));
    const transitions = (ts: typeof domain.train) => ts.reduce((n, t) => n + t.steps.length, 0);
    const tasks = (ts: typeof domain.train) => new Set(ts.map((t) => t.task.id)).size;
    expect(data.train.filter((p) => p.kind === 'next')).toHaveLength(transitions(learnedFrom));
    expect(data.train.filter((p) => p.kind === 'initial')).toHaveLength(tasks(learnedFrom));
    expect(data.validation).toHaveLength(transitions(validation) + tasks(validation));
    expect(data.record.trainPairs + data.record.validationPairs).toBe(transitions(domain.train) + tasks(domain.train));
  });
});
