/**
 * End to end: the Teach page in Debian's Chromium against the Vite dev server. Next update twice
 * (button and keyboard), the sampled groups with returns and advantages, π before/after for a
 * chosen step; then PPO (value head shown) and dream mode (the oracle's note shown).
 * Screenshot: test-output/screenshots/teach.png (1280×720).
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import { openPage, SHOTS, useApp } from './harness';

const app = useApp('dreamgym-e2e-teach-');

const status = (page: Page) => page.getByTestId('teach-status').textContent();
const idle = async (page: Page) => (await page.getByTestId('teach-status').getAttribute('data-busy')) === 'false';

describe('the Teach page', () => {
  it('steps through GRPO updates, shows groups, advantages and π before/after; then PPO and the dream', async () => {
    const { page, errors } = await openPage(app.context);
    await page.goto(`${app.baseUrl}/#/teach?env=webshop-lite-v0&algo=grpo&mode=real&seed=3&tasks=2&group=4`);
    await expect
      .poll(() => status(page), { timeout: 90_000 })
      .toMatch(/^Ready: webshop-easy, GRPO, experience from the real environment, seed 3/);
    await expect.poll(() => page.getByTestId('teach-backend').textContent()).toBe('wasm');

    // Update 1 with the keyboard on the button, update 2 with the page shortcut N.
    await page.getByRole('button', { name: 'Next update' }).focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(() => status(page), { timeout: 60_000 })
      .toMatch(/^Update 1 \(GRPO, the real environment\): 2 tasks × 4 rollouts/);
    await expect.poll(() => idle(page)).toBe(true);
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('n');
    await expect.poll(() => status(page), { timeout: 60_000 }).toMatch(/^Update 2 \(GRPO/);
    await expect.poll(() => idle(page)).toBe(true);
    expect(page.url()).toContain('#/teach?env=webshop-lite-v0&algo=grpo&mode=real&seed=3');

    // The sampled groups: 2 tables of 4 rollouts, each with a return and a signed advantage.
    await expect.poll(() => page.getByTestId('teach-group').count()).toBe(2);
    await expect.poll(() => page.getByTestId('teach-rollout').count()).toBe(8);
    const returns = await page.getByTestId('teach-return').allTextContents();
    expect(returns).toHaveLength(8);
    for (const r of returns) expect(Number(r)).toBeGreaterThanOrEqual(0);
    const advantages = await page.getByTestId('teach-advantage').allTextContents();
    expect(advantages).toHaveLength(8);
    for (const a of advantages) expect(a).toMatch(/^([+−]\d+\.\d\d|0\.00)$/);
    // The updates-so-far table lists both updates.
    await expect.poll(() => page.getByRole('table', { name: 'Updates so far' }).locator('tbody tr').count()).toBe(2);

    // π before/after of the chosen step: one row per admissible action, the taken one marked, both columns sum to ~100%.
    const rowsOf = async () => {
      const before = (await page.getByTestId('teach-before').allTextContents()).map((t) => parseFloat(t));
      const after = (await page.getByTestId('teach-after').allTextContents()).map((t) => parseFloat(t));
      return { before, after };
    };
    const first = await rowsOf();
    let before = first.before;
    const after = first.after;
    expect(before.length).toBeGreaterThan(1);
    expect(before.reduce((a, b) => a + b, 0)).toBeCloseTo(100, 0);
    expect(after.reduce((a, b) => a + b, 0)).toBeCloseTo(100, 0);
    expect(before).not.toEqual(after);
    await expect.poll(() => page.locator('[data-testid="teach-prob-row"][data-taken="true"]').count()).toBe(1);

    // Choosing another step (keyboard: focus its button, Enter) shows that step.
    const steps = page.getByTestId('teach-step');
    expect(await steps.count()).toBeGreaterThan(8);
    const pick = steps.nth(1);
    const label = await pick.getAttribute('aria-label');
    await pick.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => pick.getAttribute('aria-pressed')).toBe('true');
    const where = label!.match(/^Task (\d+), rollout (\d+), step (\d+)/)!;
    await expect
      .poll(() => page.getByTestId('teach-probabilities').textContent())
      .toContain(`Task ${where[1]}, rollout ${where[2]}, step ${where[3]}:`);
    ({ before } = await rowsOf());
    expect(before.reduce((a, b) => a + b, 0)).toBeCloseTo(100, 0);

    await expect.poll(() => page.getByTestId('explain-grpo').getAttribute('open')).not.toBeNull();
    // The shot starts at the status line: the summary, the losses and the first group (explanations beside).
    await page.evaluate(() =>
      document.querySelector('[data-testid="teach-status"]')!.scrollIntoView({ block: 'start' }),
    );
    await page.screenshot({ path: `${SHOTS}/teach.png` });

    // A tablet-width window: the update's tables stay within the window (they scroll inside themselves).
    await page.setViewportSize({ width: 768, height: 1024 });
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.setViewportSize({ width: 1280, height: 720 });

    // Switch to PPO: Next update starts a fresh session with it; the value head is shown.
    await page.getByLabel('Algorithm').selectOption('ppo');
    await expect
      .poll(() => page.getByText('Settings changed: Next update starts a fresh session with them.').count())
      .toBe(1);
    await page.getByRole('button', { name: 'Next update' }).click();
    await expect.poll(() => status(page), { timeout: 60_000 }).toMatch(/^Update 1 \(PPO, the real environment\)/);
    await expect.poll(() => idle(page)).toBe(true);
    await expect.poll(() => page.getByTestId('teach-probabilities').textContent()).toMatch(/Value head: V\(s\) = -?\d/);
    await expect.poll(() => page.getByTestId('explain-ppo').getAttribute('open')).not.toBeNull();
    expect(page.url()).toContain('algo=ppo');

    // Dream mode with the noisy oracle: labelled, and the chosen step carries the oracle's note.
    await page.getByLabel('Mode').selectOption('dream');
    await page.getByLabel('Oracle ε_R').fill('0.5');
    await page.getByRole('button', { name: 'Reset' }).click();
    await expect
      .poll(() => status(page), { timeout: 60_000 })
      .toMatch(/experience from dream: oracle \(ε_R=0\.5, ε_P=0\.1\)/);
    await page.getByRole('button', { name: 'Next update' }).click();
    await expect
      .poll(() => status(page), { timeout: 60_000 })
      .toMatch(/^Update 1 \(PPO, dream: oracle \(ε_R=0\.5, ε_P=0\.1\)\)/);
    await expect.poll(() => page.getByTestId('teach-dream-note').textContent()).toMatch(/^Dream: Oracle: the real env/);
    await expect.poll(() => page.getByTestId('explain-dream').getAttribute('open')).not.toBeNull();

    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
