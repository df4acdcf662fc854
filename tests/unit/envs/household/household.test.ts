import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/core/rng';
import { TimeLimit } from '../../../../src/core/envs/env';
import { checkEnv } from '../../../../src/core/envs/check-env';
import {
  generateTask,
  goalHolds,
  goalProgress,
  HouseholdEnv,
  householdDefinition,
  knobsForLevel,
  levelOfKnobs,
  relevantKnobs,
  TASK_TYPES,
  VALID_ROOMS,
  World,
  type Goal,
  type HouseholdKnobs,
  type HouseholdTaskSpec,
  type KnobName,
  type TaskType,
} from '../../../../src/core/envs/household';
import type { Task } from '../../../../src/core/types';
import { play, task as handTask, world } from './helpers';

const LEVELS = [0, 0.25, 0.5, 0.75, 1];
const specOf = (task: Task) => task.spec as HouseholdTaskSpec;

/** Plays one episode under TimeLimit(50); `choose` picks the action. */
async function episode(
  env: TimeLimit<HouseholdEnv>,
  seed: number,
  task: Task | undefined,
  choose: (admissible: string[]) => string,
) {
  let obs = await env.reset({ seed, task });
  const transcript = [obs.text];
  for (;;) {
    const r = await env.step(choose(obs.admissible));
    transcript.push(r.text);
    obs = r;
    if (r.terminated || r.truncated) return { success: r.info.success, steps: r.info.steps, transcript };
  }
}

describe('household-v0 contract', () => {
  it('passes checkEnv (default, level 0 and the move_to dialect)', async () => {
    for (const options of [{}, { difficulty: 0 }, { difficulty: 1, putVerb: 'move_to' }]) {
      const report = await checkEnv(new TimeLimit(householdDefinition.create(options), 50));
      expect(report.failures).toEqual([]);
      expect(report.ok).toBe(true);
    }
  });

  it('defines household-v0', () => {
    expect(householdDefinition).toMatchObject({ id: 'household-v0', name: 'mini-household', defaultStepLimit: 50 });
    const env = householdDefinition.create();
    expect(env.id).toBe('household-v0');
    expect(env.currentTask).toBeNull();
  });

  it('rejects a task of another environment with a message that names the fix', () => {
    const env = new HouseholdEnv();
    expect(() =>
      env.resetSync({
        seed: 0,
        task: { id: 'x', env: 'webshop-lite-v0', instruction: 'buy', difficulty: 0, origin: 'generated' },
      }),
    ).toThrow(/not a household-v0 task.*HouseholdTaskSpec/);
  });
});

