/**
 * The six ALFWorld task types (docs/architecture.md §3.3): their rooms, instruction templates and
 * goal checks. Goals are typed existentials: "put a hot apple in countertop" holds as soon as ANY
 * hot apple is in ANY countertop.
 */
import type { RoomType } from './catalog';
import type { World } from './world';

export type TaskType = 'place' | 'look' | 'clean' | 'heat' | 'cool' | 'two';

/** Easiest first (the difficulty order of §6.2: place < look < clean/heat/cool < two). */
export const TASK_TYPES: readonly TaskType[] = ['place', 'look', 'clean', 'heat', 'cool', 'two'];

/** ALFWorld's task_type names (config ids 1–6). */
export const ALFWORLD_TASK_TYPE: Readonly<Record<TaskType, string>> = {
  place: 'pick_and_place_simple',
  look: 'look_at_obj_in_light',
  clean: 'pick_clean_then_place_in_recep',
  heat: 'pick_heat_then_place_in_recep',
  cool: 'pick_cool_then_place_in_recep',
  two: 'pick_two_obj_and_place',
};

/** ALFWorld's GOALS_VALID: the rooms each task type is generated in. */
export const VALID_ROOMS: Readonly<Record<TaskType, readonly RoomType[]>> = {
  place: ['kitchen', 'livingroom', 'bedroom', 'bathroom'],
  look: ['livingroom', 'bedroom'],
  clean: ['kitchen', 'bathroom'],
  heat: ['kitchen'],
  cool: ['kitchen'],
  two: ['kitchen', 'livingroom', 'bedroom', 'bathroom'],
};

export interface Goal {
  type: TaskType;
  /** Object type, e.g. 'apple'. */
  object: string;
  /** Target receptacle type (all types but look). */
  receptacle?: string;
  /** Lamp type (look only). */
  toggle?: string;
  /** Which of the type's two templates words the instruction (0 or 1). */
  template: 0 | 1;
}

const TEMPLATES: Readonly<Record<TaskType, readonly [string, string]>> = {
  place: ['put a {obj} in {recep}.', 'put some {obj} on {recep}.'],
  look: ['look at {obj} under the {toggle}.', 'examine the {obj} with the {toggle}.'],
  clean: ['put a clean {obj} in {recep}.', 'clean some {obj} and put it in {recep}.'],
  heat: ['put a hot {obj} in {recep}.', 'heat some {obj} and put it in {recep}.'],
  cool: ['put a cool {obj} in {recep}.', 'cool some {obj} and put it in {recep}.'],
  two: ['put two {obj} in {recep}.', 'find two {obj} and put them in {recep}.'],
};

export function instructionFor(goal: Goal): string {
  return TEMPLATES[goal.type][goal.template]
    .replace('{obj}', goal.object)
    .replace('{recep}', goal.receptacle ?? '')
    .replace('{toggle}', goal.toggle ?? '');
}

/** The state a goal asks of the object (heat → hot, cool → cool, clean → clean), if any. */
export function requiredState(type: TaskType): 'hot' | 'cool' | 'clean' | null {
  return type === 'heat' ? 'hot' : type === 'cool' ? 'cool' : type === 'clean' ? 'clean' : null;
}

/** How many objects of `goal.object` are in the fullest receptacle of `goal.receptacle` type. */
function mostInOneReceptacle(world: World, goal: Goal): number {
  let best = 0;
  for (const r of world.receptacles) {
    if (r.type !== goal.receptacle) continue;
    let n = 0;
    for (const o of r.contents) if (o.type === goal.object) n++;
    if (n > best) best = n;
  }
  return best;
}

/** A lamp of the goal's type, switched on, in the receptacle the agent stands at. */
function litLampHere(world: World, goal: Goal): boolean {
  const here = world.agentAt;
  if (!here) return false;
  for (const o of here.contents) if (o.type === goal.toggle && o.on) return true;
  return false;
}

export function goalHolds(world: World, goal: Goal): boolean {
  switch (goal.type) {
    case 'look':
      return world.holding !== null && world.holding.type === goal.object && litLampHere(world, goal);
    case 'two':
      return mostInOneReceptacle(world, goal) >= 2;
    default: {
      const state = requiredState(goal.type);
      for (const o of world.objects) {
        if (o.type !== goal.object || o.location === null || o.location.type !== goal.receptacle) continue;
        if (state === null || o[state]) return true;
      }
      return false;
    }
  }
}

/**
 * Goal conditions met / total, for diagnostics only (never part of the reward):
 * place 1 (in place); clean/heat/cool 2 (an object in the state, one in the state in place);
 * look 2 (holding the object, a lit lamp here); two 2 (objects together in one receptacle).
 */
export function goalProgress(world: World, goal: Goal): { met: number; total: number } {
  switch (goal.type) {
    case 'place':
      return { met: goalHolds(world, goal) ? 1 : 0, total: 1 };
    case 'look':
      return { met: (world.holding?.type === goal.object ? 1 : 0) + (litLampHere(world, goal) ? 1 : 0), total: 2 };
    case 'two':
      return { met: Math.min(2, mostInOneReceptacle(world, goal)), total: 2 };
    default: {
      const state = requiredState(goal.type)!;
      const inState = world.objects.some((o) => o.type === goal.object && o[state]);
      return { met: (inState ? 1 : 0) + (goalHolds(world, goal) ? 1 : 0), total: 2 };
    }
  }
}
