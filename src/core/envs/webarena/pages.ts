/**
 * Routes, URLs and pages of the two sites. A page is a flat list of accessibility-tree elements in
 * document order (WebArena's tree, without its nesting); each interactive element carries what a
 * click or a typed text does. Pages are rendered from the live `Sites` and the browser's form draft.
 */
import {
  ADMIN_HOME,
  ADMIN_ORIGIN,
  FORUM_HOME,
  FORUM_ORIGIN,
  money,
  orderNumber,
  ROWS_PER_PAGE,
  type Product,
  type Sites,
} from './world';

export type Route =
  | { page: 'forum-home' }
  | { page: 'forum'; forum: string; n: number }
  | { page: 'post'; forum: string; postId: number }
  | { page: 'submit'; forum: string }
  | { page: 'dashboard' }
  | { page: 'products'; n: number; q: string }
  | { page: 'product'; productId: number }
  | { page: 'orders'; n: number }
  | { page: 'order'; orderId: number };

export type Site = 'forum' | 'admin';

export function siteOf(route: Route): Site {
  return route.page === 'forum-home' || route.page === 'forum' || route.page === 'post' || route.page === 'submit'
    ? 'forum'
    : 'admin';
}

export const HOME_ROUTES: Readonly<Record<Site, Route>> = {
  forum: { page: 'forum-home' },
  admin: { page: 'dashboard' },
};

const pageQuery = (n: number) => (n > 1 ? `page=${n}` : '');

export function urlOf(route: Route): string {
  switch (route.page) {
    case 'forum-home':
      return FORUM_HOME;
    case 'forum': {
      const q = pageQuery(route.n);
      return `${FORUM_ORIGIN}/f/${route.forum}${q ? `?${q}` : ''}`;
    }
    case 'post':
      return `${FORUM_ORIGIN}/f/${route.forum}/${route.postId}`;
    case 'submit':
      return `${FORUM_ORIGIN}/f/${route.forum}/submit`;
    case 'dashboard':
      return ADMIN_HOME;
    case 'products': {
      const parts = [route.q ? `q=${encodeURIComponent(route.q)}` : '', pageQuery(route.n)].filter(Boolean);
      return `${ADMIN_ORIGIN}/admin/products${parts.length ? `?${parts.join('&')}` : ''}`;
    }
    case 'product':
      return `${ADMIN_ORIGIN}/admin/products/${route.productId}/edit`;
    case 'orders': {
      const q = pageQuery(route.n);
      return `${ADMIN_ORIGIN}/admin/orders${q ? `?${q}` : ''}`;
    }
    case 'order':
      return `${ADMIN_ORIGIN}/admin/orders/${route.orderId}`;
  }
}

export type Role = 'link' | 'button' | 'heading' | 'StaticText' | 'gridcell' | 'textbox' | 'searchbox' | 'checkbox';

/** What clicking an element does. */
export type Effect =
  | { kind: 'nav'; to: Route }
  | { kind: 'vote'; postId: number; dir: 1 | -1 }
  | { kind: 'reply'; postId: number }
  | { kind: 'create'; forum: string }
  | { kind: 'toggle'; field: string }
  | { kind: 'save'; productId: number }
  | { kind: 'cancel'; orderId: number };

export interface Element {
  role: Role;
  name: string;
  /** A text field's shown value. */
  value?: string;
  checked?: boolean;
  pressed?: boolean;
  /** What a click does (links, buttons, checkboxes). */
  effect?: Effect;
  /** The form field a textbox writes (typing into a searchbox submits the search instead). */
  field?: string;
}

export interface Page {
  title: string;
  url: string;
  elements: Element[];
}

export const CLICKABLE: ReadonlySet<Role> = new Set(['link', 'button', 'checkbox']);
export const TYPABLE: ReadonlySet<Role> = new Set(['textbox', 'searchbox']);

const link = (name: string, to: Route): Element => ({ role: 'link', name, effect: { kind: 'nav', to } });
const text = (name: string): Element => ({ role: 'StaticText', name });
const cell = (name: string): Element => ({ role: 'gridcell', name });

export function pageCount(rows: number): number {
  return Math.max(1, Math.ceil(rows / ROWS_PER_PAGE));
}

/** The list page (1-based) a row index falls on. */
export function pageOfIndex(index: number): number {
  return Math.floor(index / ROWS_PER_PAGE) + 1;
}

