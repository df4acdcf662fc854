/**
 * The goal head (verdict.ts): where only the goal ends an episode (household), the offline data
 * holds goal-like steps that do not end one (decoy experts), and a head fitted on them decides,
 * before anything is decoded, which dreamed steps end an episode.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../../src/core/tfjs/backend';
import { getEnvDefinition, makeEnv } from '../../../../src/core/envs/registry';
import { goalHolds, taskSpecOf } from '../../../../src/core/envs/household';
import { World } from '../../../../src/core/envs/household/world';
import { builtInDomainCard } from '../../../../src/core/experience/domain-card';
import { makeBaselinePolicy, rolloutEpisode } from '../../../../src/core/data/rollout';
import { LearnedExperienceModel, type BatchDecoder } from '../../../../src/core/experience/learned/learned-model';
import {
  decodeLimits,
  DEFAULT_FORMAT_OPTIONS,
  encodeAnswer,
  RowGrammar,
} from '../../../../src/core/experience/learned/format';
import { decodeModelFiles, encodeModelFiles } from '../../../../src/core/experience/learned/model-file';
import { groupEpisodes, type RecordedEpisode } from '../../../../src/core/experience/learned/sft-data';
import { Tokenizer } from '../../../../src/core/experience/learned/tokenizer';
import {
  DEFAULT_ENSEMBLE_SIZE,
  fitGoalHead,
  fitsItsSlots,
  fitHeadFor,
  goalFeatures,
  goalProbability,
  ruledOut,
  verbOf,
  verdictHeadProblem,
  verdictKind,
  verdictProbability,
  type VerbRegression,
  type VerdictHead,
  type VerdictInput,
} from '../../../../src/core/experience/learned/verdict';
import { trajectoryToTransitions } from '../../../../src/core/buffer/transitions';
import { Rng } from '../../../../src/core/rng';
import type { Trajectory } from '../../../../src/core/types';
import { pastStep, tinyNetwork } from './fixtures';
import { emptyTrainingRecord } from './tiny-model-files';

const ENV = 'household-v0';
const card = builtInDomainCard(ENV)!;
const definition = getEnvDefinition(ENV);
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

async function play(envId: string, policy: string, seeds: number[], level = 0): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  const def = getEnvDefinition(envId);
  for (const seed of seeds)
    out.push(
      await rolloutEpisode(makeEnv(envId), makeBaselinePolicy(policy), { seed, task: def.generateTask(seed, level) }),
    );
  return out;
}

function recorded(trajectories: Trajectory[]): RecordedEpisode[] {
  return groupEpisodes(
    trajectories.flatMap((t) => trajectoryToTransitions(t, { source: 'offline', createdAt: 0 }).transitions),
  );
}

/** Steps of trajectories as a head reads them, each with whether it ended the episode with success. */
function goalLikeSteps(trajectories: Trajectory[]): { input: VerdictInput; ends: boolean; two: boolean }[] {
  return trajectories.flatMap((t) =>
    t.steps.flatMap((s, i) => {
      if (!s.valid || !/^(put|use) /.test(s.action)) return [];
      const shown = t.steps
        .slice(0, i)
        .filter((p) => p.valid)
        .slice(-4);
      const input = {
        instruction: t.task.instruction,
        history: shown.map((p) => p.action),
        episode: t.steps.slice(0, i).flatMap((p) => (p.valid ? [p.action] : [])),
        state: { text: s.observation, admissible: s.admissible },
        action: s.action,
      };
      return [{ input, ends: s.terminated && s.reward >= 1, two: /two/.test(t.task.instruction) }];
    }),
  );
}

/** A head whose verbs also name the given words (the hand-made examples' things, whatever the played rooms held). */
function naming(base: VerdictHead, words: Record<string, string[]>): VerdictHead {
  const byVerb = Object.fromEntries(
    Object.entries(base.byVerb!).map(([verb, r]) => [verb, { ...r, words: [...r.words, ...(words[verb] ?? [])] }]),
  );
  return { ...base, byVerb };
}
const LAPTOP_ROOM = ['laptop', 'sidetable', 'desk', 'desklamp'];

