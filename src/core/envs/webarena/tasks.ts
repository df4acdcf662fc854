/**
 * webarena-lite-v0 tasks: WebArena's three kinds (information seeking, site navigation, content and
 * configuration changes) as intent templates whose slots are filled from the seeded sites; the
 * difficulty knobs and the scalar level → knobs map; the generator, which proves every task
 * solvable by playing the expert within the step limit; and curriculum variations.
 *
 * Streams: the world is `<world seed>/webarena-lite-v0/world` (world.ts, `worldSeedOf`); each draft k of
 * the task draws from `<seed>/webarena-lite-v0/task/<k>`. Same seed and knobs → same task on every JS engine.
 */
import { hashString, Rng } from '../../rng';
import type { Task } from '../../types';
import { HELD_OUT_SEED_BASE, type Direction, type ExpertSolution } from '../env';
import type { Evaluator, StateCheck } from './evaluators';
import { renderCommand, type Target } from './expert';
import { HOME_ROUTES, priceField, urlOf, type Route, type Site } from './pages';
import { Playthrough } from './playthrough';
import {
  MAX_FORUMS,
  MAX_LIST_SIZE,
  money,
  orderNumber,
  ROWS_PER_PAGE,
  Sites,
  worldOf,
  type Order,
  type Post,
  type Product,
  type World,
  type WorldRecipe,
} from './world';
import { DreamGymError } from '../../errors';

export const WEBARENA_ENV_ID = 'webarena-lite-v0';
/** WebArena's `max_steps`; the generator proves every task within it. */
export const WEBARENA_STEP_LIMIT = 30;

// ---------------------------------------------------------------------------------------------
// Knobs
// ---------------------------------------------------------------------------------------------

export interface WebArenaKnobs {
  /** Highest template tier drawn, 0–2 (0: one-hop navigation, votes, grid look-ups; 2: forms, aggregation). */
  tier: number;
  /** Posts per forum, products and orders, 4–40 (8 rows a list page: more pages to walk). */
  listSize: number;
  /** Forums on the forum site, 2–6. */
  forums: number;
  /** Element lines in view, 6–24 (fewer: more scrolling). */
  viewport: number;
  /** Chance the task's row lies beyond its list's first page, 0–1. */
  deepTarget: number;
  /** Chance the episode starts on the other site's home (a `goto` away), 0–1. */
  startAway: number;
  /** Chance it starts on the first page of the task's own list instead of a home page (one hop less), 0–1. */
  startAtList: number;
}

export type KnobName = keyof WebArenaKnobs;

export const KNOB_RANGES: Readonly<Record<KnobName, readonly [number, number]>> = {
  tier: [0, 2],
  listSize: [4, MAX_LIST_SIZE],
  forums: [2, MAX_FORUMS],
  viewport: [6, 24],
  deepTarget: [0, 1],
  startAway: [0, 1],
  startAtList: [0, 1],
};
/** One notch of each knob, in the harder direction. */
export const KNOB_NOTCHES: Readonly<Record<KnobName, number>> = {
  tier: 1,
  listSize: 8,
  forums: 1,
  viewport: -2,
  deepTarget: 0.25,
  startAway: 0.25,
  startAtList: -0.5,
};
const INTEGER_KNOBS: ReadonlySet<KnobName> = new Set(['tier', 'listSize', 'forums', 'viewport']);

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
const lerp = (a: number, b: number, t: number) => a + (b - a) * t;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Level 0: one-page lists of 8 rows, 20 lines in view, three forums, tier-0 templates, the
 * episode starting on the first page of the task's list (level 0.5 and above: on a home page). Level 1: 40-row lists (5 pages), 8 lines in view, six
 * forums, every template, rows mostly beyond page 1, mostly starting on the other site.
 */
export function knobsForLevel(level: number): WebArenaKnobs {
  if (!Number.isFinite(level))
    throw new RangeError(`webarena-lite: difficulty must be a number in [0, 1], got ${level}`);
  const t = clamp(level, 0, 1);
  return {
    tier: t < 0.3 ? 0 : t < 0.6 ? 1 : 2,
    listSize: Math.round(lerp(8, 40, t)),
    forums: Math.round(lerp(3, 6, t)),
    viewport: Math.round(lerp(20, 8, t)),
    deepTarget: round3(lerp(0, 0.8, t)),
    startAway: round3(lerp(0, 0.8, t)),
    startAtList: round3(clamp(1 - 2 * t, 0, 1)),
  };
}

