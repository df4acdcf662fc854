/**
 * The two seeded sites of webarena-lite-v0 (after WebArena's Reddit clone and its Magento admin): a
 * forum (forums, posts, comments, votes) and a store admin (products, orders, prices, stock).
 *
 * A world is a pure function of its recipe (seed and sizes), so a task stores only the recipe and
 * the env rebuilds the base world (cached); what an episode changes lives in an `Edits` overlay
 * on top of it, which makes a reset cheap and leaves the cached base untouched.
 */
import { Rng } from '../../rng';

export const FORUM_ORIGIN = 'http://forum.local';
export const ADMIN_ORIGIN = 'http://admin.local';
export const FORUM_HOME = `${FORUM_ORIGIN}/`;
export const ADMIN_HOME = `${ADMIN_ORIGIN}/admin`;
/** The agent's own forum account (WebArena's Reddit tasks log in as this user). */
export const AGENT_USER = 'MarvelsGrantMan136';
/** Rows per list page, on both sites. */
export const ROWS_PER_PAGE = 8;

export interface WorldRecipe {
  seed: number;
  /** Forums in the forum site, 2–6. */
  forums: number;
  /** Posts per forum, products and orders: the list lengths, 4–40. */
  listSize: number;
}

export interface Comment {
  author: string;
  text: string;
}

export interface Post {
  id: number;
  forum: string;
  title: string;
  author: string;
  /** Score before the agent's own vote. */
  score: number;
  body: string;
  comments: Comment[];
}

export interface Product {
  id: number;
  sku: string;
  name: string;
  /** Price in cents (integers keep prices exact). */
  price: number;
  qty: number;
  enabled: boolean;
}

export const ORDER_STATUSES = ['Pending', 'Processing', 'Complete', 'Canceled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export interface Order {
  id: number;
  customer: string;
  /** Grand total in cents. */
  total: number;
  status: OrderStatus;
  items: string[];
}

/** The immutable base of a world: shared by every episode of the recipe. */
export interface World {
  recipe: WorldRecipe;
  forums: string[];
  /** Posts of each forum in listing order (newest first). */
  postsByForum: ReadonlyMap<string, readonly Post[]>;
  posts: ReadonlyMap<number, Post>;
  products: readonly Product[];
  orders: readonly Order[];
}

/** What an episode changed: the agent's votes, its comments and posts, and saved admin edits. */
export interface Edits {
  votes: Map<number, -1 | 1>;
  comments: Map<number, Comment[]>;
  newPosts: Post[];
  products: Map<number, Product>;
  orderStatus: Map<number, OrderStatus>;
}

export function emptyEdits(): Edits {
  return { votes: new Map(), comments: new Map(), newPosts: [], products: new Map(), orderStatus: new Map() };
}

// ---------------------------------------------------------------------------------------------
// Vocabulary (no quotes or brackets: names sit inside `'…'` and `[…]` in the text)
// ---------------------------------------------------------------------------------------------

const FORUMS = ['books', 'movies', 'gaming', 'cooking', 'science', 'music', 'travel', 'history'];
const TOPICS: Record<string, string[]> = {
  books: ['fantasy series', 'audiobooks', 'poetry collections', 'sci-fi classics', 'used bookstores', 'book clubs'],
  movies: ['horror sequels', 'film scores', 'silent films', 'heist movies', 'animated features', 'movie trailers'],
  gaming: ['retro consoles', 'speedruns', 'indie roguelikes', 'board game nights', 'co-op shooters', 'game mods'],
  cooking: ['sourdough starters', 'cast iron pans', 'weeknight curries', 'knife skills', 'meal prep', 'street tacos'],
  science: ['black holes', 'gene editing', 'fusion power', 'bird migration', 'deep sea vents', 'prime numbers'],
  music: ['vinyl records', 'jazz standards', 'synth pop', 'guitar pedals', 'film soundtracks', 'live albums'],
  travel: ['night trains', 'hostel life', 'island hopping', 'packing lists', 'road trips', 'budget flights'],
  history: ['ancient Rome', 'the Silk Road', 'medieval castles', 'the space race', 'lost cities', 'old maps'],
};
const OPENERS = [
  'Thoughts on',
  'Looking for advice on',
  'Anyone else into',
  'Underrated picks in',
  'Weekly thread about',
  'A question about',
  'Recommendations for',
  'Hot take on',
  'My ranking of',
  'Beginner guide to',
];
const USERS = [
  'alice_w',
  'bookworm42',
  'mkelly',
  'quietriver',
  'n8dawg',
  'pixelpusher',
  'sunnydays',
  'the_real_dan',
  'vortex88',
  'hazelnut',
  'jpark',
  'lunasea',
];
const COMMENTS = [
  'Totally agree with this',
  'Great point',
  'I see it differently',
  'Thanks for sharing',
  'Following this thread',
  'Same here',
  'Good question',
  'Not sure about that',
];
const COLORS = ['Blue', 'Black', 'Red', 'Green', 'Grey', 'White', 'Orange', 'Purple'];
const GOODS = [
  'Yoga Mat',
  'Water Bottle',
  'Running Shorts',
  'Hoodie',
  'Backpack',
  'Tee',
  'Rain Jacket',
  'Sneakers',
  'Cap',
  'Duffel Bag',
];
const FIRST = ['Ana', 'Ben', 'Chloe', 'David', 'Emma', 'Felix', 'Grace', 'Hiro', 'Ivy', 'Jonas', 'Kara', 'Liam'];
const LAST = ['Silva', 'Novak', 'Reyes', 'Chen', 'Okafor', 'Larsen', 'Patel', 'Moreau'];

