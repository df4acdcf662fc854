import { describe, expect, it } from 'vitest';
import { makeEnv } from '../../../src/core/envs/registry';
import { expertOf } from '../../../src/core/envs/env';
import { actionHint, pageView } from '../../../src/app/state/play-view';

describe('the Play page view of an observation', () => {
  it('shows a WebShop results page as product cards (id, title, price, its click) and the end page without WebShop debug text', async () => {
    const env = makeEnv('webshop-lite-v0', { difficulty: 0.25 });
    let obs = await env.reset({ seed: 1 });
    expect(pageView(obs.text, obs.admissible).kind).toBe('text'); // the search page
    const seen: string[] = [];
    for (let i = 0; i < 12; i++) {
      const view = pageView(obs.text, obs.admissible);
      seen.push(view.kind);
      if (view.kind === 'results') {
        expect(view.products.length).toBeGreaterThan(3);
        for (const p of view.products) {
          expect(p.id).toMatch(/^[A-Z0-9]{10}$/);
          expect(p.action).toBe(`click[${p.id.toLowerCase()}]`);
          expect(obs.admissible).toContain(p.action);
          expect(p.title.length).toBeGreaterThan(3);
          expect(p.price).toMatch(/^\$\d/);
        }
      }
      if (view.kind === 'purchase') {
        expect(view.bought).toMatch(/^[A-Z0-9]{10}$/);
        expect(view.options).toMatch(/:/);
        expect(Number(view.score)).toBeGreaterThanOrEqual(0);
        expect(JSON.stringify(view)).not.toMatch(/MTurk|instuction/);
      }
      const r = await env.step(expertOf(env)!.expertAction()!);
      obs = r;
      if (r.terminated || r.truncated) { seen.push(pageView(r.text, r.admissible).kind); break; }
    }
    expect(seen).toContain('results');
    expect(seen[seen.length - 1]).toBe('purchase');
  });

  it('leaves household text as it is, and hints each env\'s own actions', async () => {
    const env = makeEnv('household-v0', { difficulty: 0 });
    const obs = await env.reset({ seed: 1 });
    expect(pageView(obs.text, obs.admissible)).toEqual({ kind: 'text' });
    expect(actionHint('household-v0')).not.toMatch(/search\[/);
    expect(actionHint('household-v0')).toMatch(/go to/);
    expect(actionHint('webshop-lite-v0')).toMatch(/search\[/);
  });
});