/** Knobs checked (a non-number is an error) and clamped to their ranges, integers rounded. */
export function normalizeKnobs(knobs: WebArenaKnobs): WebArenaKnobs {
  const out = { ...knobs };
  for (const name of Object.keys(KNOB_RANGES) as KnobName[]) {
    const v = out[name];
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new RangeError(`webarena-lite: knob ${name} must be a finite number, got ${String(v)}`);
    const [lo, hi] = KNOB_RANGES[name];
    out[name] = INTEGER_KNOBS.has(name) ? Math.round(clamp(v, lo, hi)) : clamp(v, lo, hi);
  }
  return out;
}

/** Knobs → an approximate scalar level (mean position between the level-0 and level-1 values). */
export function levelOfKnobs(knobs: WebArenaKnobs): number {
  const easy = knobsForLevel(0);
  const hard = knobsForLevel(1);
  const names: KnobName[] = ['listSize', 'forums', 'viewport', 'deepTarget', 'startAway', 'startAtList'];
  const parts = names.map((n) => clamp((knobs[n] - easy[n]) / (hard[n] - easy[n]), 0, 1));
  parts.push(knobs.tier / 2);
  return Math.round((parts.reduce((a, b) => a + b, 0) / parts.length) * 100) / 100;
}

// ---------------------------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------------------------

export type TaskKind = 'information' | 'navigation' | 'change';

/** Intent templates by tier: tier t draws from tiers 0..t, each template equally likely. */
export const TEMPLATE_TIERS = [
  ['open_post', 'open_product', 'open_order', 'vote_post', 'product_price', 'order_status'],
  [
    'post_author',
    'comment_count',
    'product_stock',
    'order_customer',
    'set_price',
    'set_stock',
    'toggle_product',
    'cancel_order',
  ],
  ['reply_post', 'create_post', 'top_post', 'price_and_stock'],
] as const;
export type TemplateName = (typeof TEMPLATE_TIERS)[number][number];

export interface WebArenaTaskSpec {
  format: 'webarena-task/1';
  world: WorldRecipe;
  template: TemplateName;
  kind: TaskKind;
  start: Route;
  viewport: number;
  evaluator: Evaluator;
  /** The expert's target (privileged). */
  target: Target;
  knobs: WebArenaKnobs;
  /** Length of the expert's plan from the start. */
  optimalLength: number;
}

interface Draft {
  template: TemplateName;
  kind: TaskKind;
  site: Site;
  instruction: string;
  evaluator: Evaluator;
  target: Target;
}

const REPLIES = [
  'Thanks, this helped a lot',
  'I had the same experience',
  'Could you share a source',
  'Count me in',
  'Interesting take, tell me more',
];
const NEW_TITLES = [
  'Meetup this weekend',
  'Favourite picks of the month',
  'Beginner questions thread',
  'What are you working on now',
  'Looking back at this year',
];

/** A row index: beyond the first list page with chance `deep` (when the list has a second page). */
function rowIndex(rng: Rng, length: number, deep: number): number {
  if (length > ROWS_PER_PAGE && rng.bool(deep)) return rng.int(ROWS_PER_PAGE, length - 1);
  return rng.int(0, Math.min(ROWS_PER_PAGE, length) - 1);
}

interface Picks {
  forum: string;
  post: Post;
  product: Product;
  order: Order;
}

function pick(rng: Rng, world: World, knobs: WebArenaKnobs): Picks {
  const forum = rng.pick(world.forums);
  const posts = world.postsByForum.get(forum)!;
  return {
    forum,
    post: posts[rowIndex(rng, posts.length, knobs.deepTarget)],
    product: world.products[rowIndex(rng, world.products.length, knobs.deepTarget)],
    order: world.orders[rowIndex(rng, world.orders.length, knobs.deepTarget)],
  };
}

