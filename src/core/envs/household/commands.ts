/**
 * Household commands (docs/architecture.md §3.3): parsing, one precondition and one effect per
 * command, and the admissible list.
 *
 * Put dialect: with `putVerb: 'put_in_on'` (default, as in AgentGym/ETO/ReAct data) the command is
 * literally `put apple 1 in/on countertop 1` and the feedback `You put the apple 1 in/on the
 * countertop 1.`; with `'move_to'` (ALFWorld master) it is `move apple 1 to countertop 1` /
 * `You move the apple 1 to the countertop 1.`. The parser also accepts `put O in R`, `put O on R`
 * and the other dialect's form as aliases of the same action.
 *
 * Admissible = every grounded command whose precondition holds, sorted (plain JS string sort,
 * code-unit order) and de-duplicated, as TextWorld's PddlEnv lists them.
 */
import { CLEAN_APPLIANCE, COOL_APPLIANCE, HEAT_APPLIANCE } from './catalog';
import { feedback, describeReceptacle, describeThing, type PutVerb } from './text';
import type { Receptacle, Thing, World } from './world';

export type Command =
  | { verb: 'go'; receptacle: Receptacle }
  | { verb: 'open'; receptacle: Receptacle }
  | { verb: 'close'; receptacle: Receptacle }
  | { verb: 'take'; object: Thing; receptacle: Receptacle }
  | { verb: 'put'; object: Thing; receptacle: Receptacle }
  | { verb: 'heat'; object: Thing; receptacle: Receptacle }
  | { verb: 'cool'; object: Thing; receptacle: Receptacle }
  | { verb: 'clean'; object: Thing; receptacle: Receptacle }
  | { verb: 'use'; object: Thing }
  | { verb: 'examine'; receptacle: Receptacle }
  | { verb: 'examine'; object: Thing }
  | { verb: 'look' }
  | { verb: 'inventory' };

// ---------------------------------------------------------------------------------------------
// Rendering and parsing
// ---------------------------------------------------------------------------------------------

export function renderCommand(command: Command, putVerb: PutVerb = 'put_in_on'): string {
  switch (command.verb) {
    case 'go':
      return `go to ${command.receptacle.name}`;
    case 'open':
      return `open ${command.receptacle.name}`;
    case 'close':
      return `close ${command.receptacle.name}`;
    case 'take':
      return `take ${command.object.name} from ${command.receptacle.name}`;
    case 'put':
      return putVerb === 'move_to'
        ? `move ${command.object.name} to ${command.receptacle.name}`
        : `put ${command.object.name} in/on ${command.receptacle.name}`;
    case 'heat':
      return `heat ${command.object.name} with ${command.receptacle.name}`;
    case 'cool':
      return `cool ${command.object.name} with ${command.receptacle.name}`;
    case 'clean':
      return `clean ${command.object.name} with ${command.receptacle.name}`;
    case 'use':
      return `use ${command.object.name}`;
    case 'examine':
      return `examine ${'object' in command ? command.object.name : command.receptacle.name}`;
    case 'look':
      return 'look';
    case 'inventory':
      return 'inventory';
  }
}

/**
 * The command inside an agent's reply: the last line starting with `Action:` or `>`, or the
 * last `<action>…</action>`, else the whole text; lower-cased, whitespace collapsed, a trailing
 * period dropped.
 */
export function extractAction(raw: string): string {
  let text = raw;
  const tagged = raw.match(/<action>([\s\S]*?)<\/action>/gi);
  if (tagged) {
    text = tagged[tagged.length - 1].replace(/<\/?action>/gi, '');
  } else if (raw.includes('\n') || /^\s*(action\s*:|>)/i.test(raw)) {
    const lines = raw.split(/\r?\n/);
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i].trim();
      const match = /^(?:action\s*:|>)\s*(.*)$/i.exec(line);
      if (match) {
        text = match[1];
        break;
      }
    }
  }
  return text.trim().toLowerCase().replace(/\s+/g, ' ').replace(/\.+$/, '').trim();
}

const TWO_ARGS: Array<[RegExp, 'take' | 'put' | 'heat' | 'cool' | 'clean']> = [
  [/^take (.+) from (.+)$/, 'take'],
  [/^put (.+) (?:in\/on|in|on) (.+)$/, 'put'],
  [/^move (.+) to (.+)$/, 'put'],
  [/^heat (.+) with (.+)$/, 'heat'],
  [/^cool (.+) with (.+)$/, 'cool'],
  [/^clean (.+) with (.+)$/, 'clean'],
];

