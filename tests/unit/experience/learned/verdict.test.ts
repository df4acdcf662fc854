import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../../src/core/tfjs/backend';
import { getEnvDefinition, makeEnv } from '../../../../src/core/envs/registry';
import { builtInDomainCard } from '../../../../src/core/experience/domain-card';
import { makeBaselinePolicy, rolloutEpisode, type NoisyExpertOptions } from '../../../../src/core/data/rollout';
import { LearnedExperienceModel, type BatchDecoder } from '../../../../src/core/experience/learned/learned-model';
import { makeDreamEnv } from '../../../../src/core/experience/dream-env';
import { predictedOutcome } from '../../../../src/core/experience/types';
import { DEFAULT_FORMAT_OPTIONS, encodeAnswer } from '../../../../src/core/experience/learned/format';
import {
  decodeModelFiles,
  encodeModelFiles,
  ModelFileError,
  type ModelManifest,
} from '../../../../src/core/experience/learned/model-file';
import { groupEpisodes } from '../../../../src/core/experience/learned/sft-data';
import { Tokenizer } from '../../../../src/core/experience/learned/tokenizer';
import {
  DEFAULT_ENSEMBLE_SIZE,
  fitHeadFor,
  fitVerdictHead,
  judgeStep,
  pessimistic,
  verdictExamples,
  verdictFeatures,
  verdictProbability,
  outcomeFeatureNames,
  type VerdictExample,
  type VerdictHead,
} from '../../../../src/core/experience/learned/verdict';
import { learnedTrainOptions, trainLearnedModel } from '../../../../src/core/experience/learned/train-model';
import { bufferFromTrajectories } from '../../../../src/core/experience/seed-buffer';
import { trajectoryToTransitions } from '../../../../src/core/buffer/transitions';
import type { Trajectory } from '../../../../src/core/types';
import { pastStep, TINY_NETWORK, tinyNetwork } from './fixtures';
import { emptyTrainingRecord } from './tiny-model-files';

const ENV = 'webshop-lite-v0';
const card = builtInDomainCard(ENV)!;
const definition = getEnvDefinition(ENV);

async function play(policy: string, options: NoisyExpertOptions, seeds: number[]): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for (const seed of seeds)
    out.push(
      await rolloutEpisode(makeEnv(ENV), makeBaselinePolicy(policy, options), {
        seed,
        task: definition.generateTask(seed, [0, 0.5, 1][seed % 3]),
      }),
    );
  return out;
}

/** The terminal steps of trajectories, as the head sees them (last 4 valid actions shown). */
function examplesOf(trajectories: Trajectory[]): VerdictExample[] {
  return verdictExamples(
    groupEpisodes(
      trajectories.flatMap((t) => trajectoryToTransitions(t, { source: 'offline', createdAt: 0 }).transitions),
    ),
    4,
  );
}

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
let training: VerdictExample[];
let expertEnds: VerdictExample[];
let hastyEnds: VerdictExample[];

beforeAll(async () => {
  expect((await initBackend('wasm')).backend).toBe('wasm');
  // Like the shipped datasets: expert, noisy and random play.
  training = examplesOf([
    ...(await play('expert', {}, range(100, 30))),
    ...(await play('noisy-expert', { epsilon: 0.3 }, range(200, 30))),
    ...(await play('random', {}, range(300, 40))),
  ]);
  expertEnds = examplesOf(await play('expert', {}, range(1e9, 20)));
  // The exploit a dream-trained agent finds: buy right after opening the product.
  hastyEnds = examplesOf(await play('noisy-expert', { epsilon: 0, finishEarly: 1 }, range(1e9 + 100, 40)));
}, 120_000);