/** The first page of the list the task's row is on: the forum, the product grid or the order grid. */
function listRouteOf(target: Target): Route {
  const route = target.goal === 'answer' ? target.detail : target.route;
  switch (route.page) {
    case 'post':
    case 'submit':
    case 'forum':
      return { page: 'forum', forum: route.forum, n: 1 };
    case 'product':
    case 'products':
      return { page: 'products', n: 1, q: '' };
    case 'order':
    case 'orders':
      return { page: 'orders', n: 1 };
    default:
      return route;
  }
}

/** What a template's text and check are filled from. */
interface Slots extends Picks {
  rng: Rng;
  world: World;
  /** `in the books forum`. */
  inForum: string;
  /** The order's number as the admin shows it. */
  num: string;
}

const postRoute = (p: Post) => ({ page: 'post' as const, forum: p.forum, postId: p.id });
const productRoute = (p: Product) => ({ page: 'product' as const, productId: p.id });
const orderRoute = (o: Order) => ({ page: 'order' as const, orderId: o.id });
const urlJudge = (route: Route): Evaluator => ({ type: 'url_match', reference: urlOf(route) });

/** A new price: a different whole-dollar-and-cents amount. */
function newPrice(rng: Rng, product: Product): number {
  for (;;) {
    const cents = rng.int(5, 200) * 100 + rng.pick([0, 25, 50, 99]);
    if (cents !== product.price) return cents;
  }
}

function newQty(rng: Rng, product: Product): number {
  for (;;) {
    const qty = rng.int(1, 300);
    if (qty !== product.qty) return qty;
  }
}

/** A navigation task (judged by URL), or null for another kind's template. */
function navigationDraft(template: TemplateName, slots: Slots): Draft | null {
  const { post, product, order, inForum, num } = slots;
  switch (template) {
    case 'open_post':
      return nav('forum', `Open the post '${post.title}' ${inForum}.`, postRoute(post));
    case 'open_product':
      return nav(
        'admin',
        `Open the edit page of the product '${product.name}' in the store admin.`,
        productRoute(product),
      );
    case 'open_order':
      return nav('admin', `Open the page of order #${num} in the store admin.`, orderRoute(order));
    default:
      return null;
  }
}

/** An information-seeking task (judged on the answer); null when the rows cannot host it (a tie) or another kind. */
function informationDraft(template: TemplateName, slots: Slots): Draft | null {
  const { world, forum, post, product, order, inForum, num } = slots;
  switch (template) {
    case 'product_price':
      return info('admin', `What is the price of '${product.name}' in the store admin?`, template, {
        evaluator: { type: 'exact_match', reference: money(product.price) },
        target: { goal: 'answer', detail: productRoute(product), offset: 2 },
      });
    case 'order_status':
      return info('admin', `What is the status of order #${num}?`, template, {
        evaluator: { type: 'exact_match', reference: order.status },
        target: { goal: 'answer', detail: orderRoute(order), offset: 3 },
      });
    case 'post_author':
      return info('forum', `Who submitted the post '${post.title}' ${inForum}?`, template, {
        evaluator: { type: 'must_include', reference: [post.author] },
        target: { goal: 'answer', detail: postRoute(post), offset: 1 },
      });
    case 'comment_count':
      return info('forum', `How many comments does the post '${post.title}' ${inForum} have?`, template, {
        evaluator: { type: 'must_include', reference: [String(post.comments.length)] },
        target: { goal: 'read', route: postRoute(post), nth: 1 },
      });
    case 'product_stock':
      return info('admin', `How many units of '${product.name}' are in stock?`, template, {
        evaluator: { type: 'exact_match', reference: String(product.qty) },
        target: { goal: 'answer', detail: productRoute(product), offset: 3 },
      });
    case 'order_customer':
      return info('admin', `Which customer placed order #${num}?`, template, {
        evaluator: { type: 'must_include', reference: [order.customer] },
        target: { goal: 'answer', detail: orderRoute(order), offset: 1 },
      });
    case 'top_post': {
      const posts = world.postsByForum.get(forum)!;
      const best = Math.max(...posts.map((x) => x.score));
      const top = posts.filter((x) => x.score === best);
      if (top.length !== 1) return null;
      return info('forum', `What is the title of the highest-scored post ${inForum}?`, template, {
        evaluator: { type: 'exact_match', reference: top[0].title },
        target: { goal: 'read', route: postRoute(top[0]), nth: 0 },
      });
    }
    default:
      return null;
  }
}

