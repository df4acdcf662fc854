import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/core/rng';
import { HELD_OUT_SEED_BASE, TimeLimit } from '../../../../src/core/envs/env';
import { checkEnv } from '../../../../src/core/envs/check-env';
import { getEnvDefinition, makeEnv } from '../../../../src/core/envs/registry';
import { TEST_SEED_BASE } from '../../../../src/core/train/evaluate';
import {
  candidateTexts,
  generateTask,
  knobsForLevel,
  KNOB_RANGES,
  mutateTask,
  taskSpecOf,
  TEMPLATE_TIERS,
  WebArenaEnv,
  webarenaDefinition,
  type KnobName,
  type TemplateName,
  type WebArenaKnobs,
} from '../../../../src/core/envs/webarena';
import type { StepResult, Task } from '../../../../src/core/types';

const LEVELS = [0, 0.25, 0.5, 0.75, 1];
const ALL_TEMPLATES = TEMPLATE_TIERS.flat() as TemplateName[];

/** Plays one episode under TimeLimit(30); `choose` picks the action. */
async function episode(task: Task, choose: (admissible: string[], env: WebArenaEnv) => string) {
  const env = new TimeLimit(new WebArenaEnv(), 30);
  let obs = await env.reset({ seed: task.seed ?? 0, task });
  const transcript = [obs.text];
  for (;;) {
    const r = await env.step(choose(obs.admissible, env.env));
    transcript.push(`${r.reward}|${r.text}`);
    obs = r;
    if (r.terminated || r.truncated) return { success: r.info.success, steps: r.info.steps, transcript, last: r };
  }
}

/** The admissible action that clicks (or types into) the element named `name`. */
function on(admissible: readonly string[], verb: string, name: string, text?: string): string {
  const found = admissible.find(
    (a) => a.startsWith(`${verb} [`) && a.endsWith(` '${name}'`) && (text === undefined || a.includes(`] [${text}] `)),
  );
  if (!found) throw new Error(`no ${verb} on '${name}' in ${JSON.stringify(admissible)}`);
  return found;
}

/** Plays a list of steps, each an action or a function of the admissible list; returns every result. */
function playSteps(task: Task, steps: Array<string | ((admissible: string[]) => string)>): StepResult[] {
  const env = new WebArenaEnv();
  let obs = env.resetSync({ seed: 0, task });
  const results: StepResult[] = [];
  for (const step of steps) {
    const r = env.stepSync(typeof step === 'string' ? step : step(obs.admissible));
    results.push(r);
    obs = r;
  }
  return results;
}

/** Scrolls down until the element is in view, then acts on it. */
function scrollTo(verb: string, name: string, text?: string) {
  return (admissible: string[]) => {
    try {
      return on(admissible, verb, name, text);
    } catch {
      return 'scroll [down]';
    }
  };
}

const easy: WebArenaKnobs = { ...knobsForLevel(0), viewport: 24, startAtList: 0 };
const taskOf = (template: TemplateName, seed = 3, knobs: WebArenaKnobs = { ...easy, tier: 2 }) =>
  generateTask(seed, knobs, { template });

describe('webarena-lite-v0 contract', () => {
  it('passes checkEnv at levels 0, 0.5 and 1', async () => {
    for (const difficulty of [0, 0.5, 1]) {
      const report = await checkEnv(makeEnv('webarena-lite-v0', { difficulty }), { seeds: [0, 1, 2, 3, 4, 5] });
      expect(report.failures).toEqual([]);
      expect(report.ok).toBe(true);
    }
  });

  it('is registered with WebArena’s step limit', () => {
    expect(getEnvDefinition('webarena-lite-v0')).toBe(webarenaDefinition);
    expect(webarenaDefinition).toMatchObject({ name: 'mini-WebArena', defaultStepLimit: 30 });
    expect(makeEnv('webarena-lite-v0').maxSteps).toBe(30);
    expect(webarenaDefinition.create().currentTask).toBeNull();
  });

  it('rejects a task of another environment with a message that names the fix', () => {
    const task: Task = { id: 'x', env: 'household-v0', instruction: 'go', difficulty: 0, origin: 'generated' };
    expect(() => new WebArenaEnv().resetSync({ seed: 0, task })).toThrow(
      /not a webarena-lite-v0 task.*WebArenaTaskSpec/,
    );
  });

  it('shows the tab title and URL on top, then one `[id] role ‘name’` line per element in view', async () => {
    const task = taskOf('open_post');
    const obs = new WebArenaEnv().resetSync({ seed: 0, task });
    const lines = obs.text.split('\n');
    expect(lines[0]).toMatch(/^Tab 0 \(current\): /);
    expect(lines[1]).toBe('URL: http://forum.local/');
    expect(lines[2]).toBe('');
    for (const line of lines.slice(3)) expect(line).toMatch(/^\[\d+\] [A-Za-z]+ '[^']*'/);
  });

  it('bounds the lines in view and scrolls the rest in', () => {
    const knobs = { ...easy, viewport: 6, listSize: 8 };
    const task = taskOf('open_post', 3, knobs);
    const [forum] = playSteps(task, [(a) => a.find((x) => x.startsWith('click [3]'))!]);
    const elementLines = (text: string) => text.split('\n').filter((l) => /^\[\d+\]/.test(l));
    expect(elementLines(forum.text)).toHaveLength(6);
    expect(forum.text).toMatch(/\(showing elements 1–6 of \d+\)$/);
    expect(forum.admissible).toContain('scroll [down]');
    expect(forum.admissible).not.toContain('scroll [up]');
    const [, down] = playSteps(task, [(a) => a.find((x) => x.startsWith('click [3]'))!, 'scroll [down]']);
    expect(down.text).toMatch(/\n\[7\] /);
    expect(down.text).toMatch(/\(showing elements 7–12 of \d+\)$/);
    expect(down.admissible).toContain('scroll [up]');
  });
});

