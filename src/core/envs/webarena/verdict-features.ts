/**
 * What mini-WebArena adds to a learned model's outcome verdict (env.ts `verdictFeatures`): the env's
 * ending rules and where a page shows the thing an instruction names. The generic features (word
 * overlap) cannot tell a right `stop` answer from any other text of the page, nor a judged ending from
 * a stop (issue 48's audit, docs/results/webarena-lite.md: 87 of 101 wrong outcomes were real
 * successes the model called failures or never ended).
 *
 * Each reads only what an experience model may see: the instruction, the abstract pages
 * (`title | url | role name | …`, experience-card.ts) and the action.
 * - answer_by_subject: a `stop [answer]` to a question whose answer has the form asked (money for
 *   a price, a count for `how many`, else words) and is a readable element standing within a row's
 *   span after the element naming the instruction's subject (its quoted name, or `#number`), or
 *   anywhere on a page titled by the subject. A row cut by the view's top edge is read across the
 *   scroll that cut it.
 * - reaches_subject: an `Open …` instruction, and a step that reaches its subject's page: a click on
 *   the link naming it (in real data, the click that ends the task), or a step on a page titled by it
 *   (a dream that did not end the episode on arriving: its `stop` there is graded by the page reached).
 * - ends_by_page: an ending without `stop`: here only a right URL or saved state ends an episode so
 *   (the card's rule: a stop before then ends it with 0). It trusts the generator's ending of such a step.
 */
import type { OutcomeFeature, VerdictView } from '../env';

const SEP = ' | ';
/** Elements after the subject's that still belong to it (a list row is its link and 3 cells or texts). */
const ROW_SPAN = 4;
const READABLE_PREFIX = /^(?:text|cell|heading) /;
const QUOTED = /'([^']+)'/;
const NUMBER = /#(\d+)/;
const STOP = /^stop \[(.*)\]$/;
const CLICK_NAME = /^click \[\d+\] '(.*)'$/;

/** The thing an instruction names, lower case: its first quoted phrase, else `#number`; null: none. */
export function subjectOf(instruction: string): string | null {
  const quoted = QUOTED.exec(instruction)?.[1];
  if (quoted) return quoted.toLowerCase();
  const number = NUMBER.exec(instruction)?.[1];
  return number ? `#${number}` : null;
}

/** The abstract page's parts: title, url, then one per element (role first). */
function partsOf(state: string): string[] {
  return state.split(SEP).map((p) => p.trim().toLowerCase());
}

function elementName(part: string): string {
  const space = part.indexOf(' ');
  return space < 0 ? '' : part.slice(space + 1);
}

/**
 * The elements the answer may be read from, as one list: the page's, after the previous page's when the
 * step before was a scroll down (a row cut by the view's top edge keeps its head).
 */
function readableRun(view: VerdictView): string[] {
  const last = view.history.length - 1;
  const scrolled = last >= 0 && view.history[last].trim() === 'scroll [down]' && view.historyPages[last];
  const before = scrolled ? partsOf(view.historyPages[last]).slice(2) : [];
  return [...before, ...partsOf(view.state).slice(2)];
}

function answerBySubject(view: VerdictView): number {
  const answer = STOP.exec(view.action.trim())?.[1]?.trim().toLowerCase();
  const subject = subjectOf(view.instruction);
  if (!answer || !subject || !answerForm(view)) return 0;
  const readable = (p: string) => READABLE_PREFIX.test(p) && elementName(p) === answer;
  const parts = partsOf(view.state);
  if ((parts[0] ?? '').includes(subject) && parts.slice(2).some(readable)) return 1;
  const run = readableRun(view);
  for (let i = 0; i < run.length; i++)
    if (elementName(run[i]).includes(subject) && run.slice(i + 1, i + 1 + ROW_SPAN).some(readable)) return 1;
  return 0;
}

function isQuestion(instruction: string): boolean {
  return instruction.trim().endsWith('?');
}

/** A `stop` whose answer has the form the question asks: money for a price, a count for `how many`, else words. */
function answerForm(view: VerdictView): boolean {
  const answer = STOP.exec(view.action.trim())?.[1]?.trim();
  if (!answer || !isQuestion(view.instruction)) return false;
  const question = view.instruction.toLowerCase();
  if (/\bprice\b/.test(question)) return /^\$\d/.test(answer);
  if (/\bhow many\b/.test(question)) return /^\d/.test(answer) && countsWhatIsAsked(answer, question);
  return !/[\d$]/.test(answer);
}

/** A count's words are the question's (`2 comments` to `how many comments`, not `55 points`). */
function countsWhatIsAsked(answer: string, question: string): boolean {
  const stem = (w: string) => w.replace(/s$/, '');
  const asked = new Set(question.match(/[a-z]+/g)?.map(stem) ?? []);
  return (answer.toLowerCase().match(/[a-z]+/g) ?? []).every((w) => asked.has(stem(w)));
}

function reachesSubject(view: VerdictView): number {
  const subject = subjectOf(view.instruction);
  if (!subject || !/^open\b/i.test(view.instruction.trim())) return 0;
  const clicked = CLICK_NAME.exec(view.action.trim())?.[1]?.toLowerCase();
  if (clicked !== undefined && clicked.includes(subject)) return 1;
  const title = partsOf(view.state)[0] ?? '';
  return title.includes(subject) ? 1 : 0;
}

/** A step that ends the episode without `stop`: only a right URL or saved state does that here (the card's rule). */
function endsByPage(view: VerdictView): number {
  return STOP.test(view.action.trim()) ? 0 : 1;
}

export const answerBySubjectFeature: OutcomeFeature = { name: 'answer_by_subject', compute: answerBySubject };
export const endsByPageFeature: OutcomeFeature = { name: 'ends_by_page', compute: endsByPage };
export const reachesSubjectFeature: OutcomeFeature = { name: 'reaches_subject', compute: reachesSubject };
