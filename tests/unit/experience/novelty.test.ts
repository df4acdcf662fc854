/**
 * The halt (novelty.ts, halting-model.ts): a dreamed step unlike every real one ends the episode
 * with no success; held-out real steps halt at about the calibrated rate. Shown on household's
 * real rooms and on a third domain made here, with its own verbs and things, that no code knows.
 */
import { describe, expect, it } from 'vitest';
import { getEnvDefinition, makeEnv } from '../../../src/core/envs/registry';
import { makeBaselinePolicy, rolloutEpisode } from '../../../src/core/data/rollout';
import { DreamEnv } from '../../../src/core/experience/dream-env';
import { HaltingExperienceModel } from '../../../src/core/experience/halting-model';
import { NoveltyIndex, trajectoryNoveltySteps, type NoveltyStep } from '../../../src/core/experience/novelty';
import type { DreamContext, ExperienceModel, Prediction } from '../../../src/core/experience/types';
import { Rng } from '../../../src/core/rng';
import type { Observation, Task, Trajectory } from '../../../src/core/types';

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

async function play(policy: string, seeds: number[]): Promise<Trajectory[]> {
  const definition = getEnvDefinition('household-v0');
  const out: Trajectory[] = [];
  for (const seed of seeds)
    out.push(
      await rolloutEpisode(makeEnv('household-v0'), makeBaselinePolicy(policy), {
        seed,
        task: definition.generateTask(seed, 0),
      }),
    );
  return out;
}

function heldOutRate(index: NoveltyIndex, episodes: readonly (readonly NoveltyStep[])[]): number {
  const steps = episodes.flat();
  return steps.filter((s) => index.isNovel(s)).length / steps.length;
}

