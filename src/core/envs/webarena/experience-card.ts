/**
 * What an experience model is told about mini-WebArena (env.ts `experienceCard`), and how its pages
 * map to the compact abstract states the model reads and writes.
 *
 * Abstract pages: one line of elements joined by ' | ': the tab title, the URL without its scheme,
 * then each element in view as `role name` (StaticText and gridcell written `text` and `cell`) with
 * its `value:`, `checked:` or `pressed:`, then the scroll line. The element ids go: they number the
 * elements in view from the scroll line's first (or 1), so `concrete` writes them back.
 *
 * Abstract admissible lists keep only what the page cannot tell: `go_back` (whether there is history)
 * and the typed-text candidates, as `type [text]` (the instruction's phrases and numbers, as the
 * browser lists them for each text field in view). The clicks (every link, button and checkbox in
 * view), the scrolls, the two `goto`s and the `stop`s (each text in view, then the candidates) follow
 * from the page, and `concreteAdmissible` puts them back in the browser's order. On a page with no
 * text field in view the candidates are not in the list's types, so a dreamed list lacks the `stop`s of
 * candidates not on the page (decoys: a right answer is read off the page, browser.ts).
 */
import type { ExperienceCard, StateAbstraction } from '../env';
import { CLICKABLE, HOME_ROUTES, TYPABLE, urlOf, type Role } from './pages';

const SEP = ' | ';
const SCHEME = 'http://';
const GOTOS = [`goto [${urlOf(HOME_ROUTES.forum)}]`, `goto [${urlOf(HOME_ROUTES.admin)}]`];
/** Roles whose names a `stop` may answer (browser.ts READABLE). */
const READABLE: ReadonlySet<string> = new Set(['StaticText', 'gridcell', 'heading']);
const SHORT_ROLES: Readonly<Record<string, string>> = { StaticText: 'text', gridcell: 'cell' };
const LONG_ROLES: Readonly<Record<string, Role>> = { text: 'StaticText', cell: 'gridcell' };
const ROLES: ReadonlySet<string> = new Set([...CLICKABLE, ...TYPABLE, ...READABLE]);

const TREE_LINE = /^\[(\d+)\] (\w+) '(.*)'((?: value: .*?)?(?: checked: (?:true|false))?(?: pressed: true)?)$/;
const SHOWING = /^\(showing elements (\d+)–(\d+) of (\d+)\)$/;

/** One element of a concrete page: its id, role, name and the attribute text after the name. */
interface TreeLine {
  id: number;
  role: string;
  name: string;
  attributes: string;
}

function treeLines(text: string): { title: string; url: string; elements: TreeLine[]; showing: string | null } {
  const lines = text.split('\n');
  const title = (lines[0] ?? '').replace(/^Tab 0 \(current\): /, '');
  const url = (lines[1] ?? '').replace(/^URL: /, '');
  const elements: TreeLine[] = [];
  let showing: string | null = null;
  for (const line of lines.slice(2)) {
    const m = TREE_LINE.exec(line);
    if (m) elements.push({ id: Number(m[1]), role: m[2], name: m[3], attributes: m[4] });
    else if (SHOWING.test(line)) showing = line;
  }
  return { title, url, elements, showing };
}

function webarenaAbstract(text: string): string {
  const page = treeLines(text);
  const parts = [page.title, page.url.replace(SCHEME, '')];
  for (const e of page.elements) parts.push(`${SHORT_ROLES[e.role] ?? e.role} ${e.name}${e.attributes}`);
  if (page.showing) parts.push(page.showing);
  return parts.join(SEP);
}

/** An abstract element back as a tree line with its id; null for a part that is no element. */
function treeLine(part: string, id: number): string | null {
  const space = part.indexOf(' ');
  const word = space < 0 ? part : part.slice(0, space);
  const role = LONG_ROLES[word] ?? word;
  if (!ROLES.has(role)) return null;
  const rest = space < 0 ? '' : part.slice(space + 1);
  const attributes = /((?: value: .*?)?(?: checked: (?:true|false))?(?: pressed: true)?)$/.exec(rest)?.[1] ?? '';
  const name = rest.slice(0, rest.length - attributes.length).trim();
  return `[${id}] ${role} '${name}'${attributes}`;
}

