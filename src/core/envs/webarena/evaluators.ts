/**
 * WebArena's evaluators, each binary: `exact_match` and `must_include` on the `stop` answer,
 * `url_match` on the final URL ("GOLD in PRED": the reference path, and every reference query
 * value present), and programs that check the sites' final state (WebArena's `program_html`, read
 * here off the live state instead of the page's HTML).
 */
import { AGENT_USER, type OrderStatus, type Sites } from './world';

export type StateCheck =
  | { program: 'post_vote'; postId: number; vote: 1 | -1 }
  | { program: 'comment_exists'; postId: number; text: string }
  | { program: 'post_exists'; forum: string; title: string }
  | { program: 'product_fields'; productId: number; price?: number; qty?: number; enabled?: boolean }
  | { program: 'order_status'; orderId: number; status: OrderStatus };

export type Evaluator =
  | { type: 'exact_match'; reference: string }
  | { type: 'must_include'; reference: string[] }
  | { type: 'url_match'; reference: string }
  | { type: 'program'; check: StateCheck };

/** What an evaluator reads at the end: the `stop` answer (null when the episode did not stop), URL and sites. */
export interface FinalState {
  answer: string | null;
  url: string;
  sites: Sites;
}

const NUMBER = /^-?\$?-?[\d,]*\d(\.\d+)?$/;

/** WebArena's clean-up (strip, drop surrounding quotes, lower-case), and numbers in one form (`$1,031.50` → `1031.5`). */
export function normalizeAnswer(text: string): string {
  let t = text.trim().toLowerCase();
  if (t.length >= 2 && (t[0] === '"' || t[0] === "'") && t[t.length - 1] === t[0]) t = t.slice(1, -1).trim();
  if (NUMBER.test(t)) {
    const value = Number(t.replace(/[$,]/g, ''));
    if (Number.isFinite(value)) return String(value);
  }
  return t;
}

export function exactMatch(answer: string, reference: string): boolean {
  return normalizeAnswer(answer) === normalizeAnswer(reference);
}

const words = (text: string) => text.split(/[^a-z0-9.$_-]+/).filter(Boolean);

/**
 * Every reference phrase appears in the answer. As WebArena, a lone one-word reference is matched
 * on the answer's words (so `5` is in `5 comments` but not in `15 comments`); numbers on both sides normalised.
 */
export function mustInclude(answer: string, reference: readonly string[]): boolean {
  const a = normalizeAnswer(answer);
  if (reference.length === 1 && !/\s/.test(reference[0].trim())) {
    const ref = normalizeAnswer(reference[0]);
    return words(a).some((w) => normalizeAnswer(w) === ref);
  }
  return reference.every((phrase) => a.includes(normalizeAnswer(phrase)));
}

interface SplitUrl {
  base: string;
  query: Map<string, string>;
}
/** Split URLs by text: an episode's judge reads the same few URLs at every step. */
const splitCache = new Map<string, SplitUrl>();

function splitUrl(url: string): SplitUrl {
  let split = splitCache.get(url);
  if (!split) {
    split = parseUrl(url);
    if (splitCache.size >= 4096) splitCache.clear();
    splitCache.set(url, split);
  }
  return split;
}

function parseUrl(url: string): SplitUrl {
  const [head, search = ''] = url.trim().split('?', 2);
  const base = head.replace(/\/+$/, '').toLowerCase();
  const query = new Map<string, string>();
  for (const part of search.split('&')) {
    if (!part) continue;
    const [key, value = ''] = part.split('=', 2);
    query.set(decodeURIComponent(key), decodeURIComponent(value).toLowerCase());
  }
  return { base, query };
}

/** GOLD in PRED: the same origin and path, and every query value of the reference in the URL. */
export function urlMatch(url: string, reference: string): boolean {
  const got = splitUrl(url);
  const want = splitUrl(reference);
  if (got.base !== want.base) return false;
  for (const [key, value] of want.query) if (got.query.get(key) !== value) return false;
  return true;
}

/** Runs a state-check program on the sites. */
export function checkState(sites: Sites, check: StateCheck): boolean {
  switch (check.program) {
    case 'post_vote':
      return sites.vote(check.postId) === check.vote;
    case 'comment_exists': {
      const post = sites.post(check.postId);
      const want = check.text.trim().toLowerCase();
      return !!post && sites.comments(post).some((c) => c.author === AGENT_USER && c.text.toLowerCase() === want);
    }
    case 'post_exists': {
      const want = check.title.trim().toLowerCase();
      return sites.forumPosts(check.forum).some((p) => p.author === AGENT_USER && p.title.toLowerCase() === want);
    }
    case 'product_fields': {
      const p = sites.product(check.productId);
      if (!p) return false;
      return (
        (check.price === undefined || p.price === check.price) &&
        (check.qty === undefined || p.qty === check.qty) &&
        (check.enabled === undefined || p.enabled === check.enabled)
      );
    }
    case 'order_status': {
      const order = sites.order(check.orderId);
      return !!order && sites.orderStatus(order) === check.status;
    }
  }
}

/** The evaluator's verdict on the final state. */
export function evaluate(evaluator: Evaluator, final: FinalState): boolean {
  switch (evaluator.type) {
    case 'exact_match':
      return final.answer !== null && exactMatch(final.answer, evaluator.reference);
    case 'must_include':
      return final.answer !== null && mustInclude(final.answer, evaluator.reference);
    case 'url_match':
      return urlMatch(final.url, evaluator.reference);
    case 'program':
      return checkState(final.sites, evaluator.check);
  }
}

/** Evaluators judged by the state rather than by an answer: the episode ends as soon as they hold. */
export function judgedByState(evaluator: Evaluator): boolean {
  return evaluator.type === 'url_match' || evaluator.type === 'program';
}
