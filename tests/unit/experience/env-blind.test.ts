/**
 * The generic dream is blind to our environments (issue 43, part 4): no file of
 * src/core/experience/ (learned/ included) names a built-in env, its verbs, pages or id shapes.
 * What an env wants the dream to know it supplies through its definition (EnvDefinition.experienceCard,
 * verdictFeatures, ...), in its own folder.
 *
 * The word list is built from the env definitions where they can say it (ids, names, the experience
 * card's name, abstraction key and element separator, the verbs and id shapes of the experts'
 * actions), plus a fixed list of page and world words they do not expose.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listEnvDefinitions } from '../../../src/core/envs/registry';

const ROOT = join(__dirname, '../../..');
const GENERIC_DIR = join(ROOT, 'src/core/experience');

/** Words and pieces of our envs that no generic file may hold (compared lower-case). */
const FIXED = [
  'webshop',
  'household',
  'alfworld',
  'textworld',
  'asin',
  'click[',
  'search[',
  'buy now',
  'back to search',
  '< prev',
  'next >',
  'total results',
  'thank you for shopping',
  '[sep]',
  'go to ',
  'in/on',
  'sinkbasin',
  'microwave',
  'countertop',
  'garbagecan',
];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The experts' actions of a few tasks of every level of each built-in env. */
function expertActions(): string[] {
  return listEnvDefinitions().flatMap((d) =>
    [0, 1, 2, 3].flatMap((seed) => [0, 0.5, 1].flatMap((level) => d.solve(d.generateTask(seed, level)).actions)),
  );
}

const ID_LIKE = /^(?=[a-z0-9]*\d)[a-z][a-z0-9]{5,}$/;

/** Forbidden substrings and patterns, named for the failure message. */
function forbidden(): { what: string; test: (text: string) => string | null }[] {
  const words = new Set(FIXED);
  for (const d of listEnvDefinitions()) {
    words.add(d.id.toLowerCase());
    words.add(d.name.toLowerCase());
    const card = d.experienceCard;
    if (card) {
      words.add(card.name.toLowerCase());
      words.add(card.abstraction.kind.toLowerCase());
      if (card.elementSeparator?.trim()) words.add(card.elementSeparator.trim().toLowerCase());
    }
  }
  const patterns: { what: string; pattern: RegExp }[] = [];
  const plainVerbs = new Set<string>();
  const thingWords = new Set<string>();
  const ids: string[] = [];
  for (const action of expertActions()) {
    const bracket = /^(\w+)\[(.*)\]$/.exec(action);
    if (bracket) {
      words.add(`${bracket[1]}[`);
      if (ID_LIKE.test(bracket[2])) ids.push(bracket[2]);
      continue;
    }
    plainVerbs.add(action.split(' ')[0]);
    for (const m of action.matchAll(/\b([a-z]+) \d+\b/g)) thingWords.add(m[1]);
  }
  // An env's own ids (a shared prefix and length): e.g. the shop's product ids.
  if (ids.length > 0) {
    let prefix = ids[0];
    for (const id of ids) while (!id.startsWith(prefix)) prefix = prefix.slice(0, -1);
    const lengths = new Set(ids.map((id) => id.length));
    const [min, max] = [Math.min(...lengths), Math.max(...lengths)];
    const rest = `[a-z0-9]{${min - prefix.length},${max - prefix.length}}`;
    patterns.push({
      what: `an id of the shape ${prefix}…`,
      pattern: new RegExp(`\\b${escapeRegExp(prefix)}${rest}\\b`, 'i'),
    });
  }
  // A verb of an env followed by a numbered thing (`take pan 1`), and any numbered thing of its world.
  for (const verb of plainVerbs)
    patterns.push({
      what: `the action verb '${verb}' on a thing`,
      pattern: new RegExp(`\\b${verb} (?:[a-z]+ )?[a-z]+ \\d+\\b`, 'i'),
    });
  for (const thing of thingWords)
    patterns.push({ what: `the numbered thing '${thing} N'`, pattern: new RegExp(`\\b${thing} \\d+\\b`, 'i') });
  return [
    ...[...words].map((w) => ({
      what: `'${w}'`,
      test: (text: string) => (text.toLowerCase().includes(w) ? w : null),
    })),
    ...patterns.map(({ what, pattern }) => ({ what, test: (text: string) => pattern.exec(text)?.[0] ?? null })),
  ];
}

describe('the generic dream names no environment', () => {
  it('builds its word list from the env definitions', () => {
    const checks = forbidden().map((c) => c.what);
    for (const d of listEnvDefinitions()) expect(checks).toContain(`'${d.id.toLowerCase()}'`);
    expect(checks.some((c) => c.startsWith('an id of the shape'))).toBe(true);
    expect(checks.some((c) => c.startsWith('the action verb'))).toBe(true);
  });

  it('no file of src/core/experience names a built-in env, its verbs, pages or id shapes', () => {
    const checks = forbidden();
    const found: string[] = [];
    for (const file of tsFiles(GENERIC_DIR)) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const check of checks) {
          const hit = check.test(line);
          if (hit !== null) found.push(`${relative(ROOT, file)}:${i + 1}: ${check.what} ('${hit}')`);
        }
      });
    }
    expect(found, 'move env knowledge to src/core/envs/<env>/ (EnvDefinition) or word it generically').toEqual([]);
  });
});