describe('webarena-lite-v0 actions', () => {
  const task = taskOf('set_price');

  it('offers clicks on elements in view, typed candidates, scrolls, navigation and stops', () => {
    const obs = new WebArenaEnv().resetSync({ seed: 0, task });
    expect(obs.text).toContain('URL: http://admin.local/admin');
    expect(obs.admissible).toEqual([
      "click [1] 'Dashboard'",
      "click [2] 'Products'",
      "click [3] 'Orders'",
      'goto [http://forum.local/]',
      'goto [http://admin.local/admin]',
      'stop [Dashboard]',
      expect.stringMatching(/^stop \[\d+ pending orders\]$/),
      ...candidateTexts(task.instruction).map((t) => `stop [${t}]`),
    ]);
  });

  it('types only the instruction’s quoted phrases and numbers', () => {
    expect(candidateTexts("Set the price of 'Blue Tee' to $31.50.")).toEqual(['Blue Tee', '31.50']);
    expect(candidateTexts("Set the stock quantity of 'Red Cap' to 25 units.")).toEqual(['Red Cap', '25']);
    expect(candidateTexts('Cancel order #000000123.')).toEqual([]);
    expect(
      candidateTexts("Reply to the post 'Hot take on jazz standards' in the music forum with 'Count me in'."),
    ).toEqual(['Hot take on jazz standards', 'Count me in']);
  });

  it('treats an unknown or out-of-view action as a no-op, and accepts the bare WebArena forms', () => {
    const env = new WebArenaEnv();
    const obs = env.resetSync({ seed: 0, task });
    for (const bad of ['click [99]', "click [2] 'Orders'", 'type [2] [x]', 'scroll [down]', 'go_back', 'stop [42]']) {
      const r = env.stepSync(bad);
      expect(r.info.valid).toBe(false);
      expect(r.reward).toBe(0);
      expect(r.terminated).toBe(false);
      expect(r.text).toBe(obs.text);
      expect(r.admissible).toEqual(obs.admissible);
    }
    const r = env.stepSync('click [2]');
    expect(r.info.valid).toBe(true);
    expect(r.text).toContain('URL: http://admin.local/admin/products');
    const back = env.stepSync('go_back');
    expect(back.text).toBe(obs.text);
  });

  it('keeps typed text in the form until Save, and drops it on leaving the page', () => {
    const product = taskSpecOf(task).target as { route: { productId: number }; price: string };
    const name = candidateTexts(task.instruction)[0];
    const results = playSteps(task, [
      (a) => on(a, 'click', 'Products'),
      scrollTo('click', name),
      (a) => on(a, 'type', 'Price', product.price),
      'go_back',
      scrollTo('click', name),
    ]);
    const typed = results.find((r) => r.text.includes(`textbox 'Price' value: ${product.price}`));
    expect(typed).toBeDefined();
    expect(typed!.reward).toBe(0);
    expect(results.at(-1)!.text).not.toContain(`value: ${product.price}`);
    expect(results.every((r) => !r.terminated)).toBe(true);
  });
});

