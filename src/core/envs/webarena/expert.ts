/**
 * The privileged expert of webarena-lite-v0: it reads the live sites and the task's target and
 * returns the next command of a route to it from ANY page, so a noisy expert that wandered off
 * recovers. Every choice depends only on the current page and state, and each one brings the
 * browser one hop closer along a fixed route (home → list page → row → detail page), so it never
 * oscillates.
 *
 * Route: on the wrong site, `goto` its home; otherwise follow the link one hop toward the target
 * (scrolling it into view first), searching the product grid when the product is two pages or more
 * away. At the target: read the answer (scroll it into view, `stop`), or make the change (type each
 * field that differs, tick the box, press the button).
 */
import { type Browser, type Command } from './browser';
import { pageOfIndex, searchProducts, siteOf, urlOf, HOME_ROUTES, type Element, type Route } from './pages';

/** What the expert works toward (privileged: never shown to the agent). */
export type Target =
  /** Bring the `offset`-th element after the row link to `detail` into view and stop with its name. */
  | { goal: 'answer'; detail: Route; offset: number }
  /** Open `route` and stop with the name of its `nth` heading. */
  | { goal: 'read'; route: Route; nth: number }
  | { goal: 'visit'; route: Route }
  | { goal: 'vote'; route: Route & { page: 'post' }; dir: 1 | -1 }
  | { goal: 'reply'; route: Route & { page: 'post' }; text: string }
  | { goal: 'create'; route: Route & { page: 'submit' }; title: string }
  | { goal: 'product'; route: Route & { page: 'product' }; price?: string; qty?: string; enabled?: boolean }
  | { goal: 'cancel'; route: Route & { page: 'order' } };

const sameRoute = (a: Route, b: Route) => urlOf(a) === urlOf(b);

/** Index of the first element whose click leads to `to` (-1: none). */
function linkTo(elements: readonly Element[], to: Route): number {
  const url = urlOf(to);
  return elements.findIndex((el) => el.effect?.kind === 'nav' && urlOf(el.effect.to) === url);
}

/** Scroll toward an element, or act on it once it is in view. */
function reach(b: Browser, index: number, act: () => Command): Command {
  if (b.isVisible(index)) return act();
  return { verb: 'scroll', dir: index < b.visibleRange()[0] ? 'up' : 'down' };
}

const toward = (n: number, k: number) => (k > n ? n + 1 : n - 1);

/** The link to follow next toward `dest` on the same site, or a search to type. */
function nextHop(b: Browser, dest: Route): { to: Route } | { search: string } {
  const cur = b.route;
  const sites = b.sites;
  switch (dest.page) {
    case 'forum-home':
    case 'dashboard':
      return { to: dest };
    case 'forum':
    case 'post':
    case 'submit': {
      const forum = dest.forum;
      const page =
        dest.page === 'forum'
          ? dest.n
          : dest.page === 'post'
            ? pageOfIndex(sites.forumPosts(forum).findIndex((p) => p.id === dest.postId))
            : 0;
      if (cur.page === 'forum' && cur.forum === forum) {
        if (dest.page === 'submit' || cur.n === page) return { to: dest };
        return { to: { page: 'forum', forum, n: toward(cur.n, page) } };
      }
      const inForum = (cur.page === 'post' || cur.page === 'submit') && cur.forum === forum;
      if (cur.page === 'forum-home' || inForum) return { to: { page: 'forum', forum, n: 1 } };
      return { to: HOME_ROUTES.forum };
    }
    case 'product': {
      const product = sites.product(dest.productId)!;
      if (cur.page === 'products') {
        const found = searchProducts(sites.products(), cur.q);
        const index = found.findIndex((p) => p.id === product.id);
        if (index >= 0) {
          const page = pageOfIndex(index);
          if (page === cur.n) return { to: dest };
          if (!cur.q && Math.abs(page - cur.n) >= 2 && b.texts.includes(product.name)) return { search: product.name };
          return { to: { page: 'products', n: toward(cur.n, page), q: cur.q } };
        }
      }
      return { to: { page: 'products', n: 1, q: '' } };
    }
    case 'order': {
      if (cur.page === 'orders') {
        const page = pageOfIndex(sites.world.orders.findIndex((o) => o.id === dest.orderId));
        return { to: page === cur.n ? dest : { page: 'orders', n: toward(cur.n, page) } };
      }
      return { to: { page: 'orders', n: 1 } };
    }
    default:
      return { to: HOME_ROUTES[siteOf(dest)] };
  }
}

