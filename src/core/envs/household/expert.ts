/**
 * The privileged expert: reads the true state (where every object is) and returns the next
 * command of a plan that reaches the goal from ANY state, so a noisy expert that wandered off
 * recovers. It re-plans every step, and every choice is stable under its own actions (choices
 * depend on static order or only improve as the plan advances), so it never oscillates.
 *
 * Plan shapes: place/clean/heat/cool: put down a wrong object → fetch the nearest object of the
 * type (go, open, take) → [go to the appliance, heat/cool/clean] → go to a target receptacle,
 * open, put. look: fetch → go to the lamp → use it. two: fill the target receptacle that already
 * holds most of them, fetching from anywhere else, twice.
 */
import { CLEAN_APPLIANCE, COOL_APPLIANCE, HEAT_APPLIANCE } from './catalog';
import { execute, isAdmissible, renderCommand, type Command } from './commands';
import { goalHolds, requiredState, type Goal } from './goals';
import type { PutVerb } from './text';
import { World, type Receptacle, type Thing, type WorldSpec } from './world';

/** `go to r`, then `open r` if it has a closed door; null once the agent stands at r with r open. */
function approach(world: World, r: Receptacle): Command | null {
  if (world.agentAt !== r) return { verb: 'go', receptacle: r };
  if (r.openable && !r.isOpen) return { verb: 'open', receptacle: r };
  return null;
}

/** Where a thing of this type can be put: here if possible, else the first door-less holder, else any holder. */
function placeFor(world: World, type: string, avoid: Receptacle | null = null): Receptacle | null {
  const here = world.agentAt;
  if (here && here !== avoid && here.holds.has(type)) return here;
  let withDoor: Receptacle | null = null;
  for (const r of world.receptacles) {
    if (r === avoid || !r.holds.has(type)) continue;
    if (!r.openable) return r;
    withDoor ??= r;
  }
  return withDoor;
}

/** Puts the held (wrong) object down somewhere it fits. */
function putAway(world: World, held: Thing, avoid: Receptacle | null = null): Command | null {
  const r = placeFor(world, held.type, avoid) ?? placeFor(world, held.type);
  if (!r) return null;
  return approach(world, r) ?? { verb: 'put', object: held, receptacle: r };
}

/**
 * Goes for the cheapest object of the goal's type (not in `exclude`) and takes it. Cost: a move
 * unless already there, an open if behind a closed door, two steps if it still lacks the state.
 * Moving to or opening a receptacle only lowers its own objects' cost, so the choice is stable.
 */
function fetch(world: World, goal: Goal, exclude: Receptacle | null = null): Command | null {
  const state = requiredState(goal.type);
  let best: Thing | null = null;
  let bestCost = Infinity;
  for (const o of world.objects) {
    const r = o.location;
    if (o.type !== goal.object || r === null || r === exclude || !o.pickupable) continue;
    const cost = (world.agentAt === r ? 0 : 1) + (r.openable && !r.isOpen ? 1 : 0) + (state && !o[state] ? 2 : 0);
    if (cost < bestCost) {
      best = o;
      bestCost = cost;
    }
  }
  if (!best) return null;
  const r = best.location!;
  return approach(world, r) ?? { verb: 'take', object: best, receptacle: r };
}

/** The receptacle of `type` to use: the one the agent stands at, else the first in listing order. */
function applianceFor(world: World, type: string): Receptacle | null {
  if (world.agentAt?.type === type) return world.agentAt;
  return world.receptacles.find((r) => r.type === type) ?? null;
}

/** Target receptacle for place-like goals: here if it fits, else the first door-less one, else the first. */
function targetFor(world: World, goal: Goal): Receptacle | null {
  const here = world.agentAt;
  if (here && here.type === goal.receptacle && here.holds.has(goal.object)) return here;
  let withDoor: Receptacle | null = null;
  for (const r of world.receptacles) {
    if (r.type !== goal.receptacle || !r.holds.has(goal.object)) continue;
    if (!r.openable) return r;
    withDoor ??= r;
  }
  return withDoor;
}

function placeStep(world: World, goal: Goal): Command | null {
  const held = world.holding;
  if (!held) return fetch(world, goal);
  if (held.type !== goal.object) return putAway(world, held);
  const state = requiredState(goal.type);
  if (state && !held[state]) {
    const appliance = applianceFor(
      world,
      state === 'hot' ? HEAT_APPLIANCE : state === 'cool' ? COOL_APPLIANCE : CLEAN_APPLIANCE,
    );
    if (!appliance) return null;
    if (world.agentAt !== appliance) return { verb: 'go', receptacle: appliance };
    return { verb: goal.type as 'heat' | 'cool' | 'clean', object: held, receptacle: appliance };
  }
  const target = targetFor(world, goal);
  if (!target) return null;
  return approach(world, target) ?? { verb: 'put', object: held, receptacle: target };
}

function lookStep(world: World, goal: Goal): Command | null {
  const held = world.holding;
  if (held && held.type !== goal.object) return putAway(world, held);
  if (!held) return fetch(world, goal);
  let lamp: Thing | null = null;
  for (const o of world.objects) {
    if (o.type !== goal.toggle || o.location === null) continue;
    if (o.on) {
      lamp = o;
      break;
    }
    lamp ??= o;
  }
  if (!lamp) return null;
  const step = approach(world, lamp.location!);
  if (step) return step;
  return lamp.on ? null : { verb: 'use', object: lamp };
}

/** The receptacle to gather both objects in: the one holding most of them, ties by door-less then listing order. */
function gatheringPlace(world: World, goal: Goal): Receptacle | null {
  let best: Receptacle | null = null;
  let bestScore = -1;
  for (const r of world.receptacles) {
    if (r.type !== goal.receptacle || !r.holds.has(goal.object)) continue;
    let count = 0;
    for (const o of r.contents) if (o.type === goal.object) count++;
    const score = count * 2 + (r.openable ? 0 : 1);
    if (score > bestScore) {
      best = r;
      bestScore = score;
    }
  }
  return best;
}

function twoStep(world: World, goal: Goal): Command | null {
  const target = gatheringPlace(world, goal);
  if (!target) return null;
  const held = world.holding;
  if (held && held.type !== goal.object) return putAway(world, held, target);
  if (!held) return fetch(world, goal, target);
  return approach(world, target) ?? { verb: 'put', object: held, receptacle: target };
}

/** The expert's next command from the current state; null when the goal holds or cannot be reached. */
export function expertCommand(world: World, goal: Goal): Command | null {
  if (goalHolds(world, goal)) return null;
  switch (goal.type) {
    case 'look':
      return lookStep(world, goal);
    case 'two':
      return twoStep(world, goal);
    default:
      return placeStep(world, goal);
  }
}

export interface ExpertRun {
  actions: string[];
  success: boolean;
}

/** Plays the expert from the start of a world (at most `maxSteps` commands). */
export function runExpert(spec: WorldSpec, goal: Goal, putVerb: PutVerb = 'put_in_on', maxSteps = 50): ExpertRun {
  const world = new World(spec);
  const actions: string[] = [];
  while (actions.length < maxSteps) {
    const command = expertCommand(world, goal);
    if (!command || !isAdmissible(world, command)) break;
    actions.push(renderCommand(command, putVerb));
    execute(world, command, putVerb);
  }
  return { actions, success: goalHolds(world, goal) };
}