describe('household-v0 expert and tasks', () => {
  it('the expert solves every task within 50 steps at every level, and every task type appears', async () => {
    const env = new TimeLimit(new HouseholdEnv(), 50);
    const solvedTypes = new Map<TaskType, number>();
    for (const level of LEVELS) {
      let successes = 0;
      for (let seed = 0; seed < 100; seed++) {
        const task = generateTask(10_000 + seed, level);
        const result = await episode(env, seed, task, () => env.env.expertAction()!);
        expect(result.steps).toBe(specOf(task).optimalLength);
        if (result.success) {
          successes++;
          const type = specOf(task).goal.type;
          solvedTypes.set(type, (solvedTypes.get(type) ?? 0) + 1);
        }
      }
      expect(successes, `level ${level}`).toBe(100);
    }
    expect([...solvedTypes.keys()].sort()).toEqual([...TASK_TYPES].sort());
  });

  it('generates tasks valid for their room, with the task spec and id the brief asks for', () => {
    for (let seed = 0; seed < 60; seed++) {
      const task = generateTask(seed, 0.8);
      const spec = specOf(task);
      expect(task.id).toBe(`household-v0/${seed}/0.80`);
      expect(task).toMatchObject({ env: 'household-v0', origin: 'generated', seed, difficulty: 0.8 });
      expect(VALID_ROOMS[spec.goal.type]).toContain(spec.room);
      expect(goalHolds(new World(spec.world), spec.goal)).toBe(false);
      expect(JSON.parse(JSON.stringify(task))).toEqual(task);
      expect(task.instruction).toMatch(/^(put|look|examine|clean|heat|cool|find) .*\.$/);
      expect(task.instruction).not.toMatch(/\d/);
    }
  });

  it('solve() runs the expert from the start', () => {
    const task = generateTask(5, 1);
    const solution = householdDefinition.solve(task);
    expect(solution.success).toBe(true);
    expect(solution.optimalLength).toBe(solution.actions.length);
    expect(solution.optimalLength).toBe(specOf(task).optimalLength);
  });

  it('a uniformly random admissible policy rarely succeeds (≤ 5% over 300 episodes, even at level 0)', async () => {
    const env = new TimeLimit(new HouseholdEnv(), 50);
    for (const level of [0, 0.5]) {
      let successes = 0;
      for (let seed = 0; seed < 300; seed++) {
        const rng = Rng.fromSeed(seed, 'random-policy');
        const result = await episode(env, seed, generateTask(20_000 + seed, level), (admissible) =>
          rng.pick(admissible),
        );
        if (result.success) successes++;
      }
      expect(successes / 300, `level ${level}`).toBeLessThanOrEqual(0.05);
    }
  });

  it('the expert recovers from any state (after random actions)', () => {
    const env = new HouseholdEnv({ difficulty: 1 });
    for (let seed = 0; seed < 60; seed++) {
      let obs = env.resetSync({ seed });
      const rng = Rng.fromSeed(seed, 'noise');
      let done = false;
      for (let t = 0; t < 25 && !done; t++) {
        const r = env.stepSync(rng.pick(obs.admissible));
        obs = r;
        done = r.terminated;
      }
      for (let t = 0; t < 30 && !done; t++) {
        const r = env.stepSync(env.expertAction()!);
        expect(r.info.valid).toBe(true);
        done = r.terminated;
      }
      expect(done, `seed ${seed}`).toBe(true);
    }
  });

  it('same seed → identical task and episode; a JSON round-tripped task replays identically', async () => {
    expect(generateTask(77, 0.6)).toEqual(generateTask(77, 0.6));
    expect(generateTask(77, 0.6).spec).not.toEqual(generateTask(78, 0.6).spec);
    const env = new TimeLimit(new HouseholdEnv({ difficulty: 0.6 }), 50);
    const runs: string[][] = [];
    for (let i = 0; i < 2; i++) {
      const rng = Rng.fromSeed(77, 'replay');
      runs.push((await episode(env, 77, undefined, (a) => rng.pick(a))).transcript);
    }
    const task = JSON.parse(JSON.stringify(generateTask(77, 0.6))) as Task;
    const rng = Rng.fromSeed(77, 'replay');
    runs.push((await episode(env, 0, task, (a) => rng.pick(a))).transcript);
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[2]).toEqual(runs[0]);
  });

  it('the move_to dialect plays the same tasks', async () => {
    const env = new TimeLimit(new HouseholdEnv({ putVerb: 'move_to' }), 50);
    for (let seed = 0; seed < 20; seed++) {
      const result = await episode(env, seed, generateTask(seed, 1), () => env.env.expertAction()!);
      expect(result.success).toBe(true);
    }
  });
});

