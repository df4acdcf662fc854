/**
 * Hand-made household worlds for the unit tests: a literal spec → a WorldSpec / Task / env.
 */
import {
  HouseholdEnv,
  knobsForLevel,
  taskFromSpec,
  type Goal,
  type HouseholdTaskSpec,
  type ObjectSpec,
  type PutVerb,
  type RoomType,
  type WorldSpec,
} from '../../../../src/core/envs/household';
import type { Task } from '../../../../src/core/types';

type ObjectState = Partial<Pick<ObjectSpec, 'hot' | 'cool' | 'clean' | 'on'>>;

const typeOf = (name: string) => name.replace(/ \d+$/, '');

/**
 * `world('kitchen', ['fridge 1', 'countertop 1'], { 'apple 1': 'countertop 1', 'egg 1': ['fridge 1', { hot: true }] })`
 */
export function world(
  room: RoomType,
  receptacles: string[],
  objects: Record<string, string | [string, ObjectState]> = {},
): WorldSpec {
  return {
    room,
    receptacles: receptacles.map((name) => ({ name, type: typeOf(name) })),
    objects: Object.entries(objects).map(([name, where]) => {
      const [place, state] = typeof where === 'string' ? [where, {}] : where;
      return { name, type: typeOf(name), in: place, ...state };
    }),
  };
}

export function task(worldSpec: WorldSpec, goal: Omit<Goal, 'template'> & { template?: 0 | 1 }): Task {
  const spec: HouseholdTaskSpec = {
    format: 'household-task/1',
    room: worldSpec.room,
    goal: { template: 0, ...goal },
    world: worldSpec,
    knobs: knobsForLevel(0),
    optimalLength: 0,
  };
  return taskFromSpec(spec, { id: 'household-v0/test', seed: 0 });
}

/** A fresh env reset on the hand-made task. */
export function play(
  worldSpec: WorldSpec,
  goal: Omit<Goal, 'template'> & { template?: 0 | 1 },
  putVerb: PutVerb = 'put_in_on',
) {
  const env = new HouseholdEnv({ putVerb });
  const first = env.resetSync({ seed: 0, task: task(worldSpec, goal) });
  return { env, first };
}
