/**
 * The numbered things a text names (`put pan 1 in/on cabinet 6` → pan 1, cabinet 6): how a dream
 * keeps to what it has shown (dream-env.ts) and how a goal head tells a move undone (verdict.ts).
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

/**
 * An offered action that relates two or more numbered things (take a pan from a cabinet) names
 * only things the episode has shown: in the real rooms nothing can be taken that was never seen.
 * An action naming one, or one whose argument is bracketed free text (`search[size 3 tier]`,
 * `click[…]`), always stands: its numbers need not name things.
 */
export function namesOnlyShownThings(action: string, shown: ReadonlySet<string>): boolean {
  if (/^\w+\[/.test(action)) return true;
  const named = numberedThings(action);
  return named.length < 2 || named.every((thing) => shown.has(thing));
}

/** An action's shape: each numbered thing a `#` (`take pan 1 from cabinet 6` → `take # from #`). */
export function shapeOf(action: string): string {
  return action.toLowerCase().trim().replace(NUMBERED, '#');
}
