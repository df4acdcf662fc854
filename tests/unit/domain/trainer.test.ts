/**
 * Dream-only training of an imported domain with a scripted experience model (ScriptedChatModel
 * double answering valid JSON): it runs end to end without any real env, learns nothing from
 * unusable answers, and reports (a) dream success, (b) action agreement and (c) the audit
 * against held-out recorded transitions, all in range (each figure on its own: evaluate.test.ts).
 */
import { HaltingExperienceModel } from '../../../src/core/experience/halting-model';
import { RealStartsModel } from '../../../src/core/experience/real-starts';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDomain, heldOutTasks, trainingTasks } from '../../../src/core/domain/domain';
import { DomainTrainer, seedDomainBuffer, trainDomain } from '../../../src/core/domain/trainer';
import { DomainExperienceModel } from '../../../src/core/experience/recorded-starts';
import { buildRunParts, oracleUnavailableMessage } from '../../../src/core/train/run-parts';
import { Trainer } from '../../../src/core/train/loop';
import { initBackend } from '../../../src/core/tfjs/backend';
import { domainModel, foreignTrajectories, SCRIPTED_LLM as LLM, scriptedDomainChat } from './fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

const inUnit = (x: number | null) => x === null || (x >= 0 && x <= 1);

describe('dream-only training of an imported domain', () => {
  it('runs end to end: metrics per iteration, dreamed transitions in the buffer, (a)(b)(c) in range', async () => {
    const domain = buildDomain('myapp', await foreignTrajectories(), { tasks: ['put a towel in cart.'], seed: 2 });
    const buffer = await seedDomainBuffer(domain);
    const offline = (await buffer.stats()).transitions;
    const chat = scriptedDomainChat();
    const model = await domainModel(chat, domain, { buffer, k: 2, history: 2 });
    const result = await trainDomain(
      domain,
      model,
      {
        llm: LLM,
        iterations: 2,
        tasksPerIteration: 2,
        groupSize: 2,
        stepLimit: 6,
        evalEpisodes: 4,
        auditTransitions: 12,
      },
      { buffer, now: () => 5 },
    );

    expect(result.iterations.map((r) => r.iteration)).toEqual([1, 2]);
    for (const { metrics } of result.iterations) {
      // Dream-judged: dream/…, never charts/… (docs/architecture.md §3.11).
      expect(inUnit(metrics['dream/success_rate'])).toBe(true);
      expect(metrics).not.toHaveProperty(['charts/success_rate']);
      expect(metrics['budget/real_steps']).toBe(0);
      expect(metrics['dream/invalid_rate']).toBe(0);
      expect(metrics['dream/episode_length']).toBeGreaterThan(0);
      expect(metrics['dream/episode_length']).toBeLessThanOrEqual(6);
      expect(Number.isFinite(metrics['losses/policy_loss'])).toBe(true);
    }
    expect(result.dreamSteps).toBeGreaterThan(0);
    const stats = await buffer.stats();
    expect(stats.byEnvAndSource['byo:myapp']).toEqual({ offline, dream: result.dreamSteps });
    // the prompts carry the derived card and retrieved examples of the domain
    expect(chat.requests[0].messages[0].content).toContain(domain.card.text);
    expect(chat.requests.some((r) => r.messages[1].content.includes('Similar transitions'))).toBe(true);

    const { dream, agreement, audit } = result.evaluation;
    expect(dream.episodes).toBe(Math.min(4, heldOutTasks(domain).length));
    expect(inUnit(dream.success_rate)).toBe(true);
    expect(dream.mean_length).toBeGreaterThan(0);
    expect(dream.invalid_rate).toBe(0);
    // every household step lists its actions, the demonstrated one among them
    expect(agreement.usable_steps).toBe(domain.heldOut.reduce((s, t) => s + t.steps.length, 0));
    expect(agreement.held_out_steps).toBe(agreement.usable_steps);
    expect(inUnit(agreement.agreement)).toBe(true);
    expect(agreement.chance! > 0 && agreement.chance! < 1).toBe(true);
    expect(audit).toMatchObject({ env: 'byo:myapp', n: 12, invalid_rate: 0 });
    for (const key of ['valid_agreement', 'terminated_accuracy', 'observation_f1', 'admissible_jaccard'] as const) {
      expect(audit[key]).not.toBeNull();
      expect(inUnit(audit[key])).toBe(true);
    }
    // AgentGym records no outcome: the reward cannot be audited
    expect(audit.reward_accuracy).toBeNull();
    expect(audit.outcome_steps).toBe(0);
    expect(audit.observation_f1!).toBeGreaterThan(0); // 'You arrive at …' overlaps the recorded feedback
    expect(audit.tokens_per_transition).toBeGreaterThan(0);
  });

  it('demonstrated tasks start from their recorded first state; extra tasks from the model', async () => {
    const domain = buildDomain('myapp', await foreignTrajectories(), { tasks: ['water the plants.'], seed: 2 });
    const chat = scriptedDomainChat();
    const starts = await domainModel(chat, domain);
    // Dreams may begin at the domain's recorded states; the halt measures them against its recorded episodes.
    expect(starts).toBeInstanceOf(RealStartsModel);
    expect(starts.realStarts!.size).toBe(domain.train.length);
    const halting = (starts as RealStartsModel).inner;
    expect(halting).toBeInstanceOf(HaltingExperienceModel);
    const model = (halting as HaltingExperienceModel).inner;
    expect(model).toBeInstanceOf(DomainExperienceModel);
    const demonstrated = domain.train[0];
    const first = await model.initial(demonstrated.task);
    expect(first.text).toBe(demonstrated.steps[0].observation);
    expect(first.admissible).toEqual(demonstrated.steps[0].admissible);
    expect(chat.requests.length).toBe(0);
    const extra = trainingTasks(domain).find((t) => t.instruction === 'water the plants.')!;
    const written = await model.initial(extra);
    expect(written.text).toMatch(/middle of a room/);
    expect(chat.requests.length).toBe(1);
  });

  it('unusable answers are never learned from and show in the invalid rate', async () => {
    const domain = buildDomain('myapp', await foreignTrajectories(), { seed: 2 });
    const model = await domainModel(scriptedDomainChat({ brokenOn: 'go to' }), domain, { k: 0, retries: 0 });
    let learned = 0;
    const trainer = new DomainTrainer(
      domain,
      model,
      { llm: LLM, iterations: 1, tasksPerIteration: 3, groupSize: 3, stepLimit: 6, seed: 4 },
      {
        onBatch: (batch) => {
          learned = batch.steps.length;
        },
      },
    );
    const record = await trainer.runIteration();
    const rate = record.metrics['dream/invalid_rate'];
    expect(rate).toBeGreaterThan(0);
    expect(rate).toBeLessThan(1);
    // every dreamed step here was asked of the model (the policy only picks admissible actions)
    expect(learned).toBe(Math.round(trainer.dreamSteps * (1 - rate)));
    trainer.dispose();
  });

  it('runs on the shared trainer loop as its task source: the same seed gives the same iterations, with the cache hit rate', async () => {
    const domain = buildDomain('myapp', await foreignTrajectories(), { seed: 2 });
    const run = async () => {
      const trainer = new DomainTrainer(domain, await domainModel(scriptedDomainChat(), domain, { k: 0 }), {
        llm: LLM,
        iterations: 2,
        tasksPerIteration: 2,
        groupSize: 2,
        stepLimit: 5,
        seed: 3,
      });
      expect(trainer.trainer).toBeInstanceOf(Trainer);
      expect(trainer.trainer.config).toMatchObject({
        env: 'byo:myapp',
        mode: 'dream',
        llm: LLM,
        algo: 'grpo',
        curriculum: false,
        evalInterval: 0,
        seed: 3,
      });
      expect(trainer.trainer.stepLimit).toBe(5);
      const records = [];
      while (!trainer.finished) records.push(await trainer.runIteration());
      expect(trainer.iteration).toBe(2);
      await expect(trainer.trainer.evaluate(2)).rejects.toThrow(/no real env.*DomainTrainer\.evaluate\(\)/);
      trainer.dispose();
      return records;
    };
    const first = await run();
    expect(await run()).toEqual(first);
    for (const { metrics } of first) {
      expect(inUnit(metrics['dream/cache_hit_rate'])).toBe(true);
      expect(metrics['dream/episode_length']).toBeLessThanOrEqual(5);
    }
  });

  it('refuses the oracle for a domain (it needs a real env) and takes a learned model (it needs none), in one decision', async () => {
    expect(oracleUnavailableMessage({ name: 'myapp' })).toMatch(
      /oracle is not available for the imported domain 'myapp'.*no real environment.*--llm openai:.*learned:PATH/,
    );
    const domain = buildDomain('myapp', await foreignTrajectories(), { seed: 2 });
    await expect(buildRunParts({ env: domain.envId, llm: 'oracle:0,0', seed: 0 }, { domain })).rejects.toThrow(
      /oracle is not available for the imported domain 'myapp'/,
    );
    expect(
      () =>
        new DomainTrainer(
          domain,
          {
            label: 'x',
            initial: async () => {
              throw new Error('unused');
            },
            next: async () => {
              throw new Error('unused');
            },
          },
          { llm: 'oracle:0,0' },
        ),
    ).toThrow(/oracle is not available/);
    const learned = await domainModel(scriptedDomainChat(), domain); // any model stands in for the learned one
    const paths: string[] = [];
    // k = 0: no buffer here to ground retrieval (a learned model that retrieves needs one: grounding.test.ts).
    const { experienceModel } = await buildRunParts(
      { env: domain.envId, llm: 'learned:runs/m-exp', seed: 0, retrievalK: 0 },
      {
        domain,
        loadLearnedModel: async (path) => {
          paths.push(path);
          return learned;
        },
      },
    );
    expect(paths).toEqual(['runs/m-exp']);
    expect(experienceModel).toBeInstanceOf(RealStartsModel);
    const halting = (experienceModel as RealStartsModel).inner;
    expect(halting).toBeInstanceOf(HaltingExperienceModel);
    const grounded = (halting as HaltingExperienceModel).inner;
    expect(grounded).toBeInstanceOf(DomainExperienceModel);
    expect((grounded as DomainExperienceModel).inner).toBe(learned);
  });
});
