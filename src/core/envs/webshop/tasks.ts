/**
 * Task generation for mini-WebShop. A task is written from one catalog product (the target)
 * as WebShop writes its goals: k_att of its attributes, k_opt of its option groups with one
 * value each, and a price bound by WebShop's rule; the instruction is lower-case text in the
 * synthetic or a human-like style. Near-miss distractors are planted per task, the first
 * satisfying product may be pushed onto page 2+, and the expert must solve the task (reward
 * exactly 1) before it is returned; otherwise the next attempt is drawn deterministically.
 */
import { hashString, Rng } from '../../rng';
import type { Task } from '../../types';
import type { Direction, ExpertSolution } from '../env';
import { andList, DEFAULT_CATALOG_SIZE, getCatalog, type Product } from './catalog';
import {
  ShopEpisode,
  type DistractorKind,
  type DistractorRecipe,
  type GoalOption,
  type WebShopTaskSpec,
} from './episode';
import { difficultyOfKnobs, knobsForLevel, moveKnob, movableKnobs, normalizeKnobs, type WebShopKnobs } from './knobs';
import { runExpert } from './machine';
import { PRODUCTS_PER_PAGE } from './pages';
import { getTypeEntry, HUMAN_TEMPLATES, PRICE_RANGE, RELATIONS, SYNTHETIC_TEMPLATES } from './taxonomy';

export const WEBSHOP_ENV_ID = 'webshop-lite-v0';
export const DEFAULT_CATALOG_SEED = 0;
const MAX_ATTEMPTS = 60;
const MAX_PUSHERS = 16;

export interface GenerateOptions {
  catalogSeed?: number;
  /** Prefer targets of this product type (mutateTask keeps the type). */
  preferType?: string;
  origin?: Task['origin'];
  parent?: string;
  /** Overrides the id's difficulty label and Task.difficulty. */
  difficulty?: number;
  /** Appended to the id to keep variations distinct. */
  idSuffix?: string;
}

// ---------------------------------------------------------------------------------------------
// Pieces of a goal
// ---------------------------------------------------------------------------------------------

/** A fractional count: floor(x), plus one with probability frac(x). */
export function realizeCount(rng: Rng, x: number): number {
  const base = Math.floor(x);
  return base + (rng.bool(x - base) ? 1 : 0);
}

/**
 * WebShop's price bound: the first four multiples of 10 above the price; with at least two,
 * sample two and take the larger (or, when `tight`, the first). Fewer than two: no bound (1e6).
 */
export function priceUpperFor(rng: Rng, price: number, tight: boolean): number {
  const above = PRICE_RANGE.filter((p) => p > price).slice(0, 4);
  if (above.length < 2) return 1_000_000;
  if (tight) return above[0];
  return Math.max(...rng.sample(above, 2));
}

export function priceClause(priceUpper: number): string {
  return priceUpper >= 1_000_000 ? '' : `, and price lower than ${priceUpper.toFixed(2)} dollars`;
}

function isPlural(noun: string): boolean {
  return /s$/.test(noun) && !/ss$/.test(noun);
}

/** 'a' / 'an' before the next word; plural nouns take none. */
function fixArticles(text: string, noun: string): string {
  return text.replace(/\{a\} (\S+)/g, (_, next: string) =>
    isPlural(noun) ? next : `${/^[aeiou]/.test(next) ? 'an' : 'a'} ${next}`,
  );
}

export interface InstructionParts {
  style: 'synthetic' | 'human';
  template: number;
  relation: string;
  noun: string;
  attributes: readonly string[];
  options: readonly GoalOption[];
  priceUpper: number;
}

function humanOption(o: GoalOption): string {
  if (o.group === 'color') return `in ${o.value}`;
  if (o.group === 'size') return `size ${o.value}`;
  if (o.group === 'pack') return `${o.value} pack`;
  return `${o.value} ${o.group}`;
}

