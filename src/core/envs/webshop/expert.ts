/**
 * The privileged expert: reads the true state (which products fully satisfy the goal) and
 * returns the best next action from any page, so it also recovers after noisy actions.
 *
 *   search page  → the candidate query under which a satisfying product ranks first
 *   results page → click a satisfying product on this page; else 'next >' (or '< prev') toward
 *                  one further down this result list; else 'back to search'
 *   item page    → click each goal option value not yet chosen, then 'buy now';
 *                  on a product that cannot satisfy the goal, '< prev'
 *   sub-page     → '< prev'
 */
import type { ShopEpisode } from './episode';
import { pageAsins, PRODUCTS_PER_PAGE, type PageState } from './pages';

export function expertAction(state: PageState, episode: ShopEpisode): string | null {
  switch (state.kind) {
    case 'done':
      return null;
    case 'search': {
      const best = episode.bestCandidate();
      return `search[${best ? best.query : episode.candidates[0]}]`;
    }
    case 'results': {
      const hits = episode.search(state.keywords);
      const onPage = pageAsins(hits, state.page).find((a) => episode.satisfies(a));
      if (onPage) return `click[${onPage.toLowerCase()}]`;
      const rank = hits.findIndex((a) => episode.satisfies(a));
      if (rank < 0) return 'click[back to search]';
      const targetPage = Math.floor(rank / PRODUCTS_PER_PAGE) + 1;
      return targetPage > state.page ? 'click[next >]' : 'click[< prev]';
    }
    case 'item': {
      if (!episode.satisfies(state.asin)) return 'click[< prev]';
      const wanted = episode.expertOptions(state.asin) ?? {};
      for (const [group, value] of Object.entries(wanted)) {
        if (state.options[group] !== value) return `click[${value}]`;
      }
      return 'click[buy now]';
    }
    case 'sub':
      return 'click[< prev]';
  }
}
