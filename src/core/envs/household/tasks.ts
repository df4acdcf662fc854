/**
 * Household task generation (docs/architecture.md §3.3): difficulty knobs, the scalar level → knobs
 * map, the seeded generator (room → receptacles → goal → objects), solvability proof by the
 * expert, and curriculum variations (`mutateTask`).
 *
 * Streams: `<seed>/household-v0/type` draws the task type and room; each layout attempt k draws
 * from `<seed>/household-v0/world/<k>`. Same seed and knobs → same task on every JS engine.
 */
import { hashString, Rng } from '../../rng';
import { HELD_OUT_SEED_BASE, type Direction, type ExpertSolution } from '../env';
import type { Task } from '../../types';
import {
  CAN_CONTAIN,
  CLEAN_APPLIANCE,
  CLEANABLE,
  COOL_APPLIANCE,
  COOLABLE,
  HEAT_APPLIANCE,
  HEATABLE,
  LAMP_RECEPTACLES,
  LAMP_ROOMS,
  LAMP_TYPES,
  OPENABLE,
  PRIORS,
  ROOM_OBJECTS,
  type RoomType,
} from './catalog';
import { execute, isAdmissible, renderCommand } from './commands';
import { expertCommand, runExpert } from './expert';
import { goalHolds, instructionFor, TASK_TYPES, VALID_ROOMS, type Goal, type TaskType } from './goals';
import { generateReceptacles, nameObjects, World, type Placement, type ReceptacleSpec, type WorldSpec } from './world';
import { DreamGymError } from '../../errors';

export const HOUSEHOLD_ENV_ID = 'household-v0';
/** The step limit the generator proves solvability under (the env's default TimeLimit). */
export const HOUSEHOLD_STEP_LIMIT = 50;

// ---------------------------------------------------------------------------------------------
// Knobs
// ---------------------------------------------------------------------------------------------

export interface HouseholdKnobs {
  /** Relative weights of the task types drawn (missing or 0 = never). */
  taskMix: Partial<Record<TaskType, number>>;
  /** Receptacles in the room, 5–40 (clamped to what the room type allows). */
  receptacles: number;
  /** Share of the extra receptacles (beyond each room's minimum) that have doors, 0–1. */
  openableShare: number;
  /** Probability that each target instance starts behind a closed door, 0–1. */
  hiddenTarget: number;
  /** Probability that each target instance is placed against the location priors, 0–1. */
  againstPriors: number;
  /** Other portable objects in the room, 0–40. */
  distractors: number;
  /**
   * Decoys, 0–3: clean/heat/cool put same-type objects in a WRONG state (e.g. a cold apple for a
   * hot-apple task) in target receptacles, so the goal looks done; look adds a lamp of the other
   * type (at most one). No effect on place/two.
   */
  decoys: number;
  /** Instances of the target type, 1–3 (pick-two always has at least 2). */
  targetInstances: number;
  /**
   * Re-draw the layout (same room and task type, up to 12 draws) until the expert needs at least
   * this many steps, capped by what the type reaches (place/look 5, clean/heat/cool 7, two 10); 0–12.
   */
  minPlanLength: number;
}

export type KnobName = Exclude<keyof HouseholdKnobs, 'taskMix'>;

/** Easiest → hardest values of each knob; `mutateTask` moves one knob to the next value along its ladder. */
export const KNOB_LADDERS: Readonly<Record<KnobName, readonly number[]>> = {
  receptacles: [5, 8, 10, 12, 16, 20, 24, 28, 32, 36, 40],
  openableShare: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1],
  hiddenTarget: [0, 0.2, 0.4, 0.6, 0.8, 1],
  againstPriors: [0, 0.25, 0.5, 0.75, 1],
  distractors: [0, 4, 6, 8, 12, 16, 20, 24, 30, 36, 40],
  decoys: [0, 1, 2, 3],
  targetInstances: [3, 2, 1],
  minPlanLength: [0, 4, 5, 6, 7, 8, 10, 12],
};

const KNOB_RANGES: Readonly<Record<KnobName, readonly [number, number]>> = {
  receptacles: [5, 40],
  openableShare: [0, 1],
  hiddenTarget: [0, 1],
  againstPriors: [0, 1],
  distractors: [0, 40],
  decoys: [0, 3],
  targetInstances: [1, 3],
  minPlanLength: [0, 12],
};
const INTEGER_KNOBS: ReadonlySet<KnobName> = new Set([
  'receptacles',
  'distractors',
  'decoys',
  'targetInstances',
  'minPlanLength',
]);