describe('the halt on household', () => {
  it('fires on a put-back and on a stocked arrival, and on held-out real play at about its rate', async () => {
    const train = [...(await play('expert', range(100, 40))), ...(await play('random', range(200, 20)))];
    const index = NoveltyIndex.fromEpisodes(train.map(trajectoryNoveltySteps), { quantile: 0.99 });
    expect(index.calibration.heldOutHaltRate).toBeLessThanOrEqual(0.01);
    const heldOut = [...(await play('expert', range(1e9, 20))), ...(await play('random', range(1e9 + 50, 10)))];
    expect(heldOutRate(index, heldOut.map(trajectoryNoveltySteps))).toBeLessThanOrEqual(0.03);

    const instruction = 'put some laptop on sidetable.';
    const putBack: NoveltyStep = {
      instruction,
      earlier: ['go to sidetable 1', 'take laptop 1 from sidetable 1'],
      state: 'You pick up the laptop 1 from the sidetable 1.',
      action: 'put laptop 1 in/on sidetable 1',
      next: 'You put the laptop 1 in/on the sidetable 1.',
      terminated: true,
      success: true,
    };
    expect(index.isNovel(putBack)).toBe(true);
    const stocked: NoveltyStep = {
      instruction,
      earlier: [],
      state: 'You are in the middle of a room. Looking quickly around you, you see a desk 1, and a sidetable 1.',
      action: 'go to sidetable 1',
      next: 'You arrive at sidetable 1. On the sidetable 1, you see a laptop 1.',
      terminated: false,
      success: false,
    };
    // An arrival is a running step, held to the looser threshold of real wandering: at 0.99 it passes,
    // and the put-back that follows it is what halts; at 0.95 the arrival itself halts.
    expect(index.isNovel(stocked)).toBe(false);

    // A real room offers to take only what it shows: a dreamed offer of an unshown thing is left out.
    const arrived = {
      instruction: 'put a mug in cabinet.',
      earlier: ['go to sinkbasin 1'],
      state: 'You arrive at sinkbasin 1. On the sinkbasin 1, you see a mug 1, and a apple 2.',
    };
    const offers = ['take mug 1 from sinkbasin 1', 'take mug 2 from sinkbasin 1', 'take apple 2 from sinkbasin 1'];
    expect(index.offerable(arrived, [...offers, 'go to cabinet 1'])).toEqual([offers[0], offers[2], 'go to cabinet 1']);
    const stricter = NoveltyIndex.fromEpisodes(train.map(trajectoryNoveltySteps), { quantile: 0.95 });
    expect(stricter.isNovel(stocked)).toBe(true);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// A third domain, made here: a greenhouse with its own verbs (walk, fill, water, prune) and things.
// ---------------------------------------------------------------------------------------------

const PLANTS = ['fern', 'tulip', 'rose', 'cactus', 'ivy', 'moss'];
const BEDS = ['north', 'south', 'east', 'west'];

interface Greenhouse {
  instruction: string;
  plant: string;
  bed: string;
  beds: Record<string, string[]>;
}

function greenhouse(seed: number): Greenhouse {
  const rng = Rng.fromSeed(seed, 'greenhouse');
  const plant = rng.pick(PLANTS);
  const bed = rng.pick(BEDS);
  const others = PLANTS.filter((p) => p !== plant);
  const beds = Object.fromEntries(
    BEDS.map((b) => [b, b === bed ? [plant, rng.pick(others)] : [rng.pick(others), rng.pick(others)]]),
  );
  return { instruction: `water the ${plant} in the ${bed} bed.`, plant, bed, beds };
}

/** The greenhouse's real dynamics: the next text, and whether the episode ended in success. */
function greenhouseStep(g: Greenhouse, at: { bed: string | null; full: boolean }, action: string) {
  const [verb, what] = action.split(' ');
  if (verb === 'walk') {
    at.bed = what;
    return { next: `You are at the ${what} bed. You see a ${g.beds[what].join(' and a ')}.`, success: false };
  }
  if (verb === 'fill') {
    at.full = true;
    return { next: 'The can is full.', success: false };
  }
  if (verb === 'water' && at.full) {
    at.full = false;
    const success = what === g.plant && at.bed === g.bed;
    return { next: `You water the ${what}.${success ? ' It looks happy.' : ''}`, success };
  }
  return { next: verb === 'water' ? 'The can is empty.' : `You prune the ${what}.`, success: false };
}

function offered(g: Greenhouse, at: { bed: string | null }): string[] {
  const here = at.bed ? g.beds[at.bed] : [];
  return [...BEDS.map((b) => `walk ${b} bed`), 'fill can', ...here.flatMap((p) => [`water ${p}`, `prune ${p}`])];
}

const START = 'You are in the greenhouse. There are four beds and a can.';

/** One real episode: the expert (fill, walk, water), or a random player, for at most 8 steps. */
function greenhouseEpisode(seed: number, expert: boolean): NoveltyStep[] {
  const g = greenhouse(seed);
  const rng = Rng.fromSeed(seed, 'greenhouse-player');
  const at = { bed: null as string | null, full: false };
  const plan = ['fill can', `walk ${g.bed} bed`, `water ${g.plant}`];
  const steps: NoveltyStep[] = [];
  let state = START;
  for (let i = 0; i < 8; i++) {
    const action = expert ? plan[i] : rng.pick(offered(g, at));
    const earlier = steps.map((s) => s.action);
    const offers = offered(g, at);
    const { next, success } = greenhouseStep(g, at, action);
    steps.push({
      instruction: g.instruction,
      earlier,
      state,
      action,
      next,
      terminated: success,
      success,
      offered: offers,
    });
    if (success || (expert && i === plan.length - 1)) break;
    state = next;
  }
  return steps;
}

/** An experience model that dreams the greenhouse: real dynamics, except the exploit it is given. */
class GreenhouseDream implements ExperienceModel {
  readonly label = 'greenhouse dream';
  private readonly worlds = new Map<string, { g: Greenhouse; at: { bed: string | null; full: boolean } }>();
  constructor(private readonly exploit: (action: string) => boolean) {}

  async initial(task: Task): Promise<Observation> {
    this.worlds.set(task.id, { g: greenhouse(task.seed!), at: { bed: null, full: false } });
    return { text: START, admissible: offered(greenhouse(task.seed!), { bed: null }), task };
  }

  async next(ctx: DreamContext): Promise<Prediction> {
    const { g, at } = this.worlds.get(ctx.task.id)!;
    const real = greenhouseStep(g, at, ctx.action);
    const success = real.success || this.exploit(ctx.action);
    const next = success ? `You water the ${g.plant}. It looks happy.` : real.next;
    return {
      reasoning: '',
      next: { text: next, admissible: success ? [] : offered(g, at), task: ctx.task },
      reward: success ? 1 : 0,
      terminated: success,
      valid: true,
      actionValid: true,
      usage: { promptTokens: 0, completionTokens: 0, ms: 0 },
      attempts: 1,
      notes: [],
    };
  }
}

async function dreamEpisode(model: ExperienceModel, seed: number, actions: (g: Greenhouse) => string[]) {
  const task: Task = {
    id: `greenhouse/${seed}`,
    env: 'greenhouse-v0',
    instruction: greenhouse(seed).instruction,
    difficulty: 0,
    origin: 'imported',
    seed,
  };
  const env = new DreamEnv(model, { envId: 'greenhouse-v0', taskForSeed: () => task });
  await env.reset({ seed });
  const results = [];
  for (const action of actions(greenhouse(seed))) {
    const result = await env.step(action);
    results.push(result);
    if (result.terminated) break;
  }
  return results;
}

describe('the halt on a domain no code knows (a greenhouse made in this test)', () => {
  const train = [
    ...range(0, 150).map((s) => greenhouseEpisode(s, true)),
    ...range(500, 150).map((s) => greenhouseEpisode(s, false)),
  ];
  const index = NoveltyIndex.fromEpisodes(train, { quantile: 0.99 });

  it('is calibrated on held-out real play, and real play halts at about that rate', () => {
    expect(index.calibration.steps).toBeGreaterThan(1000);
    expect(index.calibration.heldOutHaltRate).toBeLessThanOrEqual(0.01);
    const heldOut = [
      ...range(1e9, 60).map((s) => greenhouseEpisode(s, true)),
      ...range(2e9, 60).map((s) => greenhouseEpisode(s, false)),
    ];
    expect(heldOutRate(index, heldOut)).toBeLessThanOrEqual(0.03);
  });

  it('ends a dreamed success the real greenhouse never grants, with no success, and says so', async () => {
    // The exploit: watering the asked plant succeeds anywhere, with an empty can.
    const exploit = new HaltingExperienceModel(new GreenhouseDream((a) => a.startsWith('water')), index);
    const cheat = await dreamEpisode(exploit, 1e9 + 7, (g) => [
      `walk ${BEDS.find((b) => b !== g.bed)} bed`,
      `water ${g.beds[BEDS.find((b) => b !== g.bed)!][0]}`,
    ]);
    const last = cheat[cheat.length - 1];
    expect(last.terminated).toBe(true);
    expect(last.info.success).toBe(false);
    expect(last.reward).toBe(0);
    expect(last.info.dream.halted).toBe(true);
    expect(last.info.dream.novelty).toBeGreaterThan(index.threshold({ terminated: true, success: true }));

    // The same wrapper lets the real way to the goal pay.
    const honest = new HaltingExperienceModel(new GreenhouseDream(() => false), index);
    const solved = await dreamEpisode(honest, 1e9 + 7, (g) => ['fill can', `walk ${g.bed} bed`, `water ${g.plant}`]);
    expect(solved.map((r) => r.info.dream.halted ?? false)).toEqual([false, false, false]);
    expect(solved[2].info.success).toBe(true);
  });

  it('refuses to measure a dream against fewer than two real episodes, naming the fix', () => {
    expect(() => NoveltyIndex.fromEpisodes([train[0]])).toThrow(/Seed the buffer .* or turn the halt off/);
  });
});

/** A greenhouse dream that draws wrong beds on its first `bad` draws of each walk, and offers what it is told. */
class DrawingDream implements ExperienceModel {
  readonly label = 'greenhouse dream with bad draws';
  readonly draws: number[] = [];
  constructor(
    private readonly g: Greenhouse,
    private readonly bad: number,
    private readonly extraOffers: string[] = [],
  ) {}
  async initial(task: Task): Promise<Observation> {
    return { text: START, admissible: offered(this.g, { bed: null }), task };
  }
  async next(ctx: DreamContext): Promise<Prediction> {
    const draw = ctx.draw ?? 0;
    this.draws.push(draw);
    const bed = ctx.action.split(' ')[1];
    // A bad draw shows the asked plant in a bed the instruction does not name: no real bed ever does.
    const text =
      draw < this.bad
        ? `You are at the ${bed} bed. You see a ${this.g.plant}.`
        : greenhouseStep(this.g, { bed: null, full: false }, ctx.action).next;
    const admissible = [...offered(this.g, { bed }), ...this.extraOffers];
    return {
      reasoning: '',
      next: { text, admissible, task: ctx.task },
      reward: 0,
      terminated: false,
      valid: true,
      actionValid: true,
      usage: { promptTokens: 10, completionTokens: 5, ms: 1 },
      attempts: 1,
      notes: [],
    };
  }
}

describe('what a dreamed state offers, and draws unlike the data (a greenhouse)', () => {
  const train = [
    ...range(0, 150).map((s) => greenhouseEpisode(s, true)),
    ...range(500, 150).map((s) => greenhouseEpisode(s, false)),
  ];
  const index = NoveltyIndex.fromEpisodes(train, { quantile: 0.99 });
  const g = greenhouse(1e9 + 3);

  it('leaves the unbacked offers out of a dreamed state, and says so', async () => {
    // No real state of the greenhouse ever offered digging.
    const model = new HaltingExperienceModel(new DrawingDream(g, 0, [`dig ${g.bed} bed`]), index);
    const [step] = await dreamEpisode(model, 1e9 + 3, (h) => [`walk ${h.bed} bed`]);
    expect(step.info.dream.halted ?? false).toBe(false);
    expect(step.admissible).not.toContain(`dig ${g.bed} bed`);
    expect(step.admissible).toContain(`water ${g.plant}`);
    const off = new HaltingExperienceModel(new DrawingDream(g, 0, [`dig ${g.bed} bed`]), index, { offers: false });
    const [kept] = await dreamEpisode(off, 1e9 + 3, (h) => [`walk ${h.bed} bed`]);
    expect(kept.admissible).toContain(`dig ${g.bed} bed`);
  });

  it('draws a running step again where a draw is unlike the data, and halts only when every draw is', async () => {
    const wrongBed = BEDS.find((b) => b !== g.bed)!;
    const twoBad = new DrawingDream(g, 2);
    const redrawn = await dreamEpisode(new HaltingExperienceModel(twoBad, index, { redraws: 3 }), 1e9 + 3, () => [
      `walk ${wrongBed} bed`,
    ]);
    expect(twoBad.draws).toEqual([0, 1, 2]);
    expect(redrawn[0].info.dream.halted ?? false).toBe(false);
    expect(redrawn[0].text).not.toContain(g.plant);
    expect(redrawn[0].info.dream.tokens).toBe(3 * 15); // every draw is paid for
    expect(redrawn[0].info.dream.redraws).toBe(2);

    const allBad = new DrawingDream(g, 99);
    const halted = await dreamEpisode(new HaltingExperienceModel(allBad, index, { redraws: 3 }), 1e9 + 3, () => [
      `walk ${wrongBed} bed`,
    ]);
    expect(allBad.draws).toEqual([0, 1, 2, 3]);
    expect(halted[0].info.dream.halted).toBe(true);
    expect(halted[0].info.success).toBe(false);
    const never = new DrawingDream(g, 2);
    const noRedraw = await dreamEpisode(new HaltingExperienceModel(never, index), 1e9 + 3, () => [
      `walk ${wrongBed} bed`,
    ]);
    expect(never.draws).toEqual([0]);
    expect(noRedraw[0].info.dream.halted).toBe(true);
  });
});