function pager(n: number, rows: number, to: (n: number) => Route): Element[] {
  const pages = pageCount(rows);
  const out: Element[] = [];
  if (n > 1) out.push(link('Previous page', to(n - 1)));
  if (n < pages) out.push(link('Next page', to(n + 1)));
  out.push(text(`Page ${n} of ${pages}`));
  return out;
}

/** The elements of list page n: `row` renders one row into `out` (loops, not flatMap: pages render at every step). */
function listRows<T>(rows: readonly T[], n: number, out: Element[], row: (item: T, out: Element[]) => void): Element[] {
  const end = Math.min(rows.length, n * ROWS_PER_PAGE);
  for (let i = (n - 1) * ROWS_PER_PAGE; i < end; i++) row(rows[i], out);
  return out;
}

/** The draft value of a field, or its saved value when untouched. */
export type Draft = ReadonlyMap<string, string>;

type At<P extends Route['page']> = Route & { page: P };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const forumBar = (): Element[] => [link('Forum', HOME_ROUTES.forum)];

function forumHome(sites: Sites, route: Route): Page {
  const forums = sites.world.forums.map((f) => link(f, { page: 'forum', forum: f, n: 1 }));
  return {
    title: 'Forums',
    url: urlOf(route),
    elements: [...forumBar(), { role: 'heading', name: 'Forums' }, ...forums],
  };
}

function forumList(sites: Sites, route: At<'forum'>): Page {
  const posts = sites.forumPosts(route.forum);
  const rows = listRows(posts, route.n, [], (p, out) => {
    const to: Route = { page: 'post', forum: route.forum, postId: p.id };
    out.push(
      link(p.title, to),
      text(`Submitted by ${p.author}`),
      text(`${sites.score(p)} points`),
      link(plural(sites.comments(p).length, 'comment'), to),
    );
  });
  return {
    title: `${route.forum} - Forum`,
    url: urlOf(route),
    elements: [
      ...forumBar(),
      { role: 'heading', name: route.forum },
      link('Submit a new post', { page: 'submit', forum: route.forum }),
      ...rows,
      ...pager(route.n, posts.length, (n) => ({ page: 'forum', forum: route.forum, n })),
    ],
  };
}

function postPage(sites: Sites, route: At<'post'>, draft: Draft): Page {
  const post = sites.post(route.postId)!;
  const vote = sites.vote(post.id);
  const comments = sites.comments(post);
  return {
    title: `${post.title} - ${route.forum}`,
    url: urlOf(route),
    elements: [
      ...forumBar(),
      link(route.forum, { page: 'forum', forum: route.forum, n: 1 }),
      { role: 'heading', name: post.title },
      text(`Submitted by ${post.author}`),
      text(`${sites.score(post)} points`),
      { role: 'button', name: 'Upvote', pressed: vote === 1, effect: { kind: 'vote', postId: post.id, dir: 1 } },
      { role: 'button', name: 'Downvote', pressed: vote === -1, effect: { kind: 'vote', postId: post.id, dir: -1 } },
      text(post.body),
      { role: 'heading', name: plural(comments.length, 'comment') },
      ...comments.map((c) => text(`${c.author}: ${c.text}`)),
      { role: 'textbox', name: 'Reply', value: draft.get('reply') ?? '', field: 'reply' },
      { role: 'button', name: 'Post reply', effect: { kind: 'reply', postId: post.id } },
    ],
  };
}

function submitPage(route: At<'submit'>, draft: Draft): Page {
  return {
    title: `Submit to ${route.forum} - Forum`,
    url: urlOf(route),
    elements: [
      ...forumBar(),
      link(route.forum, { page: 'forum', forum: route.forum, n: 1 }),
      { role: 'heading', name: `Submit a post to ${route.forum}` },
      { role: 'textbox', name: 'Title', value: draft.get('title') ?? '', field: 'title' },
      { role: 'textbox', name: 'Body', value: draft.get('body') ?? '', field: 'body' },
      { role: 'button', name: 'Create post', effect: { kind: 'create', forum: route.forum } },
    ],
  };
}

/** Products matching a grid search (case-insensitive substring of the name). */
export function searchProducts(products: readonly Product[], q: string): readonly Product[] {
  const needle = q.trim().toLowerCase();
  return needle ? products.filter((p) => p.name.toLowerCase().includes(needle)) : products;
}

/** A product's price as its edit form shows it (`31.50`). */
export const priceField = (cents: number) => (cents / 100).toFixed(2);

const adminBar = (): Element[] => [
  link('Dashboard', HOME_ROUTES.admin),
  link('Products', { page: 'products', n: 1, q: '' }),
  link('Orders', { page: 'orders', n: 1 }),
];

