/**
 * Every page of the app, generic per route (the pages themselves are tested in their own files):
 * at 1280×720 in light and dark and at a 768×1024 tablet, nothing overflows the window sideways,
 * an aria-live status region is present, and (1280×720 light) every element reachable with Tab
 * has an accessible name and a visible focus outline. The theme toggle is checked once: it
 * overrides the system preference and survives a reload. Screenshots: test-output/screenshots/
 * <route>-empty.png (a fresh profile), <route>-dark.png, <route>-tablet.png; the page tests save <route>.png with content.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CDPSession, Page } from 'playwright';
import { ROUTES } from '../../src/app/state/shell/router.svelte';
import { openPage, SHOTS, useApp } from './harness';

const MAX_TABS = 120;

const app = useApp('dreamgym-e2e-screens-');
let page: Page;
let cdp: CDPSession;
let errors: string[];

beforeAll(async () => {
  ({ page, errors } = await openPage(app.context));
  // Chromium's own accessibility tree gives each focused element's computed role and name.
  cdp = await app.context.newCDPSession(page);
  await cdp.send('Accessibility.enable');
}, 120_000);

beforeEach(() => {
  errors.length = 0;
});

/** Opens a route and waits until the page has rendered and stopped changing. */
async function open(route: string): Promise<void> {
  await page.goto(`${app.baseUrl}/#/${route}`);
  await expect
    .poll(() => page.locator('nav a[aria-current="page"]').textContent(), { timeout: 60_000 })
    .toMatch(new RegExp(route, 'i'));
  let previous = '';
  await expect
    .poll(
      async () => {
        const html = await page.locator('main').innerHTML();
        const stable = html === previous && html.length > 0;
        previous = html;
        return stable;
      },
      { timeout: 30_000, interval: 300 },
    )
    .toBe(true);
  await page.evaluate(() => window.scrollTo(0, 0));
}

