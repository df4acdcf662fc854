/**
 * The numbered things a text names (`put pan 1 in/on cabinet 6` → pan 1, cabinet 6): how a goal
 * head reads the shapes and slots of the data's actions (verdict.ts).
 */

const NUMBERED = /\b([a-z]+) (\d+)\b/g;

/** The numbered things a text names, in order (`pan 1`, `cabinet 6`). */
export function numberedThings(text: string): string[] {
  return [...text.toLowerCase().matchAll(NUMBERED)].map((m) => `${m[1]} ${m[2]}`);
}

/** The kinds of the numbered things a text names (pan, cabinet): all that an instruction's words can ask for. */
export function kindsOf(text: string): string[] {
  return numberedThings(text).map((thing) => thing.split(' ')[0]);
}

/** An action's shape: each numbered thing a `#` (`take pan 1 from cabinet 6` → `take # from #`). */
export function shapeOf(action: string): string {
  return action.toLowerCase().trim().replace(NUMBERED, '#');
}