function dashboard(sites: Sites, route: Route): Page {
  const pending = sites.world.orders.filter((o) => sites.orderStatus(o) === 'Pending').length;
  return {
    title: 'Dashboard - Admin',
    url: urlOf(route),
    elements: [...adminBar(), { role: 'heading', name: 'Dashboard' }, text(`${pending} pending orders`)],
  };
}

function productGrid(sites: Sites, route: At<'products'>): Page {
  const found = searchProducts(sites.products(), route.q);
  const rows = listRows(found, route.n, [], (p, out) => {
    out.push(
      link(p.name, { page: 'product', productId: p.id }),
      cell(p.sku),
      cell(money(p.price)),
      cell(String(p.qty)),
      cell(p.enabled ? 'Enabled' : 'Disabled'),
    );
  });
  return {
    title: 'Products - Admin',
    url: urlOf(route),
    elements: [
      ...adminBar(),
      { role: 'heading', name: 'Products' },
      { role: 'searchbox', name: 'Search by name', value: route.q },
      ...pager(route.n, found.length, (n) => ({ page: 'products', n, q: route.q })),
      ...(found.length === 0 ? [text('We could not find any records.')] : rows),
    ],
  };
}

function productForm(sites: Sites, route: At<'product'>, draft: Draft): Page {
  const p = sites.product(route.productId)!;
  const enabled = draft.has('enabled') ? draft.get('enabled') === 'true' : p.enabled;
  return {
    title: `${p.name} - Products - Admin`,
    url: urlOf(route),
    elements: [
      ...adminBar(),
      { role: 'heading', name: p.name },
      text(`SKU ${p.sku}`),
      { role: 'textbox', name: 'Price', value: draft.get('price') ?? priceField(p.price), field: 'price' },
      { role: 'textbox', name: 'Quantity', value: draft.get('qty') ?? String(p.qty), field: 'qty' },
      { role: 'checkbox', name: 'Enabled', checked: enabled, effect: { kind: 'toggle', field: 'enabled' } },
      { role: 'button', name: 'Save', effect: { kind: 'save', productId: p.id } },
    ],
  };
}

function orderGrid(sites: Sites, route: At<'orders'>): Page {
  const rows = listRows(sites.world.orders, route.n, [], (o, out) => {
    out.push(
      link(`Order #${orderNumber(o.id)}`, { page: 'order', orderId: o.id }),
      cell(o.customer),
      cell(money(o.total)),
      cell(sites.orderStatus(o)),
    );
  });
  return {
    title: 'Orders - Admin',
    url: urlOf(route),
    elements: [
      ...adminBar(),
      { role: 'heading', name: 'Orders' },
      ...pager(route.n, sites.world.orders.length, (n) => ({ page: 'orders', n })),
      ...rows,
    ],
  };
}

function orderPage(sites: Sites, route: At<'order'>): Page {
  const o = sites.order(route.orderId)!;
  const status = sites.orderStatus(o);
  const cancel: Element = { role: 'button', name: 'Cancel order', effect: { kind: 'cancel', orderId: o.id } };
  return {
    title: `Order #${orderNumber(o.id)} - Admin`,
    url: urlOf(route),
    elements: [
      ...adminBar(),
      { role: 'heading', name: `Order #${orderNumber(o.id)}` },
      text(`Customer: ${o.customer}`),
      text(`Status: ${status}`),
      text(`Grand total: ${money(o.total)}`),
      ...o.items.map((item) => text(`Item: ${item}`)),
      ...(status === 'Pending' || status === 'Processing' ? [cancel] : []),
    ],
  };
}

function pageAt(sites: Sites, route: Route, draft: Draft): Page {
  switch (route.page) {
    case 'forum-home':
      return forumHome(sites, route);
    case 'forum':
      return forumList(sites, route);
    case 'post':
      return postPage(sites, route, draft);
    case 'submit':
      return submitPage(route, draft);
    case 'dashboard':
      return dashboard(sites, route);
    case 'products':
      return productGrid(sites, route);
    case 'product':
      return productForm(sites, route, draft);
    case 'orders':
      return orderGrid(sites, route);
    case 'order':
      return orderPage(sites, route);
  }
}

/** The page at a route, with a flash message (after a form) on top of its content. */
export function renderPage(sites: Sites, route: Route, draft: Draft, flash: string | null): Page {
  const page = pageAt(sites, route, draft);
  if (flash) page.elements.splice(siteOf(route) === 'forum' ? 1 : 3, 0, text(flash));
  return page;
}