/** A content or configuration change (judged by a state program); null when the rows cannot host it. */
function changeDraft(template: TemplateName, slots: Slots): Draft | null {
  const { rng, forum, post, product, order, inForum, num } = slots;
  switch (template) {
    case 'vote_post': {
      const dir = rng.bool() ? 1 : -1;
      const verb = dir === 1 ? 'Upvote' : 'Downvote';
      return change('forum', `${verb} the post '${post.title}' ${inForum}.`, template, {
        check: { program: 'post_vote', postId: post.id, vote: dir },
        target: { goal: 'vote', route: postRoute(post), dir },
      });
    }
    case 'set_price': {
      const price = newPrice(rng, product);
      return change('admin', `Set the price of '${product.name}' to ${money(price)}.`, template, {
        check: { program: 'product_fields', productId: product.id, price },
        target: { goal: 'product', route: productRoute(product), price: priceField(price) },
      });
    }
    case 'set_stock': {
      const qty = newQty(rng, product);
      return change('admin', `Set the stock quantity of '${product.name}' to ${qty} units.`, template, {
        check: { program: 'product_fields', productId: product.id, qty },
        target: { goal: 'product', route: productRoute(product), qty: String(qty) },
      });
    }
    case 'price_and_stock': {
      const price = newPrice(rng, product);
      const qty = newQty(rng, product);
      const text = `Set the price of '${product.name}' to ${money(price)} and its stock quantity to ${qty} units.`;
      return change('admin', text, template, {
        check: { program: 'product_fields', productId: product.id, price, qty },
        target: { goal: 'product', route: productRoute(product), price: priceField(price), qty: String(qty) },
      });
    }
    case 'toggle_product': {
      const enabled = !product.enabled;
      return change('admin', `${enabled ? 'Enable' : 'Disable'} the product '${product.name}'.`, template, {
        check: { program: 'product_fields', productId: product.id, enabled },
        target: { goal: 'product', route: productRoute(product), enabled },
      });
    }
    case 'cancel_order': {
      if (order.status !== 'Pending' && order.status !== 'Processing') return null;
      return change('admin', `Cancel order #${num}.`, template, {
        check: { program: 'order_status', orderId: order.id, status: 'Canceled' },
        target: { goal: 'cancel', route: orderRoute(order) },
      });
    }
    case 'reply_post': {
      const text = rng.pick(REPLIES);
      return change('forum', `Reply to the post '${post.title}' ${inForum} with '${text}'.`, template, {
        check: { program: 'comment_exists', postId: post.id, text },
        target: { goal: 'reply', route: postRoute(post), text },
      });
    }
    case 'create_post': {
      const title = rng.pick(NEW_TITLES);
      return change('forum', `Create a post titled '${title}' ${inForum}.`, template, {
        check: { program: 'post_exists', forum, title },
        target: { goal: 'create', route: { page: 'submit', forum }, title },
      });
    }
    default:
      return null;
  }
}

/** The template's task on the drawn rows (null when the rows cannot host it: no cancellable order, a tie). */
function instantiate(template: TemplateName, rng: Rng, world: World, p: Picks): Draft | null {
  const slots: Slots = { ...p, rng, world, inForum: `in the ${p.forum} forum`, num: orderNumber(p.order.id) };
  return navigationDraft(template, slots) ?? informationDraft(template, slots) ?? changeDraft(template, slots);
}

function nav(site: Site, instruction: string, route: Route): Draft {
  const template: TemplateName =
    route.page === 'post' ? 'open_post' : route.page === 'product' ? 'open_product' : 'open_order';
  return {
    template,
    kind: 'navigation',
    site,
    instruction,
    evaluator: urlJudge(route),
    target: { goal: 'visit', route },
  };
}

function info(
  site: Site,
  instruction: string,
  template: TemplateName,
  parts: { evaluator: Evaluator; target: Target },
): Draft {
  return { template, kind: 'information', site, instruction, ...parts };
}