async function layout(): Promise<{ scrollWidth: number; innerWidth: number; wide: string[]; live: number }> {
  return page.evaluate(() => {
    const innerWidth = window.innerWidth;
    // What sticks out (for the failure message): the outermost elements wider than the window.
    const wide = [...document.querySelectorAll('body *')]
      .filter((el) => {
        const r = el.getBoundingClientRect();
        return (
          r.right > innerWidth + 1 &&
          !(el.parentElement && el.parentElement.getBoundingClientRect().right > innerWidth + 1)
        );
      })
      .slice(0, 5)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''} (right ${Math.round(el.getBoundingClientRect().right)})`,
      );
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth,
      wide,
      live: document.querySelectorAll(
        '[aria-live="polite"], [aria-live="assertive"], [role="status"], [role="alert"], [role="log"]',
      ).length,
    };
  });
}

async function checkLayout(route: string, variant: string): Promise<void> {
  const result = await layout();
  expect(
    result.scrollWidth,
    `${route} (${variant}) is wider than the window: ${result.wide.join(', ')}`,
  ).toBeLessThanOrEqual(result.innerWidth);
  expect(result.live, `${route} (${variant}) has no aria-live status region`).toBeGreaterThanOrEqual(1);
}

/** Puts the keyboard's starting point at the top of the document (blur() alone keeps the old one). */
async function startFromTop(): Promise<void> {
  await page.evaluate(() => {
    document.body.tabIndex = -1;
    document.body.focus();
    document.body.removeAttribute('tabindex');
    window.scrollTo(0, 0);
  });
}

/** The focused element's role and accessible name, as Chromium computes them. */
async function focusedAccessible(): Promise<{ role: string; name: string }> {
  const { result } = await cdp.send('Runtime.evaluate', { expression: 'document.activeElement' });
  if (!result.objectId) return { role: '', name: '' };
  const { nodes } = await cdp.send('Accessibility.getPartialAXTree', {
    objectId: result.objectId,
    fetchRelatives: false,
  });
  const node = nodes[0];
  await cdp.send('Runtime.releaseObject', { objectId: result.objectId });
  return { role: String(node?.role?.value ?? ''), name: String(node?.name?.value ?? '') };
}

/** Tabs through the page: each focused element's role and name and its focus outline. */
async function tabWalk(): Promise<{ stops: string[]; nameless: string[]; unfocusable: string[] }> {
  await startFromTop();
  const stops: string[] = [];
  const nameless: string[] = [];
  const unfocusable: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < MAX_TABS; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return null;
      el.dataset.tabStop ??= String(Math.random()).slice(2); // identifies the element when focus comes back round
      const style = getComputedStyle(el);
      const outlined = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
      return { id: el.dataset.tabStop, tag: el.tagName.toLowerCase(), outlined, shadow: style.boxShadow !== 'none' };
    });
    if (!focused) break; // past the last element
    if (seen.has(focused.id)) break; // round again
    seen.add(focused.id);
    const { role, name } = await focusedAccessible();
    stops.push(`${role} "${name}"`);
    if (!name.trim()) nameless.push(`<${focused.tag}> (role ${role || 'none'})`);
    if (!focused.outlined && !focused.shadow) unfocusable.push(`${role} "${name}"`);
  }
  return { stops, nameless, unfocusable };
}

/**
 * Opens every route at one window size and colour scheme, checks its layout (checkLayout), saves it as
 * <route>-<shot>.png, and then runs `more` on it.
 */
async function everyRoute(
  size: { width: number; height: number },
  colorScheme: 'light' | 'dark',
  shot: string,
  more: (route: string) => Promise<void> = async () => {},
): Promise<void> {
  await page.setViewportSize(size);
  await page.emulateMedia({ colorScheme });
  for (const route of ROUTES) {
    await open(route);
    await checkLayout(route, `${size.width}×${size.height} ${colorScheme}`);
    await page.screenshot({ path: `${SHOTS}/${route}-${shot}.png` });
    await more(route);
  }
}

describe('every page, generic checks', () => {
  it('1280×720, light: no sideways overflow, a live region, named Tab stops with a visible focus ring', async () => {
    const problems: string[] = [];
    await everyRoute({ width: 1280, height: 720 }, 'light', 'empty', async (route) => {
      const walk = await tabWalk();
      console.log(`[screens] ${route}: ${walk.stops.length} Tab stops`);
      // The first stop is the skip link; following it puts focus on <main>.
      expect(walk.stops[0], route).toBe('link "Skip to content"');
      for (const n of walk.nameless) problems.push(`${route}: Tab stop without a name: ${n}`);
      for (const u of walk.unfocusable) problems.push(`${route}: no visible focus style: ${u}`);
    });
    expect(problems).toEqual([]);
    expect(errors).toEqual([]);
  }, 240_000);

  it('the checks see a problem when there is one (a nameless button, an outline removed, a too-wide box)', async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await open('setup');
    await page.evaluate(() => {
      const main = document.querySelector('main')!;
      const nameless = document.createElement('button');
      nameless.className = 'probe';
      main.prepend(nameless);
      const bare = document.createElement('button');
      bare.className = 'probe';
      bare.textContent = 'No ring';
      bare.style.outline = 'none';
      main.prepend(bare);
      const wide = document.createElement('div');
      wide.className = 'probe wide-probe';
      wide.style.width = '2000px';
      wide.style.height = '1rem';
      main.append(wide);
    });
    const result = await layout();
    expect(result.scrollWidth).toBeGreaterThan(result.innerWidth);
    expect(result.wide.join(' ')).toMatch(/wide-probe/);
    const walk = await tabWalk();
    expect(walk.nameless).toContain('<button> (role button)');
    expect(walk.unfocusable).toContain('button "No ring"');
    await page.evaluate(() => document.querySelectorAll('.probe').forEach((el) => el.remove()));
    expect((await layout()).scrollWidth).toBeLessThanOrEqual(1280);
  }, 60_000);

  it('the skip link moves focus to the page content without changing the route', async () => {
    await open('train');
    await startFromTop();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('main');
    expect(new URL(page.url()).hash).toMatch(/^#\/train(\?|$)/);
    await page.keyboard.press('Tab'); // the next stop is inside the page, past the header
    expect(await page.evaluate(() => document.querySelector('main')!.contains(document.activeElement))).toBe(true);
  }, 60_000);

  it('1280×720, dark (system preference): no sideways overflow, a live region', async () => {
    await everyRoute({ width: 1280, height: 720 }, 'dark', 'dark', async (route) => {
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(bg, `${route} is not dark`).toBe('rgb(21, 23, 26)');
    });
    expect(errors).toEqual([]);
  }, 180_000);

  it('768×1024 tablet: the nav wraps, nothing overflows sideways', async () => {
    await everyRoute({ width: 768, height: 1024 }, 'light', 'tablet');
    expect(errors).toEqual([]);
  }, 180_000);

  it('the theme toggle overrides the system preference and is kept across a reload', async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.emulateMedia({ colorScheme: 'light' });
    await open('play');
    const theme = page.getByLabel('Theme');
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(await theme.inputValue()).toBe('system');
    expect(await background()).toBe('rgb(251, 251, 250)');
    await theme.selectOption('dark');
    await expect.poll(background).toBe('rgb(21, 23, 26)');
    await page.reload();
    await expect.poll(() => page.getByLabel('Theme').inputValue(), { timeout: 60_000 }).toBe('dark');
    expect(await background()).toBe('rgb(21, 23, 26)');
    // Light wins over a dark system preference too; System follows it again.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByLabel('Theme').selectOption('light');
    await expect.poll(background).toBe('rgb(251, 251, 250)');
    await page.getByLabel('Theme').selectOption('system');
    await expect.poll(background).toBe('rgb(21, 23, 26)');
    expect(await page.evaluate(() => localStorage.getItem('dreamgym.theme'))).toBeNull();

    // Charts take the new palette: the toggle rebuilds each uPlot chart with the theme's colours.
    await open('train');
    const charts = page.locator('figure.chart .uplot');
    await expect.poll(() => charts.count()).toBeGreaterThan(0);
    await charts.first().evaluate((el) => {
      el.setAttribute('data-old-theme', '1');
    });
    await page.getByLabel('Theme').selectOption('light');
    await expect.poll(() => page.locator('.uplot[data-old-theme]').count()).toBe(0);
    await expect.poll(() => charts.count()).toBeGreaterThan(0);
    await page.getByLabel('Theme').selectOption('system');
    expect(errors).toEqual([]);
  }, 90_000);
});