export function renderInstruction(p: InstructionParts): string {
  const templates = p.style === 'synthetic' ? SYNTHETIC_TEMPLATES : HUMAN_TEMPLATES;
  const opts = p.style === 'human' && p.options.length > 0 ? `, ${p.options.map(humanOption).join(' and ')}` : '';
  let text = templates[p.template % templates.length]
    .replace('{atts}', p.attributes.join(' '))
    .replace('{attsAnd}', andList(p.attributes))
    .replace('{noun}', p.noun)
    .replace('{relation}', p.relation)
    .replace('{opts}', opts);
  text = fixArticles(text, p.noun);
  if (p.style === 'synthetic' && p.options.length > 0) {
    text += ` with ${p.options.map((o) => `${o.group}: ${o.value}`).join(', and ')}`;
  }
  return (text + priceClause(p.priceUpper)).toLowerCase().replace(/\s+/g, ' ').trim();
}

/** k_att goal attributes, each drawn from the title-hidden ones with probability `hiddenShare`. */
function chooseGoalAttributes(rng: Rng, target: Product, k: number, hiddenShare: number): string[] {
  const shown = rng.shuffle(target.attributes.slice(0, target.titleAttributeCount));
  const hidden = rng.shuffle(target.attributes.slice(target.titleAttributeCount));
  const out: string[] = [];
  for (let i = 0; i < k; i++) {
    const fromHidden = rng.bool(hiddenShare) ? hidden.length > 0 : shown.length === 0;
    out.push((fromHidden ? hidden : shown).shift()!);
  }
  return out;
}

function taskId(
  seed: number,
  difficulty: number,
  knobs: WebShopKnobs,
  fromLevel: boolean,
  catalogSeed: number,
  suffix?: string,
): string {
  let id = `${WEBSHOP_ENV_ID}/${seed}/${difficulty.toFixed(2)}`;
  if (!fromLevel) id += `/k${hashString(JSON.stringify(knobs)).toString(36)}`;
  if (catalogSeed !== DEFAULT_CATALOG_SEED || knobs.catalogSize !== DEFAULT_CATALOG_SIZE)
    id += `/c${catalogSeed}-${knobs.catalogSize}`;
  if (suffix) id += `/${suffix}`;
  return id;
}

// ---------------------------------------------------------------------------------------------
// Episodes of tasks (cached: reset of a known task reuses the world built at generation)
// ---------------------------------------------------------------------------------------------

const episodes = new Map<string, ShopEpisode>();
let episodeBySpec = new WeakMap<object, { id: string; instruction: string; episode: ShopEpisode }>();

/** Drops cached episode worlds (tests use it to prove a spec rebuilds the same episode). */
export function forgetEpisodes(): void {
  episodes.clear();
  episodeBySpec = new WeakMap();
}

function episodeKey(task: Task): string {
  return `${task.id}\u0000${task.instruction}\u0000${JSON.stringify(task.spec)}`;
}

function rememberEpisode(key: string, episode: ShopEpisode): void {
  if (episodes.size >= 512) episodes.delete(episodes.keys().next().value as string);
  episodes.set(key, episode);
}

/** The episode world of a task (rebuilt from its spec, cached). */
export function episodeOf(task: Task): ShopEpisode {
  if (task.env !== WEBSHOP_ENV_ID)
    throw new RangeError(`webshop: task ${task.id} belongs to '${task.env}', not '${WEBSHOP_ENV_ID}'`);
  const spec = task.spec as WebShopTaskSpec | undefined;
  if (!spec || spec.version !== 1 || typeof spec.target !== 'string') {
    throw new RangeError(
      `webshop: task ${task.id} has no webshop spec (version 1); generate tasks with generateTask()`,
    );
  }
  // Fast path: the same task object played again (checked against its id and instruction).
  const known = episodeBySpec.get(spec);
  if (known && known.id === task.id && known.instruction === task.instruction) return known.episode;
  const key = episodeKey(task);
  let episode = episodes.get(key);
  if (!episode) {
    episode = new ShopEpisode(spec, task.instruction);
    rememberEpisode(key, episode);
  }
  episodeBySpec.set(spec, { id: task.id, instruction: task.instruction, episode });
  return episode;
}

