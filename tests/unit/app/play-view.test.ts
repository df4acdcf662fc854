import { describe, expect, it } from 'vitest';
import { makeEnv } from '../../../src/core/envs/registry';
import { expertOf } from '../../../src/core/envs/env';
import {
  actionHint,
  chosenLine,
  chosenOptions,
  itemOptions,
  optionPressed,
  pageView,
} from '../../../src/app/state/play/play-view';

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
      if (r.terminated || r.truncated) {
        seen.push(pageView(r.text, r.admissible).kind);
        break;
      }
    }
    expect(seen).toContain('results');
    expect(seen[seen.length - 1]).toBe('purchase');
  });

  it("leaves household text as it is, and hints each env's own actions", async () => {
    const env = makeEnv('household-v0', { difficulty: 0 });
    const obs = await env.reset({ seed: 1 });
    expect(pageView(obs.text, obs.admissible)).toEqual({ kind: 'text' });
    expect(actionHint('household-v0')).not.toMatch(/search\[/);
    expect(actionHint('household-v0')).toMatch(/go to/);
    expect(actionHint('webshop-lite-v0')).toMatch(/search\[/);
  });

  it('leaves a webarena page as its accessibility tree, and hints its WebArena grammar', async () => {
    const env = makeEnv('webarena-lite-v0', { difficulty: 0 });
    const obs = await env.reset({ seed: 1 });
    expect(pageView(obs.text, obs.admissible)).toEqual({ kind: 'text' });
    expect(actionHint('webarena-lite-v0')).toMatch(/click \[\d+\].*type \[\d+\] \[.*stop \[/);
  });
});

describe('the options picked on a product page', () => {
  const SEP = ' [SEP] ';
  const item = [
    'Instruction:',
    'a desk in walnut, size small',
    'Back to Search',
    '< Prev',
    'color',
    'white',
    'walnut',
    'size',
    'small',
    'large',
    'Hearthwood Desk',
    'Price: $285.99',
    'Rating: N.A.',
    'Description',
    'Features',
    'Reviews',
    'Buy Now',
  ].join(SEP);
  const admissible = [
    'back to search',
    '< prev',
    'description',
    'features',
    'reviews',
    'buy now',
    'white',
    'walnut',
    'small',
    'large',
  ].map((c) => `click[${c}]`);
  const groups = itemOptions(item, admissible)!;
  const ok = (...actions: string[]) => actions.map((action) => ({ action, valid: true }));
  const opened = ok('search[walnut desk]', 'click[b0wr0ejjl6]');

  it('reads the option groups from the page text (not the title), and nothing from other pages', () => {
    expect(groups).toEqual([
      { name: 'color', values: ['white', 'walnut'] },
      { name: 'size', values: ['small', 'large'] },
    ]);
    const noOptions = ['Back to Search', '< Prev', 'Mug', 'Price: $5.00', 'Buy Now'].join(SEP);
    expect(itemOptions(noOptions, ['click[back to search]', 'click[< prev]', 'click[buy now]'])).toEqual([]);
    expect(itemOptions('WebShop [SEP] Instruction: [SEP] buy a mug [SEP] Search', ['search[mug]'])).toBeNull();
    expect(itemOptions('You are in the middle of a room.', ['go to desk 1'])).toBeNull();
  });

  it('follows the accepted actions: a click picks in its group, a later one replaces it, a refused one not', () => {
    expect(chosenOptions(opened, groups)).toEqual([]);
    expect(chosenLine(chosenOptions(opened, groups))).toBe('Chosen: none yet (click an option to pick it).');
    const refused = { action: 'click[small]', valid: false };
    const steps = [...opened, ...ok('click[large]', 'click[white]', 'click[Walnut]'), refused];
    const chosen = chosenOptions(steps, groups);
    expect(chosen).toEqual([
      { group: 'color', value: 'walnut' },
      { group: 'size', value: 'large' },
    ]);
    expect(chosenLine(chosen)).toBe('Chosen: color: walnut, size: large');
    expect(optionPressed(groups, chosen)).toEqual({
      'click[white]': false,
      'click[walnut]': true,
      'click[small]': false,
      'click[large]': true,
    });
    // The env's own reading of an action: case, spaces and an "Action:" line.
    expect(chosenOptions([...opened, ...ok('Thought: small fits.\nAction: click[ Small ]')], groups)).toEqual([
      { group: 'size', value: 'small' },
    ]);
  });

  it('keeps the picks across a sub-page, and starts over when a product is opened again', () => {
    const viaSub = [...opened, ...ok('click[small]', 'click[description]', 'click[< prev]', 'click[white]')];
    expect(chosenOptions(viaSub, groups)).toEqual([
      { group: 'color', value: 'white' },
      { group: 'size', value: 'small' },
    ]);
    const reopened = [...opened, ...ok('click[small]', 'click[< prev]', 'click[next >]', 'click[b0wr0ejjl6]')];
    expect(chosenOptions(reopened, groups)).toEqual([]);
    const searchedAgain = [...opened, ...ok('click[small]', 'click[back to search]', 'search[desk]', 'click[b0abcd]')];
    expect(chosenOptions(searchedAgain, groups)).toEqual([]);
  });

  it('agrees with what the env buys: the end page lists the same options', async () => {
    const env = makeEnv('webshop-lite-v0', { difficulty: 0.6 });
    let obs = await env.reset({ seed: 3 });
    const steps: { action: string; valid: boolean }[] = [];
    let lastChosen: string | null = null;
    for (let i = 0; i < 20; i++) {
      const options = itemOptions(obs.text, obs.admissible);
      if (options)
        lastChosen = chosenOptions(steps, options)
          .map((c) => `${c.group}: ${c.value}`)
          .join(', ');
      const action = expertOf(env)!.expertAction()!;
      const r = await env.step(action);
      steps.push({ action, valid: r.info.valid });
      obs = r;
      if (r.terminated || r.truncated) break;
    }
    const end = pageView(obs.text, obs.admissible);
    const sorted = (line: string | null) => (line ?? '').split(', ').sort();
    // The last product page (right before Buy Now) showed every option the purchase was made with.
    expect(end.kind === 'purchase' ? sorted(end.options) : null).toEqual(sorted(lastChosen));
    expect(lastChosen).toMatch(/: /);
  });
});
