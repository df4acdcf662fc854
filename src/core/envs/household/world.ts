/**
 * The household world: its JSON form (`WorldSpec`, stored in every task so an episode can be
 * rebuilt exactly), its mutable runtime form (`World`), and the seeded room generator.
 *
 * Names follow ALFWorld: `<type> <n>`, numbered per type from 1. Receptacles are listed
 * alphabetically by type with numbers descending inside a type (the order of ALFWorld's
 * non-randomised games); openables start closed; lamps start off.
 */
import type { Rng } from '../../rng';
import {
  CAN_CONTAIN,
  CLEANABLE,
  COOLABLE,
  FIXED_OBJECTS,
  HEATABLE,
  OPENABLE,
  ROOM_RECEPTACLES,
  TOGGLEABLE,
  type RoomType,
} from './catalog';
import { DreamGymError } from '../../errors';

// ---------------------------------------------------------------------------------------------
// JSON form
// ---------------------------------------------------------------------------------------------

export interface ReceptacleSpec {
  name: string;
  type: string;
}

export interface ObjectSpec {
  name: string;
  type: string;
  /** Name of the receptacle the object starts in. */
  in: string;
  hot?: boolean;
  cool?: boolean;
  clean?: boolean;
  /** Lamps only: switched on. */
  on?: boolean;
}

export interface WorldSpec {
  room: RoomType;
  receptacles: ReceptacleSpec[];
  objects: ObjectSpec[];
}

// ---------------------------------------------------------------------------------------------
// Runtime form
// ---------------------------------------------------------------------------------------------

export interface Receptacle {
  readonly name: string;
  readonly type: string;
  readonly number: number;
  readonly openable: boolean;
  isOpen: boolean;
  /** Objects inside, kept sorted by type then number. */
  readonly contents: Thing[];
  /** Object types it can hold (canContain). */
  readonly holds: ReadonlySet<string>;
}

export interface Thing {
  readonly name: string;
  readonly type: string;
  readonly number: number;
  /** The receptacle it is in; null while the agent holds it. */
  location: Receptacle | null;
  hot: boolean;
  cool: boolean;
  clean: boolean;
  on: boolean;
  readonly pickupable: boolean;
  readonly heatable: boolean;
  readonly coolable: boolean;
  readonly cleanable: boolean;
  readonly toggleable: boolean;
}

export class WorldSpecError extends DreamGymError {
  constructor(message: string) {
    super(`Invalid household world spec: ${message}`, {
      code: 'household-world-invalid',
      fix: "Correct the world spec's field the message names.",
    });
    this.name = 'WorldSpecError';
  }
}

/** The number in an ALFWorld name ('cabinet 12' → 12). */
function numberOf(name: string, type: string): number {
  const match = /^([a-z]+) ([1-9][0-9]*)$/.exec(name);
  if (!match || match[1] !== type) throw new WorldSpecError(`name '${name}' must read '${type} <n>' (n ≥ 1)`);
  return Number(match[2]);
}

/** Listing order of receptacles: type alphabetical, number descending. */
export function compareReceptacles(a: { type: string; number: number }, b: { type: string; number: number }): number {
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  return b.number - a.number;
}

/** Order of objects inside a receptacle: type alphabetical, number ascending. */
export function compareThings(a: Thing, b: Thing): number {
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  return a.number - b.number;
}

const EMPTY_SET: ReadonlySet<string> = new Set();

export class World {
  /** In listing order. */
  readonly receptacles: Receptacle[];
  readonly objects: Thing[];
  private readonly receptacleByName = new Map<string, Receptacle>();
  private readonly objectByName = new Map<string, Thing>();
  /** The receptacle the agent stands at; null in the middle of the room (the start). */
  agentAt: Receptacle | null = null;
  /** The one object the agent carries. */
  holding: Thing | null = null;

  constructor(readonly spec: WorldSpec) {
    this.receptacles = spec.receptacles
      .map((r) => {
        if (this.receptacleByName.has(r.name)) throw new WorldSpecError(`receptacle '${r.name}' listed twice`);
        const receptacle: Receptacle = {
          name: r.name,
          type: r.type,
          number: numberOf(r.name, r.type),
          openable: OPENABLE.has(r.type),
          isOpen: false,
          contents: [],
          holds: CAN_CONTAIN[r.type] ?? EMPTY_SET,
        };
        this.receptacleByName.set(r.name, receptacle);
        return receptacle;
      })
      .sort(compareReceptacles);
    this.objects = spec.objects.map((o) => {
      if (this.objectByName.has(o.name) || this.receptacleByName.has(o.name))
        throw new WorldSpecError(`name '${o.name}' used twice`);
      const location = this.receptacleByName.get(o.in);
      if (!location) throw new WorldSpecError(`object '${o.name}' is in unknown receptacle '${o.in}'`);
      const thing: Thing = {
        name: o.name,
        type: o.type,
        number: numberOf(o.name, o.type),
        location,
        hot: o.hot ?? false,
        cool: o.cool ?? false,
        clean: o.clean ?? false,
        on: o.on ?? false,
        pickupable: !FIXED_OBJECTS.has(o.type),
        heatable: HEATABLE.has(o.type),
        coolable: COOLABLE.has(o.type),
        cleanable: CLEANABLE.has(o.type),
        toggleable: TOGGLEABLE.has(o.type),
      };
      location.contents.push(thing);
      this.objectByName.set(o.name, thing);
      return thing;
    });
    for (const r of this.receptacles) r.contents.sort(compareThings);
  }

