import { describe, expect, it } from 'vitest';
import {
  AGENT_USER,
  checkState,
  evaluate,
  exactMatch,
  mustInclude,
  normalizeAnswer,
  Sites,
  urlMatch,
  worldOf,
  type Evaluator,
} from '../../../../src/core/envs/webarena';

const recipe = { seed: 7, forums: 3, listSize: 12 };
const freshSites = () => new Sites(worldOf(recipe));

describe('webarena-lite-v0 answer evaluators', () => {
  it('normalises answers as WebArena does, and numbers to one form', () => {
    expect(normalizeAnswer("  'Pending'  ")).toBe('pending');
    expect(normalizeAnswer('"Ana Silva"')).toBe('ana silva');
    expect(normalizeAnswer('$1,031.50')).toBe('1031.5');
    expect(normalizeAnswer('31.00')).toBe('31');
    expect(normalizeAnswer('-3')).toBe('-3');
    expect(normalizeAnswer('3 comments')).toBe('3 comments');
  });

  it('exact_match: equal after normalising, and nothing more', () => {
    expect(exactMatch('$31.50', '31.50')).toBe(true);
    expect(exactMatch('31.5', '$31.50')).toBe(true);
    expect(exactMatch('"Pending"', 'pending')).toBe(true);
    expect(exactMatch('Pending order', 'Pending')).toBe(false);
    expect(exactMatch('31.51', '31.50')).toBe(false);
    expect(exactMatch('', 'Pending')).toBe(false);
  });

  it('must_include: every phrase a substring; a lone one-word reference matched on words', () => {
    expect(mustInclude('Customer: Ana Silva', ['Ana Silva'])).toBe(true);
    expect(mustInclude('Customer: Ana Silvano', ['Ana Silva'])).toBe(true); // a phrase is a substring
    expect(mustInclude('Customer: Ana', ['Ana Silva'])).toBe(false);
    expect(mustInclude('Submitted by alice_w', ['alice_w'])).toBe(true);
    expect(mustInclude('Submitted by alice_wonder', ['alice_w'])).toBe(false); // one word: whole words only
    expect(mustInclude('5 comments', ['5'])).toBe(true);
    expect(mustInclude('15 comments', ['5'])).toBe(false);
    expect(mustInclude('Blue Tee and Red Cap', ['blue tee', 'red cap'])).toBe(true);
    expect(mustInclude('Blue Tee', ['blue tee', 'red cap'])).toBe(false);
  });

  it('an answer evaluator without a stop answer fails', () => {
    const final = { answer: null, url: 'http://forum.local/', sites: freshSites() };
    expect(evaluate({ type: 'exact_match', reference: 'x' }, final)).toBe(false);
    expect(evaluate({ type: 'must_include', reference: ['x'] }, final)).toBe(false);
    expect(evaluate({ type: 'exact_match', reference: 'x' }, { ...final, answer: 'X' })).toBe(true);
  });
});

describe('webarena-lite-v0 url_match (GOLD in PRED)', () => {
  it('needs the reference path, and every reference query value, in the final URL', () => {
    const ref = 'http://admin.local/admin/products?q=blue%20tee';
    expect(urlMatch('http://admin.local/admin/products?q=blue%20tee', ref)).toBe(true);
    expect(urlMatch('http://admin.local/admin/products?page=2&q=Blue%20Tee', ref)).toBe(true);
    expect(urlMatch('http://admin.local/admin/products', ref)).toBe(false);
    expect(urlMatch('http://admin.local/admin/products?q=red%20cap', ref)).toBe(false);
    expect(urlMatch('http://admin.local/admin/orders?q=blue%20tee', ref)).toBe(false);
  });

  it('ignores a trailing slash and extra query values, not a different path', () => {
    expect(urlMatch('http://forum.local/f/books/17/', 'http://forum.local/f/books/17')).toBe(true);
    expect(urlMatch('http://forum.local/f/books/17?sort=top', 'http://forum.local/f/books/17')).toBe(true);
    expect(urlMatch('http://forum.local/f/books/170', 'http://forum.local/f/books/17')).toBe(false);
    expect(urlMatch('http://forum.local/f/books', 'http://forum.local/f/books/17')).toBe(false);
  });
});