describe('webarena-lite-v0 hand-worked episodes of each evaluator', () => {
  it('information seeking, exact_match: the right cell ends with 1, another cell with 0', () => {
    const task = taskOf('product_price');
    const spec = taskSpecOf(task);
    expect(spec.evaluator.type).toBe('exact_match');
    const reference = (spec.evaluator as { reference: string }).reference;
    const name = candidateTexts(task.instruction)[0];
    const toGrid = [(a: string[]) => on(a, 'type', 'Search by name', name)];
    const right = playSteps(task, [(a) => on(a, 'click', 'Products'), ...toGrid, `stop [${reference}]`]);
    expect(right.at(-1)).toMatchObject({ reward: 1, terminated: true, admissible: [] });
    const wrong = playSteps(task, [(a) => on(a, 'click', 'Products'), ...toGrid, 'stop [Products]']);
    expect(wrong.at(-1)).toMatchObject({ reward: 0, terminated: true, info: { valid: true, success: false } });
  });

  it('information seeking, must_include: the row’s text containing the author ends with 1', () => {
    const task = taskOf('post_author');
    const spec = taskSpecOf(task);
    expect(spec.evaluator).toMatchObject({ type: 'must_include' });
    const author = (spec.evaluator as { reference: string[] }).reference[0];
    const forum = / in the (\w+) forum/.exec(task.instruction)![1];
    const results = playSteps(task, [
      (a) => on(a, 'click', forum),
      (a) => a.find((x) => x === `stop [Submitted by ${author}]`) ?? 'scroll [down]',
      (a) => a.find((x) => x === `stop [Submitted by ${author}]`) ?? 'scroll [down]',
      (a) => a.find((x) => x === `stop [Submitted by ${author}]`) ?? 'scroll [down]',
    ]);
    const stop = results.find((r) => r.terminated)!;
    expect(stop).toMatchObject({ reward: 1, info: { success: true } });
  });

  it('navigation, url_match: ends with 1 on the step the post page opens', () => {
    const task = taskOf('open_post');
    const title = candidateTexts(task.instruction)[0];
    const forum = / in the (\w+) forum/.exec(task.instruction)![1];
    const results = playSteps(task, [(a) => on(a, 'click', forum), scrollTo('click', title), scrollTo('click', title)]);
    const end = results.findIndex((r) => r.terminated);
    expect(results[end]).toMatchObject({ reward: 1, info: { success: true, valid: true } });
    expect(results[end].text).toContain((taskSpecOf(task).evaluator as { reference: string }).reference);
    expect(results.slice(0, end).every((r) => r.reward === 0)).toBe(true);
  });

  it('navigation: stopping elsewhere ends the episode with 0', () => {
    const task = taskOf('open_order');
    const [r] = playSteps(task, [(a) => a.find((x) => x.startsWith('stop ['))!]);
    expect(r).toMatchObject({ reward: 0, terminated: true, info: { success: false, valid: true } });
  });

  it('change, post_vote: the other vote gives 0, the asked one 1', () => {
    const task = taskOf('vote_post', 5);
    const { dir } = taskSpecOf(task).target as { dir: 1 | -1 };
    const title = candidateTexts(task.instruction)[0];
    const [wrong, right] = dir === 1 ? ['Downvote', 'Upvote'] : ['Upvote', 'Downvote'];
    const toPost = webarenaDefinition.solve(task).actions.slice(0, -1);
    const results = playSteps(task, [...toPost, (a) => on(a, 'click', wrong), (a) => on(a, 'click', right)]);
    const [onPost, first, second] = results.slice(-3);
    expect(onPost.text).toContain(`heading '${title}'`);
    expect(first).toMatchObject({ reward: 0, terminated: false });
    expect(first.text).toContain(`button '${wrong}' pressed: true`);
    expect(second).toMatchObject({ reward: 1, terminated: true, info: { success: true } });
  });

  it('change, product_fields: a price typed and saved gives 1; a wrong price saved gives 0', () => {
    const task = taskOf('set_price');
    const target = taskSpecOf(task).target as { price: string };
    const name = candidateTexts(task.instruction)[0];
    const open = [(a: string[]) => on(a, 'click', 'Products'), (a: string[]) => on(a, 'type', 'Search by name', name)];
    const right = playSteps(task, [
      ...open,
      (a) => on(a, 'click', name),
      (a) => on(a, 'type', 'Price', target.price),
      (a) => on(a, 'click', 'Save'),
    ]);
    expect(right.at(-1)).toMatchObject({ reward: 1, terminated: true });
    const wrongPrice = playSteps(task, [
      ...open,
      (a) => on(a, 'click', name),
      (a) => on(a, 'type', 'Quantity', target.price),
      (a) => on(a, 'click', 'Save'),
    ]);
    expect(wrongPrice.at(-1)).toMatchObject({ reward: 0, terminated: false });
    expect(wrongPrice.at(-1)!.text).toContain("StaticText 'Please enter a valid quantity.'");
  });

  it('change, product_fields (enabled): ticking the box alone is not saving it', () => {
    const task = taskOf('toggle_product');
    const name = candidateTexts(task.instruction)[0];
    const results = playSteps(task, [
      (a) => on(a, 'click', 'Products'),
      (a) => on(a, 'type', 'Search by name', name),
      (a) => on(a, 'click', name),
      (a) => on(a, 'click', 'Enabled'),
      (a) => on(a, 'click', 'Save'),
    ]);
    expect(results[3]).toMatchObject({ reward: 0, terminated: false });
    expect(results[4]).toMatchObject({ reward: 1, terminated: true });
  });

  it('change, order_status: pressing Cancel order on the order gives 1', () => {
    const task = taskOf('cancel_order', 11);
    const number = /#(\d+)/.exec(task.instruction)![1];
    const results = playSteps(task, [
      (a) => on(a, 'click', 'Orders'),
      scrollTo('click', `Order #${number}`),
      scrollTo('click', `Order #${number}`),
      scrollTo('click', `Order #${number}`),
      scrollTo('click', 'Cancel order'),
    ]);
    const end = results.findIndex((r) => r.terminated);
    expect(results[end]).toMatchObject({ reward: 1, info: { success: true } });
    expect(results[end].text).toContain("StaticText 'Status: Canceled'");
  });

  it('change, comment_exists and post_exists: typed text posted gives 1, an empty form 0', () => {
    const reply = taskOf('reply_post', 4);
    const [title, text] = candidateTexts(reply.instruction);
    const solved = webarenaDefinition.solve(reply);
    expect(solved.success).toBe(true);
    expect(solved.actions.at(-2)).toMatch(new RegExp(`^type \\[\\d+\\] \\[${text}\\] 'Reply'$`));
    expect(solved.actions.at(-1)).toMatch(/^click \[\d+\] 'Post reply'$/);
    const withTitle = playSteps(reply, [
      ...solved.actions.slice(0, -2),
      (a) => on(a, 'type', 'Reply', title),
      (a) => on(a, 'click', 'Post reply'),
    ]);
    expect(withTitle.at(-1)).toMatchObject({ reward: 0, terminated: false });
    const create = taskOf('create_post', 4);
    const created = webarenaDefinition.solve(create);
    const empty = playSteps(create, [...created.actions.slice(0, -2), (a) => on(a, 'click', 'Create post')]);
    expect(empty.at(-1)).toMatchObject({ reward: 0, terminated: false });
    expect(empty.at(-1)!.text).toContain("StaticText 'The title is required.'");
    const full = playSteps(create, created.actions);
    expect(full.at(-1)).toMatchObject({ reward: 1, terminated: true });
    expect(full.at(-1)!.text).toContain(`heading '${candidateTexts(create.instruction)[0]}'`);
  });
});