// ---------------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------------

interface Draft {
  spec: WebShopTaskSpec;
  instruction: string;
  episode: ShopEpisode;
}

function draftTask(
  seed: number,
  attempt: number,
  knobs: WebShopKnobs,
  catalogSeed: number,
  preferType?: string,
): Draft | null {
  const rng = Rng.fromSeed(seed, WEBSHOP_ENV_ID, 'task', String(attempt));
  const catalog = getCatalog(catalogSeed, knobs.catalogSize);
  const kAtt = Math.min(4, Math.max(1, realizeCount(rng, knobs.attributes)));
  const kOpt = Math.min(3, Math.max(0, realizeCount(rng, knobs.options)));
  const push = rng.bool(knobs.rankPush);

  let pool = preferType ? catalog.eligible(kAtt, kOpt, preferType) : [];
  if (pool.length === 0) pool = catalog.eligible(kAtt, kOpt);
  if (pool.length === 0) return null;
  const target = rng.pick(pool);
  const { type } = getTypeEntry(target.typeId);

  const attributes = chooseGoalAttributes(rng, target, kAtt, knobs.hiddenAttributeShare);
  const groupIdx = new Set(
    rng.sample(
      target.options.map((_, i) => i),
      kOpt,
    ),
  );
  const options = target.options
    .filter((_, i) => groupIdx.has(i))
    .map((g) => ({ group: g.name, value: rng.pick(g.values) }));
  const priceUpper = priceUpperFor(rng, target.price, rng.bool(knobs.priceTightness));
  const noun = type.synonyms.length > 0 && rng.bool(knobs.paraphraseRate) ? rng.pick(type.synonyms) : type.noun;
  const style = rng.bool(knobs.paraphraseRate) ? 'human' : 'synthetic';
  const templates = style === 'human' ? HUMAN_TEMPLATES : SYNTHETIC_TEMPLATES;
  const instruction = renderInstruction({
    style,
    template: rng.int(0, templates.length - 1),
    relation: rng.pick(RELATIONS),
    noun,
    attributes,
    options,
    priceUpper,
  });

  const spec: WebShopTaskSpec = {
    version: 1,
    catalogSeed,
    catalogSize: knobs.catalogSize,
    knobs,
    target: target.asin,
    typeId: target.typeId,
    goal: { attributes, options, priceUpper },
    noun,
    style,
    distractors: [],
  };
  const episode = new ShopEpisode(spec, instruction);
  if (episode.satisfies(target.asin) === false) return null; // a quirk of the fuzzy rules; draw again

  // Near-miss distractors, round-robin over the kinds that apply; a draw that happens to
  // satisfy the goal is redrawn (it would not be a distractor).
  const kinds: DistractorKind[] = ['attribute', 'price', 'type'];
  if (options.length > 0) kinds.push('option');
  if (priceUpper >= 1_000_000) kinds.splice(kinds.indexOf('price'), 1);
  const offset = rng.int(0, kinds.length - 1);
  for (let i = 0; i < knobs.distractors; i++) {
    const kind = kinds[(offset + i) % kinds.length];
    for (let retry = 0; retry < 4; retry++) {
      const recipe: DistractorRecipe = { kind, key: `${seed}/${attempt}/${i}/${retry}` };
      const product = episode.makeDistractor(recipe);
      episode.addOverlay(product);
      if (!episode.satisfies(product.asin)) {
        spec.distractors.push(recipe);
        break;
      }
      episode.removeLastOverlay();
    }
  }

  // Rank push: keyword-dense copies priced above the bound until the first satisfying product
  // sits on page 2+ under every candidate query.
  if (push && priceUpper < 1_000_000) {
    let pushers = 0;
    for (;;) {
      const best = episode.bestCandidate();
      if (!best) return null;
      if (best.rank >= PRODUCTS_PER_PAGE) break;
      if (pushers >= MAX_PUSHERS) return null;
      const need = Math.min(MAX_PUSHERS - pushers, PRODUCTS_PER_PAGE - best.rank);
      for (let j = 0; j < need; j++, pushers++) {
        const recipe: DistractorRecipe = { kind: 'push', key: `${seed}/${attempt}/p${pushers}` };
        episode.addOverlay(episode.makeDistractor(recipe));
        spec.distractors.push(recipe);
      }
    }
  }
  return { spec, instruction, episode };
}