describe('webarena-lite-v0 state programs', () => {
  it('post_vote: the agent’s own vote on the post, toggled off again', () => {
    const sites = freshSites();
    const post = sites.forumPosts(sites.world.forums[0])[0];
    const up: Evaluator = { type: 'program', check: { program: 'post_vote', postId: post.id, vote: 1 } };
    const final = { answer: null, url: '', sites };
    expect(evaluate(up, final)).toBe(false);
    sites.setVote(post.id, -1);
    expect(evaluate(up, final)).toBe(false);
    sites.setVote(post.id, 1);
    expect(evaluate(up, final)).toBe(true);
    expect(sites.score(post)).toBe(post.score + 1);
    sites.setVote(post.id, 0);
    expect(evaluate(up, final)).toBe(false);
  });

  it('comment_exists: a comment by the agent with the text (case aside), on that post only', () => {
    const sites = freshSites();
    const [post, other] = sites.forumPosts(sites.world.forums[1]);
    const check = { program: 'comment_exists' as const, postId: post.id, text: 'Count me in' };
    expect(checkState(sites, check)).toBe(false);
    sites.addComment(other.id, 'Count me in');
    expect(checkState(sites, check)).toBe(false);
    sites.addComment(post.id, 'Count me');
    expect(checkState(sites, check)).toBe(false);
    sites.addComment(post.id, 'count me in');
    expect(checkState(sites, check)).toBe(true);
    expect(sites.comments(post).at(-1)).toEqual({ author: AGENT_USER, text: 'count me in' });
  });

  it('post_exists: a post by the agent with the title in that forum', () => {
    const sites = freshSites();
    const [forum, other] = sites.world.forums;
    const check = { program: 'post_exists' as const, forum, title: 'Meetup this weekend' };
    expect(checkState(sites, check)).toBe(false);
    sites.addPost(other, 'Meetup this weekend', '');
    expect(checkState(sites, check)).toBe(false);
    sites.addPost(forum, 'Meetup next weekend', '');
    expect(checkState(sites, check)).toBe(false);
    const post = sites.addPost(forum, 'Meetup this weekend', '');
    expect(checkState(sites, check)).toBe(true);
    expect(sites.forumPosts(forum)[0]).toBe(post); // newest first
  });

  it('product_fields: every listed field as saved, the others free', () => {
    const sites = freshSites();
    const product = sites.products()[3];
    const both = { program: 'product_fields' as const, productId: product.id, price: 2599, qty: 40 };
    const off = { program: 'product_fields' as const, productId: product.id, enabled: false };
    expect(checkState(sites, both)).toBe(false);
    sites.saveProduct({ ...product, price: 2599 });
    expect(checkState(sites, both)).toBe(false);
    sites.saveProduct({ ...sites.product(product.id)!, qty: 40 });
    expect(checkState(sites, both)).toBe(true);
    expect(checkState(sites, off)).toBe(!product.enabled);
    sites.saveProduct({ ...sites.product(product.id)!, enabled: false });
    expect(checkState(sites, off)).toBe(true);
    expect(checkState(sites, both)).toBe(true);
    expect(worldOf(recipe).products[3].price).toBe(product.price); // the shared base world is untouched
  });

  it('order_status: the order’s saved status', () => {
    const sites = freshSites();
    const order = sites.world.orders[0];
    const check = { program: 'order_status' as const, orderId: order.id, status: 'Canceled' as const };
    expect(checkState(sites, check)).toBe(order.status === 'Canceled');
    sites.setOrderStatus(order.id, 'Canceled');
    expect(checkState(sites, check)).toBe(true);
    expect(checkState(new Sites(worldOf(recipe)), check)).toBe(order.status === 'Canceled');
  });
});
