/**
 * The browser of webarena-lite-v0: one tab over the two sites, with history, a viewport of a few
 * elements moved by `scroll`, and the form draft of the current page. It renders the observation
 * (WebArena's accessibility tree as text, URL and tab title on top) and the admissible actions,
 * and executes WebArena's actions: `click [id]`, `type [id] [text]`, `scroll [down|up]`,
 * `goto [url]`, `go_back`, `stop [answer]`.
 *
 * The admissible list writes each click and type with its element's name after it, as the tree line
 * shows it (`click [12] 'Orders'`, `type [7] [31.50] 'Price'`): a policy that scores actions by their
 * text alone then sees what an action does, as it sees a WebShop product's id in `click[b0…]` beside
 * its title. The bare WebArena form (`click [12]`, `type [7] [31.50]`, `type [7] [31.50] [1]`) is
 * accepted as the same action.
 *
 * Typed text is a finite candidate set: the instruction's quoted phrases and its numbers. Every
 * text a task needs typed (a price, a reply, a search, a title) is written in its instruction, so
 * nothing solvable is lost, while a free-text argument would make the action space infinite and
 * leave a policy that chooses among listed actions nothing to choose from. `stop` answers are the
 * names of the elements in view plus the instruction's phrases: WebArena's answers are read off
 * the page, and reading means having the element on screen.
 */
import { CLICKABLE, HOME_ROUTES, renderPage, TYPABLE, urlOf, type Element, type Page, type Route } from './pages';
import { ORDER_STATUSES, type Sites, type World } from './world';

export type Command =
  | { verb: 'click'; index: number }
  | { verb: 'type'; index: number; text: string }
  | { verb: 'scroll'; dir: 'down' | 'up' }
  | { verb: 'goto'; to: Route }
  | { verb: 'go_back' }
  | { verb: 'stop'; answer: string };

/** Roles whose names can be read off as an answer (text, not controls: a link's name is read on the page it opens). */
const READABLE: ReadonlySet<string> = new Set(['StaticText', 'gridcell', 'heading']);
const MAX_HISTORY = 32;
const GOTO_FORUM = `goto [${urlOf(HOME_ROUTES.forum)}]`;
const GOTO_ADMIN = `goto [${urlOf(HOME_ROUTES.admin)}]`;

/** The instruction's quoted phrases, then its numbers (a `$` dropped), each once: the typed-text candidates. */
export function candidateTexts(instruction: string): string[] {
  const out: string[] = [];
  const add = (t: string) => {
    if (t && !out.includes(t)) out.push(t);
  };
  for (const m of instruction.matchAll(/'([^']+)'/g)) add(m[1]);
  const unquoted = instruction.replace(/'[^']*'/g, ' ');
  for (const m of unquoted.matchAll(/(?:^|[\s$])(\d+(?:\.\d+)?)(?=[\s.,;!?]|$)/g)) add(m[1]);
  return out;
}

function describe(el: Element, id: number): string {
  let line = `[${id}] ${el.role} '${el.name}'`;
  if (el.value) line += ` value: ${el.value}`;
  if (el.checked !== undefined) line += ` checked: ${el.checked}`;
  if (el.pressed) line += ' pressed: true';
  return line;
}

/** What a page shows at one scroll position: its lines, clicks and answers (shared by every episode on the page). */
interface View {
  /** The observation text (tab title, URL, the lines in view). */
  text: string;
  lines: string;
  clicks: string[];
  clickCommands: Command[];
  typable: number[];
  answers: string[];
  /** Admissible lists by the episode's typed texts and whether it can go back. */
  lists: Map<string, { listed: string[]; commands: Command[] }>;
}

/** Views of cached pages: a page is rendered once per state and read at every step on it. */
const views = new WeakMap<Page, Map<number, View>>();

function viewOf(page: Page, lo: number, hi: number): View {
  let byRange = views.get(page);
  if (!byRange) views.set(page, (byRange = new Map()));
  const key = lo * 1000 + hi;
  let view = byRange.get(key);
  if (view) return view;
  const lines: string[] = [];
  view = { text: '', lines: '', clicks: [], clickCommands: [], typable: [], answers: [], lists: new Map() };
  for (let i = lo; i < hi; i++) {
    const el = page.elements[i];
    lines.push(describe(el, i + 1));
    if (CLICKABLE.has(el.role)) {
      view.clicks.push(`click [${i + 1}] '${el.name}'`);
      view.clickCommands.push({ verb: 'click', index: i });
    } else if (TYPABLE.has(el.role)) view.typable.push(i);
    else if (READABLE.has(el.role) && !view.answers.includes(el.name)) view.answers.push(el.name);
  }
  const n = page.elements.length;
  if (lo > 0 || hi < n) lines.push(`(showing elements ${lo + 1}–${hi} of ${n})`);
  view.lines = lines.join('\n');
  view.text = `Tab 0 (current): ${page.title}\nURL: ${page.url}\n\n${view.lines}`;
  byRange.set(key, view);
  return view;
}