describe('webarena-lite-v0 expert and tasks', () => {
  it('the expert solves every generated task within 30 steps at every level', async () => {
    const seen = new Set<string>();
    for (const level of LEVELS) {
      let solved = 0;
      for (let seed = 0; seed < 80; seed++) {
        const task = generateTask(40_000 + seed, level);
        seen.add(taskSpecOf(task).template);
        const run = await episode(task, (_, env) => env.expertAction()!);
        if (run.success) solved++;
        expect(run.steps).toBe(taskSpecOf(task).optimalLength);
      }
      expect(solved, `level ${level}`).toBe(80);
    }
    expect([...seen].sort()).toEqual([...ALL_TEMPLATES].sort());
  });

  it('the expert solves every template, and recovers after random actions', () => {
    for (const template of ALL_TEMPLATES)
      for (const seed of [1, 2, 3]) {
        const task = generateTask(seed, { ...knobsForLevel(1), tier: 2 }, { template });
        expect(webarenaDefinition.solve(task).success).toBe(true);
        const env = new WebArenaEnv();
        let obs = env.resetSync({ seed, task });
        const rng = Rng.fromSeed(seed, 'noise', template);
        for (let i = 0; i < 6 && obs.admissible.length > 0; i++)
          obs = env.stepSync(rng.pick(obs.admissible.filter((a) => !a.startsWith('stop'))));
        let last: StepResult | null = null;
        for (let i = 0; i < 60 && env.expertAction(); i++) last = env.stepSync(env.expertAction()!);
        expect(last?.info.success ?? env.playthrough!.succeeded, `${template} seed ${seed}`).toBe(true);
      }
  });

  it('uniformly random admissible play rarely succeeds (≤ 5 % over 300 episodes at level 0)', async () => {
    let successes = 0;
    for (let seed = 0; seed < 300; seed++) {
      const rng = Rng.fromSeed(seed, 'random-play');
      const run = await episode(generateTask(60_000 + seed, 0), (admissible) => rng.pick(admissible));
      if (run.success) successes++;
    }
    expect(successes / 300).toBeLessThanOrEqual(0.05);
  });

  it('harder levels lengthen the expert’s plan', () => {
    const mean = (level: number) => {
      let total = 0;
      for (let seed = 0; seed < 60; seed++) total += taskSpecOf(generateTask(seed, level)).optimalLength;
      return total / 60;
    };
    const lengths = [0, 0.5, 1].map(mean);
    expect(lengths[0]).toBeLessThan(lengths[1]);
    expect(lengths[1]).toBeLessThan(lengths[2]);
    expect(lengths[2]).toBeGreaterThan(2 * lengths[0]);
  });

  it('maps levels to knobs in their ranges; the extremes are one-page lists and 5-page lists', () => {
    for (const level of [0, 0.3, 0.7, 1]) {
      const knobs = knobsForLevel(level);
      for (const [name, [lo, hi]] of Object.entries(KNOB_RANGES)) {
        expect(knobs[name as KnobName]).toBeGreaterThanOrEqual(lo);
        expect(knobs[name as KnobName]).toBeLessThanOrEqual(hi);
      }
    }
    expect(knobsForLevel(0)).toMatchObject({ tier: 0, listSize: 8, deepTarget: 0, startAway: 0, startAtList: 1 });
    expect(knobsForLevel(0.5)).toMatchObject({ tier: 1, startAtList: 0 });
    expect(knobsForLevel(1)).toMatchObject({ tier: 2, listSize: 40, viewport: 8 });
    expect(() => knobsForLevel(Number.NaN)).toThrow(/difficulty must be a number/);
  });

  it('mutateTask moves one knob one notch and gives a solvable task, held-out seeds staying held out', () => {
    const rng = Rng.fromSeed(1, 'mutate');
    const parent = generateTask(5, 0.5);
    const child = mutateTask(parent, rng, 'harder');
    const [a, b] = [taskSpecOf(parent).knobs, taskSpecOf(child).knobs];
    const moved = (Object.keys(a) as KnobName[]).filter((k) => a[k] !== b[k]);
    expect(moved).toHaveLength(1);
    expect(child).toMatchObject({ origin: 'variation', parent: parent.id });
    expect(webarenaDefinition.solve(child).success).toBe(true);
    const heldOut = mutateTask(generateTask(HELD_OUT_SEED_BASE + 3, 0.5), rng, 'easier');
    expect(heldOut.seed!).toBeGreaterThanOrEqual(HELD_OUT_SEED_BASE);
  });
});