let household: Trajectory[];
let decoys: Trajectory[];
let head: VerdictHead;

beforeAll(async () => {
  expect((await initBackend('wasm')).backend).toBe('wasm');
  decoys = await play(ENV, 'decoy-expert', range(350_000, 40), 0.5);
  household = [...(await play(ENV, 'expert', range(100_000, 40), 0.5)), ...decoys];
  head = fitGoalHead(recorded(household), 4)!;
}, 120_000);

describe('decoy data', () => {
  it('holds goal-like steps that do not end the episode, then the real finish', () => {
    const missed = decoys.filter((t) =>
      t.steps.some((s) => /^(put|use) /.test(s.action) && s.valid && !s.terminated && s.reward === 0),
    );
    expect(missed.length).toBeGreaterThanOrEqual(36);
    // The expert takes over after the decoy: most still succeed, and no decoy step ends anything.
    expect(decoys.filter((t) => t.result.success).length).toBeGreaterThanOrEqual(30);
    for (const t of decoys) expect(t.steps.slice(0, -1).every((s) => !s.terminated && !s.truncated)).toBe(true);
  });

  it('plays a decoy of the same world whose goal differs and is reached without the real one', () => {
    const task = definition.generateTask(350_000, 0);
    const decoy = definition.decoyTask!(task, Rng.fromSeed(1, 'decoy'))!;
    const [real, other] = [taskSpecOf(task), taskSpecOf(decoy)];
    expect(other.world).toEqual(real.world);
    expect(other.goal).not.toEqual(real.goal);
    expect(decoy.instruction).not.toBe(task.instruction);
    const world = new World(real.world);
    expect(goalHolds(world, other.goal)).toBe(false);
    expect(definition.decoyTask!(task, Rng.fromSeed(1, 'decoy'))).toEqual(decoy);
  });
});

