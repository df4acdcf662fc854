/**
 * End to end: the app shell's Buffer page in Debian's Chromium against the Vite dev server started
 * here. A persistent browser profile (a temp dir) keeps IndexedDB across a reload. Loads the shipped
 * offline datasets (twice: the second adds nothing), searches, imports a valid record full of hostile
 * strings (shown as text, never run), rejects a malformed file, and clears with a confirmation.
 * Screenshot (1280×720) to test-output/screenshots/buffer.png.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright';
import { openPage, SHOTS, useApp } from './harness';

const app = useApp('dreamgym-e2e-buffer-');

const HOSTILE_SCRIPT = '<script>window.__pwned=1</script>';
const HOSTILE_IMG = '<img src=x onerror="window.__pwned=1">';
const HOSTILE_INSTRUCTION = `zebra quokka ${HOSTILE_SCRIPT} ${HOSTILE_IMG} put the laptop away.`;
const HOSTILE_OBSERVATION = `zebra quokka ${HOSTILE_IMG} ${HOSTILE_SCRIPT} you are in a room.`;

/** A valid record in our format (the first household line) with hostile strings in its text. */
function hostileRecord(): string {
  const first = readFileSync('public/datasets/household-v0.jsonl', 'utf8').split('\n')[0];
  const record = JSON.parse(first);
  record.id = 'household-v0/hostile/1';
  record.task.id = 'household-v0/hostile-task';
  record.task.instruction = HOSTILE_INSTRUCTION;
  record.steps[0].observation = HOSTILE_OBSERVATION;
  return `${JSON.stringify(record)}\n`;
}

// Counts are shown with the reader's thousands separator ('11,886'): read the digits.
const digits = (text: string | null) => Number((text ?? '').replace(/\D/g, ''));
const total = async (page: Page) => digits(await page.getByTestId('total-transitions').textContent());
const cell = (page: Page, env: string, source: string) =>
  page.locator(`tr[data-env="${env}"] td[data-source="${source}"]`).textContent().then(digits);
const idle = (page: Page) =>
  expect.poll(() => page.getByTestId('buffer-status').getAttribute('data-busy'), { timeout: 30_000 }).toBe('false');
const pwned = (page: Page) => page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned);

describe('the Buffer page', () => {
  it('loads the shipped datasets once, searches, shows hostile text as text, rejects a bad file, survives a reload and clears', async () => {
    const { page, errors } = await openPage(app.context);
    await page.goto(`${app.baseUrl}/#/buffer`);
    await expect.poll(() => page.getByTestId('total-transitions').count(), { timeout: 60_000 }).toBe(1);
    expect(await total(page)).toBe(0);

    // Load the shipped offline datasets: every env, offline.
    const load = page.getByRole('button', { name: 'Load the shipped offline datasets' });
    await load.click();
    await expect
      .poll(() => page.getByTestId('buffer-status').textContent(), { timeout: 30_000 })
      .toMatch(/Shipped datasets loaded/);
    const loaded = await total(page);
    expect(loaded).toBeGreaterThan(0);
    expect(await cell(page, 'household-v0', 'offline')).toBeGreaterThan(0);
    expect(await cell(page, 'webshop-lite-v0', 'offline')).toBeGreaterThan(0);
    expect(await cell(page, 'webarena-lite-v0', 'offline')).toBeGreaterThan(0);
    // 240 webshop, 300 household and 240 webarena episodes (public/datasets/manifest.json).
    expect(await page.getByTestId('total-episodes').textContent()).toBe('780');

    // A second click adds nothing.
    await load.click();
    await idle(page);
    await expect
      .poll(() => page.getByTestId('buffer-status').textContent())
      .toMatch(/household-v0: 0 episodes added \(0 transitions\), 300 skipped/);
    expect(await page.getByTestId('buffer-status').textContent()).toMatch(
      /webshop-lite-v0: 0 episodes added \(0 transitions\), 240 skipped/,
    );
    expect(await total(page)).toBe(loaded);

    // A reload keeps the data.
    await page.reload();
    await expect.poll(() => page.getByTestId('total-transitions').count(), { timeout: 30_000 }).toBe(1);
    expect(await total(page)).toBe(loaded);

    // Search returns k results.
    await page.getByLabel('Search environment').selectOption('household-v0');
    await page.getByLabel('Query').fill('put some laptop on sidetable');
    await page.getByLabel('k', { exact: true }).fill('4');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.getByTestId('result').count(), { timeout: 30_000 }).toBe(4);

    // A valid record with hostile strings: imported, shown as literal text, never run.
    await page.getByLabel('Import format').selectOption('ours');
    await page
      .getByTestId('import-file')
      .setInputFiles({ name: 'hostile.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(hostileRecord()) });
    await page.getByRole('button', { name: 'Import file' }).click();
    await expect
      .poll(() => page.getByTestId('buffer-status').textContent(), { timeout: 30_000 })
      .toMatch(/Imported hostile\.jsonl: 1 episodes added/);
    const withHostile = await total(page);
    expect(withHostile).toBeGreaterThan(loaded);
    await page.getByLabel('Query').fill(HOSTILE_INSTRUCTION);
    await page.getByLabel('k', { exact: true }).fill('3');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const hostile = page.getByTestId('result').filter({ hasText: 'zebra quokka' }).first();
    await expect.poll(() => hostile.count(), { timeout: 30_000 }).toBe(1);
    expect(await hostile.getByTestId('result-instruction').textContent()).toBe(HOSTILE_INSTRUCTION);
    expect(await hostile.getByTestId('result-observation').textContent()).toContain('<script>');
    expect(await hostile.getByTestId('result-observation').textContent()).toContain(HOSTILE_IMG);
    expect(await page.locator('[data-testid="results"] script, [data-testid="results"] img').count()).toBe(0);
    await page.waitForTimeout(200);
    expect(await pwned(page)).toBeUndefined();

    // A malformed file: the line-numbered error as text, nothing imported.
    const bad = `${hostileRecord().replace('household-v0/hostile/1', 'household-v0/hostile/2')}{"format":"dreamgym-trajectory/1","id":3}\nnot json at all\n`;
    await page
      .getByTestId('import-file')
      .setInputFiles({ name: 'bad.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(bad) });
    await page.getByRole('button', { name: 'Import file' }).click();
    await expect.poll(() => page.getByTestId('buffer-error').count(), { timeout: 30_000 }).toBe(1);
    const message = await page.getByTestId('buffer-error').textContent();
    expect(message).toMatch(/Cannot import bad\.jsonl/);
    expect(message).toMatch(/line 2, field '/);
    expect(message).toMatch(/line 3/);
    expect(await total(page)).toBe(withHostile);

    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/buffer.png` });

    // Export downloads the whole buffer as a file (ours: one line per episode).
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('dreamgym-buffer-ours.jsonl');
    const exported = readFileSync(await download.path(), 'utf8')
      .trim()
      .split('\n');
    expect(exported.length).toBe(781); // the 780 shipped episodes and the imported one
    expect(exported.some((line) => line.includes('household-v0/hostile/1'))).toBe(true);

    // Clear needs a confirmation.
    await page.getByRole('button', { name: 'Clear the buffer' }).click();
    expect(await total(page)).toBe(withHostile);
    await page.getByRole('button', { name: 'Yes, delete everything' }).click();
    await expect.poll(() => total(page), { timeout: 30_000 }).toBe(0);
    await expect.poll(() => page.getByTestId('empty').count()).toBe(1);
    expect(await pwned(page)).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);
});
