import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng';
import {
  actionTokens,
  featureSchemaProblem,
  mineFeatureSchema,
  slotShape,
  type SchemaEpisode,
} from '../../../src/core/policy/feature-schema';
import { Featuriser } from '../../../src/core/policy/features';

// A made-up laundry domain with its own verbs, objects and pages, generated here from a seed: nothing in the
// policy's code knows any of its words.
const THINGS = ['shirt', 'towel', 'sock', 'scarf', 'glove', 'sheet', 'apron', 'cap'];
const COLOURS = ['red', 'blue', 'green', 'amber', 'violet', 'white', 'black', 'teal'];
const PLACES = ['shelf', 'rack', 'basket', 'hook', 'drawer', 'bench'];

function laundryEpisode(rng: Rng, i: number): SchemaEpisode {
  const thing = rng.pick(THINGS);
  const instruction = `please fold the ${rng.pick(COLOURS)} ${thing} and hang it up`;
  const steps = [];
  for (let s = 0; s < 6; s++) {
    const here = rng.sample(THINGS, 3).map((t) => `${t} ${rng.int(1, 4)}`);
    const tag = `${rng.pick(['x', 'q', 'k'])}${rng.int(1, 9)}${rng.pick(['p', 'r'])}${rng.int(10, 99)}${rng.pick(['m', 'z'])}`;
    const admissible = [
      ...here.map((h) => `fold ${h}`),
      ...here.map((h) => `move ${h} onto ${rng.pick(PLACES)} ${rng.int(1, 3)}`),
      `press button ${rng.pick(COLOURS)}`,
      `scan ${tag}`,
      'wait',
      ...(i % 20 === 19 ? [] : ['open menu']),
    ];
    const observation = [
      () => `Laundry room ${rng.int(1, 5)}. On the table: ${here.join(', ')}.`,
      () => `You fold the ${rng.pick(THINGS)} ${rng.int(1, 4)}. It looks neat.`,
      () => `The panel shows ${rng.pick(COLOURS)} light ${rng.int(1, 9)}.`,
    ][s % 3]();
    steps.push({ observation: `${observation} Task: ${instruction}`, admissible, action: rng.pick(admissible) });
  }
  return { instruction, steps };
}

const laundry = (n: number, seed = 5): SchemaEpisode[] => {
  const rng = Rng.fromSeed(seed, 'laundry');
  return Array.from({ length: n }, (_, i) => laundryEpisode(rng, i));
};

describe('mineFeatureSchema', () => {
  it("finds a made-up domain's action templates, its controls and its observation kinds", () => {
    const schema = mineFeatureSchema(laundry(40));
    expect(featureSchemaProblem(schema)).toBeNull();
    expect(new Set(schema.templates)).toEqual(
      new Set(['fold <name#>', 'move <name#> onto <name#>', 'press button <text>', 'scan <id>', 'wait', 'open menu']),
    );
    // most frequent first: fold and move are offered 3 times a state
    expect(schema.templates.slice(0, 2).sort()).toEqual(['fold <name#>', 'move <name#> onto <name#>']);
    expect(schema.controls).toEqual(['open menu']); // in 95 % of the episodes, no number
    expect(schema.verbs).toEqual([
      ['move', ['onto']],
      ['press', ['button']],
    ]);
    expect(new Set(schema.kinds)).toEqual(new Set(['laundry room # on the table', 'you fold the', 'the panel shows']));
    expect(schema.stopwords).toEqual(expect.arrayContaining(['please', 'fold', 'hang', 'up']));
    expect(schema.stopwords).not.toContain('towel');
  });

  it('keeps the K most frequent templates and kinds, the rest other', () => {
    const schema = mineFeatureSchema(laundry(40), { maxTemplates: 2, maxKinds: 1 });
    expect(schema.templates.sort()).toEqual(['fold <name#>', 'move <name#> onto <name#>']);
    expect(schema.kinds).toHaveLength(1);
    const f = new Featuriser(schema);
    expect(f.parseAction('press button red').index).toBe(2); // other
    expect(f.parseAction('move cap 2 onto hook 1').template).toBe('move <name#> onto <name#>');
  });

  it('keeps a kind only when it holds minKindShare of the states (each laundry kind holds a third)', () => {
    expect(mineFeatureSchema(laundry(40), { minKindShare: 0.3 }).kinds).toHaveLength(3);
    expect(mineFeatureSchema(laundry(40), { minKindShare: 0.4 }).kinds).toEqual([]);
  });

  it('is deterministic and does not depend on the order of the episodes', () => {
    const a = mineFeatureSchema(laundry(30));
    expect(mineFeatureSchema(laundry(30))).toEqual(a);
    expect(mineFeatureSchema(laundry(30).reverse())).toEqual(a);
  });

  it('reads slot shapes and tokens', () => {
    expect(actionTokens('Pick[Blue Cap]')).toEqual(['pick', '[', 'blue', 'cap', ']']);
    expect(slotShape(['x7p42m'])).toBe('<id>');
    expect(slotShape(['16oz'])).toBe('<text>');
    expect(slotShape(['cap', '3'])).toBe('<name#>');
    expect(slotShape(['12'])).toBe('<num>');
    expect(slotShape(['blue', 'cap'])).toBe('<text>');
  });

  it('gives a featuriser that sorts the domain into its templates and kinds', () => {
    const episodes = laundry(40);
    const f = new Featuriser(mineFeatureSchema(episodes));
    const parsed = f.parseAction('move towel 3 onto basket 2');
    expect(parsed).toMatchObject({
      verb: 'move',
      slots: [
        ['towel', '3'],
        ['basket', '2'],
      ],
    });
    expect(f.schema.templates[parsed.index]).toBe('move <name#> onto <name#>');
    expect(f.parseAction('dance wildly').index).toBe(f.templateCount - 1);
    const state = {
      instruction: 'fold a cap',
      observation: 'You fold the cap 2. It looks neat.',
      admissible: ['wait'],
    };
    expect(f.kindOf(state).key).toBe('you fold the');
    expect(f.kindOf({ ...state, observation: 'Something else entirely.' }).key).toBe('other');
  });
});

describe('the policy layer names no environment', () => {
  // The words, verbs, pages and id shapes of the built-in envs (whole words, any case).
  const BANNED: [string, RegExp][] = [
    ['webshop', /\bweb-?shop\b/i],
    ['household', /\bhousehold\b/i],
    ['search', /\bsearch\b/i],
    ['click', /\bclick\b/i],
    ['Buy Now', /\bbuy now\b/i],
    ['ASIN', /\basins?\b/i],
    ['B0 id shape', /\bb0(?:\[|x{2,}|[a-z0-9]{8}\b)/i],
    ['Thank you for shopping', /thank you for shopping/i],
    ['[SEP]', /\[sep\]/i],
    ['price', /\bprices?\b/i],
    ['go to', /\bgo to\b/i],
    ['take', /\btake\b/i],
    ['put', /\bput\b/i],
    ['heat', /\bheat\b/i],
    ['cool', /\bcool\b/i],
    ['clean', /\bclean\b/i],
    ['examine', /\bexamine\b/i],
    ['You arrive', /\byou arrive\b/i],
    ['TextWorld', /\btextworld\b/i],
  ];
  const dir = join(__dirname, '../../../src/core/policy');

  it('src/core/policy/ holds none of their words', () => {
    const found: string[] = [];
    for (const file of readdirSync(dir).filter((f) => /\.(ts|js)$/.test(f))) {
      readFileSync(join(dir, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const [word, re] of BANNED) if (re.test(line)) found.push(`${file}:${i + 1} '${word}': ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});