/** Level at which each task type enters the mix (all unlocked types weigh the same). */
const TASK_TYPE_UNLOCK: Readonly<Record<TaskType, number>> = {
  place: 0,
  look: 0.2,
  clean: 0.4,
  heat: 0.4,
  cool: 0.4,
  two: 0.6,
};

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
const lerp = (a: number, b: number, t: number) => a + (b - a) * t;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Scalar difficulty → knobs. Level 0: place tasks in 12-receptacle rooms with visible targets;
 * level 1: all six types in 40-receptacle rooms ("large rooms", the benchmark), targets mostly
 * behind doors, against priors half the time, one instance, two decoys, 30 distractors.
 * `receptacles` overrides the receptacle count (5–40).
 */
export function knobsForLevel(level: number, receptacles?: number): HouseholdKnobs {
  const t = clamp01(level);
  const taskMix: Partial<Record<TaskType, number>> = {};
  for (const type of TASK_TYPES) if (t >= TASK_TYPE_UNLOCK[type]) taskMix[type] = 1;
  return {
    taskMix,
    receptacles: receptacles ?? Math.round(lerp(12, 40, t)),
    openableShare: round3(lerp(0.2, 0.7, t)),
    hiddenTarget: round3(lerp(0, 0.8, t)),
    againstPriors: round3(lerp(0, 0.5, t)),
    distractors: Math.round(lerp(6, 30, t)),
    decoys: Math.round(lerp(0, 2, t)),
    targetInstances: Math.round(lerp(3, 1, t)),
    minPlanLength: Math.round(lerp(4, 8, t)),
  };
}

/** Knobs clamped to their ranges (integers rounded); throws when no task type has weight. */
export function normalizeKnobs(knobs: HouseholdKnobs): HouseholdKnobs {
  const out = { ...knobs, taskMix: { ...knobs.taskMix } };
  for (const name of Object.keys(KNOB_RANGES) as KnobName[]) {
    const [lo, hi] = KNOB_RANGES[name];
    let value = Number.isFinite(out[name]) ? out[name] : lo;
    value = Math.min(hi, Math.max(lo, value));
    out[name] = INTEGER_KNOBS.has(name) ? Math.round(value) : value;
  }
  if (!TASK_TYPES.some((type) => (out.taskMix[type] ?? 0) > 0)) {
    throw new RangeError(`household knobs: taskMix needs a positive weight for one of ${TASK_TYPES.join(', ')}`);
  }
  return out;
}

/** Knobs → an approximate scalar level (mean position of each knob between its level-0 and level-1 values). */
export function levelOfKnobs(knobs: HouseholdKnobs): number {
  const easy = knobsForLevel(0);
  const hard = knobsForLevel(1);
  const parts: number[] = [];
  for (const name of Object.keys(KNOB_RANGES) as KnobName[]) {
    parts.push(clamp01((knobs[name] - easy[name]) / (hard[name] - easy[name])));
  }
  // Task mix: how far along place < look < clean/heat/cool < two its hardest type is.
  let hardest = 0;
  for (const type of TASK_TYPES)
    if ((knobs.taskMix[type] ?? 0) > 0) hardest = Math.max(hardest, TASK_TYPE_UNLOCK[type]);
  parts.push(clamp01(hardest / TASK_TYPE_UNLOCK.two));
  return Math.round((parts.reduce((a, b) => a + b, 0) / parts.length) * 100) / 100;
}

// ---------------------------------------------------------------------------------------------
// Task spec
// ---------------------------------------------------------------------------------------------

/** Everything needed to rebuild an episode exactly (stored as `Task.spec`). */
export interface HouseholdTaskSpec {
  format: 'household-task/1';
  room: RoomType;
  goal: Goal;
  /** The layout at the start: receptacles (all closed) and objects with their places and states. */
  world: WorldSpec;
  /** The knobs it was generated with. */
  knobs: HouseholdKnobs;
  /** Length of the expert's plan from the start. */
  optimalLength: number;
}

export class HouseholdTaskError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'household-task-invalid',
      fix: 'Make household tasks with generateTask or taskFromSpec, or change the knobs the message names.',
    });
    this.name = 'HouseholdTaskError';
  }
}