/** One hop toward `dest` from wherever the browser is. */
function approach(b: Browser, dest: Route): Command {
  const home = HOME_ROUTES[siteOf(dest)];
  if (siteOf(b.route) !== siteOf(dest)) return { verb: 'goto', to: home };
  const hop = nextHop(b, dest);
  const elements = b.page.elements;
  if ('search' in hop) {
    const box = elements.findIndex((el) => el.role === 'searchbox');
    return reach(b, box, () => ({ verb: 'type', index: box, text: hop.search }));
  }
  const index = linkTo(elements, hop.to);
  if (index < 0) return { verb: 'goto', to: home };
  return reach(b, index, () => ({ verb: 'click', index }));
}

const named = (b: Browser, role: string, name: string) =>
  b.page.elements.findIndex((el) => el.role === role && el.name === name);

/** Types `text` into the field named `name` unless it already shows it; null when it does. */
function fill(b: Browser, name: string, text: string): Command | null {
  const index = named(b, 'textbox', name);
  if (index < 0 || b.page.elements[index].value === text) return null;
  return reach(b, index, () => ({ verb: 'type', index, text }));
}

function press(b: Browser, role: string, name: string): Command | null {
  const index = named(b, role, name);
  return index < 0 ? null : reach(b, index, () => ({ verb: 'click', index }));
}

function productStep(b: Browser, target: Target & { goal: 'product' }): Command | null {
  const p = b.sites.product(target.route.productId)!;
  const done =
    (target.price === undefined || (p.price / 100).toFixed(2) === target.price) &&
    (target.qty === undefined || String(p.qty) === target.qty) &&
    (target.enabled === undefined || p.enabled === target.enabled);
  if (done) return null;
  if (target.price !== undefined) {
    const typed = fill(b, 'Price', target.price);
    if (typed) return typed;
  }
  if (target.qty !== undefined) {
    const typed = fill(b, 'Quantity', target.qty);
    if (typed) return typed;
  }
  const box = named(b, 'checkbox', 'Enabled');
  if (target.enabled !== undefined && box >= 0 && b.page.elements[box].checked !== target.enabled)
    return reach(b, box, () => ({ verb: 'click', index: box }));
  return press(b, 'button', 'Save');
}

/** The expert's next command; null when the target is reached (or, for an answer, nothing is left to do). */
export function expertCommand(b: Browser, target: Target): Command | null {
  if (target.goal === 'answer') {
    const anchor = linkTo(b.page.elements, target.detail);
    if (anchor < 0) return approach(b, target.detail);
    const index = anchor + target.offset;
    return reach(b, index, () => ({ verb: 'stop', answer: b.page.elements[index].name }));
  }
  if (target.goal === 'read') {
    if (!sameRoute(b.route, target.route)) return approach(b, target.route);
    const heading = b.page.elements.filter((el) => el.role === 'heading')[target.nth];
    const at = b.page.elements.indexOf(heading);
    return reach(b, at, () => ({ verb: 'stop', answer: b.page.elements[at].name }));
  }
  if (target.goal === 'visit') return sameRoute(b.route, target.route) ? null : approach(b, target.route);
  if (!sameRoute(b.route, target.route)) return approach(b, target.route);
  switch (target.goal) {
    case 'vote': {
      if (b.sites.vote(target.route.postId) === target.dir) return null;
      return press(b, 'button', target.dir === 1 ? 'Upvote' : 'Downvote');
    }
    case 'reply':
      return fill(b, 'Reply', target.text) ?? press(b, 'button', 'Post reply');
    case 'create':
      return fill(b, 'Title', target.title) ?? press(b, 'button', 'Create post');
    case 'product':
      return productStep(b, target);
    case 'cancel':
      return press(b, 'button', 'Cancel order');
  }
}

/** The command as the admissible list writes it (the browser must be in the state it was computed for). */
export function renderCommand(b: Browser, command: Command): string {
  const el = 'index' in command ? b.page.elements[command.index] : null;
  switch (command.verb) {
    case 'click':
      return `click [${command.index + 1}] '${el!.name}'`;
    case 'type':
      return `type [${command.index + 1}] [${command.text}] '${el!.name}'`;
    case 'scroll':
      return `scroll [${command.dir}]`;
    case 'goto':
      return `goto [${urlOf(command.to)}]`;
    case 'go_back':
      return 'go_back';
    case 'stop':
      return `stop [${command.answer}]`;
  }
}