describe('household-v0 difficulty', () => {
  it('maps levels to knobs within their ranges; level 1 has large rooms; receptacle count can be explicit', () => {
    const easy = knobsForLevel(0);
    const hard = knobsForLevel(1);
    expect(Object.keys(easy.taskMix)).toEqual(['place']);
    expect(Object.keys(hard.taskMix).sort()).toEqual([...TASK_TYPES].sort());
    expect(hard.receptacles).toBe(40);
    expect(easy.receptacles).toBeGreaterThanOrEqual(5);
    expect(knobsForLevel(0.3, 7).receptacles).toBe(7);
    expect(levelOfKnobs(easy)).toBe(0);
    expect(levelOfKnobs(hard)).toBe(1);
    for (const level of LEVELS) {
      const k = knobsForLevel(level);
      expect(k.receptacles).toBeGreaterThanOrEqual(5);
      expect(k.receptacles).toBeLessThanOrEqual(40);
      for (const p of [k.openableShare, k.hiddenTarget, k.againstPriors]) expect(p >= 0 && p <= 1).toBe(true);
    }
    const rooms = Array.from({ length: 20 }, (_, s) => specOf(generateTask(s, 1)).world.receptacles.length);
    expect(Math.min(...rooms)).toBeGreaterThanOrEqual(39);
    const small = specOf(generateTask(1, { ...knobsForLevel(0), receptacles: 5 })).world.receptacles.length;
    expect(small).toBe(5);
  });

  it('harder levels hide targets and need longer plans', () => {
    const mean = (level: number, f: (s: HouseholdTaskSpec) => number) =>
      Array.from({ length: 40 }, (_, s) => f(specOf(generateTask(s, level)))).reduce((a, b) => a + b, 0) / 40;
    const hidden = (s: HouseholdTaskSpec) => {
      const w = new World(s.world);
      const targets = w.objects.filter((o) => o.type === s.goal.object);
      return targets.filter((o) => o.location!.openable).length / targets.length;
    };
    expect(mean(1, hidden)).toBeGreaterThan(mean(0, hidden) + 0.3);
    expect(mean(1, (s) => s.optimalLength)).toBeGreaterThan(mean(0, (s) => s.optimalLength) + 2);
  });

  it('mutateTask moves one knob one notch and gives a solvable nearby task', () => {
    const rng = Rng.fromSeed(1, 'mutate');
    for (const level of [0, 0.5, 1]) {
      for (let seed = 0; seed < 12; seed++) {
        const parent = generateTask(seed, level);
        const parentSpec = specOf(parent);
        for (const direction of ['harder', 'easier'] as const) {
          let child: Task;
          try {
            child = householdDefinition.mutateTask(parent, rng, direction);
          } catch (error) {
            // Only possible when every knob is at its end already.
            expect(String(error)).toMatch(/cannot get/);
            continue;
          }
          const childSpec = specOf(child);
          expect(child).toMatchObject({ origin: 'variation', parent: parent.id, env: 'household-v0' });
          expect(child.id).not.toBe(parent.id);
          expect(householdDefinition.solve(child).success).toBe(true);
          const changed = (Object.keys(parentSpec.knobs) as (keyof HouseholdKnobs)[]).filter(
            (k) => JSON.stringify(parentSpec.knobs[k]) !== JSON.stringify(childSpec.knobs[k]),
          );
          expect(changed).toHaveLength(1);
          const knob = changed[0];
          if (knob === 'taskMix') {
            expect(childSpec.goal.type).not.toBe(parentSpec.goal.type);
            const rank = (t: TaskType) =>
              ['place', 'look', 'clean', 'two'].indexOf(t === 'heat' || t === 'cool' ? 'clean' : t);
            expect(rank(childSpec.goal.type) - rank(parentSpec.goal.type)).toBe(direction === 'harder' ? 1 : -1);
          } else {
            expect(relevantKnobs(parentSpec.goal.type)).toContain(knob);
            expect(childSpec.goal.type).toBe(parentSpec.goal.type);
            expect(childSpec.room).toBe(parentSpec.room);
            const before = parentSpec.knobs[knob as KnobName];
            const after = childSpec.knobs[knob as KnobName];
            const harder = knob === 'targetInstances' ? after < before : after > before;
            expect(harder).toBe(direction === 'harder');
          }
        }
      }
    }
  });

  it('mutateTask keeps held-out seeds held out, and moves the task type when every knob is at its end', () => {
    const rng = Rng.fromSeed(2, 'mutate');
    const heldOut = generateTask(1_000_000_007, 0.5);
    expect(householdDefinition.mutateTask(heldOut, rng, 'harder').seed).toBeGreaterThanOrEqual(1_000_000_000);
    const hardest: HouseholdKnobs = {
      taskMix: { place: 1 },
      receptacles: 40,
      openableShare: 1,
      hiddenTarget: 1,
      againstPriors: 1,
      distractors: 40,
      decoys: 3,
      targetInstances: 1,
      minPlanLength: 12,
    };
    const child = householdDefinition.mutateTask(generateTask(3, hardest), rng, 'harder');
    expect(specOf(child).goal.type).toBe('look');
    expect(householdDefinition.solve(child).success).toBe(true);
  });
});