/** The household spec inside a task, checked enough to catch a task of another env. */
export function taskSpecOf(task: Task): HouseholdTaskSpec {
  const spec = task.spec as HouseholdTaskSpec | undefined;
  if (task.env !== HOUSEHOLD_ENV_ID || !spec || spec.format !== 'household-task/1' || !spec.world || !spec.goal) {
    throw new HouseholdTaskError(
      `Task '${task.id}' (env '${task.env}') is not a ${HOUSEHOLD_ENV_ID} task: ` +
        `its spec must be a HouseholdTaskSpec (format 'household-task/1'), as generateTask or taskFromSpec make.`,
    );
  }
  return spec;
}

/** A Task around a hand-made or imported spec (instruction from the goal). */
export function taskFromSpec(
  spec: HouseholdTaskSpec,
  opts: { id?: string; seed?: number; difficulty?: number; origin?: Task['origin'] } = {},
): Task {
  const difficulty = opts.difficulty ?? levelOfKnobs(spec.knobs);
  return {
    id: opts.id ?? `${HOUSEHOLD_ENV_ID}/spec-${hashString(JSON.stringify(spec)).toString(16)}`,
    env: HOUSEHOLD_ENV_ID,
    instruction: instructionFor(spec.goal),
    difficulty,
    spec,
    origin: opts.origin ?? 'imported',
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Episode drafting
// ---------------------------------------------------------------------------------------------

function objectFits(type: TaskType, objectType: string): boolean {
  switch (type) {
    case 'heat':
      return HEATABLE.has(objectType);
    case 'cool':
      return COOLABLE.has(objectType);
    case 'clean':
      return CLEANABLE.has(objectType);
    default:
      return true;
  }
}

const APPLIANCE: Partial<Record<TaskType, string>> = {
  heat: HEAT_APPLIANCE,
  cool: COOL_APPLIANCE,
  clean: CLEAN_APPLIANCE,
};

function holders(receptacles: readonly ReceptacleSpec[], objectType: string): ReceptacleSpec[] {
  return receptacles.filter((r) => CAN_CONTAIN[r.type]?.has(objectType));
}

/** Draws a receptacle for an object: behind a door or not, by the priors or against them; relaxes priors first, then doors. */
function pickPlace(
  rng: Rng,
  candidates: readonly ReceptacleSpec[],
  objectType: string,
  hidden: boolean,
  againstPriors: boolean,
): ReceptacleSpec | null {
  if (candidates.length === 0) return null;
  const priors = PRIORS[objectType] ?? [];
  const byDoor = candidates.filter((r) => OPENABLE.has(r.type) === hidden);
  for (const pool of [byDoor, candidates]) {
    if (pool.length === 0) continue;
    const byPrior = pool.filter((r) => priors.includes(r.type) !== againstPriors);
    return rng.pick(byPrior.length > 0 ? byPrior : pool);
  }
  return null;
}

interface Draft {
  world: WorldSpec;
  goal: Goal;
}

/** One layout attempt for a room and task type; null when this layout cannot host the task. */
function draftEpisode(rng: Rng, room: RoomType, type: TaskType, knobs: HouseholdKnobs): Draft | null {
  const receptacles = generateReceptacles(rng.split('receptacles'), room, knobs.receptacles, knobs.openableShare);
  const presentTypes = [...new Set(receptacles.map((r) => r.type))];
  const appliance = APPLIANCE[type];

  // Goal: an object type of the room that fits the task, a target type that can hold it, and
  // somewhere else (not of the target type) to start it.
  const choices: Array<{ object: string; targets: string[] }> = [];
  for (const object of ROOM_OBJECTS[room]) {
    if (!objectFits(type, object)) continue;
    const places = holders(receptacles, object);
    if (places.length === 0) continue;
    if (type === 'look') {
      choices.push({ object, targets: [] });
      continue;
    }
    const targets = presentTypes.filter(
      (t) => t !== appliance && CAN_CONTAIN[t]?.has(object) && places.some((p) => p.type !== t),
    );
    if (targets.length > 0) choices.push({ object, targets });
  }
  if (choices.length === 0) return null;
  const goalRng = rng.split('goal');
  const choice = goalRng.pick(choices);
  const template = goalRng.int(0, 1) as 0 | 1;

  const placements: Placement[] = [];
  const placeRng = rng.split('place');

  // Lamps: one in every living room and bedroom; look may add the other type as a decoy.
  let lampType: string | null = null;
  let lampPlace: ReceptacleSpec | null = null;
  if (LAMP_ROOMS.has(room)) {
    const lampPlaces = receptacles.filter((r) => LAMP_RECEPTACLES.includes(r.type));
    if (lampPlaces.length === 0) return null;
    lampType = placeRng.pick(LAMP_TYPES);
    lampPlace = placeRng.pick(lampPlaces);
    placements.push({ type: lampType, in: lampPlace.name });
    if (type === 'look' && knobs.decoys >= 1) {
      const other = LAMP_TYPES.find((t) => t !== lampType)!;
      const elsewhere = lampPlaces.filter((r) => r !== lampPlace);
      placements.push({ type: other, in: placeRng.pick(elsewhere.length > 0 ? elsewhere : lampPlaces).name });
    }
  }
  if (type === 'look' && !lampType) return null;

  const goal: Goal =
    type === 'look'
      ? { type, object: choice.object, toggle: lampType!, template }
      : { type, object: choice.object, receptacle: goalRng.pick(choice.targets), template };

  // Target instances: never already in a target receptacle, nor (look) next to the lamp.
  const starts = holders(receptacles, goal.object).filter((r) =>
    type === 'look' ? r !== lampPlace : r.type !== goal.receptacle,
  );
  if (starts.length === 0) return null;
  const instances = type === 'two' ? Math.max(2, knobs.targetInstances) : knobs.targetInstances;
  for (let i = 0; i < instances; i++) {
    const place = pickPlace(
      placeRng,
      starts,
      goal.object,
      placeRng.bool(knobs.hiddenTarget),
      placeRng.bool(knobs.againstPriors),
    )!;
    placements.push({ type: goal.object, in: place.name });
  }

  // Decoys: same type, wrong state, already where the goal wants it.
  if (type === 'clean' || type === 'heat' || type === 'cool') {
    const inTarget = holders(receptacles, goal.object).filter((r) => r.type === goal.receptacle);
    const wrongStates: Array<Partial<Placement>> =
      type === 'heat'
        ? [{ cool: true }, { clean: true }]
        : type === 'cool'
          ? [{ hot: true }, { clean: true }]
          : [{ hot: true }, { cool: true }, {}];
    for (let i = 0; i < knobs.decoys && inTarget.length > 0; i++) {
      placements.push({ type: goal.object, in: placeRng.pick(inTarget).name, ...placeRng.pick(wrongStates) });
    }
  }

  // Distractors: other portable types of the room, mostly where they belong.
  const others = ROOM_OBJECTS[room].filter((t) => t !== goal.object && holders(receptacles, t).length > 0);
  for (let i = 0; i < knobs.distractors && others.length > 0; i++) {
    const objectType = placeRng.pick(others);
    const place = pickPlace(
      placeRng,
      holders(receptacles, objectType),
      objectType,
      placeRng.bool(0.3),
      placeRng.bool(0.15),
    )!;
    placements.push({ type: objectType, in: place.name });
  }

  const world: WorldSpec = { room, receptacles, objects: nameObjects(rng.split('names'), placements) };
  return { world, goal };
}

// ---------------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------------

const MAX_ATTEMPTS = 12;

/**
 * The plan length a task type reaches with its object behind a door and no detours (place/look:
 * go, open, take, go, put/use; clean/heat/cool: + go to the appliance and apply; two: twice place).
 * `minPlanLength` asks for at most this much, so re-draws chase only reachable lengths.
 */
const PLAN_LENGTH_CAP: Readonly<Record<TaskType, number>> = { place: 5, look: 5, clean: 7, heat: 7, cool: 7, two: 10 };

export interface GenerateOptions {
  /** Keep this room type (when valid for the task type). */
  room?: RoomType;
  /** Keep this task type. */
  taskType?: TaskType;
}

function formatLevel(level: number): string {
  return level.toFixed(2);
}

/**
 * A task from a seed at a difficulty (scalar level or knobs), proved solvable by the expert within
 * the 50-step limit; layouts that fail, or whose plan is shorter than `minPlanLength`, are re-drawn
 * deterministically (the longest solvable draw is kept when none reaches it).
 */
export function generateTask(seed: number, difficulty: number | HouseholdKnobs, options: GenerateOptions = {}): Task {
  const knobs = normalizeKnobs(typeof difficulty === 'number' ? knobsForLevel(difficulty) : difficulty);
  const level = typeof difficulty === 'number' ? Math.round(clamp01(difficulty) * 100) / 100 : levelOfKnobs(knobs);
  const streams = Rng.fromSeed(seed, HOUSEHOLD_ENV_ID);
  const typeRng = streams.split('type');
  const mixTypes = TASK_TYPES.filter((t) => (knobs.taskMix[t] ?? 0) > 0);
  const drawnType = mixTypes[typeRng.weightedIndex(mixTypes.map((t) => knobs.taskMix[t]!))];
  const type = options.taskType ?? drawnType;
  const rooms = VALID_ROOMS[type];
  const drawnRoom = typeRng.pick(rooms);
  const room = options.room && rooms.includes(options.room) ? options.room : drawnRoom;

  const wantedLength = Math.min(knobs.minPlanLength, PLAN_LENGTH_CAP[type]);
  let best: { draft: Draft; length: number } | null = null;
  for (let attempt = 0; attempt < MAX_ATTEMPTS * 4; attempt++) {
    // After MAX_ATTEMPTS failed layouts, try the type's other rooms too (never needed in practice).
    const attemptRoom = attempt < MAX_ATTEMPTS ? room : rooms[attempt % rooms.length];
    const draft = draftEpisode(streams.split(`world/${attempt}`), attemptRoom, type, knobs);
    if (!draft) continue;
    if (goalHolds(new World(draft.world), draft.goal)) continue;
    const run = runExpert(draft.world, draft.goal, 'put_in_on', HOUSEHOLD_STEP_LIMIT);
    if (!run.success) continue;
    if (!best || run.actions.length > best.length) best = { draft, length: run.actions.length };
    if (run.actions.length >= wantedLength || attempt >= MAX_ATTEMPTS - 1) break;
  }
  if (!best) {
    throw new HouseholdTaskError(
      `household-v0: no solvable ${type} task in ${room} for seed ${seed}; check the knobs ${JSON.stringify(knobs)}`,
    );
  }
  const spec: HouseholdTaskSpec = {
    format: 'household-task/1',
    room: best.draft.world.room,
    goal: best.draft.goal,
    world: best.draft.world,
    knobs,
    optimalLength: best.length,
  };
  const id =
    typeof difficulty === 'number'
      ? `${HOUSEHOLD_ENV_ID}/${seed}/${formatLevel(level)}`
      : `${HOUSEHOLD_ENV_ID}/${seed}/${formatLevel(level)}/k${hashString(JSON.stringify(knobs)).toString(16)}`;
  return {
    id,
    env: HOUSEHOLD_ENV_ID,
    instruction: instructionFor(spec.goal),
    difficulty: level,
    spec,
    origin: 'generated',
    seed,
  };
}

/** Runs the expert on a task from its start. */
export function solveTask(task: Task): ExpertSolution {
  const spec = taskSpecOf(task);
  const run = runExpert(spec.world, spec.goal, 'put_in_on', HOUSEHOLD_STEP_LIMIT * 4);
  return { actions: run.actions, optimalLength: run.actions.length, success: run.success };
}

// ---------------------------------------------------------------------------------------------
// Variations
// ---------------------------------------------------------------------------------------------

/** Knobs that change anything for a task type. */
export function relevantKnobs(type: TaskType): KnobName[] {
  const names: KnobName[] = [
    'receptacles',
    'openableShare',
    'hiddenTarget',
    'againstPriors',
    'distractors',
    'targetInstances',
    'minPlanLength',
  ];
  if (type === 'clean' || type === 'heat' || type === 'cool' || type === 'look') names.push('decoys');
  return names;
}

/** The next ladder value of a knob in a direction, or null at the end of its ladder. */
export function nextNotch(
  name: KnobName,
  value: number,
  direction: Direction,
  type: TaskType = 'place',
): number | null {
  let ladder = KNOB_LADDERS[name];
  if (name === 'targetInstances' && type === 'two') ladder = ladder.filter((v) => v >= 2);
  if (name === 'decoys' && type === 'look') ladder = ladder.filter((v) => v <= 1);
  // Ladders run easy → hard; targetInstances is descending in value.
  const descending = ladder[0] > ladder[ladder.length - 1];
  const harderValue = (a: number, b: number) => (descending ? a < b : a > b);
  const wantHarder = direction === 'harder';
  const ordered = wantHarder ? ladder : [...ladder].reverse();
  for (const v of ordered) {
    if (wantHarder ? harderValue(v, value) : harderValue(value, v)) return v;
  }
  return null;
}

/** The task type one notch along place < look < clean/heat/cool < two (null at an end). */
function nextTaskType(type: TaskType, direction: Direction, rng: Rng): TaskType | null {
  const ranks: TaskType[][] = [['place'], ['look'], ['clean', 'heat', 'cool'], ['two']];
  const rank = ranks.findIndex((group) => group.includes(type));
  const next = direction === 'harder' ? rank + 1 : rank - 1;
  if (next < 0 || next >= ranks.length) return null;
  return rng.pick(ranks[next]);
}

/**
 * A nearby task one notch harder or easier: one knob relevant to the task type moves to its next
 * ladder value (or, when none can move, the task type moves along place < look < clean/heat/cool <
 * two) and a task is regenerated from a fresh seed in the same room and task type where possible,
 * proved solvable. Seeds stay in the parent's range (held-out seeds ≥ 1e9 stay held out).
 */
export function mutateTask(task: Task, rng: Rng, direction: Direction): Task {
  const spec = taskSpecOf(task);
  const type = spec.goal.type;
  const knobs = { ...spec.knobs, taskMix: { ...spec.knobs.taskMix } };
  const movable = relevantKnobs(type).filter((name) => nextNotch(name, knobs[name], direction, type) !== null);
  let taskType = type;
  if (movable.length > 0) {
    const name = rng.pick(movable);
    knobs[name] = nextNotch(name, knobs[name], direction, type)!;
  } else {
    const next = nextTaskType(type, direction, rng);
    if (next === null)
      throw new HouseholdTaskError(
        `mutateTask: task '${task.id}' cannot get ${direction}: every knob is at its ${direction === 'harder' ? 'hardest' : 'easiest'} value`,
      );
    taskType = next;
    knobs.taskMix = { [next]: 1 };
  }
  const heldOut = (task.seed ?? 0) >= HELD_OUT_SEED_BASE;
  const seed = heldOut ? rng.int(HELD_OUT_SEED_BASE, 2_147_483_647) : rng.int(0, HELD_OUT_SEED_BASE - 1);
  const child = generateTask(seed, knobs, { room: spec.room, taskType });
  const id = `${HOUSEHOLD_ENV_ID}/${seed}/${formatLevel(child.difficulty)}/var-${hashString(JSON.stringify(child.spec)).toString(16)}`;
  return { ...child, id, origin: 'variation', parent: task.id };
}

// ---------------------------------------------------------------------------------------------
// Decoys
// ---------------------------------------------------------------------------------------------

/** The decoy goals of a goal: the same task with another place for the object, or another object for the place. */
function decoyGoals(spec: HouseholdTaskSpec): Goal[] {
  const { goal, world } = spec;
  const types = (names: readonly string[]) => [...new Set(names)].sort();
  const places = goal.receptacle
    ? types(world.receptacles.map((r) => r.type))
        .filter((type) => type !== goal.receptacle && CAN_CONTAIN[type]?.has(goal.object))
        .map((receptacle) => ({ ...goal, receptacle }))
    : [];
  const objects = types(world.objects.map((o) => o.type))
    .filter((type) => type !== goal.object && type !== goal.toggle && objectFits(goal.type, type))
    .map((object) => ({ ...goal, object }));
  return [...places, ...objects];
}

/**
 * A decoy of a task: the same room with a goal one word off (the object put in another place, or
 * another object put in the place, or looked at), which the expert reaches without reaching the
 * task's own goal — so the decoy's last step looks like the goal to anyone reading the
 * instruction loosely, and the real room answers it with reward 0 and goes on. Null when the room
 * offers no such goal. The offline data's `decoy-expert` plays it: the steps that do not end an
 * episode, which an experience model must learn to tell from the goal.
 */
export function decoyTask(task: Task, rng: Rng): Task | null {
  const spec = taskSpecOf(task);
  for (const goal of rng.shuffle(decoyGoals(spec))) {
    const world = new World(spec.world);
    const actions: string[] = [];
    for (let command = expertCommand(world, goal); command && actions.length < HOUSEHOLD_STEP_LIMIT;) {
      if (!isAdmissible(world, command)) break;
      actions.push(renderCommand(command, 'put_in_on'));
      execute(world, command, 'put_in_on');
      command = expertCommand(world, goal);
    }
    if (actions.length === 0 || !goalHolds(world, goal) || goalHolds(world, spec.goal)) continue;
    const decoy = { ...spec, goal, optimalLength: actions.length };
    return taskFromSpec(decoy, { id: `${task.id}/decoy`, difficulty: task.difficulty, origin: 'generated' });
  }
  return null;
}