function change(
  site: Site,
  instruction: string,
  template: TemplateName,
  parts: { check: StateCheck; target: Target },
): Draft {
  return {
    template,
    kind: 'change',
    site,
    instruction,
    evaluator: { type: 'program', check: parts.check },
    target: parts.target,
  };
}

// ---------------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------------

export class WebArenaTaskError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'webarena-task-invalid',
      fix: 'Make webarena tasks with generateTask, or change the knobs the message names.',
    });
    this.name = 'WebArenaTaskError';
  }
}

/** The webarena spec inside a task, checked enough to catch a task of another env. */
export function taskSpecOf(task: Task): WebArenaTaskSpec {
  const spec = task.spec as WebArenaTaskSpec | undefined;
  if (task.env !== WEBARENA_ENV_ID || !spec || spec.format !== 'webarena-task/1' || !spec.world || !spec.target) {
    throw new WebArenaTaskError(
      `Task '${task.id}' (env '${task.env}') is not a ${WEBARENA_ENV_ID} task: its spec must be a ` +
        `WebArenaTaskSpec (format 'webarena-task/1'), as generateTask makes.`,
    );
  }
  return spec;
}

const MAX_DRAFTS = 24;

/** Worlds per seed range: tasks share sites, as WebArena's 812 tasks share its five. */
export const WORLDS_PER_RANGE = 64;

/**
 * The world a task seed plays in: one of 64 per range of 1e9 seeds, so training seeds, the dev
 * split (≥ 1e9) and the test split (≥ 2e9) each have their own sites and a held-out task is also
 * held out from the training sites. Few worlds keep them and their rendered pages cached.
 */
export function worldSeedOf(seed: number): number {
  const range = Math.floor(seed / HELD_OUT_SEED_BASE);
  return range * HELD_OUT_SEED_BASE + (((seed % WORLDS_PER_RANGE) + WORLDS_PER_RANGE) % WORLDS_PER_RANGE);
}

export interface GenerateOptions {
  /** Keep this template (when its tier is within the knobs). */
  template?: TemplateName;
}

/**
 * A task from a seed at a difficulty (scalar level or knobs), proved solvable by the expert within
 * the 30-step limit; drafts the expert cannot finish in time (a row too deep for the view) are
 * re-drawn deterministically.
 */
export function generateTask(seed: number, difficulty: number | WebArenaKnobs, options: GenerateOptions = {}): Task {
  if (!Number.isInteger(seed)) throw new RangeError(`webarena-lite: a task seed must be an integer, got ${seed}`);
  const knobs = normalizeKnobs(typeof difficulty === 'number' ? knobsForLevel(difficulty) : difficulty);
  const level = typeof difficulty === 'number' ? Math.round(clamp(difficulty, 0, 1) * 100) / 100 : levelOfKnobs(knobs);
  const recipe: WorldRecipe = { seed: worldSeedOf(seed), forums: knobs.forums, listSize: knobs.listSize };
  const world = worldOf(recipe);
  const streams = Rng.fromSeed(seed, WEBARENA_ENV_ID, 'task');
  const templates = TEMPLATE_TIERS.slice(0, knobs.tier + 1).flat();
  for (let attempt = 0; attempt < MAX_DRAFTS; attempt++) {
    const rng = streams.split(String(attempt));
    const template = options.template ?? rng.pick(templates);
    const draft = instantiate(template, rng, world, pick(rng, world, knobs));
    if (!draft) continue;
    const away: Site = draft.site === 'forum' ? 'admin' : 'forum';
    const start = rng.bool(knobs.startAway)
      ? HOME_ROUTES[away]
      : rng.bool(knobs.startAtList)
        ? listRouteOf(draft.target)
        : HOME_ROUTES[draft.site];
    const spec: WebArenaTaskSpec = {
      format: 'webarena-task/1',
      world: recipe,
      template: draft.template,
      kind: draft.kind,
      start,
      viewport: knobs.viewport,
      evaluator: draft.evaluator,
      target: draft.target,
      knobs,
      optimalLength: 0,
    };
    const run = runExpert(spec, draft.instruction, WEBARENA_STEP_LIMIT);
    if (!run.success || run.actions.length === 0) continue;
    spec.optimalLength = run.actions.length;
    const id =
      typeof difficulty === 'number'
        ? `${WEBARENA_ENV_ID}/${seed}/${level.toFixed(2)}`
        : `${WEBARENA_ENV_ID}/${seed}/${level.toFixed(2)}/k${hashString(JSON.stringify(knobs)).toString(16)}`;
    return {
      id,
      env: WEBARENA_ENV_ID,
      instruction: draft.instruction,
      difficulty: level,
      spec,
      origin: 'generated',
      seed,
    };
  }
  throw new WebArenaTaskError(
    `webarena-lite: no task the expert solves in ${WEBARENA_STEP_LIMIT} steps for seed ${seed} ` +
      `after ${MAX_DRAFTS} drafts; raise viewport or lower listSize in ${JSON.stringify(knobs)}`,
  );
}

