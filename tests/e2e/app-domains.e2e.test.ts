/**
 * End to end: the Domains page in Debian's Chromium against the built app (harness.ts). A small
 * ETO file made here (household rollouts renamed to an app the importer does not know, one
 * instruction full of hostile markup) is picked and imported: the format is detected and named,
 * the card shows the split, endings, action kinds and warnings, the replay buffer holds the
 * training episodes. After a reload the domain is still there; a malformed file dropped on the
 * page is rejected whole with its line numbers; a delete needs a confirmation.
 * Screenshots (1280×720) to test-output/screenshots/domains.png, domains-card.png and domains-rejected.png.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import { writeTrajectories } from '../../src/core/data/formats';
import { DEFAULT_IMPORT_SETTINGS, readDomain } from '../../src/app/state/domains/domains';
import { foreignOurs } from '../unit/domain/fixtures';
import { openPage, SHOTS, useApp } from './harness';

const app = useApp('dreamgym-e2e-domains-');

const HOSTILE = '<img src=x onerror="window.__pwned=1">';

/**
 * 12 household episodes as an ETO file (a JSON array) of the app 'shop', each instruction led by
 * hostile markup (ETO's reader takes the instruction from the first observation's task line).
 */
async function etoFile(): Promise<string> {
  const episodes = (await foreignOurs(12, 'shop')).map((t) => ({
    ...t,
    steps: t.steps.map((step, i) =>
      i === 0 ? { ...step, observation: step.observation.replace('Your task is to: ', `$&${HOSTILE} `) } : step,
    ),
  }));
  return writeTrajectories(episodes, 'eto');
}

/** The same records one a line, the second broken and a third line not JSON. */
async function malformedFile(): Promise<string> {
  const records = (JSON.parse(await etoFile()) as unknown[]).map((r) => JSON.stringify(r));
  return [records[0], '{"id": 7, "conversations": "none"}', 'not json', ...records.slice(1)].join('\n');
}

const idle = (page: Page) =>
  expect.poll(() => page.getByTestId('domains-status').getAttribute('data-busy'), { timeout: 60_000 }).toBe('false');
const fact = (page: Page, key: string) =>
  page.locator(`[data-testid="domain-card"] [data-fact="${key}"]`).textContent();
const pwned = (page: Page) => page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned);

/** Drops a file on the page as a user dragging it from their files would. */
async function dropFile(page: Page, name: string, text: string): Promise<void> {
  const dataTransfer = await page.evaluateHandle(
    ([fileName, body]) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([body], fileName, { type: 'application/json' }));
      return transfer;
    },
    [name, text] as const,
  );
  await page.dispatchEvent('[data-testid="drop-zone"]', 'drop', { dataTransfer });
}