export const MAX_LIST_SIZE = 40;
export const MAX_FORUMS = FORUMS.length;

// ---------------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------------

function cross(a: readonly string[], b: readonly string[], join: (x: string, y: string) => string): string[] {
  const out: string[] = [];
  for (const x of a) for (const y of b) out.push(join(x, y));
  return out;
}

function makeForum(rng: Rng, forum: string, listSize: number, firstId: number): Post[] {
  const titles = rng.sample(
    cross(OPENERS, TOPICS[forum], (o, t) => `${o} ${t}`),
    listSize,
  );
  return titles.map((title, i) => {
    const comments: Comment[] = [];
    const count = rng.int(0, 6);
    for (let c = 0; c < count; c++) comments.push({ author: rng.pick(USERS), text: rng.pick(COMMENTS) });
    return {
      id: firstId + i,
      forum,
      title,
      author: rng.pick(USERS),
      score: rng.int(-3, 120),
      body: `${rng.pick(['Curious what everyone thinks.', 'Long time lurker here.', 'Share your favourites below.'])}`,
      comments,
    };
  });
}

function makeProducts(rng: Rng, count: number): Product[] {
  const names = rng.sample(
    cross(COLORS, GOODS, (c, g) => `${c} ${g}`),
    count,
  );
  return names.map((name, i) => ({
    id: i + 1,
    sku: `${name
      .split(' ')
      .map((w) => w[0])
      .join('')}-${1000 + rng.int(0, 8999)}`,
    name,
    price: rng.int(8, 150) * 100 + rng.pick([0, 50, 99]),
    qty: rng.int(0, 200),
    enabled: rng.bool(0.85),
  }));
}

function makeOrders(rng: Rng, count: number, products: readonly Product[]): Order[] {
  const orders: Order[] = [];
  for (let i = 0; i < count; i++) {
    const items = rng.sample(products, rng.int(1, 3));
    orders.push({
      id: 101 + i,
      customer: `${rng.pick(FIRST)} ${rng.pick(LAST)}`,
      total: items.reduce((sum, p) => sum + p.price, 0) + 500,
      status: ORDER_STATUSES[rng.weightedIndex([3, 3, 4, 2])],
      items: items.map((p) => p.name),
    });
  }
  return orders.reverse(); // newest first, as the admin grid lists them
}

export function validateRecipe(recipe: WorldRecipe): void {
  const { forums, listSize, seed } = recipe;
  if (!Number.isInteger(seed)) throw new RangeError(`webarena-lite: world seed must be an integer, got ${seed}`);
  if (!Number.isInteger(forums) || forums < 2 || forums > MAX_FORUMS)
    throw new RangeError(`webarena-lite: forums must be an integer in [2, ${MAX_FORUMS}], got ${forums}`);
  if (!Number.isInteger(listSize) || listSize < 4 || listSize > MAX_LIST_SIZE)
    throw new RangeError(`webarena-lite: listSize must be an integer in [4, ${MAX_LIST_SIZE}], got ${listSize}`);
}