  receptacle(name: string): Receptacle | undefined {
    return this.receptacleByName.get(name);
  }

  object(name: string): Thing | undefined {
    return this.objectByName.get(name);
  }

  /** Objects inside r are visible when r has no door or its door is open. */
  isVisible(r: Receptacle): boolean {
    return r.isOpen || !r.openable;
  }

  /** Moves a thing out of its receptacle into the agent's hands. */
  pickUp(thing: Thing): void {
    const from = thing.location;
    if (from) {
      const i = from.contents.indexOf(thing);
      if (i >= 0) from.contents.splice(i, 1);
    }
    thing.location = null;
    this.holding = thing;
  }

  /** Moves the held thing into r (kept in content order). */
  putDown(r: Receptacle): void {
    const thing = this.holding;
    if (!thing) return;
    this.holding = null;
    thing.location = r;
    let i = r.contents.length;
    while (i > 0 && compareThings(r.contents[i - 1], thing) > 0) i--;
    r.contents.splice(i, 0, thing);
  }

  /** The current state as a spec (agent position and held object are not part of it). */
  snapshot(): WorldSpec {
    return {
      room: this.spec.room,
      receptacles: this.receptacles.map((r) => ({ name: r.name, type: r.type })),
      objects: this.objects.filter((o) => o.location).map((o) => objectSpec(o)),
    };
  }
}

function objectSpec(o: Thing): ObjectSpec {
  const spec: ObjectSpec = { name: o.name, type: o.type, in: o.location!.name };
  if (o.hot) spec.hot = true;
  if (o.cool) spec.cool = true;
  if (o.clean) spec.clean = true;
  if (o.on) spec.on = true;
  return spec;
}

// ---------------------------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------------------------

/**
 * Receptacles for a room: every type's minimum, then extra receptacles up to `count` (clamped to
 * what the room allows). Each extra one is a door-receptacle with probability `openableShare`
 * (when both kinds still have room), its type drawn by the slot weights.
 */
export function generateReceptacles(
  rng: Rng,
  room: RoomType,
  count: number,
  openableShare: number,
  required: readonly string[] = [],
): ReceptacleSpec[] {
  const slots = ROOM_RECEPTACLES[room];
  const counts = new Map<string, number>();
  for (const slot of slots) counts.set(slot.type, Math.max(slot.min, required.includes(slot.type) ? 1 : 0));
  let total = 0;
  for (const n of counts.values()) total += n;
  while (total < count) {
    const open = slots.filter((s) => OPENABLE.has(s.type) && counts.get(s.type)! < s.max);
    const plain = slots.filter((s) => !OPENABLE.has(s.type) && counts.get(s.type)! < s.max);
    if (open.length === 0 && plain.length === 0) break;
    const useOpen = plain.length === 0 || (open.length > 0 && rng.bool(openableShare));
    const pool = useOpen ? open : plain;
    const slot = pool[rng.weightedIndex(pool.map((s) => s.weight))];
    counts.set(slot.type, counts.get(slot.type)! + 1);
    total++;
  }
  const out: ReceptacleSpec[] = [];
  for (const type of [...counts.keys()].sort()) {
    for (let n = counts.get(type)!; n >= 1; n--) out.push({ name: `${type} ${n}`, type });
  }
  return out;
}

/** An object waiting for its number. */
export interface Placement {
  type: string;
  in: string;
  hot?: boolean;
  cool?: boolean;
  clean?: boolean;
}

/**
 * Names placed objects `<type> <n>`. Numbers within a type are shuffled, so the target is not
 * always 'apple 1'. Returns the specs in the order given (each placement's name at the same index).
 */
export function nameObjects(rng: Rng, placements: readonly Placement[]): ObjectSpec[] {
  const byType = new Map<string, number[]>();
  placements.forEach((p, i) => {
    const list = byType.get(p.type) ?? [];
    list.push(i);
    byType.set(p.type, list);
  });
  const names: string[] = new Array(placements.length);
  for (const type of [...byType.keys()].sort()) {
    const indices = byType.get(type)!;
    const numbers = rng.shuffle(indices.map((_, k) => k + 1));
    indices.forEach((index, k) => {
      names[index] = `${type} ${numbers[k]}`;
    });
  }
  return placements.map((p, i) => {
    const spec: ObjectSpec = { name: names[i], type: p.type, in: p.in };
    if (p.hot) spec.hot = true;
    if (p.cool) spec.cool = true;
    if (p.clean) spec.clean = true;
    return spec;
  });
}