describe('household-v0 goal checks', () => {
  const kitchen = (objects: Parameters<typeof world>[2]) =>
    new World(
      world(
        'kitchen',
        ['countertop 1', 'countertop 2', 'diningtable 1', 'fridge 1', 'microwave 1', 'sinkbasin 1'],
        objects,
      ),
    );

  it('place: any object of the type in any receptacle of the type', () => {
    const goal: Goal = { type: 'place', object: 'apple', receptacle: 'diningtable', template: 0 };
    expect(goalHolds(kitchen({ 'apple 1': 'countertop 1' }), goal)).toBe(false);
    expect(goalHolds(kitchen({ 'apple 1': 'countertop 1', 'apple 2': 'diningtable 1' }), goal)).toBe(true);
    expect(goalHolds(kitchen({ 'tomato 1': 'diningtable 1' }), goal)).toBe(false);
    expect(goalProgress(kitchen({ 'apple 2': 'diningtable 1' }), goal)).toEqual({ met: 1, total: 1 });
  });

  it('clean / heat / cool: the object must be in the state AND in place', () => {
    const heat: Goal = { type: 'heat', object: 'apple', receptacle: 'diningtable', template: 0 };
    expect(goalHolds(kitchen({ 'apple 1': 'diningtable 1' }), heat)).toBe(false);
    expect(goalHolds(kitchen({ 'apple 1': ['diningtable 1', { cool: true }] }), heat)).toBe(false);
    expect(goalHolds(kitchen({ 'apple 1': ['countertop 1', { hot: true }] }), heat)).toBe(false);
    expect(goalProgress(kitchen({ 'apple 1': ['countertop 1', { hot: true }] }), heat)).toEqual({ met: 1, total: 2 });
    expect(goalHolds(kitchen({ 'apple 1': ['diningtable 1', { hot: true }] }), heat)).toBe(true);
    expect(goalProgress(kitchen({ 'apple 1': ['diningtable 1', { hot: true }] }), heat)).toEqual({ met: 2, total: 2 });
    const cool: Goal = { type: 'cool', object: 'apple', receptacle: 'diningtable', template: 1 };
    expect(goalHolds(kitchen({ 'apple 1': ['diningtable 1', { hot: true }] }), cool)).toBe(false);
    expect(goalHolds(kitchen({ 'apple 1': ['diningtable 1', { cool: true }] }), cool)).toBe(true);
    const clean: Goal = { type: 'clean', object: 'apple', receptacle: 'diningtable', template: 0 };
    expect(goalHolds(kitchen({ 'apple 1': ['diningtable 1', { hot: true }] }), clean)).toBe(false);
    expect(goalHolds(kitchen({ 'apple 1': ['diningtable 1', { clean: true }] }), clean)).toBe(true);
  });

  it('two: two distinct objects of the type in the SAME receptacle', () => {
    const goal: Goal = { type: 'two', object: 'apple', receptacle: 'countertop', template: 0 };
    expect(goalHolds(kitchen({ 'apple 1': 'countertop 1', 'apple 2': 'countertop 2' }), goal)).toBe(false);
    expect(goalProgress(kitchen({ 'apple 1': 'countertop 1', 'apple 2': 'countertop 2' }), goal)).toEqual({
      met: 1,
      total: 2,
    });
    expect(goalHolds(kitchen({ 'apple 1': 'countertop 2', 'apple 2': 'countertop 2' }), goal)).toBe(true);
    expect(goalHolds(kitchen({ 'apple 1': 'countertop 2', 'tomato 2': 'countertop 2' }), goal)).toBe(false);
  });

  it('look: holding the object with a lamp of the type switched on where the agent stands', () => {
    const room = world('bedroom', ['bed 1', 'desk 1', 'sidetable 1'], {
      'desklamp 1': 'desk 1',
      'floorlamp 1': 'sidetable 1',
      'book 1': 'bed 1',
      'pen 1': 'bed 1',
    });
    const goal = { type: 'look', object: 'book', toggle: 'desklamp' } as const;
    const { env } = play(room, goal);
    env.stepSync('go to desk 1');
    expect(env.stepSync('use desklamp 1').terminated).toBe(false); // lamp on, but not holding the book
    expect(env.goalProgress()).toEqual({ met: 1, total: 2 });
    env.stepSync('go to bed 1');
    env.stepSync('take pen 1 from bed 1');
    expect(env.stepSync('go to desk 1').terminated).toBe(false); // holding the wrong object
    env.stepSync('put pen 1 in/on desk 1');
    env.stepSync('go to bed 1');
    expect(env.stepSync('take book 1 from bed 1').terminated).toBe(false); // the lit lamp is elsewhere
    env.stepSync('go to sidetable 1');
    expect(env.stepSync('use floorlamp 1').terminated).toBe(false); // wrong lamp type
    const arrive = env.stepSync('go to desk 1');
    expect(arrive).toMatchObject({ terminated: true, reward: 1 });

    const off = play(room, goal).env;
    off.stepSync('go to bed 1');
    off.stepSync('take book 1 from bed 1');
    expect(off.stepSync('go to desk 1').terminated).toBe(false); // lamp off
    expect(off.stepSync('use desklamp 1')).toMatchObject({ terminated: true, reward: 1 });
  });

  it('the expert solves hand-made tasks of every type', () => {
    const kitchenSpec = world(
      'kitchen',
      ['cabinet 1', 'countertop 1', 'diningtable 1', 'fridge 1', 'microwave 1', 'sinkbasin 1'],
      { 'apple 1': 'cabinet 1', 'apple 2': 'fridge 1', 'mug 1': 'countertop 1' },
    );
    const bedroomSpec = world('bedroom', ['bed 1', 'desk 1', 'drawer 1'], {
      'desklamp 1': 'desk 1',
      'book 1': 'drawer 1',
    });
    const goals: Array<[ReturnType<typeof world>, Omit<Goal, 'template'>]> = [
      [kitchenSpec, { type: 'place', object: 'apple', receptacle: 'diningtable' }],
      [kitchenSpec, { type: 'heat', object: 'mug', receptacle: 'diningtable' }],
      [kitchenSpec, { type: 'cool', object: 'apple', receptacle: 'countertop' }],
      [kitchenSpec, { type: 'clean', object: 'apple', receptacle: 'diningtable' }],
      [kitchenSpec, { type: 'two', object: 'apple', receptacle: 'diningtable' }],
      [bedroomSpec, { type: 'look', object: 'book', toggle: 'desklamp' }],
    ];
    for (const [spec, goal] of goals) {
      const solution = householdDefinition.solve(handTask(spec, goal));
      expect(solution.success, goal.type).toBe(true);
    }
  });
});