/** Pages of a world's untouched state, rendered once and shared by every episode in that world. */
const pristine = new WeakMap<World, Map<string, Page>>();

const BARE_CLICK = /^click \[(\d+)\]$/;
const BARE_TYPE = /^type \[(\d+)\] \[(.*)\](?: \[[01]\])?$/;

export class Browser {
  route: Route;
  history: Route[] = [];
  scroll = 0;
  readonly draft = new Map<string, string>();
  flash: string | null = null;
  page!: Page;
  private listed: string[] | null = null;
  private commands: Command[] = [];
  /** Pages rendered in this episode's changed state (cleared when the state changes again). */
  private pages = new Map<string, Page>();
  private pagesVersion = 0;
  private readonly textsKey: string;

  constructor(
    readonly sites: Sites,
    start: Route,
    /** Element lines shown at once. */
    readonly viewport: number,
    /** Typed-text candidates (candidateTexts of the instruction). */
    readonly texts: readonly string[],
  ) {
    this.textsKey = texts.join('\u0001');
    this.route = start;
    this.render();
  }

  get url(): string {
    return this.page.url;
  }

  /** Indices [lo, hi) of the elements in view. */
  visibleRange(): [number, number] {
    return [this.scroll, Math.min(this.page.elements.length, this.scroll + this.viewport)];
  }

  isVisible(index: number): boolean {
    const [lo, hi] = this.visibleRange();
    return index >= lo && index < hi;
  }

  private view(): View {
    const [lo, hi] = this.visibleRange();
    return viewOf(this.page, lo, hi);
  }

  observation(): string {
    return this.view().text;
  }

  /** The admissible actions, in a fixed order: clicks, types, scrolls, go_back, gotos, stops. */
  admissible(): string[] {
    if (this.listed) return this.listed;
    const view = this.view();
    const key = `${this.history.length > 0 ? 1 : 0}${this.textsKey}`;
    let list = view.lists.get(key);
    if (!list) view.lists.set(key, (list = this.list(view)));
    this.listed = list.listed;
    this.commands = list.commands;
    return list.listed;
  }

  private list(view: View): { listed: string[]; commands: Command[] } {
    const listed = view.clicks.slice();
    const commands = view.clickCommands.slice();
    for (const i of view.typable) {
      const name = this.page.elements[i].name;
      for (const text of this.texts) {
        listed.push(`type [${i + 1}] [${text}] '${name}'`);
        commands.push({ verb: 'type', index: i, text });
      }
    }
    const [lo, hi] = this.visibleRange();
    const fixed: [string, Command][] = [];
    if (hi < this.page.elements.length) fixed.push(['scroll [down]', { verb: 'scroll', dir: 'down' }]);
    if (lo > 0) fixed.push(['scroll [up]', { verb: 'scroll', dir: 'up' }]);
    if (this.history.length > 0) fixed.push(['go_back', { verb: 'go_back' }]);
    fixed.push([GOTO_FORUM, { verb: 'goto', to: HOME_ROUTES.forum }]);
    fixed.push([GOTO_ADMIN, { verb: 'goto', to: HOME_ROUTES.admin }]);
    const answers = [...view.answers, ...this.texts.filter((t) => !view.answers.includes(t))];
    for (const answer of answers) fixed.push([`stop [${answer}]`, { verb: 'stop', answer }]);
    for (const [action, command] of fixed) {
      listed.push(action);
      commands.push(command);
    }
    return { listed, commands };
  }

  /** The command an action names (admissible form or bare WebArena form), or null: a no-op. */
  parse(action: string): Command | null {
    const listed = this.admissible();
    const a = action.trim();
    const at = listed.indexOf(a);
    if (at >= 0) return this.commands[at];
    const click = BARE_CLICK.exec(a);
    if (click) {
      const index = Number(click[1]) - 1;
      return this.commands.find((c) => c.verb === 'click' && c.index === index) ?? null;
    }
    const type = BARE_TYPE.exec(a);
    if (type) {
      const index = Number(type[1]) - 1;
      return this.commands.find((c) => c.verb === 'type' && c.index === index && c.text === type[2]) ?? null;
    }
    return null;
  }