describe('webarena-lite-v0 determinism and splits', () => {
  it('same seed → the same task and the same episode; a JSON round-tripped task replays identically', async () => {
    const task = generateTask(123, 0.6);
    expect(generateTask(123, 0.6)).toEqual(task);
    const copy = JSON.parse(JSON.stringify(task)) as Task;
    const play = (t: Task) => {
      const rng = Rng.fromSeed(9, 'replay');
      return episode(t, (admissible) => rng.pick(admissible.filter((a) => !a.startsWith('stop'))));
    };
    expect((await play(copy)).transcript).toEqual((await play(task)).transcript);
    expect(generateTask(124, 0.6)).not.toEqual(task);
  });

  it('the dev and test splits play on sites of their own', () => {
    const world = (seed: number) => taskSpecOf(generateTask(seed, 0.5)).world.seed;
    const train = new Set(Array.from({ length: 200 }, (_, i) => world(i)));
    const dev = new Set(Array.from({ length: 200 }, (_, i) => world(HELD_OUT_SEED_BASE + i)));
    const test = new Set(Array.from({ length: 200 }, (_, i) => world(TEST_SEED_BASE + i)));
    for (const s of dev) expect(train.has(s) || test.has(s)).toBe(false);
    for (const s of test) expect(train.has(s)).toBe(false);
    expect(train.size).toBe(64);
    expect(dev.size).toBe(64);
  });

  it('generates from the env’s difficulty on reset, and that task is the seed’s', () => {
    const env = new WebArenaEnv({ difficulty: 0.8 });
    const obs = env.resetSync({ seed: 77 });
    expect(obs.task).toEqual(generateTask(77, 0.8));
    expect(env.currentTask).toBe(obs.task);
    expect(() => new WebArenaEnv({ difficulty: 2 })).toThrow(/difficulty must be in \[0, 1\]/);
  });
});