function webarenaConcrete(abstract: string, _instruction: string): string {
  const parts = abstract.split(/\s*\|\s*/).map((p) => p.trim());
  const title = parts[0] ?? '';
  const rawUrl = parts[1] ?? '';
  const url = rawUrl === '' || /^\w+:\/\//.test(rawUrl) ? rawUrl : SCHEME + rawUrl;
  const showing = parts.slice(2).find((p) => SHOWING.test(p)) ?? null;
  const first = showing ? Number(SHOWING.exec(showing)![1]) : 1;
  const lines: string[] = [];
  for (const part of parts.slice(2)) {
    const line = part === showing ? null : treeLine(part, first + lines.length);
    if (line) lines.push(line);
  }
  if (showing) lines.push(showing);
  return `Tab 0 (current): ${title}\nURL: ${url}\n\n${lines.join('\n')}`;
}

const TYPE_ACTION = /^type \[\d+\] \[(.*)\] '.*'$/;
const COMPACT_TYPE = /^type \[(.*)\]$/;

/** `go_back` and the typed-text candidates as `type [text]`, each once: what the page does not show. */
function webarenaAbstractAdmissible(admissible: readonly string[]): string[] {
  const out: string[] = [];
  if (admissible.includes('go_back')) out.push('go_back');
  for (const a of admissible) {
    const text = TYPE_ACTION.exec(a)?.[1];
    if (text !== undefined && !out.includes(`type [${text}]`)) out.push(`type [${text}]`);
  }
  return out;
}

/** The browser's full list for a concrete page: clicks, types, scrolls, go_back, gotos, stops (browser.ts). */
function webarenaConcreteAdmissible(local: readonly string[], concreteText: string): string[] {
  const page = treeLines(concreteText);
  const texts = [
    ...new Set(local.map((a) => COMPACT_TYPE.exec(a.trim())?.[1] ?? TYPE_ACTION.exec(a.trim())?.[1]).filter(isText)),
  ];
  const out: string[] = [];
  const answers: string[] = [];
  for (const e of page.elements)
    if (CLICKABLE.has(e.role as Role)) out.push(`click [${e.id}] '${e.name}'`);
    else if (READABLE.has(e.role) && !answers.includes(e.name)) answers.push(e.name);
  for (const e of page.elements.filter((x) => TYPABLE.has(x.role as Role)))
    for (const text of texts) out.push(`type [${e.id}] [${text}] '${e.name}'`);
  const showing = page.showing ? SHOWING.exec(page.showing) : null;
  if (showing && Number(showing[2]) < Number(showing[3])) out.push('scroll [down]');
  if (showing && Number(showing[1]) > 1) out.push('scroll [up]');
  if (local.some((a) => a.trim() === 'go_back')) out.push('go_back');
  out.push(...GOTOS);
  for (const answer of [...answers, ...texts.filter((t) => !answers.includes(t))]) out.push(`stop [${answer}]`);
  return out;
}

function isText(text: string | undefined): text is string {
  return text !== undefined && text.length > 0;
}

export const webarenaAbstraction: StateAbstraction = {
  kind: 'webarena',
  abstract: webarenaAbstract,
  concrete: webarenaConcrete,
  abstractAdmissible: webarenaAbstractAdmissible,
  concreteAdmissible: webarenaConcreteAdmissible,
};

export const webarenaExperienceCard: ExperienceCard = {
  name: 'mini-WebArena',
  showAdmissible: false,
  elementSeparator: '\n',
  text: [
    'mini-WebArena: a forum (forums, posts, comments, votes) and a store admin (products, orders, prices, stock).',
    'A page is "title | url | role name | … | (showing elements a–b of n)", one part per element in view;',
    'roles link, button, checkbox, textbox, searchbox, heading, text, cell; ids number the elements in view.',
    'Actions: click [id], type [id] [text] (a form saves on its button; a search runs at once), scroll [down|up],',
    'goto [url], go_back, stop [answer]. An information task ends at stop, reward 1 if the answer is right;',
    'a navigation or change task ends with reward 1 on the step its URL or the saved state is right;',
    'a stop before then ends it with 0. Invalid actions change nothing.',
    'admissible: only go_back and the typed-text candidates as type [text]; clicks, scrolls, gotos, stops are implied.',
  ].join(' '),
  abstraction: webarenaAbstraction,
};