  /** Runs a parsed command (stop is the env's business: it ends the episode without touching the page). */
  execute(command: Command): void {
    switch (command.verb) {
      case 'click':
        this.click(this.page.elements[command.index]);
        break;
      case 'type':
        this.type(this.page.elements[command.index], command.text);
        break;
      case 'scroll': {
        const max = Math.max(0, this.page.elements.length - this.viewport);
        const delta = command.dir === 'down' ? this.viewport : -this.viewport;
        this.scroll = Math.min(max, Math.max(0, this.scroll + delta));
        this.listed = null;
        return;
      }
      case 'goto':
        this.navigate(command.to);
        break;
      case 'go_back':
        this.route = this.history.pop() ?? this.route;
        this.leavePage();
        break;
      case 'stop':
        return;
    }
    this.render();
  }

  private navigate(to: Route): void {
    this.history.push(this.route);
    if (this.history.length > MAX_HISTORY) this.history.shift();
    this.route = to;
    this.leavePage();
  }

  /** Leaving a page drops its scroll position, unsaved input and message. */
  private leavePage(): void {
    this.scroll = 0;
    this.draft.clear();
    this.flash = null;
  }

  private type(el: Element, text: string): void {
    if (el.role === 'searchbox') this.navigate({ page: 'products', n: 1, q: text });
    else this.draft.set(el.field!, text);
  }

  private click(el: Element): void {
    const effect = el.effect!;
    const sites = this.sites;
    switch (effect.kind) {
      case 'nav':
        this.navigate(effect.to);
        return;
      case 'vote':
        sites.setVote(effect.postId, sites.vote(effect.postId) === effect.dir ? 0 : effect.dir);
        return;
      case 'toggle': {
        const checked = el.checked === true;
        this.draft.set(effect.field, String(!checked));
        return;
      }
      case 'reply':
        this.reply(effect.postId);
        return;
      case 'create':
        this.create(effect.forum);
        return;
      case 'save':
        this.save(effect.productId);
        return;
      case 'cancel':
        sites.setOrderStatus(effect.orderId, ORDER_STATUSES[3]);
        this.flash = 'You canceled the order.';
        return;
    }
  }

  private reply(postId: number): void {
    const text = (this.draft.get('reply') ?? '').trim();
    if (!text) {
      this.flash = 'Please write a comment first.';
      return;
    }
    this.sites.addComment(postId, text);
    this.draft.delete('reply');
    this.flash = 'Your comment was posted.';
  }

  private create(forum: string): void {
    const title = (this.draft.get('title') ?? '').trim();
    if (!title) {
      this.flash = 'The title is required.';
      return;
    }
    const post = this.sites.addPost(forum, title, (this.draft.get('body') ?? '').trim());
    this.navigate({ page: 'post', forum, postId: post.id });
  }

  private save(productId: number): void {
    const product = this.sites.product(productId)!;
    const price = this.draft.get('price');
    const qty = this.draft.get('qty');
    if (price !== undefined && !/^\d+(\.\d{1,2})?$/.test(price)) {
      this.flash = 'Please enter a valid price.';
      return;
    }
    if (qty !== undefined && !/^\d+$/.test(qty)) {
      this.flash = 'Please enter a valid quantity.';
      return;
    }
    const enabled = this.draft.get('enabled');
    this.sites.saveProduct({
      ...product,
      price: price === undefined ? product.price : Math.round(Number(price) * 100),
      qty: qty === undefined ? product.qty : Number(qty),
      enabled: enabled === undefined ? product.enabled : enabled === 'true',
    });
    this.draft.clear();
    this.flash = 'You saved the product.';
  }

  /** The page at the current route; pages without a draft or message are cached per state. */
  private render(): void {
    this.page = this.draft.size > 0 || this.flash ? this.renderFresh() : this.cachedPage();
    // A page that got shorter (a post reply cleared) keeps the viewport on the page.
    this.scroll = Math.min(this.scroll, Math.max(0, this.page.elements.length - this.viewport));
    this.listed = null;
  }

  private renderFresh(): Page {
    return renderPage(this.sites, this.route, this.draft, this.flash);
  }

  private cachedPage(): Page {
    const url = urlOf(this.route);
    let cache: Map<string, Page> | undefined;
    if (this.sites.version === 0) {
      cache = pristine.get(this.sites.world);
      if (!cache) pristine.set(this.sites.world, (cache = new Map()));
    } else {
      if (this.pagesVersion !== this.sites.version) {
        this.pages.clear();
        this.pagesVersion = this.sites.version;
      }
      cache = this.pages;
    }
    let page = cache.get(url);
    if (!page) {
      page = this.renderFresh();
      if (cache.size >= 256) cache.clear();
      cache.set(url, page);
    }
    return page;
  }
}