export interface ExpertRun {
  actions: string[];
  success: boolean;
}

/** Plays the expert from the task's start (at most `maxSteps` actions). */
export function runExpert(spec: WebArenaTaskSpec, instruction: string, maxSteps: number): ExpertRun {
  const play = new Playthrough(spec, instruction, new Sites(worldOf(spec.world)));
  const actions: string[] = [];
  while (actions.length < maxSteps && !play.ended) {
    const command = play.expertCommand();
    if (!command) break;
    actions.push(renderCommand(play.browser, command));
    play.run(command);
  }
  return { actions, success: play.succeeded };
}

/** Runs the expert on a task from its start. */
export function solveTask(task: Task): ExpertSolution {
  const run = runExpert(taskSpecOf(task), task.instruction, WEBARENA_STEP_LIMIT * 4);
  return { actions: run.actions, optimalLength: run.actions.length, success: run.success };
}

// ---------------------------------------------------------------------------------------------
// Variations
// ---------------------------------------------------------------------------------------------

/** The knobs that can move one notch in the direction. */
export function movableKnobs(knobs: WebArenaKnobs, direction: Direction): KnobName[] {
  return (Object.keys(KNOB_NOTCHES) as KnobName[]).filter((name) => {
    const [lo, hi] = KNOB_RANGES[name];
    const up = KNOB_NOTCHES[name] > 0 === (direction === 'harder');
    return up ? knobs[name] < hi : knobs[name] > lo;
  });
}

/** The knobs with one knob moved one notch (clamped). */
export function moveKnob(knobs: WebArenaKnobs, name: KnobName, direction: Direction): WebArenaKnobs {
  const step = KNOB_NOTCHES[name] * (direction === 'harder' ? 1 : -1);
  const [lo, hi] = KNOB_RANGES[name];
  return { ...knobs, [name]: round3(clamp(knobs[name] + step, lo, hi)) };
}

/**
 * A nearby task one notch harder or easier: one knob moves one notch and a task is generated from
 * a fresh seed, proved solvable. Seeds stay in the parent's range (held-out seeds ≥ 1e9 stay held out).
 */
export function mutateTask(task: Task, rng: Rng, direction: Direction): Task {
  const spec = taskSpecOf(task);
  const movable = movableKnobs(spec.knobs, direction);
  if (movable.length === 0)
    throw new WebArenaTaskError(
      `mutateTask: task '${task.id}' cannot get ${direction}: every knob is at its ${direction === 'harder' ? 'hardest' : 'easiest'} value`,
    );
  const knobs = moveKnob(spec.knobs, rng.pick(movable), direction);
  const heldOut = (task.seed ?? 0) >= HELD_OUT_SEED_BASE;
  const seed = heldOut ? rng.int(HELD_OUT_SEED_BASE, 2_147_483_647) : rng.int(0, HELD_OUT_SEED_BASE - 1);
  const child = generateTask(seed, knobs);
  const id = `${WEBARENA_ENV_ID}/${seed}/${child.difficulty.toFixed(2)}/var-${hashString(JSON.stringify(child.spec)).toString(16)}`;
  return { ...child, id, origin: 'variation', parent: task.id };
}