/**
 * A task from a seed at a difficulty (scalar level or knob vector), proved solvable: the
 * expert buys a product with reward exactly 1.
 */
export function generateTask(seed: number, difficulty: number | WebShopKnobs, options: GenerateOptions = {}): Task {
  if (!Number.isFinite(seed)) throw new RangeError(`webshop: seed must be a finite number, got ${seed}`);
  const fromLevel = typeof difficulty === 'number';
  const knobs = normalizeKnobs(fromLevel ? knobsForLevel(difficulty) : difficulty);
  const level = options.difficulty ?? (fromLevel ? Math.min(1, Math.max(0, difficulty)) : difficultyOfKnobs(knobs));
  const catalogSeed = options.catalogSeed ?? DEFAULT_CATALOG_SEED;

  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const draft = draftTask(seed, attempt, knobs, catalogSeed, options.preferType);
    if (!draft) continue;
    const run = runExpert(draft.episode);
    if (!run.success) continue;
    const best = draft.episode.bestCandidate()!;
    draft.spec.expert = { query: best.query, rank: best.rank, optimalLength: run.actions.length };
    const task: Task = {
      id: taskId(seed, level, knobs, fromLevel && options.difficulty === undefined, catalogSeed, options.idSuffix),
      env: WEBSHOP_ENV_ID,
      instruction: draft.instruction,
      difficulty: level,
      spec: draft.spec,
      origin: options.origin ?? 'generated',
      seed,
      ...(options.parent ? { parent: options.parent } : {}),
    };
    rememberEpisode(episodeKey(task), draft.episode);
    return task;
  }
  throw new Error(
    `webshop: no solvable task for seed ${seed} after ${MAX_ATTEMPTS} attempts (knobs ${JSON.stringify(knobs)}); ` +
      'lower rankPush or the attribute/option counts',
  );
}

/** Runs the expert on the task from its start. */
export function solveTask(task: Task): ExpertSolution {
  const run = runExpert(episodeOf(task));
  return { actions: run.actions, optimalLength: run.actions.length, success: run.success };
}

/** A nearby task one notch harder or easier (same product type where possible), proved solvable. */
export function mutateTask(task: Task, rng: Rng, direction: Direction): Task {
  const spec = task.spec as WebShopTaskSpec;
  if (!spec || spec.version !== 1)
    throw new RangeError(`webshop: cannot mutate task ${task.id}: it has no webshop spec`);
  const movable = movableKnobs(spec.knobs, direction);
  const knobs = movable.length > 0 ? moveKnob(spec.knobs, rng.pick(movable), direction) : spec.knobs;
  const seed = rng.nextUint32();
  return generateTask(seed, knobs, {
    catalogSeed: spec.catalogSeed,
    preferType: spec.typeId,
    origin: 'variation',
    parent: task.id,
    idSuffix: `v${direction === 'harder' ? 'h' : 'e'}`,
  });
}

export function defaultKnobs(level = 0.5, catalogSize = DEFAULT_CATALOG_SIZE): WebShopKnobs {
  return knobsForLevel(level, catalogSize);
}
