import { describe, expect, it } from 'vitest';
import { checkEnv } from '../../../../src/core/envs/check-env';
import { TimeLimit } from '../../../../src/core/envs/env';
import {
  candidateQueries,
  difficultyOfKnobs,
  episodeOf,
  forgetEpisodes,
  generateTask,
  getCatalog,
  knobsForLevel,
  mutateTask,
  parseAction,
  priceUpperFor,
  WebShopEnv,
  webshopDefinition,
  type WebShopKnobs,
  type WebShopTaskSpec,
} from '../../../../src/core/envs/webshop';
import { chooseOptions } from '../../../../src/core/envs/webshop/episode';
import { getReward } from '../../../../src/core/envs/webshop/reward';
import { Rng } from '../../../../src/core/rng';
import type { Observation, StepResult, Task } from '../../../../src/core/types';
import { ITEM_PAGE_CLICKS } from '../../data/fixtures';

const SEP = ' [SEP] ';
const LEVELS = [0, 0.25, 0.5, 0.75, 1];

function makeEnv(difficulty = 0.5): TimeLimit<WebShopEnv> {
  return new TimeLimit(webshopDefinition.create({ difficulty }) as WebShopEnv, 15);
}

/** A hand-made task on catalog product 0: one attribute, its first option value, no distractors. */
function fixedTask(): Task {
  const products = getCatalog(0, 1000).products;
  const index = getCatalog(0, 1000).index;
  const target = products.find(
    (p) => p.options.length >= 1 && p.pricing.length === 1 && index.search(p.title)[0] === p.asin,
  )!;
  const spec: WebShopTaskSpec = {
    version: 1,
    catalogSeed: 0,
    catalogSize: 1000,
    knobs: knobsForLevel(0),
    target: target.asin,
    typeId: target.typeId,
    goal: {
      attributes: [target.attributes[0]],
      options: [{ group: target.options[0].name, value: target.options[0].values[0] }],
      priceUpper: 1_000_000,
    },
    noun: 'thing',
    style: 'synthetic',
    distractors: [],
  };
  const instruction = `i need ${target.attributes[0]} thing with ${target.options[0].name}: ${target.options[0].values[0]}`;
  return { id: 'webshop-lite-v0/fixed', env: 'webshop-lite-v0', instruction, difficulty: 0, spec, origin: 'imported' };
}

async function playExpert(env: TimeLimit<WebShopEnv>, opts: { seed: number; task?: Task }): Promise<StepResult> {
  await env.reset(opts);
  for (;;) {
    const action = env.unwrapped instanceof WebShopEnv ? env.unwrapped.expertAction() : null;
    const r = await env.step(action!);
    if (r.terminated || r.truncated) return r;
  }
}