describe('goal features', () => {
  const vocabulary = new Set(['laptop', 'pencil', 'sidetable', 'desk', 'apple', 'fridge', 'sinkbasin', 'in', 'on']);
  const at = (instruction: string, history: string[], action: string) =>
    goalFeatures(vocabulary, { instruction, history, state: { text: '', admissible: [] }, action });

  it('count what the action leaves out, what it adds, and what was never touched', () => {
    const put = 'put some laptop on sidetable.';
    expect(at(put, ['take laptop 1 from desk 1', 'go to sidetable 1'], 'put laptop 1 in/on sidetable 1')).toEqual([
      0, 1, 0,
    ]);
    // The right object in a wrong place: the place left out, another one added.
    expect(at(put, ['take laptop 1 from desk 1', 'go to desk 2'], 'put laptop 1 in/on desk 2')).toEqual([1, 2, 1]);
    // A wrong object in the right place.
    expect(at(put, ['take pencil 1 from desk 1', 'go to sidetable 1'], 'put pencil 1 in/on sidetable 1')).toEqual([
      1, 2, 1,
    ]);
    // Plurals name the same thing; numbers are never extra.
    expect(at('put two apples in fridge.', ['take apple 2 from desk 1'], 'put apple 2 in/on fridge 1')).toEqual([
      0, 1, 0,
    ]);
  });

  it('read the verb first: a verb that never ended an episode never ends one', () => {
    expect(verbOf('put apple 1 in/on fridge 1')).toBe('put');
    expect(verbOf('click[Buy Now]')).toBe('click');
    expect(verdictKind(head)).toBe('goal');
    expect(Object.keys(head.byVerb!)).toEqual(expect.arrayContaining(['put', 'use']));
    const known = naming(head, { put: LAPTOP_ROOM });
    const input = (action: string): VerdictInput => ({
      instruction: 'put some laptop on sidetable.',
      history: ['take laptop 1 from desk 1', 'go to sidetable 1'],
      state: { text: '', admissible: [] },
      action,
    });
    expect(goalProbability(known, input('examine laptop 1'))).toBe(0);
    expect(goalProbability(known, input('put laptop 1 in/on sidetable 1'))).toBeGreaterThan(0.5);
    expect(goalProbability(known, input('put laptop 1 in/on desk 1'))).toBeLessThan(0.5);
  });

  it('never end with a word the verb never names in the data, whatever the regression says', () => {
    const ended = goalLikeSteps(household).find((s) => s.ends && verbOf(s.input.action) === 'use')!;
    expect(ended.input.action).toMatch(/^use \w*lamp \d+$/); // what use names in the data: lamps
    const object = /(?:look at|examine) (?:a |some |the )?(\w+)/.exec(ended.input.instruction)![1];
    expect(head.byVerb!.use.words).not.toContain(object);
    const misuse = { ...ended.input, action: `use ${object} 1` };
    expect(goalProbability(head, ended.input)).toBeGreaterThan(0.5);
    // The rule, not the regression, says no: with the word known, the regression's own chance stands.
    const regression = verdictProbability(head.byVerb!.use, goalFeatures(new Set(head.vocabulary), misuse));
    const useSlot = [[...head.slots!['use #'][0], object]];
    const known = { ...naming(head, { use: [object] }), slots: { ...head.slots!, 'use #': useSlot } };
    expect(goalProbability(known, misuse)).toBeCloseTo(regression, 9);
    expect(regression).toBeGreaterThan(0.01);
    expect(goalProbability(head, misuse)).toBe(0);
  });

  it("of the shipped model: a put of a thing the data only ever took still ends, a lamp's use of a card never", () => {
    const shipped = JSON.parse(readFileSync('public/models/household-v0/model.json', 'utf8')).verdict as VerdictHead;
    const step = (instruction: string, history: string[], action: string): VerdictInput => ({
      instruction,
      history,
      state: { text: '', admissible: [] },
      action,
    });
    const plunger = ['go to shelf 2', 'take plunger 2 from shelf 2', 'go to cabinet 6', 'open cabinet 6'];
    // The audit's expert step (seed 1000000352) that the verb's own words alone had vetoed.
    expect(
      goalProbability(shipped, step('put a plunger in cabinet.', plunger, 'put plunger 2 in/on cabinet 6')),
    ).toBeGreaterThan(0.5);
    const card = ['go to dresser 1', 'take creditcard 1 from dresser 1', 'go to dresser 2'];
    expect(goalProbability(shipped, step('put some creditcard on dresser.', card, 'use creditcard 1'))).toBe(0);
  });

  it('are stale without a verb word list: the file asks for a refit', () => {
    const { words: _gone, ...use } = head.byVerb!.use;
    const stale = { ...head, byVerb: { ...head.byVerb!, use: use as VerbRegression } };
    expect(verdictHeadProblem(head, ENV)).toBeNull();
    expect(verdictHeadProblem(stale, ENV)).toMatch(/a verb.s words are missing/);
  });
});

describe("the goal head's rules from the data", () => {
  const step = (history: string[], action: string): VerdictInput => ({
    instruction: 'put some laptop on sidetable.',
    history,
    state: { text: '', admissible: [] },
    action,
  });

  it("rule out a garble of an action's shape, or a known kind in a slot the data never fills", () => {
    const known = naming(head, { put: LAPTOP_ROOM });
    expect(Object.keys(known.slots!)).toEqual(expect.arrayContaining(['take # from #', 'put # in/on #']));
    const garbled = { ...step(['take laptop 1 from desk 1'], 'put laptop 1 in/on sidetable laptop 1'), episode: [] };
    expect(ruledOut(known, garbled)).toBe('a shape or slot the data never shows');
    const object = known.slots!['take # from #'][0].find((kind) => !known.slots!['take # from #'][1].includes(kind))!;
    expect(fitsItsSlots(known, `take ${object} 1 from ${object} 2`)).toBe(false);
    expect(fitsItsSlots(known, `take ${object} 1 from sidetable 1`)).toBe(true);
  });

  it("no longer restate household physics: a put-back is the halt's to catch, not a rule", () => {
    const put = 'put laptop 1 in/on sidetable 1';
    const known = naming(head, { put: LAPTOP_ROOM });
    const back = step(['go to sidetable 1', 'take laptop 1 from sidetable 1'], put);
    expect(ruledOut(known, { ...back, episode: back.history })).toBeNull();
    expect(goalProbability(known, step(['take laptop 1 from desk 1', 'go to sidetable 1'], put))).toBeGreaterThan(0.5);
  });

  it('never veto how a real episode reached its goal, at any difficulty', async () => {
    const real = goalLikeSteps([
      ...(await play(ENV, 'expert', range(2e6, 30), 1)),
      ...(await play(ENV, 'random', range(2e6 + 100, 30), 0)),
      ...household,
    ]);
    expect(real.filter((s) => s.ends).length).toBeGreaterThanOrEqual(60);
    const vetoed = real.filter((s) => s.ends && ruledOut(head, s.input) !== null);
    expect(vetoed.map((s) => `${s.input.action}: ${ruledOut(head, s.input)}`)).toEqual([]);
  }, 60_000);
});

