/**
 * End to end: the Compare and Curriculum pages over runs trained in the page (Train page, tiny
 * settings): two real runs (seeds 1 and 2) and one dream run (noisy oracle) with the curriculum on.
 * Screenshots: test-output/screenshots/compare.png and curriculum.png (1280×720).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import type { RunEntry } from '../../src/app/storage/run-list';
import { openPage, SHOTS, useApp } from './harness';
import { currentRunId, navLink, runState, stopRun, trainRun } from './pages/train-page';

const app = useApp('dreamgym-e2e-compare-');
let page: Page;
let errors: string[];

beforeAll(async () => ({ page, errors } = await openPage(app.context)));

const TINY = 'size=tiny&iterations=3&evalEvery=1&evalEpisodes=2';
const train = (query: string) => trainRun(page, app.baseUrl, query, errors);

describe('Compare and Curriculum', () => {
  let realA = '',
    realB = '',
    dream = '';

  it('trains two tiny real runs and one tiny dream run with the curriculum', async () => {
    realA = await train(`preset=webshop-easy&mode=real&${TINY}&seed=1`);
    realB = await train(`preset=webshop-easy&mode=real&${TINY}&seed=2`);
    expect(realA).not.toBe(realB);

    // The dream run, with the curriculum on (λ = 0.5: one of the two tasks of a batch may be a variation).
    dream = await train(
      'preset=webshop-easy&mode=dream&size=tiny&iterations=4&evalEvery=2&evalEpisodes=2' +
        '&epsR=0.2&epsP=0.1&seed=3&curriculum=1&lambda=0.5&llm=oracle:0.2,0.1',
    );
    const listed = await page.evaluate(
      (id) =>
        (JSON.parse(localStorage.getItem('dreamgym.train.runs') ?? '[]') as RunEntry[]).find((r) => r.runId === id)
          ?.config,
      dream,
    );
    expect([listed?.mode, listed?.curriculum, listed?.lambda]).toEqual(['dream', true, 0.5]);
    expect(await page.getByTestId('real-steps').textContent()).toBe('0');
  }, 400_000);

  it('overlays the runs, fills the final table and exports JSON and CSV', async () => {
    await navLink(page, 'Compare').click();
    const table = page.getByTestId('compare-table');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(3);
    for (const id of [realA, realB, dream]) expect(await table.locator(`tr[data-run="${id}"]`).count()).toBe(1);
    const rowA = table.locator(`tr[data-run="${realA}"]`);
    await expect.poll(() => rowA.getByTestId('iterations').textContent()).toBe('3 of 3');
    const cells = await rowA.locator('td').allTextContents();
    expect(cells.slice(2, 7)).toEqual(['webshop-lite-v0', 'real', 'grpo', 'webshop-easy', '1']);
    expect(Number(cells[8].replace(/\D/g, ''))).toBeGreaterThan(0); // real steps
    expect(cells[10]).toMatch(/^\d\.\d{3}$/); // held-out success
    const dreamCells = await table.locator(`tr[data-run="${dream}"] td`).allTextContents();
    expect(dreamCells[8]).toBe('0');
    expect(Number(dreamCells[9].replace(/\D/g, ''))).toBeGreaterThan(0);
    // The dream run's training success is the dream's own judgement, and says so.
    expect(dreamCells[12]).toMatch(/as the dream judges it/);

    // Held-out real success is the headline; only the two real runs: two curves on one chart.
    await expect
      .poll(() => page.locator('figure[data-metric="eval/success_rate"]').getAttribute('data-runs'))
      .toBe('3');
    await page.getByTestId('compare-filter-mode').selectOption('real');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    await page.getByTestId('compare-metric').selectOption('charts/success_rate');
    const chart = page.locator('figure[data-metric="charts/success_rate"]');
    await expect.poll(() => chart.getAttribute('data-runs')).toBe('2');
    expect(await chart.locator('.u-legend .u-series').count()).toBe(3); // x + two runs
    expect(await chart.locator('li[data-run-label]').allTextContents()).toEqual([
      expect.stringMatching(/seed 2: \d\.\d{3} at real steps spent \d+$/),
      expect.stringMatching(/seed 1: \d\.\d{3} at real steps spent \d+$/),
    ]);
    await page.evaluate(() => document.getElementById('compare-title')!.scrollIntoView());
    await page.screenshot({ path: `${SHOTS}/compare.png` });
    await page.getByTestId('compare-metric').selectOption('eval/success_rate');
    await expect
      .poll(() => page.locator('figure[data-metric="eval/success_rate"]').getAttribute('data-runs'))
      .toBe('2');
    // Real steps spent is the default x axis (DreamGym's headline); iteration is one choice away.
    expect(await page.locator('figure[data-metric="eval/success_rate"]').getAttribute('data-axis')).toBe(
      'Real steps spent',
    );
    await page.getByTestId('compare-axis').selectOption('iteration');
    await expect
      .poll(() => page.locator('figure[data-metric="eval/success_rate"]').getAttribute('data-axis'))
      .toBe('Iteration');

    const [json] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export chosen runs (JSON)' }).click(),
    ]);
    const data = JSON.parse(readFileSync((await json.path())!, 'utf8'));
    expect(data.format).toBe('dreamgym-runs/1');
    expect(data.runs.map((r: { runId: string }) => r.runId).sort()).toEqual([realA, realB].sort());
    for (const run of data.runs) {
      expect(run.config.mode).toBe('real');
      // Iteration 0: the untrained policy's held-out evaluation, before any training.
      expect(run.history.map((r: { iteration: number }) => r.iteration)).toEqual([0, 1, 2, 3]);
      expect(typeof run.history[1].metrics['charts/success_rate']).toBe('number');
    }
    const [csv] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export table (CSV)' }).click(),
    ]);
    const lines = readFileSync((await csv.path())!, 'utf8')
      .trimEnd()
      .split('\r\n');
    expect(lines[0]).toMatch(/^run_id,name,env,mode,algo,preset,seed,/);
    expect(
      lines
        .slice(1)
        .map((l) => l.split(',')[0])
        .sort(),
    ).toEqual([realA, realB].sort());
    expect(errors).toEqual([]);
  }, 120_000);

  it("shows the dream run's task bank, sortable by variance; a real run has no curriculum", async () => {
    await page.goto(`${app.baseUrl}/#/curriculum?run=${encodeURIComponent(dream)}`);
    const status = page.getByTestId('curriculum-status');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 30_000 }).toBe('ready');
    const bank = page.getByTestId('task-bank');
    const rows = bank.locator('tbody tr');
    expect(await rows.count()).toBeGreaterThanOrEqual(2);
    expect(await bank.locator('tr[data-origin="generated"]').count()).toBeGreaterThan(0);
    // Generated tasks carry their instruction and when they were seen.
    const generated = await bank.locator('tr[data-origin="generated"]').first().locator('td').allTextContents();
    expect(generated[1].length).toBeGreaterThan(10);
    expect(Number(generated[9])).toBeGreaterThanOrEqual(1);
    expect(await page.locator('figure[data-metric="curriculum/synthetic_share"]').getAttribute('data-points')).toBe(
      '4',
    );
    // Used variations: instruction re-derived from the parent; ran in iteration 2..4 (the first batch has no variations).
    const variations = bank.locator('tr[data-origin="variation"]:not([data-pending])');
    expect(await variations.count()).toBeGreaterThan(0);
    for (const cells of await variations.evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())),
    )) {
      expect(cells[1]).not.toBe('not recorded');
      expect(cells[3]).not.toBe('—'); // parent
      if (cells[9] !== '—') expect(Number(cells[9])).toBeGreaterThanOrEqual(2);
    }

    const variances = async () =>
      await bank
        .locator('td[data-variance]')
        .evaluateAll((tds) => tds.map((td) => Number(td.getAttribute('data-variance'))));
    const header = bank.locator('th[data-column="variance"]');
    // Default: variance, descending. A click sorts ascending; Enter on the focused header sorts descending again.
    expect(await header.getAttribute('aria-sort')).toBe('descending');
    await header.getByRole('button').click();
    expect(await header.getAttribute('aria-sort')).toBe('ascending');
    const up = await variances();
    expect(up).toEqual([...up].sort((a, b) => a - b));
    await header.getByRole('button').focus();
    await page.keyboard.press('Enter');
    expect(await header.getAttribute('aria-sort')).toBe('descending');
    const down = await variances();
    expect(down).toEqual([...down].sort((a, b) => b - a));
    // Another column: rollouts.
    await bank.locator('th[data-column="rollouts"]').getByRole('button').click();
    expect(await header.getAttribute('aria-sort')).toBe('none');
    expect(await bank.locator('th[data-column="rollouts"]').getAttribute('aria-sort')).toBe('descending');
    await header.getByRole('button').click();
    await page.evaluate(() => {
      document.querySelector('.scroll')!.scrollLeft = 0;
      document.getElementById('curriculum-title')!.scrollIntoView();
    });
    await page.screenshot({ path: `${SHOTS}/curriculum.png` });

    await page.getByTestId('curriculum-run').selectOption(realA);
    await expect.poll(() => status.getAttribute('data-status')).toBe('no-curriculum');
    expect(await status.textContent()).toMatch(/no curriculum/);
    expect(errors).toEqual([]);
  }, 120_000);

  it('deletes a run after confirmation: checkpoint, history and list entry', async () => {
    await navLink(page, 'Compare').click();
    const table = page.getByTestId('compare-table');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(3);
    const row = table.locator(`tr[data-run="${realB}"]`);
    await row.getByRole('button', { name: /^Delete/ }).click();
    await row.getByRole('button', { name: 'Cancel' }).click(); // cancelling keeps it
    expect(await table.locator('tbody tr').count()).toBe(3);
    await row.getByRole('button', { name: /^Delete/ }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    expect(await page.getByTestId('compare-status').textContent()).toMatch(/Deleted run/);

    const left = await page.evaluate(async (id) => {
      const get = (db: string, store: string, key: IDBValidKey) =>
        new Promise<unknown>((resolve, reject) => {
          const open = indexedDB.open(db);
          open.onsuccess = () => {
            const req = open.result.transaction(store).objectStore(store).get(key);
            req.onsuccess = () => {
              resolve(req.result);
              open.result.close();
            };
            req.onerror = () => reject(req.error);
          };
          open.onerror = () => reject(open.error);
        });
      return {
        listed: (JSON.parse(localStorage.getItem('dreamgym.train.runs') ?? '[]') as { runId: string }[])
          .map((r) => r.runId)
          .includes(id),
        checkpoint: await get('dreamgym-checkpoints', 'checkpoints', id),
        history: await get('dreamgym-train-metrics', 'metrics', [id, 1]),
      };
    }, realB);
    expect(left).toEqual({ listed: false, checkpoint: undefined, history: undefined });
    // The other runs keep theirs.
    await page.reload();
    await expect.poll(() => page.getByTestId('compare-table').locator('tbody tr').count()).toBe(2);
    expect(await page.getByTestId('compare-table').locator(`tr[data-run="${realA}"]`).count()).toBe(1);
    expect(errors).toEqual([]);
  }, 120_000);

  it('follows the current run by default and refreshes its task bank while it trains', async () => {
    const live = await (async () => {
      // On the Train page first: a #/train?… link followed from another page does not fill the form (App/TrainPage race).
      await navLink(page, 'Train').click();
      await page.goto(
        `${app.baseUrl}/#/train?preset=webshop-easy&mode=dream&size=tiny&iterations=60&evalEvery=0&seed=4` +
          '&curriculum=1&lambda=0.5&llm=oracle:0.1,0.1',
      );
      await expect.poll(() => page.getByLabel('Seed').inputValue()).toBe('4');
      await page.getByRole('button', { name: 'Start' }).click();
      await expect.poll(() => runState(page)).toBe('running');
      return (await currentRunId(page))!;
    })();
    await navLink(page, 'Curriculum').click();
    await expect.poll(() => page.getByTestId('curriculum-run').inputValue()).toBe(live);
    const bankIteration = async () =>
      Number(
        /after iteration (\d+)/.exec((await page.getByTestId('curriculum-status').textContent()) ?? '')?.[1] ?? -1,
      );
    await expect.poll(bankIteration, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
    const first = await bankIteration();
    // No reload, no click: the page re-reads the checkpoint while the run trains.
    await expect.poll(bankIteration, { timeout: 60_000 }).toBeGreaterThan(first);
    expect(await page.getByText(/live: refreshes every/).count()).toBe(1);
    await navLink(page, 'Train').click();
    await stopRun(page);
    expect(errors).toEqual([]);
  }, 120_000);
});
