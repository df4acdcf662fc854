/**
 * An application that records no admissible lists (ETO) gets them inferred at import
 * (src/core/data/candidates.ts). Those lists are an estimate, not a state's content: the learned
 * experience model neither reads nor writes them, and a dreamed state gets its list as a deployed
 * agent does, inferred from the domain's training episodes.
 */
import { describe, expect, it } from 'vitest';
import { candidateInference } from '../../../src/core/data/candidates';
import { readTrajectories, writeTrajectories } from '../../../src/core/data/formats';
import { buildDomain } from '../../../src/core/domain/domain';
import { seedDomainBuffer } from '../../../src/core/domain/trainer';
import { DEFAULT_FORMAT_OPTIONS } from '../../../src/core/experience/learned/format';
import { LearnedExperienceModel, type BatchDecoder } from '../../../src/core/experience/learned/learned-model';
import { ExperienceNetwork } from '../../../src/core/experience/learned/network';
import { learnedTrainOptions, prepareData } from '../../../src/core/experience/learned/train-model';
import { Tokenizer } from '../../../src/core/experience/learned/tokenizer';
import { tinyConfig } from '../experience/learned/fixtures';
import { householdEpisodes } from './fixtures';

async function domainOf(format: 'eto' | 'ours') {
  const episodes = readTrajectories(writeTrajectories(await householdEpisodes(12), format), format);
  return buildDomain('hh', episodes);
}

/** How many pairs hold an `<adm>` list in their context and in their answer. */
async function listedPairs(domain: Awaited<ReturnType<typeof domainOf>>) {
  const buffer = await seedDomainBuffer(domain);
  const data = await prepareData(buffer, domain.envId, domain.card, learnedTrainOptions({ validationShare: 0.2 }));
  const adm = data.tokenizer.special('<adm>');
  const pairs = [...data.train, ...data.validation].filter((p) => p.kind === 'next');
  return {
    pairs: pairs.length,
    contexts: pairs.filter((p) => p.context.ids.includes(adm)).length,
    answers: pairs.filter((p) => p.answer.ids.includes(adm)).length,
  };
}

describe('inferred admissible lists', () => {
  it('an ETO import marks its card; its pairs carry no lists, where a listed import keeps them', async () => {
    const eto = await domainOf('eto');
    expect(eto.stats.inferredAdmissibleSteps).toBe(eto.stats.steps);
    expect(eto.card.inferredAdmissible).toBe(true);
    expect(eto.card.text).toMatch(/lists no admissible actions/);
    const inferred = await listedPairs(eto);
    expect(inferred.pairs).toBeGreaterThan(50);
    expect(inferred).toMatchObject({ contexts: 0, answers: 0 });

    const ours = await domainOf('ours');
    expect(ours.card.inferredAdmissible).toBeUndefined();
    const listed = await listedPairs(ours);
    expect(listed.contexts).toBe(listed.pairs);
    expect(listed.answers).toBeGreaterThan(listed.pairs / 2);
  });

  it('the learned model needs the inference, and a dreamed state gets the deployed agent’s candidates', async () => {
    const domain = await domainOf('eto');
    const tokenizer = Tokenizer.learn(['you arrive at the sofa 1 go to look'], { minCount: 1 });
    const net = ExperienceNetwork.create(tinyConfig(tokenizer.size, { maxContext: 768, maxAnswer: 384 }), 1);
    const manifest = { name: 'eto-model', env: domain.envId, formatOptions: DEFAULT_FORMAT_OPTIONS };
    expect(() => new LearnedExperienceModel(net, tokenizer, domain.card, manifest, {})).toThrow(
      /writes no admissible lists: its domain recorded none.*Dream with the domain/,
    );

    // The decoder answers "valid, running, reward 0: you arrive at the sofa 1", with no list.
    const answer = [
      ...(['<yes>', '<no>', '<r0>', '<obs>'] as const).map((t) => tokenizer.special(t)),
      ...tokenizer.encode('you arrive at the sofa 1').ids,
      tokenizer.special('<eos>'),
    ];
    const seen: number[][] = [];
    const fixed: BatchDecoder = async ({ contexts }) => {
      seen.push(...contexts.map((c) => c.ids));
      return contexts.map(() => ({
        tokens: { ids: answer, spaces: answer.map((_, i) => (i > 4 ? 1 : 0)), cases: answer.map(() => 0) },
        steps: answer.length,
      }));
    };
    const infer = candidateInference(domain.train);
    const model = new LearnedExperienceModel(net, tokenizer, domain.card, manifest, {
      decoders: [fixed, fixed],
      transitionCache: false,
      verdictHead: false,
      inferAdmissible: infer,
    });
    const first = domain.train[0];
    const task = first.task;
    const state = { text: first.steps[0].observation, admissible: first.steps[0].admissible, task };
    // Four distinct requests, so the batch is split between the two (fake) decoders.
    const actions = ['go to sofa 1', 'look', 'inventory', 'go to shelf 1'];
    const predictions = await Promise.all(actions.map((action) => model.next({ task, history: [], state, action })));
    predictions.forEach((p, i) => {
      expect(p).toMatchObject({ valid: true, actionValid: true, terminated: false });
      const expected = infer({ instruction: task.instruction, observation: p.next.text, previousAction: actions[i] });
      expect(expected.length).toBeGreaterThanOrEqual(2);
      expect(p.next.admissible).toEqual(expected);
    });
    // The contexts showed the model no list.
    expect(seen.length).toBe(4);
    for (const ids of seen) expect(ids).not.toContain(tokenizer.special('<adm>'));
    model.dispose();
  });
});
