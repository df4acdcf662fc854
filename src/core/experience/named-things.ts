/**
 * The numbered things a text names (`stack crate 1 on rack 6` → crate 1, rack 6): how a goal
 * head reads the shapes and slots of the data's actions (verdict.ts).
 */

const NUMBERED = /\b([a-z]+) (\d+)\b/g;

/** The numbered things a text names, in order (`crate 1`, `rack 6`). */
export function numberedThings(text: string): string[] {
  return [...text.toLowerCase().matchAll(NUMBERED)].map((m) => `${m[1]} ${m[2]}`);
}

/** The kinds of the numbered things a text names (crate, rack): all that an instruction's words can ask for. */
export function kindsOf(text: string): string[] {
  return numberedThings(text).map((thing) => thing.split(' ')[0]);
}

/** An action's shape: each numbered thing a `#` (`lift crate 1 off rack 6` → `lift # off #`). */
export function shapeOf(action: string): string {
  return action.toLowerCase().trim().replace(NUMBERED, '#');
}
