/**
 * Every string the household shows, exactly as ALFWorld prints it (its current-master
 * forms; docs/architecture.md §3.3): the article is always "a" ("a egg 1"), lists join with ", " and put
 * ", and " before the last item even for two items, and an empty list reads "nothing".
 *
 * ALFWorld answers an inadmissible command with `Nothing happens.`; this environment instead keeps
 * the previous observation for such no-ops (the Env contract, docs/architecture.md §3.2), and reports
 * `info.valid: false`. `NOTHING_HAPPENS` is exported for wrappers that want the ALFWorld text.
 */
import type { Receptacle, Thing, World } from './world';

export type PutVerb = 'put_in_on' | 'move_to';

export const WELCOME = '-= Welcome to TextWorld, ALFRED! =-';
export const NOTHING_HAPPENS = 'Nothing happens.';

/** "nothing" | "a x" | "a x, and a y" | "a x, a y, and a z". */
export function renderList(names: readonly string[]): string {
  if (names.length === 0) return 'nothing';
  if (names.length === 1) return `a ${names[0]}`;
  let out = '';
  for (let i = 0; i < names.length - 1; i++) out += `a ${names[i]}, `;
  return `${out}and a ${names[names.length - 1]}`;
}

/** What the agent sees from the middle of the room (the `look` text there, and the reset text). */
export function describeRoom(world: World): string {
  return `You are in the middle of a room. Looking quickly around you, you see ${renderList(world.receptacles.map((r) => r.name))}.`;
}

function contentNames(r: Receptacle): string[] {
  const names: string[] = new Array(r.contents.length);
  for (let i = 0; i < r.contents.length; i++) names[i] = r.contents[i].name;
  return names;
}

/** examine-receptacle: "The R is open. In it, you see …." | "The R is closed." | "On the R, you see …." */
export function describeReceptacle(r: Receptacle): string {
  if (r.openable) {
    return r.isOpen
      ? `The ${r.name} is open. In it, you see ${renderList(contentNames(r))}.`
      : `The ${r.name} is closed.`;
  }
  return `On the ${r.name}, you see ${renderList(contentNames(r))}.`;
}

/** examine-object: its states, or "There's nothing special about O." */
export function describeThing(o: Thing): string {
  const states: string[] = [];
  if (o.hot) states.push('hot');
  if (o.cool) states.push('cold');
  if (o.clean) states.push('clean');
  if (states.length === 0) return `There's nothing special about ${o.name}.`;
  return `This is a ${states.join(' and ')} ${o.name}.`;
}

export function resetText(world: World, instruction: string): string {
  return `${WELCOME}\n\n${describeRoom(world)}\n\nYour task is to: ${instruction}`;
}

export const feedback = {
  arrive: (r: Receptacle) => `You arrive at ${r.name}. ${describeReceptacle(r)}`,
  open: (r: Receptacle) => `You open the ${r.name}. ${describeReceptacle(r)}`,
  close: (r: Receptacle) => `You close the ${r.name}.`,
  take: (o: Thing, r: Receptacle) => `You pick up the ${o.name} from the ${r.name}.`,
  put: (o: Thing, r: Receptacle, verb: PutVerb) =>
    verb === 'move_to' ? `You move the ${o.name} to the ${r.name}.` : `You put the ${o.name} in/on the ${r.name}.`,
  heat: (o: Thing, r: Receptacle) => `You heat the ${o.name} using the ${r.name}.`,
  cool: (o: Thing, r: Receptacle) => `You cool the ${o.name} using the ${r.name}.`,
  clean: (o: Thing, r: Receptacle) => `You clean the ${o.name} using the ${r.name}.`,
  use: (o: Thing) => (o.on ? `You turn on the ${o.name}.` : `You turn off the ${o.name}.`),
  inventory: (held: Thing | null) => (held ? `You are carrying: a ${held.name}.` : 'You are not carrying anything.'),
  look: (world: World) =>
    world.agentAt ? `You are facing the ${world.agentAt.name}. Next to it, you see nothing.` : describeRoom(world),
};