/** A normalised command string (see `extractAction`) → a grounded command, or null when it names nothing here. */
export function parseCommand(world: World, text: string): Command | null {
  if (text === 'look') return { verb: 'look' };
  if (text === 'inventory') return { verb: 'inventory' };
  if (text.startsWith('go to ')) {
    const receptacle = world.receptacle(text.slice(6));
    return receptacle ? { verb: 'go', receptacle } : null;
  }
  if (text.startsWith('open ') || text.startsWith('close ')) {
    const verb = text.startsWith('open ') ? 'open' : 'close';
    const receptacle = world.receptacle(text.slice(verb.length + 1));
    return receptacle ? { verb, receptacle } : null;
  }
  if (text.startsWith('use ')) {
    const object = world.object(text.slice(4));
    return object ? { verb: 'use', object } : null;
  }
  if (text.startsWith('examine ')) {
    const name = text.slice(8);
    const receptacle = world.receptacle(name);
    if (receptacle) return { verb: 'examine', receptacle };
    const object = world.object(name);
    return object ? { verb: 'examine', object } : null;
  }
  for (const [pattern, verb] of TWO_ARGS) {
    const match = pattern.exec(text);
    if (!match) continue;
    const object = world.object(match[1]);
    const receptacle = world.receptacle(match[2]);
    return object && receptacle ? { verb, object, receptacle } : null;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Preconditions (one per command)
// ---------------------------------------------------------------------------------------------

/** `go to R`: always, the current receptacle included. */
export function canGo(): boolean {
  return true;
}

/** `open R`: R has a door, the agent is at R, and R is closed. */
export function canOpen(world: World, r: Receptacle): boolean {
  return r.openable && world.agentAt === r && !r.isOpen;
}

/** `close R`: R has a door, the agent is at R, and R is open. */
export function canClose(world: World, r: Receptacle): boolean {
  return r.openable && world.agentAt === r && r.isOpen;
}

/** `take O from R`: at R, O in R, O portable, R open if it has a door, hands empty. */
export function canTake(world: World, o: Thing, r: Receptacle): boolean {
  return world.agentAt === r && o.location === r && o.pickupable && world.isVisible(r) && world.holding === null;
}

/** `put O in/on R`: holding O, at R, R open if it has a door, R can contain O's type. */
export function canPut(world: World, o: Thing, r: Receptacle): boolean {
  return world.holding === o && world.agentAt === r && world.isVisible(r) && r.holds.has(o.type);
}

/** `heat O with R`: holding a heatable O at a microwave R (the door may stay closed). */
export function canHeat(world: World, o: Thing, r: Receptacle): boolean {
  return world.holding === o && o.heatable && r.type === HEAT_APPLIANCE && world.agentAt === r;
}

/** `cool O with R`: holding a coolable O at a fridge R. */
export function canCool(world: World, o: Thing, r: Receptacle): boolean {
  return world.holding === o && o.coolable && r.type === COOL_APPLIANCE && world.agentAt === r;
}

/** `clean O with R`: holding a cleanable O at a sinkbasin R. */
export function canClean(world: World, o: Thing, r: Receptacle): boolean {
  return world.holding === o && o.cleanable && r.type === CLEAN_APPLIANCE && world.agentAt === r;
}

/** `use O`: O is a lamp in the (visible) receptacle the agent is at. */
export function canUse(world: World, o: Thing): boolean {
  return o.toggleable && o.location !== null && o.location === world.agentAt && world.isVisible(o.location);
}

/** `examine R`: the agent is at R. */
export function canExamineReceptacle(world: World, r: Receptacle): boolean {
  return world.agentAt === r;
}

/** `examine O`: O is held, or visible in the receptacle the agent is at. */
export function canExamineObject(world: World, o: Thing): boolean {
  if (world.holding === o) return true;
  return o.location !== null && o.location === world.agentAt && world.isVisible(o.location);
}

export function isAdmissible(world: World, command: Command): boolean {
  switch (command.verb) {
    case 'go':
      return canGo();
    case 'open':
      return canOpen(world, command.receptacle);
    case 'close':
      return canClose(world, command.receptacle);
    case 'take':
      return canTake(world, command.object, command.receptacle);
    case 'put':
      return canPut(world, command.object, command.receptacle);
    case 'heat':
      return canHeat(world, command.object, command.receptacle);
    case 'cool':
      return canCool(world, command.object, command.receptacle);
    case 'clean':
      return canClean(world, command.object, command.receptacle);
    case 'use':
      return canUse(world, command.object);
    case 'examine':
      return 'object' in command
        ? canExamineObject(world, command.object)
        : canExamineReceptacle(world, command.receptacle);
    case 'look':
      return true;
    case 'inventory':
      return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Effects (one per command); each returns the feedback text. Call only when admissible.
// ---------------------------------------------------------------------------------------------

export function goTo(world: World, r: Receptacle): string {
  world.agentAt = r;
  return feedback.arrive(r);
}

export function open(world: World, r: Receptacle): string {
  r.isOpen = true;
  return feedback.open(r);
}

export function close(world: World, r: Receptacle): string {
  r.isOpen = false;
  return feedback.close(r);
}

export function take(world: World, o: Thing, r: Receptacle): string {
  world.pickUp(o);
  return feedback.take(o, r);
}

export function put(world: World, o: Thing, r: Receptacle, putVerb: PutVerb): string {
  world.putDown(r);
  return feedback.put(o, r, putVerb);
}

export function heat(world: World, o: Thing, r: Receptacle): string {
  o.hot = true;
  o.cool = false;
  return feedback.heat(o, r);
}

export function cool(world: World, o: Thing, r: Receptacle): string {
  o.cool = true;
  o.hot = false;
  return feedback.cool(o, r);
}

export function clean(world: World, o: Thing, r: Receptacle): string {
  o.clean = true;
  return feedback.clean(o, r);
}

export function use(world: World, o: Thing): string {
  o.on = !o.on;
  return feedback.use(o);
}

/** Applies an admissible command and returns its feedback. */
export function execute(world: World, command: Command, putVerb: PutVerb): string {
  switch (command.verb) {
    case 'go':
      return goTo(world, command.receptacle);
    case 'open':
      return open(world, command.receptacle);
    case 'close':
      return close(world, command.receptacle);
    case 'take':
      return take(world, command.object, command.receptacle);
    case 'put':
      return put(world, command.object, command.receptacle, putVerb);
    case 'heat':
      return heat(world, command.object, command.receptacle);
    case 'cool':
      return cool(world, command.object, command.receptacle);
    case 'clean':
      return clean(world, command.object, command.receptacle);
    case 'use':
      return use(world, command.object);
    case 'examine':
      return 'object' in command ? describeThing(command.object) : describeReceptacle(command.receptacle);
    case 'look':
      return feedback.look(world);
    case 'inventory':
      return feedback.inventory(world.holding);
  }
}

// ---------------------------------------------------------------------------------------------
// Admissible list
// ---------------------------------------------------------------------------------------------

/** The commands admissible everywhere (`go to` every receptacle, `inventory`, `look`), sorted. */
export function globalCommands(world: World): string[] {
  const out = world.receptacles.map((r) => `go to ${r.name}`);
  out.push('inventory', 'look');
  return out.sort();
}

/** The commands that depend on where the agent is and what it holds (unsorted). */
export function localCommands(world: World, putVerb: PutVerb): string[] {
  const out: string[] = [];
  const held = world.holding;
  if (held) out.push(`examine ${held.name}`);
  const r = world.agentAt;
  if (!r) return out;
  out.push(`examine ${r.name}`);
  if (r.openable) out.push(r.isOpen ? `close ${r.name}` : `open ${r.name}`);
  const visible = world.isVisible(r);
  if (visible) {
    for (const o of r.contents) {
      out.push(`examine ${o.name}`);
      if (held === null && o.pickupable) out.push(`take ${o.name} from ${r.name}`);
      if (o.toggleable) out.push(`use ${o.name}`);
    }
  }
  if (held) {
    if (visible && r.holds.has(held.type)) {
      out.push(putVerb === 'move_to' ? `move ${held.name} to ${r.name}` : `put ${held.name} in/on ${r.name}`);
    }
    if (r.type === HEAT_APPLIANCE && held.heatable) out.push(`heat ${held.name} with ${r.name}`);
    if (r.type === COOL_APPLIANCE && held.coolable) out.push(`cool ${held.name} with ${r.name}`);
    if (r.type === CLEAN_APPLIANCE && held.cleanable) out.push(`clean ${held.name} with ${r.name}`);
  }
  return out;
}

/** Merges two sorted lists into one sorted list without duplicates. */
function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0,
    j = 0;
  let last: string | undefined;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && a[i] <= b[j]) ? a[i++] : b[j++];
    if (next !== last) out.push(next);
    last = next;
  }
  return out;
}

/**
 * All admissible commands, sorted and de-duplicated. `global` is `globalCommands(world)`, passed
 * in so an episode computes it once.
 */
export function admissibleCommands(
  world: World,
  putVerb: PutVerb,
  global: readonly string[] = globalCommands(world),
): string[] {
  return mergeSorted(global, localCommands(world, putVerb).sort());
}