function buildWorld(recipe: WorldRecipe): World {
  validateRecipe(recipe);
  const rng = Rng.fromSeed(recipe.seed, 'webarena-lite-v0', 'world');
  const forums = rng.split('forums').sample(FORUMS, recipe.forums);
  const postsByForum = new Map<string, Post[]>();
  const posts = new Map<number, Post>();
  forums.forEach((forum, f) => {
    const list = makeForum(rng.split(`forum/${forum}`), forum, recipe.listSize, 1 + f * 100);
    postsByForum.set(forum, list);
    for (const p of list) posts.set(p.id, p);
  });
  const products = makeProducts(rng.split('products'), recipe.listSize);
  const orders = makeOrders(rng.split('orders'), recipe.listSize, products);
  return { recipe, forums, postsByForum, posts, products, orders };
}

const cache = new Map<string, World>();

/** The base world of a recipe (cached: tasks of one recipe share it, and nothing mutates it). */
export function worldOf(recipe: WorldRecipe): World {
  const key = `${recipe.seed}|${recipe.forums}|${recipe.listSize}`;
  let world = cache.get(key);
  if (!world) {
    world = buildWorld(recipe);
    // Evict the oldest world only: clearing all would rebuild every world of a pool at once.
    if (cache.size >= 512) cache.delete(cache.keys().next().value!);
    cache.set(key, world);
  }
  return world;
}

// ---------------------------------------------------------------------------------------------
// The live state: base world + an episode's edits
// ---------------------------------------------------------------------------------------------

/** A world as an episode sees it: reads go through the edits. */
export class Sites {
  /** Bumped by every change: pages rendered at an older version are stale. */
  version = 0;

  constructor(
    readonly world: World,
    readonly edits: Edits = emptyEdits(),
  ) {}

  forumPosts(forum: string): readonly Post[] {
    const base = this.world.postsByForum.get(forum) ?? [];
    if (this.edits.newPosts.length === 0) return base;
    const own = this.edits.newPosts.filter((p) => p.forum === forum).reverse();
    return own.length === 0 ? base : [...own, ...base];
  }

  post(id: number): Post | undefined {
    return this.world.posts.get(id) ?? this.edits.newPosts.find((p) => p.id === id);
  }

  vote(postId: number): -1 | 0 | 1 {
    return this.edits.votes.get(postId) ?? 0;
  }

  score(post: Post): number {
    return post.score + this.vote(post.id);
  }

  comments(post: Post): readonly Comment[] {
    const own = this.edits.comments.get(post.id);
    return own ? [...post.comments, ...own] : post.comments;
  }

  product(id: number): Product | undefined {
    return this.edits.products.get(id) ?? this.world.products.find((p) => p.id === id);
  }

  products(): readonly Product[] {
    if (this.edits.products.size === 0) return this.world.products;
    return this.world.products.map((p) => this.edits.products.get(p.id) ?? p);
  }

  orderStatus(order: Order): OrderStatus {
    return this.edits.orderStatus.get(order.id) ?? order.status;
  }

  order(id: number): Order | undefined {
    return this.world.orders.find((o) => o.id === id);
  }

  setVote(postId: number, vote: -1 | 0 | 1): void {
    this.version++;
    if (vote === 0) this.edits.votes.delete(postId);
    else this.edits.votes.set(postId, vote);
  }

  addComment(postId: number, text: string): void {
    this.version++;
    const list = this.edits.comments.get(postId) ?? [];
    list.push({ author: AGENT_USER, text });
    this.edits.comments.set(postId, list);
  }

  addPost(forum: string, title: string, body: string): Post {
    this.version++;
    const post: Post = {
      id: 1000 + this.edits.newPosts.length,
      forum,
      title,
      author: AGENT_USER,
      score: 1,
      body,
      comments: [],
    };
    this.edits.newPosts.push(post);
    return post;
  }

  saveProduct(product: Product): void {
    this.version++;
    this.edits.products.set(product.id, product);
  }

  setOrderStatus(orderId: number, status: OrderStatus): void {
    this.version++;
    this.edits.orderStatus.set(orderId, status);
  }
}

/** Cents → `$31.50`. */
export function money(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

/** `000000123`: Magento's order number. */
export function orderNumber(id: number): string {
  return String(id).padStart(9, '0');
}
