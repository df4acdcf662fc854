/**
 * Hash routes: `#/start` (default: the start-here path), `#/play` (the Play page keeps its settings in `?env=…`), `#/setup`,
 * `#/train?…` (the Train page keeps its settings in the hash query), `#/inspect?…`, `#/buffer`, `#/domains`,
 * `#/curriculum`, `#/compare`, `#/teach`, `#/model?…` (the Experience model page keeps its settings in the hash query).
 */
export const ROUTES = [
  'start',
  'play',
  'setup',
  'train',
  'model',
  'inspect',
  'buffer',
  'domains',
  'curriculum',
  'compare',
  'teach',
] as const;
export type Route = (typeof ROUTES)[number];

/** The route of a hash; no hash is the start page, except a shared Play link (`/?env=…`, the Play page's settings). */
export function parseHash(hash: string, search = ''): { route: Route; query: string } {
  const body = hash.replace(/^#\/?/, '');
  const [path, query = ''] = body.split('?', 2);
  if (!path && /[?&]env=/.test(search)) return { route: 'play', query };
  const route = (ROUTES as readonly string[]).includes(path) ? (path as Route) : 'start';
  return { route, query };
}

export class Router {
  route = $state<Route>('start');
  query = $state('');

  constructor() {
    this.read();
    window.addEventListener('hashchange', () => this.read());
  }

  private read(): void {
    const { route, query } = parseHash(location.hash, location.search);
    this.route = route;
    this.query = query;
  }

  /** Rewrites the hash query of the current route without a history entry or a hashchange. */
  replaceQuery(query: string): void {
    this.query = query;
    history.replaceState(null, '', `#/${this.route}${query ? `?${query}` : ''}`);
  }
}