describe('goal head', () => {
  it('tells the goal from the decoys on fresh episodes, and only there', async () => {
    const fresh = goalLikeSteps([
      ...(await play(ENV, 'expert', range(1e9, 30), 0.5)),
      ...(await play(ENV, 'decoy-expert', range(1e9 + 100, 30), 0.5)),
    ]).filter((s) => !s.two); // two-object tasks: the first put looks like the last
    const right = (ends: boolean) =>
      fresh.filter((s) => s.ends === ends && goalProbability(head, s.input) >= 0.5 === ends);
    const [goals, misses] = [fresh.filter((s) => s.ends).length, fresh.filter((s) => !s.ends).length];
    expect(goals).toBeGreaterThanOrEqual(25);
    expect(misses).toBeGreaterThanOrEqual(20);
    expect(right(true).length / goals).toBeGreaterThanOrEqual(0.9);
    expect(right(false).length / misses).toBeGreaterThanOrEqual(0.85);
  }, 60_000);

  it('is what household data gets, and webshop keeps its outcome head', async () => {
    const fitted = fitHeadFor(card, recorded(household), 4)!;
    // The same head, with an ensemble of bootstrap members beside it.
    expect({ ...fitted, members: head.members }).toEqual(head);
    expect(fitted.members).toHaveLength(DEFAULT_ENSEMBLE_SIZE);
    const shop = [
      ...(await play('webshop-lite-v0', 'expert', range(100, 20))),
      ...(await play('webshop-lite-v0', 'random', range(300, 30))),
    ];
    const shopCard = builtInDomainCard('webshop-lite-v0')!;
    const shopHead = fitHeadFor(shopCard, recorded(shop), 4);
    expect(shopHead && verdictKind(shopHead)).toBe('outcome');
    // A few failed endings are too few to grade, yet show that failures end episodes: no goal head.
    const failed = shop.filter((t) => t.steps.at(-1)!.terminated && !t.result.success);
    expect(failed.length).toBeGreaterThanOrEqual(2);
    const experts = shop.filter((t) => t.source === 'expert');
    expect(fitHeadFor(shopCard, recorded([...experts, ...failed.slice(0, 2)]), 4)).toBeNull();
  }, 60_000);

  it('round-trips in model.json', async () => {
    const tokenizer = Tokenizer.learn(['put laptop 1 in/on sidetable 1'], { minCount: 1 });
    const net = tinyNetwork(tokenizer, 1, { maxContext: 768, maxAnswer: 384 });
    const files = encodeModelFiles(
      {
        name: 'g',
        env: ENV,
        card,
        network: net.config,
        formatOptions: DEFAULT_FORMAT_OPTIONS,
        tokenizer: tokenizer.toJSON(),
        training: emptyTrainingRecord(),
        verdict: head,
      },
      await net.getWeights(),
    );
    expect(decodeModelFiles(files.manifest, files.weights).manifest.verdict).toEqual(head);
    const { byVerb: _gone, ...damaged } = head;
    const broken = encodeModelFiles(
      { ...decodeModelFiles(files.manifest, files.weights).manifest, verdict: damaged } as never,
      await net.getWeights(),
    );
    expect(() => decodeModelFiles(broken.manifest, broken.weights)).toThrow(/verdict head's weights are missing/);
    net.dispose();
  });
});

describe('a dream with a goal head', () => {
  it('writes the terminated token the head decided, for every step', () => {
    const tokenizer = Tokenizer.learn(['a b'], { minCount: 1 });
    const limits = decodeLimits(DEFAULT_FORMAT_OPTIONS);
    for (const [kind, want] of [
      ['next-ending', '<yes>'],
      ['next-running', '<no>'],
    ] as const) {
      const grammar = new RowGrammar(kind, limits, tokenizer);
      expect(grammar.next()).toHaveProperty('allowed'); // validity stays the generator's
      grammar.accept(tokenizer.special('<yes>'));
      expect(grammar.next()).toEqual({ forced: tokenizer.special(want) });
    }
    const free = new RowGrammar('next', limits, tokenizer);
    free.accept(tokenizer.special('<yes>'));
    expect(free.next()).toHaveProperty('allowed');
  });

  it('ends the goal, runs on after a wrong put whatever the generator says, and rewards only the goal', async () => {
    const steps = goalLikeSteps(decoys);
    const goals = steps.filter((s) => s.ends && s.input.action.startsWith('put')).slice(0, 2);
    const misses = steps.filter((s) => !s.ends && s.input.action.startsWith('put')).slice(0, 2);
    const [goal, miss] = [goals[0], misses[0]];
    const tokenizer = Tokenizer.learn(
      [...goals, ...misses].flatMap((s) => [
        s.input.instruction,
        s.input.state.text,
        ...s.input.state.admissible,
        s.input.action,
      ]),
      { minCount: 1 },
    );
    const kinds: string[] = [];
    // The generator's answer is irrelevant to the ending: the fake writes what the grammar forces.
    const fake: BatchDecoder = async (batch) =>
      batch.kinds.map((kind) => {
        kinds.push(kind);
        const terminated = kind === 'next-ending';
        const written = encodeAnswer(
          tokenizer,
          {
            valid: true,
            terminated,
            reward: terminated ? 1 : 0,
            observation: 'you put it',
            admissible: terminated ? [] : ['examine desk 1'],
          },
          DEFAULT_FORMAT_OPTIONS,
        );
        return {
          tokens: { ids: written.ids, spaces: written.spaces, cases: written.cases },
          steps: written.ids.length,
        };
      });
    const model = new LearnedExperienceModel(
      tinyNetwork(tokenizer, 1, { maxContext: 768, maxAnswer: 384 }),
      tokenizer,
      card,
      { name: 'fake', env: ENV, formatOptions: DEFAULT_FORMAT_OPTIONS, verdict: head },
      { decoders: [fake, fake], transitionCache: false },
    );
    const task = definition.generateTask(1, 0);
    const ask = (s: typeof goal) =>
      model.next({
        task: { ...task, instruction: s.input.instruction },
        history: s.input.history.map(pastStep),
        state: { ...s.input.state, admissible: s.input.state.admissible.slice(), task },
        action: s.input.action,
      });
    // Four requests together, so the batch goes to the (fake) decoders.
    const [ended, ran, ...others] = await Promise.all([goal, miss, goals[1], misses[1]].map(ask));
    expect(kinds.sort()).toEqual(['next-ending', 'next-ending', 'next-running', 'next-running']);
    expect(others.map((p) => p.terminated)).toEqual([true, false]);
    expect([ended.terminated, ended.success, ran.terminated, ran.reward]).toEqual([true, true, false, 0]);
    expect(ended.reward).toBeCloseTo(goalProbability(head, goal.input), 6);
    expect([ran.valid, ran.invalidReason]).toEqual([true, undefined]);
    expect(ran.notes.join()).toMatch(/goal head: p\(ends with success\) 0\.\d+ from missing/);
    expect(model.label).toMatch(/goal head/);
    model.dispose();
  });
});