describe('verdict head', () => {
  it('sees an option never chosen, and none once the expert has chosen it', () => {
    expect(expertEnds.length).toBe(20);
    // Almost always: an attribute word can also name another option ("loose leaf" beside the option "loose").
    expect(expertEnds.filter((e) => verdictFeatures(card, e.input)[0] === 0).length).toBeGreaterThanOrEqual(18);
    const pendingFailures = hastyEnds.filter((e) => !e.success && verdictFeatures(card, e.input)[0] > 0);
    expect(pendingFailures.length).toBeGreaterThan(hastyEnds.length / 3);
    for (const e of hastyEnds.filter((h) => h.success)) expect(verdictFeatures(card, e.input)[0]).toBe(0);
  });

  it('fits deterministically and judges the hasty buys that no training episode made', () => {
    const head = fitVerdictHead(card, training)!;
    expect(head).not.toBeNull();
    expect(head.features).toEqual(outcomeFeatureNames('webshop-lite-v0'));
    expect(fitVerdictHead(card, training)).toEqual(head);
    expect(head.weights[0]).toBeLessThan(0); // an open option speaks against success
    const right = hastyEnds.filter(
      (e) => verdictProbability(head, verdictFeatures(card, e.input)) >= 0.5 === e.success,
    ).length;
    expect(right / hastyEnds.length).toBeGreaterThan(0.9);
    expect(hastyEnds.some((e) => !e.success)).toBe(true);
  });

  it('judges the price of what is bought by the listing it was chosen from, where the shown history has it', () => {
    const listing =
      'Page 1 (Total results: 50) [SEP] Next > [SEP] B0ABC12345 [SEP] Linen Sofa [SEP] $50.00 [SEP] B0DEF67890 [SEP] Velvet Sofa [SEP] $900.00';
    const item =
      'Back to Search [SEP] < Prev [SEP] Linen Sofa [SEP] Price: $900.00 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now';
    const input = {
      instruction: 'i need a linen sofa, and price lower than 100.00 dollars',
      history: ['search[linen sofa]', 'click[b0abc12345]'],
      historyPages: ['WebShop [SEP] Search', listing],
      state: { text: item, admissible: ['click[buy now]'] },
      action: 'click[buy now]',
    };
    const over = (x: typeof input) =>
      verdictFeatures(card, x)[outcomeFeatureNames('webshop-lite-v0').indexOf('over_chosen')];
    // Listed at $50 when it was chosen: not over the bound, whatever price the next page shows.
    expect(over(input)).toBe(0);
    // The other listing, at $900, is over it.
    expect(over({ ...input, history: ['search[linen sofa]', 'click[b0def67890]'] })).toBe(1);
    // Without the pages (or a click that names nothing listed), the state's own price decides.
    expect(over({ ...input, historyPages: undefined as unknown as string[] })).toBe(1);
    expect(over({ ...input, history: ['search[linen sofa]', 'click[b0zzz00000]'] })).toBe(1);
  });

  it('is not fitted from one outcome alone', () => {
    expect(
      fitVerdictHead(
        card,
        training.filter((e) => e.success),
      ),
    ).toBeNull();
    expect(
      fitVerdictHead(card, [...training.filter((e) => e.success), ...training.filter((e) => !e.success).slice(0, 4)]),
    ).toBeNull();
  });

  it("is fitted by training on the training split's real endings, unless turned off", async () => {
    const trajectories = [
      ...(await play('expert', {}, range(400, 8))),
      ...(await play('noisy-expert', { epsilon: 0, finishEarly: 1 }, range(500, 10))),
    ];
    const options = (verdictHead: boolean) =>
      learnedTrainOptions({
        name: 'tiny',
        validationShare: 0.2,
        verdictHead,
        network: TINY_NETWORK,
        fit: { epochs: 1, batchSize: 8, warmupSteps: 2, seed: 3 },
      });
    const buffer = await bufferFromTrajectories(trajectories);
    const result = await trainLearnedModel(buffer, ENV, card, options(true));
    const expected = fitVerdictHead(
      card,
      verdictExamples(result.data.trainEpisodes, DEFAULT_FORMAT_OPTIONS.historyLength),
    );
    expect(expected).not.toBeNull();
    expect(result.data.trainEpisodes.length).toBeLessThan(trajectories.length);
    expect({ ...result.parsed.verdict!, members: expected!.members }).toEqual(expected);
    expect(result.parsed.verdict!.members).toHaveLength(DEFAULT_ENSEMBLE_SIZE);
    result.network.dispose();
    const without = await trainLearnedModel(buffer, ENV, card, options(false));
    expect(without.parsed.verdict).toBeUndefined();
    without.network.dispose();
    await buffer.store.close();
  }, 120_000);

  it('round-trips in model.json and is refused by name when damaged', async () => {
    const head = fitVerdictHead(card, training)!;
    const tokenizer = Tokenizer.learn(['buy now thank you'], { minCount: 1 });
    const net = tinyNetwork(tokenizer, 1, { maxContext: 768, maxAnswer: 384 });
    const weights = await net.getWeights();
    const files = encodeModelFiles(
      {
        name: 'v',
        env: ENV,
        card,
        network: net.config,
        formatOptions: DEFAULT_FORMAT_OPTIONS,
        tokenizer: tokenizer.toJSON(),
        training: emptyTrainingRecord(),
      },
      weights,
    );
    const { manifest } = decodeModelFiles(files.manifest, files.weights);
    expect(manifest.verdict).toBeUndefined();
    const withVerdict = (m: ModelManifest, verdict: VerdictHead | null) => {
      const { format: _f, weights: _w, weightsFile: _wf, verdict: _v, manifestCrc32: _c, ...base } = m;
      return encodeModelFiles({ ...base, ...(verdict ? { verdict } : {}) }, weights).manifest;
    };
    const withHead = withVerdict(manifest, head);
    expect(decodeModelFiles(withHead, files.weights).manifest.verdict).toEqual(head);
    expect(withVerdict(decodeModelFiles(withHead, files.weights).manifest, null)).toBe(files.manifest);
    // A head of features this build no longer has (sealed as its writer did), and a damaged head.
    const renamed = withVerdict(manifest, { ...head, features: ['price', ...head.features.slice(1)] });
    expect(() => decodeModelFiles(renamed, files.weights)).toThrow(ModelFileError);
    expect(() => decodeModelFiles(renamed, files.weights)).toThrow(
      /verdict head reads features \[price,unmatched,over_chosen\]/,
    );
    const broken = withVerdict(manifest, { ...head, weights: [1] });
    expect(() => decodeModelFiles(broken, files.weights)).toThrow(/verdict head's weights are missing/);
    net.dispose();
  });

  it("replaces the generator's reward at an episode's end, and only there", async () => {
    const tokenizer = Tokenizer.learn(
      hastyEnds.flatMap((e) => [
        e.input.instruction,
        e.input.state.text,
        ...e.input.state.admissible,
        'thank you for shopping with us',
      ]),
      { minCount: 1 },
    );
    // Decoders that always write "a valid end, reward 1" (what the generator says of every buy).
    const written = encodeAnswer(
      tokenizer,
      { valid: true, terminated: true, reward: 1, observation: 'thank you for shopping with us', admissible: [] },
      DEFAULT_FORMAT_OPTIONS,
    );
    const fake: BatchDecoder = async ({ contexts }) =>
      contexts.map(() => ({
        tokens: { ids: written.ids, spaces: written.spaces, cases: written.cases },
        steps: written.ids.length,
      }));
    const head: VerdictHead = fitVerdictHead(card, training)!;
    const failures = hastyEnds.filter((e) => !e.success && verdictFeatures(card, e.input)[0] > 0).slice(0, 2);
    const successes = expertEnds.filter((e) => verdictFeatures(card, e.input)[0] === 0).slice(0, 2);
    // Four distinct requests (identical ones are decoded once), so the batch is split between the two decoders.
    const ask = async (model: LearnedExperienceModel) =>
      Promise.all(
        [failures[0], successes[0], failures[1], successes[1]].map((e) =>
          model.next({
            task: { ...definition.generateTask(1e9, 0), instruction: e.input.instruction },
            history: e.input.history.map(pastStep),
            state: {
              ...e.input.state,
              admissible: e.input.state.admissible.slice(),
              task: definition.generateTask(1e9, 0),
            },
            action: e.input.action,
          }),
        ),
      );
    const manifest = { name: 'fake', env: ENV, formatOptions: DEFAULT_FORMAT_OPTIONS };
    const judged = new LearnedExperienceModel(
      tinyNetwork(tokenizer, 1, { maxContext: 768, maxAnswer: 384 }),
      tokenizer,
      card,
      { ...manifest, verdict: head },
      { decoders: [fake, fake], transitionCache: false },
    );
    const answers = await ask(judged);
    expect(answers.map((p) => p.invalidReason ?? null)).toEqual([null, null, null, null]);
    // The reward is the head's p(success), the outcome it expects; the outcome is p ≥ 0.5.
    expect(answers.map((p) => [p.terminated, p.success, predictedOutcome(p)])).toEqual([
      [true, false, 0],
      [true, true, 1],
      [true, false, 0],
      [true, true, 1],
    ]);
    answers.forEach((p) => {
      const probability = Number(/p\(success\) (\d\.\d+)/.exec(p.notes.join())![1]);
      expect(p.reward).toBeCloseTo(probability, 3);
      expect(p.reward > 0 && p.reward < 1).toBe(true);
    });
    const bad = answers[0];
    expect(bad.notes.join()).toMatch(
      /verdict head: p\(success\) 0\.\d+ from pending [1-3], .*\(the generator wrote reward 1\)/,
    );
    expect(judged.label).toMatch(/verdict head/);
    // A dream ends the episode with the head's outcome as its success, and the graded reward as its return.
    // (Four dreams step together, so their batch goes to the two decoders.)
    const dreams = [0, 1, 2, 3].map(() => makeDreamEnv(judged, { envId: ENV }));
    const firsts = await Promise.all(
      dreams.map((d, i) => d.reset({ seed: 1e9 + i, task: definition.generateTask(1e9 + i, 0) })),
    );
    for (const ended of await Promise.all(dreams.map((d, i) => d.step(firsts[i].admissible[0])))) {
      expect(ended.terminated).toBe(true);
      expect(ended.reward > 0 && ended.reward < 1).toBe(true);
      expect(ended.info.success).toBe(ended.reward >= 0.5);
    }
    // Thresholded, as before: 0 or 1.
    const thresholded = new LearnedExperienceModel(
      tinyNetwork(tokenizer, 1, { maxContext: 768, maxAnswer: 384 }),
      tokenizer,
      card,
      { ...manifest, verdict: head },
      { decoders: [fake, fake], transitionCache: false, verdictReward: 'outcome' },
    );
    expect((await ask(thresholded)).map((p) => [p.reward, p.success])).toEqual([
      [0, undefined],
      [1, undefined],
      [0, undefined],
      [1, undefined],
    ]);
    thresholded.dispose();
    const generator = new LearnedExperienceModel(
      tinyNetwork(tokenizer, 1, { maxContext: 768, maxAnswer: 384 }),
      tokenizer,
      card,
      { ...manifest, verdict: head },
      { decoders: [fake, fake], verdictHead: false, transitionCache: false },
    );
    expect((await ask(generator)).map((p) => p.reward)).toEqual([1, 1, 1, 1]);
    expect(generator.label).not.toMatch(/verdict head/);
    judged.dispose();
    generator.dispose();
  });
});

describe('the verdict ensemble', () => {
  const card = builtInDomainCard('webshop-lite-v0')!;
  const input = {
    instruction: 'i want a red shirt under 30.00 dollars',
    history: ['search[red shirt]', 'click[b0abc12345]'],
    state: { text: 'red shirt price: $12.00 [buy now]', admissible: ['click[buy now]'] },
    action: 'click[buy now]',
  };

  it('pays a success only where every member grants it, and reports how far apart they were', () => {
    // A hand-made disagreement: three members, one of them sure the step fails.
    const members = [
      { weights: [0, 0, 0], bias: 3 },
      { weights: [0, 0, 0], bias: 2 },
      { weights: [0, 0, 0], bias: -2 },
    ];
    const head: VerdictHead = {
      features: outcomeFeatureNames('webshop-lite-v0'),
      weights: [0, 0, 0],
      bias: 3,
      fittedOn: { successes: 5, failures: 5, balancedAccuracy: 1 },
      members,
    };
    const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
    const judged = judgeStep(card, head, input);
    expect(judged.members.map((p) => +p.toFixed(6))).toEqual([3, 2, -2].map((z) => +sigmoid(z).toFixed(6)));
    expect(judged.p).toBeCloseTo(sigmoid(-2), 12);
    expect(judged.p).toBeLessThan(0.5);
    expect(judged.disagreement).toBeCloseTo(sigmoid(3) - sigmoid(-2), 12);
    // mean − λ·std, clamped: λ = 0 is the mean (a success), λ = 1 is not.
    const mean = (sigmoid(3) + sigmoid(2) + sigmoid(-2)) / 3;
    expect(judgeStep(card, head, input, 0).p).toBeCloseTo(mean, 12);
    expect(judgeStep(card, head, input, 1).p).toBeLessThan(0.5);
    expect(pessimistic([0.9, 0.9, 0.9], 5)).toBeCloseTo(0.9, 12);
    expect(pessimistic([0.1, 0.9], 10)).toBe(0);
    // Agreeing members: the ensemble changes nothing.
    const agreed = { ...head, members: [members[0], members[0]] };
    expect(judgeStep(card, agreed, input)).toMatchObject({ p: sigmoid(3), disagreement: 0 });
  });

  it('fits its members on seeded bootstrap resamples: the same seed the same members, another seed others', async () => {
    const play = async (policy: string, seeds: number[]) =>
      Promise.all(
        seeds.map((seed) =>
          rolloutEpisode(makeEnv('webshop-lite-v0'), makeBaselinePolicy(policy), {
            seed,
            task: getEnvDefinition('webshop-lite-v0').generateTask(seed, 0),
          }),
        ),
      );
    const trajectories = [...(await play('expert', range(100, 30))), ...(await play('random', range(300, 40)))];
    const episodes = groupEpisodes(
      trajectories.flatMap((t) => trajectoryToTransitions(t, { source: 'offline', createdAt: 0 }).transitions),
    );
    const a = fitHeadFor(card, episodes, 4, { seed: 1 })!;
    expect(a.members).toHaveLength(DEFAULT_ENSEMBLE_SIZE);
    expect(fitHeadFor(card, episodes, 4, { seed: 1 })).toEqual(a);
    expect(fitHeadFor(card, episodes, 4, { seed: 2 })!.members).not.toEqual(a.members);
    expect(new Set(a.members.map((m) => m.bias.toFixed(6))).size).toBeGreaterThan(1);
    expect(fitHeadFor(card, episodes, 4, { size: 1 })!.members).toEqual([{ weights: a.weights, bias: a.bias }]);
  }, 60_000);
});

describe("an env's own verdict features", () => {
  it('come from its definition: WebShop adds its price rule, household and imported domains have none', () => {
    expect(outcomeFeatureNames('webshop-lite-v0')).toEqual(['pending', 'unmatched', 'over_chosen']);
    expect(outcomeFeatureNames('household-v0')).toEqual(['pending', 'unmatched']);
    expect(outcomeFeatureNames('myapp')).toEqual(['pending', 'unmatched']);
    const input = {
      instruction: 'i want a red shirt under 30.00 dollars',
      history: [],
      state: { text: 'You are in the middle of a room.', admissible: ['look'] },
      action: 'look',
    };
    expect(verdictFeatures(builtInDomainCard('household-v0')!, input)).toHaveLength(2);
    // The generic verdict's code holds no WebShop rule: the price rule and the ASIN shape live in envs/webshop.
    const source = readFileSync('src/core/experience/learned/verdict.ts', 'utf8');
    expect(source).not.toMatch(/ID_LIKE|over_chosen|asin|\bprice\b/i);
  });
});