describe('webshop-lite-v0 contract', () => {
  it('passes checkEnv behind TimeLimit(15)', async () => {
    const report = await checkEnv(makeEnv());
    expect(report.failures).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('has the registry definition the project expects', () => {
    expect(webshopDefinition.id).toBe('webshop-lite-v0');
    expect(webshopDefinition.name).toBe('mini-WebShop');
    expect(webshopDefinition.defaultStepLimit).toBe(15);
    const task = webshopDefinition.generateTask(3, 0.5);
    expect(task.id).toBe('webshop-lite-v0/3/0.50');
    expect(task.env).toBe('webshop-lite-v0');
    expect(task.origin).toBe('generated');
    expect(task.seed).toBe(3);
    expect(task.instruction).toBe(task.instruction.toLowerCase());
    expect(JSON.parse(JSON.stringify(task))).toEqual(task);
  });
});

describe('pages (WebShop simple mode)', () => {
  it('renders the exact page layouts', async () => {
    const task = fixedTask();
    const spec = task.spec as WebShopTaskSpec;
    const target = getCatalog(0, 1000).byAsin.get(spec.target)!;
    const env = new WebShopEnv();
    const obs = await env.reset({ seed: 0, task });
    expect(obs.text).toBe(`WebShop [SEP] Instruction: [SEP] ${task.instruction} [SEP] Search`);
    expect(obs.text.startsWith('WebShop [SEP] Instruction: [SEP] ')).toBe(true);
    expect(obs.admissible).toEqual(candidateQueries(task.instruction, spec).map((q) => `search[${q}]`));
    expect(obs.admissible.length).toBeLessThanOrEqual(4);

    // Search with the exact title: the target is the first hit.
    const results = await env.step(`search[${target.title}]`);
    const hits = episodeOf(task).search(target.title.toLowerCase());
    expect(hits[0]).toBe(target.asin);
    const header = `Instruction: [SEP] ${task.instruction} [SEP] Back to Search [SEP] Page 1 (Total results: ${hits.length}) [SEP] Next >`;
    const items = hits.slice(0, 10).flatMap((a) => {
      const p = episodeOf(task).product(a)!;
      return [p.asin, p.title, p.priceTag];
    });
    expect(results.text).toBe([header, ...items].join(SEP));
    expect(results.admissible).toEqual([
      'click[back to search]',
      'click[next >]',
      ...hits.slice(0, 10).map((a) => `click[${a.toLowerCase()}]`),
    ]);

    const page2 = await env.step('click[Next >]');
    expect(
      page2.text.startsWith(
        `Instruction: [SEP] ${task.instruction} [SEP] Back to Search [SEP] Page 2 (Total results: ${hits.length}) [SEP] < Prev [SEP] Next > [SEP] `,
      ),
    ).toBe(true);
    expect(page2.admissible.slice(0, 3)).toEqual(['click[back to search]', 'click[< prev]', 'click[next >]']);
    await env.step('click[< prev]');

    const item = await env.step(`click[${target.asin.toLowerCase()}]`);
    const groups = target.options.flatMap((g) => [g.name, ...g.values]);
    expect(item.text).toBe(
      [
        `Instruction: [SEP] ${task.instruction} [SEP] Back to Search [SEP] < Prev`,
        ...groups,
        target.title,
        `Price: ${target.priceTag}`,
        'Rating: N.A.',
        'Description',
        'Features',
        'Reviews',
        'Buy Now',
      ].join(SEP),
    );
    expect(target.priceTag).toMatch(/^\$\d+\.\d\d$/);
    expect(item.admissible).toEqual([
      ...ITEM_PAGE_CLICKS,
      ...target.options.flatMap((g) => g.values.map((v) => `click[${v}]`)),
    ]);

    // Selecting an option does not change the simple-mode text.
    const chosen = await env.step(`click[${spec.goal.options[0].value}]`);
    expect(chosen.info.valid).toBe(true);
    expect(chosen.text).toBe(item.text);

    const description = await env.step('click[description]');
    expect(description.text).toBe(
      `Instruction: [SEP] ${task.instruction} [SEP] Back to Search [SEP] < Prev [SEP] ${target.description}`,
    );
    expect(description.admissible).toEqual(['click[back to search]', 'click[< prev]']);
    await env.step('click[< prev]');
    const features = await env.step('click[features]');
    expect(features.text).toBe(
      [`Instruction: [SEP] ${task.instruction} [SEP] Back to Search [SEP] < Prev`, ...target.bullets].join(SEP),
    );
    await env.step('click[< prev]');
    const reviews = await env.step('click[reviews]');
    expect(reviews.text).toBe(`Instruction: [SEP] ${task.instruction} [SEP] Back to Search [SEP] < Prev`);
    const back = await env.step('click[< prev]');
    expect(back.text).toBe(item.text);

    // Options survive the sub-page round trip: buying now earns the full reward.
    const done = await env.step('click[Buy Now]');
    expect(done.terminated).toBe(true);
    expect(done.reward).toBe(1);
    expect(done.info).toEqual({ valid: true, success: true, score: 1, steps: 12 });
    expect(done.admissible).toEqual([]);
    expect(done.text.startsWith('Thank you for shopping with us! [SEP] ')).toBe(true);
    expect(done.text.endsWith('Reward [SEP] Your score (min 0.0, max 1.0) [SEP] 1.0')).toBe(true);
    expect(done.text).toContain(
      `Purchased [SEP] asin [SEP] ${target.asin} [SEP] options [SEP] {"${spec.goal.options[0].group}": "${spec.goal.options[0].value}"}`,
    );
  });

  it('scores a purchase without the goal option below 1', async () => {
    const task = fixedTask();
    const target = getCatalog(0, 1000).byAsin.get((task.spec as WebShopTaskSpec).target)!;
    const env = new WebShopEnv();
    await env.reset({ seed: 0, task });
    await env.step(`search[${target.title}]`);
    await env.step(`click[${target.asin}]`);
    const done = await env.step('click[buy now]');
    expect(done.terminated).toBe(true);
    expect(done.reward).toBeCloseTo(2 / 3, 12); // attribute + price, no option
    expect(done.info.success).toBe(false);
    expect(done.text.endsWith(`[SEP] ${String(2 / 3)}`)).toBe(true);
  });
});

describe('actions', () => {
  it('parses bare actions and the last Action: line, lower-casing the argument', () => {
    expect(parseAction('click[Buy Now]')).toEqual({ verb: 'click', arg: 'buy now' });
    expect(parseAction('  search[Red  Shoes] ')).toEqual({ verb: 'search', arg: 'red shoes' });
    expect(parseAction('Thought: look\nAction: click[x]\nAction: click[< Prev]')).toEqual({
      verb: 'click',
      arg: '< prev',
    });
    expect(parseAction('Thought:\nI should search.\n\nAction:\nsearch[sofa]')).toEqual({ verb: 'search', arg: 'sofa' });
    expect(parseAction('search[]')).toBeNull();
    expect(parseAction('buy it')).toBeNull();
  });

  it('treats invalid actions as no-ops that still count a step', async () => {
    const env = new WebShopEnv();
    const obs = await env.reset({ seed: 11 });
    for (const bad of ['click[buy now]', 'click[search]', 'search[]', 'hello', 'click[__nothing__]', 'jump[sofa]']) {
      const r = await env.step(bad);
      expect(r.info.valid, bad).toBe(false);
      expect(r.reward).toBe(0);
      expect(r.terminated).toBe(false);
      expect(r.text).toBe(obs.text);
      expect(r.admissible).toEqual(obs.admissible);
    }
    const r = await env.step('click[nope]');
    expect(r.info.steps).toBe(7);
  });

  it('accepts any non-empty search, but only on the search page', async () => {
    const env = new WebShopEnv();
    await env.reset({ seed: 12 });
    const results = await env.step('search[some blue thing nobody sells]');
    expect(results.info.valid).toBe(true);
    expect(results.text).toMatch(/Page 1 \(Total results: \d+\)/);
    const again = await env.step('search[sofa]');
    expect(again.info.valid).toBe(false);
    expect(again.text).toBe(results.text);
    const home = await env.step('click[back to search]');
    expect(home.text.startsWith('WebShop [SEP] ')).toBe(true);
    expect((await env.step('search[sofa]')).info.valid).toBe(true);
  });

  it('lists no actions after buying and stays terminal', async () => {
    const env = new WebShopEnv();
    await env.reset({ seed: 13 });
    let r: StepResult;
    do r = await env.step(env.expertAction()!);
    while (!r.terminated);
    expect(r.admissible).toEqual([]);
    expect(env.expertAction()).toBeNull();
    const after = await env.step('click[back to search]');
    expect(after.info.valid).toBe(false);
    expect(after.reward).toBe(0);
  });
});

describe('expert and random baselines', () => {
  it.each(LEVELS)('the expert earns reward exactly 1 on 100 seeds at level %s', async (level) => {
    const env = makeEnv(level);
    let pages2 = 0;
    for (let seed = 0; seed < 100; seed++) {
      const r = await playExpert(env, { seed });
      expect(r.terminated, `seed ${seed}`).toBe(true);
      expect(r.reward, `seed ${seed}`).toBe(1);
      expect(r.info.success).toBe(true);
      if (((env.unwrapped as WebShopEnv).currentTask!.spec as WebShopTaskSpec).expert!.rank >= 10) pages2++;
    }
    if (level === 1) expect(pages2).toBe(100); // level 1 pushes the first match onto page 2+
  });

  it('a uniformly random admissible policy succeeds at most 5% (300 episodes, 15 steps)', async () => {
    const env = makeEnv(0.5);
    let successes = 0;
    for (let episode = 0; episode < 300; episode++) {
      const rng = Rng.fromSeed(episode, 'random-policy');
      let obs: Observation = await env.reset({ seed: 5000 + episode });
      for (;;) {
        const r = await env.step(rng.pick(obs.admissible));
        if (r.terminated || r.truncated) {
          if (r.info.success) successes++;
          break;
        }
        obs = r;
      }
    }
    expect(successes / 300).toBeLessThanOrEqual(0.05);
  });

  it.each([200, 5000])('works on a %i-product catalog', async (catalogSize) => {
    const env = new TimeLimit(new WebShopEnv({ difficulty: 0.7, catalogSize }), 15);
    for (let seed = 0; seed < 10; seed++) {
      const r = await playExpert(env, { seed });
      expect(r.reward).toBe(1);
      const task = (env.unwrapped as WebShopEnv).currentTask!;
      expect(task.id).toContain(`/c0-${catalogSize}`);
      expect((task.spec as WebShopTaskSpec).catalogSize).toBe(catalogSize);
    }
  });

  it('solve() returns the expert plan', () => {
    const task = webshopDefinition.generateTask(21, 1);
    const solution = webshopDefinition.solve(task);
    expect(solution.success).toBe(true);
    expect(solution.optimalLength).toBe(solution.actions.length);
    expect(solution.actions[0]).toMatch(/^search\[/);
    expect(solution.actions).toContain('click[next >]');
    expect(solution.actions[solution.actions.length - 1]).toBe('click[buy now]');
    expect(solution.optimalLength).toBeLessThanOrEqual(15);
  });
});

describe('distractors', () => {
  it('are near misses of the kind they claim', () => {
    const counts: Record<string, number> = {};
    for (let seed = 0; seed < 40; seed++) {
      const task = generateTask(seed, 1);
      const spec = task.spec as WebShopTaskSpec;
      const episode = episodeOf(task);
      expect(episode.overlay).toHaveLength(spec.distractors.length);
      spec.distractors.forEach((recipe, i) => {
        const p = episode.overlay[i];
        counts[recipe.kind] = (counts[recipe.kind] ?? 0) + 1;
        expect(episode.satisfies(p.asin)).toBe(false);
        const options = chooseOptions(p.options, episode.goal.goalOptions) ?? {};
        const r = getReward(p, episode.goal, p.price, options);
        expect(r.reward).toBeLessThan(1);
        const k = spec.goal.attributes.length;
        if (recipe.kind === 'attribute') expect([r.attributeMatches, r.priceOk, r.rType]).toEqual([k - 1, true, 1]);
        if (recipe.kind === 'option')
          expect([r.attributeMatches, r.optionMatches < spec.goal.options.length, r.priceOk]).toEqual([k, true, true]);
        if (recipe.kind === 'price' || recipe.kind === 'push') {
          expect([r.attributeMatches, r.optionMatches, r.priceOk, r.rType]).toEqual([
            k,
            spec.goal.options.length,
            false,
            1,
          ]);
        }
        if (recipe.kind === 'type')
          expect([p.typeId !== spec.typeId, r.rType, r.attributeMatches]).toEqual([true, 0, k]);
      });
    }
    expect(Object.keys(counts).sort()).toEqual(['attribute', 'option', 'price', 'push', 'type']);
  });
});

describe('determinism', () => {
  it('same seed → identical episode, also after rebuilding the task from JSON', async () => {
    const transcript = async (env: WebShopEnv, opts: { seed: number; task?: Task }) => {
      const rng = Rng.fromSeed(99, 'replay');
      let obs: Observation = await env.reset(opts);
      const lines = [obs.text, obs.admissible.join('|')];
      for (let t = 0; t < 15; t++) {
        const action = t % 3 === 2 ? env.expertAction()! : rng.pick(obs.admissible);
        const r = await env.step(action);
        lines.push(action, r.text, r.admissible.join('|'), String(r.reward));
        if (r.terminated) break;
        obs = r;
      }
      return lines.join('\n');
    };
    const a = await transcript(new WebShopEnv({ difficulty: 0.8 }), { seed: 42 });
    const b = await transcript(new WebShopEnv({ difficulty: 0.8 }), { seed: 42 });
    expect(a).toBe(b);
    const task = JSON.parse(JSON.stringify(generateTask(42, 0.8))) as Task;
    forgetEpisodes();
    expect(await transcript(new WebShopEnv(), { seed: 7, task })).toBe(a);
  });

  it('generateTask is a pure function of (seed, difficulty)', () => {
    const first = generateTask(77, 0.6);
    forgetEpisodes();
    expect(generateTask(77, 0.6)).toEqual(first);
    expect(generateTask(78, 0.6).instruction).not.toBe(first.instruction);
  });
});

describe('difficulty knobs and mutation', () => {
  it('maps levels to the documented knob ranges', () => {
    const easy = knobsForLevel(0);
    expect(easy).toMatchObject({
      catalogSize: 1000,
      attributes: 1,
      options: 0.5,
      distractors: 2,
      hiddenAttributeShare: 0,
      rankPush: 0,
      stepLimit: 15,
    });
    const hard = knobsForLevel(1);
    expect(hard.attributes).toBeGreaterThanOrEqual(3);
    expect(hard.options).toBeGreaterThanOrEqual(2);
    expect(hard.distractors).toBe(10);
    expect(hard.hiddenAttributeShare).toBe(1);
    expect(hard.rankPush).toBe(1);
    for (const level of LEVELS) expect(difficultyOfKnobs(knobsForLevel(level))).toBeCloseTo(level, 6);
  });

  it('realises the knobs in generated tasks', () => {
    for (let seed = 0; seed < 30; seed++) {
      const easy = generateTask(seed, 0).spec as WebShopTaskSpec;
      expect(easy.goal.attributes).toHaveLength(1);
      expect(easy.goal.options.length).toBeLessThanOrEqual(1);
      expect(easy.distractors).toHaveLength(2);
      expect(easy.style).toBe('synthetic');
      const hard = generateTask(seed, 1).spec as WebShopTaskSpec;
      expect(hard.goal.attributes.length).toBeGreaterThanOrEqual(3);
      expect(hard.goal.options.length).toBeGreaterThanOrEqual(2);
      expect(hard.distractors.filter((d) => d.kind !== 'push').length).toBe(10);
      expect(hard.expert!.rank).toBeGreaterThanOrEqual(10);
    }
  });

  it("follows WebShop's price rule", () => {
    const rng = Rng.fromSeed(1, 'price');
    for (let i = 0; i < 50; i++) expect([30, 40, 50]).toContain(priceUpperFor(rng, 12.5, false));
    expect(priceUpperFor(rng, 12.5, true)).toBe(20);
    expect(priceUpperFor(rng, 975, false)).toBe(990); // 980, 990: two left
    expect(priceUpperFor(rng, 985, false)).toBe(1_000_000); // fewer than two → no clause
  });

  it.each(['harder', 'easier'] as const)('mutateTask(%s) moves one knob one notch and stays solvable', (direction) => {
    const rng = Rng.fromSeed(5, 'mutate', direction);
    for (let i = 0; i < 12; i++) {
      const parent = generateTask(100 + i, 0.5);
      const child = webshopDefinition.mutateTask(parent, rng, direction);
      expect(child.origin).toBe('variation');
      expect(child.parent).toBe(parent.id);
      expect(child.id).not.toBe(parent.id);
      const before = (parent.spec as WebShopTaskSpec).knobs;
      const after = (child.spec as WebShopTaskSpec).knobs;
      const moved = (Object.keys(before) as (keyof WebShopKnobs)[]).filter((k) => before[k] !== after[k]);
      expect(moved).toHaveLength(1);
      const sign = direction === 'harder' ? 1 : -1;
      expect(Math.sign(after[moved[0]] - before[moved[0]])).toBe(sign);
      expect(webshopDefinition.solve(child).success).toBe(true);
      expect((child.spec as WebShopTaskSpec).typeId).toBe((parent.spec as WebShopTaskSpec).typeId);
    }
  });

  it('mutates at the edges without breaking', () => {
    const rng = Rng.fromSeed(6, 'edge');
    const top = mutateTask(generateTask(1, 1), rng, 'harder');
    expect(webshopDefinition.solve(top).success).toBe(true);
    const bottom = mutateTask(generateTask(1, 0), rng, 'easier');
    expect(webshopDefinition.solve(bottom).success).toBe(true);
  });
});
