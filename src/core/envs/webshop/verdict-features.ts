/**
 * What mini-WebShop adds to a learned model's outcome verdict (env.ts `verdictFeatures`): WebShop's
 * price rule, which its reward applies and the generic features cannot read.
 *
 * over_chosen: the price of what is bought exceeds the instruction's bound. The price is the
 * smallest decimal of the listing the item was chosen from (the text after the last clicked name on
 * the page it was clicked on: what the agent saw when it chose), else of the state, and the bound is
 * the instruction's largest decimal. In real data the two agree; in a dream the listing is what the
 * policy chose by, so the verdict follows the choice rather than whatever price the next page shows.
 */
import type { OutcomeFeature, VerdictView } from '../env';

const DECIMAL = /\d+\.\d+/g;
/** An ASIN-like word: a letter, then five or more letters or digits, at least one a digit (`b0eub84qr9`). */
const ID_LIKE = /\b(?=[a-z0-9]*\d)[a-z][a-z0-9]{5,}\b/;

function decimals(text: string): number[] {
  return (text.match(DECIMAL) ?? []).map(Number);
}

function argumentOf(action: string): string {
  return /^\w+\[(.*)\]$/.exec(action)?.[1] ?? action;
}

/** The listing of the last item clicked by name, on the page it was clicked on (null: no shown click names one). */
function chosenListing(view: VerdictView): string | null {
  for (let i = Math.min(view.history.length, view.historyPages.length) - 1; i >= 0; i--) {
    const name = argumentOf(view.history[i]).toLowerCase();
    if (!/\d/.test(name)) continue;
    const page = view.historyPages[i].toLowerCase();
    const at = page.indexOf(name);
    if (at < 0) continue;
    const rest = page.slice(at + name.length);
    const end = rest.search(ID_LIKE);
    return end < 0 ? rest : rest.slice(0, end);
  }
  return null;
}

export const overChosen: OutcomeFeature = {
  name: 'over_chosen',
  compute(view: VerdictView): number {
    const bound = Math.max(-Infinity, ...decimals(view.instruction));
    const chosen = chosenListing(view);
    const shown = decimals(chosen !== null && decimals(chosen).length > 0 ? chosen : view.state);
    return shown.length > 0 && Number.isFinite(bound) && Math.min(...shown) > bound ? 1 : 0;
  },
};