describe('the Domains page', () => {
  it('imports an ETO file, shows its card, keeps it over a reload, rejects a malformed file, deletes', async () => {
    const { page, errors } = await openPage(app.context);
    await page.goto(`${app.baseUrl}/#/domains`);
    await expect.poll(() => page.getByTestId('no-domains').count(), { timeout: 60_000 }).toBe(1);
    expect(
      await page
        .getByRole('navigation', { name: 'Pages' })
        .getByRole('link', { name: 'Domains', exact: true })
        .getAttribute('aria-current'),
    ).toBe('page');

    // Pick the file: its name suggests the domain's; the format is detected from the records.
    await page.getByTestId('domain-file').setInputFiles({
      name: 'shop-logs.json',
      mimeType: 'application/json',
      buffer: Buffer.from(await etoFile()),
    });
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('shop-logs');
    await page.getByRole('button', { name: 'Import as a domain' }).click();
    await expect
      .poll(() => page.getByTestId('domains-status').textContent(), { timeout: 60_000 })
      .toMatch(/^shop-logs\.json: read as eto \(detected from its records\)\. Stored the domain 'shop-logs'/);
    await idle(page);
    expect(await page.getByTestId('domains-status').textContent()).toMatch(
      /Replay buffer: byo:shop-logs: \d+ episodes added/,
    );
    expect(await fact(page, 'source')).toBe('shop-logs.json, read as eto (detected from its records)');
    expect(await fact(page, 'episodes')).toMatch(/^12: \d+ to train on, \d+ held out \(split by task, share 20%/);
    expect(await fact(page, 'admissible')).toMatch(/^recorded on 0 of (\d+) steps; inferred from the data on \1$/);
    expect(await fact(page, 'outcomes')).toMatch(/^\d+ succeed, 0 fail, \d+ hit the step limit, 0 unrecorded, of 12/);
    expect(await page.locator('[data-testid="action-kinds"] tbody tr').count()).toBeGreaterThan(2);
    const warnings = await page.getByTestId('domain-warnings').textContent();
    expect(warnings).toMatch(/No failed endings: .* the verdict cannot learn failure/);
    expect(warnings).toMatch(/listed no admissible actions/);
    expect(await page.getByTestId('cli-commands').textContent()).toContain(
      'npm run dreamgym -- domain import shop-logs.json --name shop-logs --format eto\n' +
        'npm run dreamgym -- expmodel train --domain shop-logs --out runs/models/shop-logs',
    );
    expect(await page.getByTestId('domain-path').count()).toBe(1);
    // The hostile instructions are in the derived card as text, never as markup.
    expect(await page.getByTestId('card-text').textContent()).toContain(`"${HOSTILE} `);
    expect(await page.locator('[data-testid="domain-card"] img, [data-testid="domain-card"] script').count()).toBe(0);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/domains.png` });
    await page.getByTestId('domain-card').evaluate((card) => card.scrollIntoView());
    await page.screenshot({ path: `${SHOTS}/domains-card.png` });

    // A reload: the domain is still stored, its card shown again (checked against its checksums).
    await page.reload();
    await expect.poll(() => page.locator('[data-testid="domain-list"] li[data-domain="shop-logs"]').count()).toBe(1);
    await expect.poll(() => fact(page, 'episodes')).toMatch(/^12: /);

    // A malformed file dropped on the page: rejected whole, every bad line named, nothing stored.
    await dropFile(page, 'broken.jsonl', await malformedFile());
    await expect.poll(() => page.getByTestId('chosen-file').textContent()).toMatch(/^Chosen: broken\.jsonl/);
    await page.getByLabel('Name', { exact: true }).fill('broken');
    await page.getByRole('button', { name: 'Import as a domain' }).click();
    await expect.poll(() => page.getByTestId('domains-error').count(), { timeout: 60_000 }).toBe(1);
    const message = await page.getByTestId('domains-error').textContent();
    expect(message).toMatch(/^Cannot import broken\.jsonl: \d+ problems found, nothing was imported\./);
    expect(message).toMatch(/\n {2}line 2, field '/);
    expect(message).toMatch(/\n {2}line 3: not valid JSON/);
    expect(await page.locator('[data-testid="domain-list"] li').count()).toBe(1);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/domains-rejected.png` });

    // The replay buffer holds the training episodes, as offline data of the domain's env.
    await page.getByRole('link', { name: 'Buffer', exact: true }).click();
    await expect
      .poll(() => page.locator('tr[data-env="byo:shop-logs"] td[data-source="offline"]').textContent())
      .toMatch(/^[1-9]/);

    // Delete needs a confirmation.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Domains', exact: true }).click();
    const entry = page.locator('[data-testid="domain-list"] li[data-domain="shop-logs"]');
    await entry.getByRole('button', { name: 'Delete' }).click();
    expect(await entry.count()).toBe(1);
    await entry.getByRole('button', { name: 'Yes, delete it' }).click();
    await expect.poll(() => page.getByTestId('no-domains').count()).toBe(1);
    expect(await page.getByTestId('domain-card').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});

/** Every file the page saves from now on, by name, with its bytes. */
function collectDownloads(page: Page): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  page.on('download', (download) => {
    void download.path().then((path) => files.set(download.suggestedFilename(), readFileSync(path!)));
  });
  return files;
}

const TINY_AGENT: Record<string, string> = {
  'BC epochs': '3',
  'Dream iterations': '2',
  'Tasks an iteration': '2',
  'Group size': '2',
  'Held-out dreams': '2',
  'Audited transitions': '4',
};

async function tinyAgentSettings(page: Page): Promise<void> {
  for (const [label, value] of Object.entries(TINY_AGENT)) await page.getByLabel(label, { exact: true }).fill(value);
}

const running = (page: Page) => page.getByTestId('domain-path').getAttribute('data-running');
/** A 1280×720 screenshot with `testId` at the top (null: the page's top). */
const shot = async (page: Page, name: string, testId: string | null) => {
  if (testId) await page.getByTestId(testId).evaluate((el) => el.scrollIntoView());
  else await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${SHOTS}/${name}.png` });
};

describe("the Domains page's whole path", () => {
  it('names a wrong format, then trains the model, audits it, trains and compares the agents, downloads', async () => {
    const { page, errors } = await openPage(app.context);
    const downloads = collectDownloads(page);
    await page.goto(`${app.baseUrl}/#/domains`);
    const text = writeTrajectories(await foreignOurs(20, 'tiny'), 'eto');
    const file = { name: 'tiny-app.json', mimeType: 'application/json', buffer: Buffer.from(text) };

    // An ETO file under the format 'ours' says first what it looks like.
    await page.getByTestId('domain-file').setInputFiles(file);
    await page.getByTestId('domain-format').selectOption('ours');
    await page.getByRole('button', { name: 'Import as a domain' }).click();
    await expect
      .poll(() => page.getByTestId('domains-error').textContent(), { timeout: 60_000 })
      .toMatch(/^The file looks like eto \(records with 'id' and 'conversations', and no 'item_id'\), not ours/);
    await page.getByTestId('domain-format').selectOption('auto');
    await page.getByRole('button', { name: 'Import as a domain' }).click();
    await expect
      .poll(() => page.getByTestId('domains-status').textContent(), { timeout: 60_000 })
      .toMatch(/^tiny-app\.json: read as eto \(detected from its records\)\. Stored the domain 'tiny-app'/);
    await idle(page);
    expect(await fact(page, 'episodes')).toMatch(/^20: \d+ to train on, \d+ held out/);
    expect(await page.getByTestId('domain-warnings').textContent()).toMatch(/the verdict cannot learn failure/);
    await shot(page, 'domains-before', null);

    // The model: a tiny one, two epochs, with progress and the time left measured here.
    await page.getByTestId('model-size').selectOption('tiny');
    await page.getByLabel('Epochs', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Train the model' }).click();
    // The time left comes once this browser's speed is measured, from that speed.
    await expect
      .poll(
        () =>
          page
            .getByTestId('model-progress')
            .textContent()
            .catch(() => ''),
        { timeout: 120_000 },
      )
      .toMatch(/epoch \d of 2, batch \d+ of \d+ .* left at most \(measured here at [\d,]+ tokens\/s over \d+ batches/);
    await shot(page, 'domains-during', 'domain-path');
    await expect.poll(() => running(page), { timeout: 180_000 }).toBe('none');
    expect(await page.getByTestId('path-error').allTextContents()).toEqual([]);
    expect(await page.getByTestId('path-stage').textContent()).toMatch(/^Trained learned:local\/tiny-app-model: /);
    // The pairs line is the CLI's, and counts the domain's training transitions.
    const { domain } = readDomain(text, file.name, { ...DEFAULT_IMPORT_SETTINGS, name: 'tiny-app' });
    const transitions = domain.train.reduce((n, t) => n + t.steps.length, 0);
    expect(await page.getByTestId('pairs-line').textContent()).toMatch(
      new RegExp(`^data: \\d+ pairs from ${transitions} recorded transitions \\(\\d+ next-state pairs`),
    );

    // The audit: OK or FAILED with the reasons, kept with the model over a reload.
    await tinyAgentSettings(page);
    await page.getByRole('button', { name: 'Audit', exact: true }).click();
    await expect.poll(() => page.getByTestId('audit').count(), { timeout: 180_000 }).toBe(1);
    await expect.poll(() => running(page), { timeout: 60_000 }).toBe('none');
    const status = await page.getByTestId('audit').getAttribute('data-status');
    expect(['OK', 'FAILED']).toContain(status);
    if (status === 'FAILED') expect(await page.getByTestId('audit-problems').textContent()).toMatch(/Fix: /);
    expect(await page.getByTestId('audit').textContent()).toMatch(/terminated accuracy .* \(at least 0\.9 needed\)/);
    await page.reload();
    await expect.poll(() => page.getByTestId('audit').getAttribute('data-status')).toBe(status);
    expect(await page.getByTestId('model-summary').textContent()).toMatch(/^Stored: 2 epochs/);

    // The agents: behaviour cloning alone, then BC then the dream, side by side with what each returned.
    await tinyAgentSettings(page);
    await page.getByRole('button', { name: 'Train both and compare' }).click();
    await expect.poll(() => page.getByTestId('agent').count(), { timeout: 240_000 }).toBe(2);
    await expect.poll(() => running(page), { timeout: 240_000 }).toBe('none');
    expect(await page.getByTestId('path-error').allTextContents()).toEqual([]);
    const bc = page.locator('[data-testid="agent"][data-agent="bc"] [data-testid="agent-returned"]');
    expect(await bc.textContent()).toBe(
      'Returned the behaviour-cloning checkpoint, because behaviour cloning only was asked for (--agent bc).',
    );
    const both = page.locator('[data-testid="agent"][data-agent="bc-then-dream"]');
    expect(await both.getByTestId('agent-returned').textContent()).toMatch(
      /^Returned the (behaviour-cloning checkpoint|dream-trained policy), because /,
    );
    if (status === 'FAILED') expect(await both.getAttribute('data-status')).toBe('FAILED');
    expect(await page.getByTestId('plain-summary').textContent()).toMatch(
      new RegExp(`^From ${domain.train.length} training episodes .*the experience model (FAILED|passed) its audit`),
    );
    await shot(page, 'domains-after', 'plain-summary');

    // Use an agent: its action on the first step of a recorded held-out episode, beside the recorded one.
    await page.getByTestId('suggest-agent').selectOption('bc-then-dream');
    await page.getByRole('button', { name: 'Suggest its action' }).click();
    await expect.poll(() => page.getByTestId('suggestion').count(), { timeout: 60_000 }).toBe(1);
    const first = domain.heldOut[0].steps[0];
    const suggested = await page.getByTestId('suggested').textContent();
    expect(suggested).toContain(`recorded: ${first.action}`);
    const chosen = /^Suggested: (.+) \(probability (\d\.\d{3})\)/.exec(suggested!.trim());
    expect(first.admissible).toContain(chosen?.[1]);

    // Downloads: the model's two files and an agent's checkpoint, as the CLI's files.
    await page.getByRole('button', { name: 'Download the model' }).click();
    await both.getByRole('button', { name: 'Download this agent' }).click();
    const names = ['tiny-app-model.json', 'tiny-app-model.weights.bin', 'tiny-app-bc-then-dream.checkpoint.json'];
    await expect.poll(() => names.filter((n) => downloads.has(n)).length).toBe(3);
    await expect.poll(() => downloads.has('tiny-app-bc-then-dream.weights.bin')).toBe(true);
    expect(JSON.parse(downloads.get(names[0])!.toString())).toMatchObject({ env: 'byo:tiny-app' });
    const checkpoint = JSON.parse(downloads.get(names[2])!.toString());
    expect(checkpoint).toMatchObject({ format: 'dreamgym-checkpoint/2' });
    expect(downloads.get('tiny-app-bc-then-dream.weights.bin')!.length).toBe(checkpoint.weights.bytes);
    expect(errors).toEqual([]);
    await page.close();
  }, 600_000);
});
