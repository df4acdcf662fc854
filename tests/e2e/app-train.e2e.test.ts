/**
 * End to end: the app shell's Setup and Train pages in Debian's Chromium (SwiftShader WebGPU),
 * against the Vite dev server started here. A persistent browser profile (a temp dir) keeps
 * IndexedDB and localStorage across a reload, so a run can be resumed from its checkpoint.
 * Screenshots of each page (1280×720) go to test-output/screenshots/. Every readout is polled (the
 * page may not show it yet). Main-thread long tasks while training are a figure of the machine,
 * not a behaviour: `npm run bench -- app-train` measures them.
 */
import { describe, expect, it } from 'vitest';
import { openPage, SHOTS, useApp } from './harness';
import { iteration, points, runState, runStatus, stopRun } from './pages/train-page';

const app = useApp('dreamgym-e2e-profile-');

describe('the app shell', () => {
  it('navigates between pages, and Setup reports the SwiftShader adapter without shader-f16 (→ q4f32)', async () => {
    const { page, errors } = await openPage(app.context);
    await page.goto(`${app.baseUrl}/?env=webshop-lite-v0&seed=5&difficulty=0.25`);
    await expect.poll(() => page.getByTestId('instruction').count(), { timeout: 60_000 }).toBe(1);
    await page.screenshot({ path: `${SHOTS}/play.png` });

    // Keyboard: Tab to the Setup link and follow it with Enter.
    await page.getByRole('link', { name: 'Setup', exact: true }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('adapter').textContent(), { timeout: 30_000 }).toMatch(/swiftshader/i);
    await expect.poll(() => page.getByTestId('shader-f16').textContent()).toBe('no');
    await expect.poll(() => page.getByTestId('fallback').textContent()).toBe('yes');
    await expect.poll(() => page.getByTestId('quantization').textContent()).toBe('q4f32');
    await page.getByRole('button', { name: 'Ask for persistent storage' }).click();
    await expect.poll(() => page.getByTestId('persist-answer').textContent()).toMatch(/persist/i);
    console.log(`[setup] persistence answer: ${await page.getByTestId('persist-answer').textContent()}`);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/setup.png` });

    await page.getByRole('link', { name: 'Train', exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Train an agent' }).count()).toBe(1);
    await expect.poll(() => page.getByRole('link', { name: 'Inspect its episodes' }).count()).toBe(1);
    // A shared #/train?… link fills the form (same document: a hash change).
    await page.goto(`${app.baseUrl}/#/train?preset=household-easy&mode=s2r&algo=ppo&seed=9`);
    await expect.poll(() => page.getByLabel('Preset').inputValue()).toBe('household-easy');
    await expect.poll(() => page.getByLabel('Environment').inputValue()).toBe('household-v0');
    await expect.poll(() => page.getByLabel('Mode').inputValue()).toBe('s2r');
    await expect.poll(() => page.getByLabel('Algorithm').inputValue()).toBe('ppo');
    await expect.poll(() => page.getByLabel('Seed').inputValue()).toBe('9');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('trains a real run: live charts, pause / step / resume, reload and resume from the checkpoint', async () => {
    const { page, errors } = await openPage(app.context);
    await page.goto(`${app.baseUrl}/#/train?preset=webshop-easy&mode=real&size=tiny&iterations=400&seed=3`);
    await expect.poll(() => page.getByRole('button', { name: 'Start' }).isEnabled()).toBe(true);
    await page.getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => points(page, 'charts/success_rate'), { timeout: 90_000 }).toBeGreaterThanOrEqual(3);
    await expect.poll(() => page.getByTestId('backend').textContent()).toBe('wasm');
    console.log(`[train] backend reason: ${await page.getByTestId('backend-reason').textContent()}`);
    await expect.poll(() => page.getByTestId('real-steps').textContent()).not.toBe('0');
    // The URL carries the settings (shareable).
    await expect.poll(() => page.url()).toMatch(/#\/train\?preset=webshop-easy&mode=real&algo=grpo&seed=3/);

    // It keeps training, through a held-out evaluation.
    const before = await iteration(page);
    await expect.poll(() => iteration(page), { timeout: 60_000 }).toBeGreaterThanOrEqual(before + 4);
    await expect.poll(() => points(page, 'eval/success_rate'), { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: `${SHOTS}/train.png` });
    await page.locator('figure[data-metric="charts/success_rate"]').scrollIntoViewIfNeeded();
    await page.locator('figure[data-metric="charts/success_rate"]').hover(); // the legend shows the values under the cursor
    await page.screenshot({ path: `${SHOTS}/train-charts.png` });
    // Every other metric of the run (losses, budget, the worker's steps per second) is charted under "All metrics".
    await page.getByText(/All metrics of this run/).click();
    await expect.poll(() => points(page, 'budget/real_steps')).toBeGreaterThanOrEqual(1);
    await expect.poll(() => points(page, 'losses/approx_kl')).toBeGreaterThanOrEqual(1);
    await expect.poll(() => points(page, 'perf/steps_per_second')).toBeGreaterThanOrEqual(1);

    // Pause, step (+1), resume.
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => runState(page)).toBe('paused');
    // The status names the iteration it paused after, and the screen shows it (its readout may land a moment later).
    const pausedStatus = /^Paused: iteration (\d+) of 400\. Paused after iteration \1\.$/;
    await expect.poll(() => runStatus(page)).toMatch(pausedStatus);
    // Paused: the status no longer changes, so one read gives the iteration.
    const paused = Number(pausedStatus.exec((await runStatus(page))!)![1]);
    await expect.poll(() => iteration(page)).toBe(paused);
    await page.getByRole('button', { name: 'Step' }).click();
    await expect.poll(() => iteration(page)).toBe(paused + 1);
    await expect.poll(() => runState(page)).toBe('paused');
    await expect.poll(() => points(page, 'charts/success_rate')).toBe(paused + 1);
    // The charts against real steps spent (a real run offers no dream-steps axis), then back.
    const axis = page.getByTestId('train-axis');
    await expect
      .poll(() => axis.locator('option').allTextContents())
      .toEqual(['Iteration', 'Real steps spent', 'Wall time (s)']);
    await axis.selectOption('real_steps');
    await expect
      .poll(() => page.locator('figure[data-metric="charts/success_rate"]').getAttribute('data-axis'))
      .toBe('Real steps spent');
    await expect.poll(() => points(page, 'charts/success_rate')).toBe(paused + 1);
    await axis.selectOption('iteration');
    await expect
      .poll(() => page.locator('figure[data-metric="charts/success_rate"]').getAttribute('data-axis'))
      .toBe('iteration');
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => runState(page)).toBe('running');
    await expect.poll(() => iteration(page), { timeout: 60_000 }).toBeGreaterThan(paused + 2);

    // Reload mid-run: the page finds the unfinished run and resumes it from its checkpoint, no click needed.
    const seen = await iteration(page);
    await page.reload();
    await expect.poll(() => runState(page), { timeout: 60_000 }).toBe('running');
    // The status keeps naming the checkpoint while the resumed run goes on.
    const resumed = /Resumed from the checkpoint at iteration (\d+)\./;
    await expect.poll(() => runStatus(page), { timeout: 60_000 }).toMatch(resumed);
    const resumedAt = Number(resumed.exec((await runStatus(page))!)![1]);
    console.log(`[train] saw iteration ${seen} before the reload; resumed at ${resumedAt}`);
    expect(resumedAt).toBeGreaterThanOrEqual(seen);
    // The charts keep their history, and the run continues from the saved iteration.
    await expect.poll(() => points(page, 'charts/success_rate')).toBeGreaterThanOrEqual(seen);
    await expect.poll(() => iteration(page), { timeout: 60_000 }).toBeGreaterThan(resumedAt);
    await stopRun(page);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it('dreams with the noisy oracle (zero real steps) and restarts a crashed worker from its checkpoint', async () => {
    const { page, errors } = await openPage(app.context);
    await page.emulateMedia({ colorScheme: 'dark' }); // the dream run's screenshot shows dark mode
    // The oracle named in the link (a link without one dreams with Setup's engine, by default the shipped learned one).
    await page.goto(
      `${app.baseUrl}/#/train?preset=webshop-easy&mode=dream&size=tiny&iterations=400&epsR=0.2&epsP=0.1` +
        '&llm=oracle:0.2,0.1',
    );
    await expect
      .poll(() => page.getByTestId('experience-source').textContent())
      .toBe('Experience: dream: oracle (ε_R=0.2, ε_P=0.1).');
    await page.getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => points(page, 'dream/success_rate'), { timeout: 90_000 }).toBeGreaterThanOrEqual(2);
    await expect.poll(() => page.getByTestId('real-steps').textContent()).toBe('0');
    await expect
      .poll(async () => Number((await page.getByTestId('dream-steps').textContent())!.replace(/\D/g, '')))
      .toBeGreaterThan(0);
    await page.locator('figure[data-metric="dream/success_rate"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/train-dream-dark.png` });

    // The worker dies: the page says so and restarts it from the last checkpoint.
    await page.evaluate(() =>
      (
        window as unknown as { __dreamgym: { train: { crashWorker(): Promise<unknown> } } }
      ).__dreamgym.train.crashWorker(),
    );
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 30_000 }).toMatch(/stopped unexpectedly/);
    const crashedAt = await iteration(page);
    await page.getByRole('button', { name: 'Restart from the last checkpoint' }).click();
    await expect.poll(() => runState(page), { timeout: 60_000 }).toBe('running');
    await expect.poll(() => iteration(page), { timeout: 60_000 }).toBeGreaterThan(crashedAt);
    await stopRun(page);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
});
